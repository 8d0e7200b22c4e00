// One pass accumulating a trace's records; Finish() computes the statistics and fits.
#include "trace/characterization.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "trace/fits.h"

namespace infereng::trace {
namespace {

constexpr double kMaxSpanS = 100 * 86400.0;
constexpr std::size_t kMaxTenants = 100'000, kMaxSessions = 10'000'000, kMaxCategories = 1000;
constexpr double kZ10 = -1.2815515655446004, kZ90 = 1.2815515655446004, kZ99 = 2.3263478740408408;

// Counts of complete `w`-second windows from per-second counts.
std::vector<double> WindowCounts(const std::vector<uint32_t>& per_second, double span_s, int64_t w) {
  const auto windows = static_cast<int64_t>(std::floor(span_s / static_cast<double>(w)));
  std::vector<double> out(static_cast<std::size_t>(std::max<int64_t>(windows, 0)), 0.0);
  for (std::size_t s = 0; s < per_second.size(); ++s) {
    const auto k = static_cast<int64_t>(s) / w;
    if (k < windows) out[static_cast<std::size_t>(k)] += per_second[s];
  }
  return out;
}

void ArrivalFigures(const std::vector<uint32_t>& per_second, ArrivalStats* a) {
  for (int64_t w : {1, 10, 60, 600}) {
    const std::vector<double> c = WindowCounts(per_second, a->span_s, w);
    WindowFigure f{static_cast<double>(w), static_cast<int64_t>(c.size()), 0, 0};
    if (c.size() >= 2) {
      const double mean = std::accumulate(c.begin(), c.end(), 0.0) / static_cast<double>(c.size());
      double var = 0;
      for (double x : c) var += (x - mean) * (x - mean);
      var /= static_cast<double>(c.size());
      f.value = mean > 0 ? var / mean : 0;
    } else {
      f.windows = 0;
    }
    a->dispersion.push_back(f);
  }
  for (int64_t w : {1, 60, 3600}) {
    const std::vector<double> c = WindowCounts(per_second, a->span_s, w);
    WindowFigure f{static_cast<double>(w), static_cast<int64_t>(c.size()), 0, 0};
    if (!c.empty() && a->mean_rate > 0) {
      f.peak_rate = *std::max_element(c.begin(), c.end()) / static_cast<double>(w);
      f.value = f.peak_rate / a->mean_rate;
    }
    a->peak_to_mean.push_back(f);
  }
  const int64_t minutes = static_cast<int64_t>(per_second.size() + 59) / 60;
  a->per_minute.assign(static_cast<std::size_t>(minutes), 0);
  a->per_hour.assign(static_cast<std::size_t>((per_second.size() + 3599) / 3600), 0);
  for (std::size_t s = 0; s < per_second.size(); ++s) {
    a->per_minute[s / 60] += per_second[s];
    a->per_hour[s / 3600] += per_second[s];
  }
}

void FitArrivals(std::vector<double>& gaps, ArrivalStats* a) {
  if (gaps.empty()) return;
  std::sort(gaps.begin(), gaps.end());
  const double n = static_cast<double>(gaps.size());
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / n;
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  var /= n;
  a->gap_mean_s = mean;
  a->gap_cv = mean > 0 ? std::sqrt(var) / mean : 0;
  a->zero_gaps = std::count(gaps.begin(), gaps.end(), 0.0);
  a->ks_critical = 1.36 / std::sqrt(n);
  if (!(mean > 0)) return;
  a->poisson = {"poisson", KsDistance(gaps, [&](double x) { return 1 - std::exp(-x / mean); }), 1, mean, 0};
  const double cv = std::max(a->gap_cv, 1e-3);
  const double shape = 1 / (cv * cv), scale = mean / shape;
  a->gamma = {"gamma", KsDistance(gaps, [&](double x) { return GammaCdf(shape, scale, x); }), shape, scale, 0};
  // Gamma (poisson is gamma at CV 1) is the card's process when the CV is clearly not 1 and
  // it fits no worse; coarse timestamps (many equal times) defeat both fits alike, and then
  // the CV still measures the burstiness.
  a->chosen = a->gamma.ks_d <= a->poisson.ks_d && std::fabs(a->gap_cv - 1) > 0.05 ? "gamma" : "poisson";
}

void FitLengths(std::vector<double>& v, LengthStats* l) {
  if (v.empty()) return;
  l->stats = stats::SummarizeInPlace(v);  // sorts v
  l->p10 = stats::PercentileSorted(v, 10);
  l->zeros = std::count(v.begin(), v.end(), 0.0);
  const double qs[] = {l->p10, l->stats.p50, l->stats.p90, l->stats.p99};
  auto quantile_error = [&](auto&& q_of) {
    const double ps[] = {10, 50, 90, 99};
    double worst = 0;
    for (int i = 0; i < 4; ++i) {
      if (qs[i] > 0) worst = std::max(worst, std::fabs(q_of(ps[i]) - qs[i]) / qs[i]);
    }
    return worst;
  };
  // Lognormal in the card's own form: median p50 and 99th percentile p99.
  if (l->stats.p50 > 0 && l->stats.p99 >= l->stats.p50) {
    const double mu = std::log(l->stats.p50), sigma = std::log(l->stats.p99 / l->stats.p50) / kZ99;
    l->lognormal = {"lognormal", KsDistance(v, [&](double x) { return LognormalCdf(mu, sigma, x); }), mu, sigma, 0};
    l->lognormal.max_quantile_error = quantile_error([&](double p) {
      const double z = p == 10 ? kZ10 : p == 50 ? 0 : p == 90 ? kZ90 : kZ99;
      return std::exp(mu + sigma * z);
    });
  }
  const double mean = l->stats.mean, var = l->stats.stddev * l->stats.stddev;
  if (mean > 0 && var > 0) {
    const double shape = mean * mean / var, scale = var / mean;
    l->gamma = {"gamma", KsDistance(v, [&](double x) { return GammaCdf(shape, scale, x); }), shape, scale, 0};
    l->gamma.max_quantile_error =
        quantile_error([&](double p) { return GammaQuantile(shape, scale, p / 100); });
  }
  l->best = "empirical";
  double best_d = 1;
  for (const FitResult* f : {&l->lognormal, &l->gamma}) {
    if (!f->name.empty() && f->ks_d < best_d) {
      best_d = f->ks_d;
      l->best = f->name;
    }
  }
  l->card_form = !l->lognormal.name.empty() && l->lognormal.max_quantile_error <= 0.05 ? "lognormal" : "empirical";
  l->sorted = std::move(v);
}

double Pearson(double n, double sx, double sy, double sxx, double syy, double sxy) {
  const double cov = sxy / n - (sx / n) * (sy / n);
  const double vx = sxx / n - (sx / n) * (sx / n), vy = syy / n - (sy / n) * (sy / n);
  return vx > 0 && vy > 0 ? cov / std::sqrt(vx * vy) : 0;
}

}  // namespace

LittlesLaw ApplyLittlesLaw(const ArrivalStats& a, double latency_s, std::string basis) {
  LittlesLaw l{.latency_s = latency_s, .basis = std::move(basis), .at_mean = a.mean_rate * latency_s};
  for (const WindowFigure& w : a.peak_to_mean) {
    if (w.windows == 0) continue;
    if (w.window_s == 1) l.at_peak_1s = w.peak_rate * latency_s;
    if (w.window_s == 60) l.at_peak_1min = w.peak_rate * latency_s;
  }
  return l;
}

Characterizer::Characterizer(CharacterizeOptions options) : options_(std::move(options)) {
  for (int64_t b : options_.cache_blocks) lru_.emplace_back(b);
  prefix_.block_tokens = options_.block_tokens;
  if (options_.infer_sessions) linker_.emplace(options_.block_tokens);
}

Status Characterizer::Add(const TraceRecord& r) {
  // The caller puts the file name in front (CharacterizeFile): "FILE:LINE: ...".
  const std::string where = ":" + std::to_string(r.line) + ": ";
  if (n_ == 0) {
    first_t_ = r.t_s;
  } else {
    gaps_.push_back(r.t_s - last_t_);
  }
  last_t_ = r.t_s;
  const double offset = r.t_s - first_t_;
  if (offset > kMaxSpanS) {
    return Status::InvalidArgument(where + "the trace spans more than 100 days (" + fmt::format("{:.4g}", offset / 86400) +
                                   " days); check --time-unit (ms written as seconds?)");
  }
  const auto sec = static_cast<std::size_t>(offset);
  if (sec >= per_second_.size()) per_second_.resize(sec + 1, 0);
  ++per_second_[sec];
  ++n_;
  const auto x = static_cast<double>(r.input_tokens), y = static_cast<double>(r.output_tokens);
  input_.push_back(x);
  output_.push_back(y);
  sx_ += x, sy_ += y, sxx_ += x * x, syy_ += y * y, sxy_ += x * y;
  if (x >= 1 && y >= 1) {
    const double a = std::log(x), b = std::log(y);
    lx_ += a, ly_ += b, lxx_ += a * a, lyy_ += b * b, lxy_ += a * b;
    ++log_n_;
  }
  // The session first (a first turn's prefix is counted apart, for the card's sessions).
  std::string inferred;
  if (r.session.empty() && linker_ && !r.hash_ids.empty()) {
    inferred = "#" + std::to_string(linker_->Link(r.hash_ids, r.input_tokens, r.t_s));
  }
  bool session_start = false;  // the first turn of a session
  if (const std::string& session = r.session.empty() ? inferred : r.session; !session.empty()) {
    if (sessions_.size() >= kMaxSessions && sessions_.count(session) == 0) {
      return Status::InvalidArgument(where + "more than 10M sessions");
    }
    SessionAcc& s = sessions_[session];
    session_start = s.turns == 0;
    if (session_start) {
      session_starts_.push_back(r.t_s);
      session_first_input_.push_back(x);
    } else {
      const int64_t growth = r.input_tokens - s.last_input;
      session_gaps_.push_back(r.t_s - s.last_t);
      session_growth_.push_back(static_cast<double>(growth));
      session_new_.push_back(static_cast<double>(growth - s.last_output));
    }
    ++s.turns;
    s.last_t = r.t_s;
    s.last_input = r.input_tokens;
    s.last_output = r.output_tokens;
  }
  if (!r.hash_ids.empty()) {
    prefix_.present = true;
    ++prefix_.requests;
    int64_t leading = 0;
    while (leading < static_cast<int64_t>(r.hash_ids.size()) &&
           seen_blocks_.count(r.hash_ids[static_cast<std::size_t>(leading)]) != 0) {
      ++leading;
    }
    const int64_t reusable = std::min(leading * options_.block_tokens, r.input_tokens);
    prefix_.input_tokens += r.input_tokens;
    prefix_.reusable_tokens += reusable;
    if (leading > 0) {
      ++prefix_.cached_prefix_requests;
      cached_tokens_.push_back(static_cast<double>(reusable));
      if (session_start) {
        session_first_cached_.push_back(static_cast<double>(reusable));
        session_first_last_cached_.insert(r.hash_ids[static_cast<std::size_t>(leading - 1)]);
      }
      last_cached_.insert(r.hash_ids[static_cast<std::size_t>(leading - 1)]);
    }
    seen_blocks_.insert(r.hash_ids.begin(), r.hash_ids.end());
    looked_up_blocks_ += static_cast<int64_t>(r.hash_ids.size());
    for (std::size_t i = 0; i < lru_.size(); ++i) {
      const int64_t hits = lru_[i].Access(r.hash_ids);
      if (prefix_.lru.size() <= i) prefix_.lru.push_back({lru_[i].capacity(), 0});
      prefix_.lru[i].hit_rate += static_cast<double>(hits);  // hit blocks; divided in Finish
    }
    if (!r.tenant.empty()) {
      if (tenants_.size() >= kMaxTenants && tenants_.count(r.tenant) == 0) {
        return Status::InvalidArgument(where + "more than 100000 tenants; is the tenant column right?");
      }
      TenantAcc& t = tenants_[r.tenant];
      ++t.requests;
      t.cached += leading > 0;
      t.input += r.input_tokens;
      t.reusable += reusable;
    }
  }
  if (r.items > 0) items_.push_back(static_cast<double>(r.items));
  if (!r.category.empty()) {
    if (categories_.size() >= kMaxCategories && categories_.count(r.category) == 0) {
      return Status::InvalidArgument(where + "more than 1000 distinct classes; is the class column right?");
    }
    ++categories_[r.category];
  }
  return Status::Ok();
}

Result<Characterization> Characterizer::Finish() {
  if (n_ < 2) return Status::InvalidArgument("fewer than 2 requests: nothing to characterise");
  Characterization c;
  ArrivalStats& a = c.arrivals;
  a.requests = n_;
  a.first_t_s = first_t_;
  a.last_t_s = last_t_;
  a.span_s = last_t_ - first_t_;
  if (!(a.span_s > 0)) return Status::InvalidArgument("every request has the same time: no arrival rate");
  a.mean_rate = static_cast<double>(n_) / a.span_s;
  ArrivalFigures(per_second_, &a);
  FitArrivals(gaps_, &a);
  FitLengths(input_, &c.input);
  FitLengths(output_, &c.output);
  const auto n = static_cast<double>(n_);
  c.pearson = Pearson(n, sx_, sy_, sxx_, syy_, sxy_);
  if (log_n_ > 1) c.pearson_log = Pearson(static_cast<double>(log_n_), lx_, ly_, lxx_, lyy_, lxy_);
  if (prefix_.present) {
    PrefixStats& p = c.prefix;
    p = prefix_;
    p.cached_share = static_cast<double>(p.cached_prefix_requests) / static_cast<double>(p.requests);
    p.reusable_share = p.input_tokens > 0 ? static_cast<double>(p.reusable_tokens) / static_cast<double>(p.input_tokens) : 0;
    p.distinct_blocks = static_cast<int64_t>(seen_blocks_.size());
    p.distinct_prefixes = static_cast<int64_t>(last_cached_.size());
    for (auto& l : p.lru) l.hit_rate /= static_cast<double>(looked_up_blocks_);
    for (auto& [tenant, t] : tenants_) {
      p.tenants.push_back({tenant, t.requests, static_cast<double>(t.cached) / static_cast<double>(t.requests),
                           t.input > 0 ? static_cast<double>(t.reusable) / static_cast<double>(t.input) : 0});
    }
    std::sort(p.tenants.begin(), p.tenants.end(), [](const auto& x, const auto& y) {
      return x.requests != y.requests ? x.requests > y.requests : x.tenant < y.tenant;
    });
    if (p.tenants.size() > 20) p.tenants.resize(20);
    p.tenant_count = static_cast<int64_t>(tenants_.size());
    p.cached_tokens = stats::SummarizeInPlace(cached_tokens_);
    p.mean_cached_tokens = p.cached_prefix_requests > 0
                               ? static_cast<double>(p.reusable_tokens) / static_cast<double>(p.cached_prefix_requests)
                               : 0;
  }
  if (!sessions_.empty()) {
    SessionStats& s = c.sessions;
    s.present = true;
    s.source = linker_ ? "inferred" : "ids";
    s.sessions = static_cast<int64_t>(sessions_.size());
    s.follow_ups = static_cast<int64_t>(session_gaps_.size());
    std::vector<double> turns;
    turns.reserve(sessions_.size());
    for (const auto& [id, acc] : sessions_) turns.push_back(static_cast<double>(acc.turns));
    s.turns = stats::SummarizeInPlace(turns);
    s.gap_s = stats::SummarizeInPlace(session_gaps_);
    s.growth_tokens = stats::SummarizeInPlace(session_growth_);
    s.new_message_tokens = stats::SummarizeInPlace(session_new_);
    // The card's sessions: the starts as an arrival process, the rest as fitted samples.
    s.starts.requests = s.sessions;
    std::vector<double> start_gaps;
    start_gaps.reserve(session_starts_.size());
    for (std::size_t i = 1; i < session_starts_.size(); ++i) start_gaps.push_back(session_starts_[i] - session_starts_[i - 1]);
    s.starts.mean_rate = static_cast<double>(s.sessions) / (last_t_ - first_t_);
    FitArrivals(start_gaps, &s.starts);
    if (s.starts.chosen.empty()) s.starts.chosen = "poisson";  // one session, or all at one time: no gap to fit
    FitLengths(session_first_input_, &s.first_input);
    FitLengths(turns, &s.turns_fit);
    std::vector<double> gap_ms, new_message;
    for (double g : session_gaps_) gap_ms.push_back(g * 1e3);
    for (double m : session_new_) new_message.push_back(std::max(1.0, m));
    FitLengths(gap_ms, &s.gap_ms);
    FitLengths(new_message, &s.new_message_fit);
    s.first_cached_requests = static_cast<int64_t>(session_first_cached_.size());
    s.first_distinct_prefixes = static_cast<int64_t>(session_first_last_cached_.size());
    s.first_cached_tokens = stats::SummarizeInPlace(session_first_cached_);
  }
  c.categories = categories_;
  c.items_rows = static_cast<int64_t>(items_.size());
  if (!items_.empty()) c.items = stats::SummarizeInPlace(items_);
  return c;
}

}  // namespace infereng::trace
