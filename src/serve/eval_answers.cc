#include "serve/eval_answers.h"

#include "serve/text_model.h"

namespace infereng::serve {
namespace {

uint64_t HashIds(const std::vector<uint32_t>& ids) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ ids.size();
  for (uint32_t id : ids) h = Mix64(h ^ id);
  return h;
}

}  // namespace

void EvalAnswers::Add(const std::vector<uint32_t>& prompt_ids, EvalAnswer answer) {
  by_prompt_[HashIds(prompt_ids)] = std::move(answer);
}

const EvalAnswer* EvalAnswers::Find(const std::vector<uint32_t>& prompt_ids, uint64_t* key) const {
  if (by_prompt_.empty()) return nullptr;
  const uint64_t h = HashIds(prompt_ids);
  if (key != nullptr) *key = h;
  auto it = by_prompt_.find(h);
  return it == by_prompt_.end() ? nullptr : &it->second;
}

bool AnswerRight(uint64_t seed, uint64_t key, uint64_t occurrence, double accuracy) {
  const uint64_t x = Mix64(Mix64(seed ^ 0x51ed270b27f5a3c1ULL) ^ key) + occurrence * 0x9e3779b97f4a7c15ULL;
  const double u = static_cast<double>(Mix64(x) >> 11) * 0x1.0p-53;
  return u < accuracy;
}

std::vector<std::string> AnswerTokens(std::string_view answer) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < answer.size()) {
    while (i < answer.size() && (answer[i] == ' ' || answer[i] == '\t' || answer[i] == '\r' || answer[i] == '\n')) ++i;
    size_t j = i;
    while (j < answer.size() && answer[j] != ' ' && answer[j] != '\t' && answer[j] != '\r' && answer[j] != '\n') ++j;
    if (j > i) out.push_back((out.empty() ? "" : " ") + std::string(answer.substr(i, j - i)));
    i = j;
  }
  return out;
}

}  // namespace infereng::serve
