#include "serve/emission_trace.h"

#include <fmt/format.h>

#include "serve/text_model.h"

namespace infereng::serve {

std::string ResponseId(int kind, uint64_t seq) {
  return fmt::format("{}{:016x}", kind == 0 ? "chatcmpl-" : "cmpl-", Mix64(seq ^ 0x5e7e5e7eULL));
}

Result<std::unique_ptr<EmissionTrace>> EmissionTrace::Open(const std::string& path, std::size_t block_records) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError("--trace-emissions: cannot open " + path + " for writing");
  out << "t_write_ns,t_sched_ns,request_id,x_request_id,tokens\n";
  return std::unique_ptr<EmissionTrace>(new EmissionTrace(std::move(out), block_records < 16 ? 16 : block_records));
}

EmissionTrace::EmissionTrace(std::ofstream out, std::size_t block) : out_(std::move(out)), block_(block) {
  cur_.reserve(block_);
  writer_ = std::thread([this] { WriterLoop(); });
}

EmissionTrace::~EmissionTrace() { (void)Close(); }

void EmissionTrace::Register(uint64_t seq, std::string x_request_id) {
  if (x_request_id.empty()) return;
  // Header values may hold anything; keep the CSV parseable.
  for (char& c : x_request_id) {
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = '_';
  }
  std::lock_guard lock(mu_);
  new_ids_.emplace_back(seq, std::move(x_request_id));
}

void EmissionTrace::HandOff() {
  std::vector<Rec> next;
  {
    std::lock_guard lock(mu_);
    full_.push_back(std::move(cur_));
    if (!spare_.empty()) {
      next = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  cv_.notify_one();
  next.clear();
  next.reserve(block_);
  cur_ = std::move(next);
}

void EmissionTrace::WriterLoop() {
  std::string line;
  for (;;) {
    std::vector<Rec> block;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !full_.empty(); });
      for (auto& [seq, id] : new_ids_) ids_[seq] = std::move(id);
      new_ids_.clear();
      if (full_.empty()) return;  // closing and drained
      block = std::move(full_.front());
      full_.pop_front();
    }
    for (const Rec& r : block) {
      auto it = ids_.find(r.seq);
      line.clear();
      fmt::format_to(std::back_inserter(line), "{},{},{},{},{}\n", r.t_write, r.t_sched, ResponseId(r.kind, r.seq),
                     it == ids_.end() ? std::string_view() : std::string_view(it->second), r.tokens);
      out_ << line;
    }
    block.clear();
    std::lock_guard lock(mu_);
    if (spare_.size() < 2) spare_.push_back(std::move(block));
  }
}

Status EmissionTrace::Close() {
  if (closed_) return Status::Ok();
  closed_ = true;
  {
    std::lock_guard lock(mu_);
    if (!cur_.empty()) full_.push_back(std::move(cur_));
    closing_ = true;
  }
  cv_.notify_one();
  writer_.join();
  out_.flush();
  if (!out_) return Status::IoError("--trace-emissions: write failed");
  return Status::Ok();
}

}  // namespace infereng::serve
