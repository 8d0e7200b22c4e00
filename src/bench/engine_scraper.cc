#include "bench/engine_scraper.h"

#include <cerrno>
#include <cstring>

#include "client/llamacpp_slots.h"
#include "client/prometheus.h"

namespace infereng::bench {

Result<std::unique_ptr<EngineScraper>> EngineScraper::Start(ScraperOptions options) {
  if (options.interval <= 0) return Status::InvalidArgument("scrape interval: must be > 0");
  if (!options.fetch) return Status::InvalidArgument("engine scraper: no fetch function");
  std::FILE* f = std::fopen(options.path.c_str(), "ae");
  if (f == nullptr) return Status::IoError(options.path + ": " + std::strerror(errno));
  return std::unique_ptr<EngineScraper>(new EngineScraper(std::move(options), f));
}

EngineScraper::EngineScraper(ScraperOptions options, std::FILE* file)
    : opt_(std::move(options)), file_(file), thread_([this] { Loop(); }) {}

EngineScraper::~EngineScraper() { (void)Stop(); }

Status EngineScraper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && write_status_.ok()) {
      write_status_ = Status::IoError(opt_.path + ": " + std::strerror(errno));
    }
    file_ = nullptr;
  }
  return write_status_;
}

void EngineScraper::Loop() {
  int64_t tick = 1;
  while (true) {
    const Nanos due = opt_.t0 + tick * opt_.interval;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const Nanos wait = due - opt_.clock->Now();
      if (wait > 0) cv_.wait_for(lock, std::chrono::nanoseconds(wait), [this] { return stop_; });
      if (stop_) break;
    }
    ScrapeOnce();
    // A scrape that overran its interval skips the ticks it missed (no burst of catch-up scrapes).
    const Nanos now = opt_.clock->Now();
    tick = std::max<int64_t>(tick + 1, (now - opt_.t0) / opt_.interval + 1);
  }
  ScrapeOnce();  // the end of the phase
}

void EngineScraper::ScrapeOnce() {
  const Nanos start = opt_.clock->Now();
  Result<std::string> body = opt_.fetch();
  const Nanos end = opt_.clock->Now();
  const double t_s = NanosToSeconds(end - opt_.t0);
  nlohmann::json line;
  Result<client::Scrape> parsed = body.ok() ? client::ParsePrometheusText(*body) : Result<client::Scrape>(body.status());
  if (parsed.ok()) {
    line = sampler_.Sample(*parsed, t_s);
    if (opt_.fetch_slots) AddSlots(line);
    ++scrapes_;
  } else {
    line = {{"t_s", t_s}, {"error", parsed.status().message()}};
    if (first_error_.empty()) first_error_ = parsed.status().message();
    ++failures_;
  }
  line["scrape_ms"] = NanosToMillis((opt_.fetch_slots ? opt_.clock->Now() : end) - start);
  if (!write_status_.ok()) return;
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
    write_status_ = Status::IoError(opt_.path + ": " + std::strerror(errno));
  }
}

// A failed /slots keeps the /metrics signals: the line says why the slot signals are absent.
void EngineScraper::AddSlots(nlohmann::json& line) {
  Result<std::string> body = opt_.fetch_slots();
  Result<client::SlotsSnapshot> slots =
      body.ok() ? client::ParseLlamaCppSlots(*body) : Result<client::SlotsSnapshot>(body.status());
  if (slots.ok()) {
    client::AddSlotSignals(*slots, line["signals"]);
    return;
  }
  line["slots_error"] = slots.status().message();
  ++slot_failures_;
}

}  // namespace infereng::bench
