#include "job/profile_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace infereng::job {

namespace {

using twin::PiecewiseLinear;
using twin::ProfilePoint;

// Points (x, y) -> a curve: sorted by x, equal x averaged.
PiecewiseLinear Curve(std::vector<std::pair<double, double>> xy) {
  std::map<double, std::pair<double, int>> by_x;
  for (const auto& [x, y] : xy) {
    auto& acc = by_x[x];
    acc.first += y;
    acc.second += 1;
  }
  PiecewiseLinear c;
  for (const auto& [x, acc] : by_x) {
    c.x.push_back(x);
    c.y.push_back(acc.first / acc.second);
  }
  return c;
}

// The occupancy grid from the "occupancy" points (profile.cc, MeasureOccupancy): one column
// per batch-token count (ColumnOf); rows on the KV-span axis of the column with the most
// points (each column's own points sit at slightly different spans, its own tokens
// included), every column interpolated onto it (above its last point the end slope, >= 0;
// below its first, its first value; a column of 3+ points is its least-squares line) and
// kept non-decreasing along the span (noise never makes a wider span cheaper).
// Prompts of one requested size count a few tokens apart (the server tokenizes each
// salted prompt on its own: 143, 143, 147), so token counts within 5% of a column's first
// make one column, at their median.
std::map<int64_t, int64_t> ColumnOf(const std::vector<ProfilePoint>& points) {
  std::vector<int64_t> n;
  for (const ProfilePoint& p : points) {
    if (p.kind == "occupancy" && p.new_tokens > 0) n.push_back(p.new_tokens);
  }
  std::sort(n.begin(), n.end());
  std::map<int64_t, int64_t> out;
  for (std::size_t i = 0; i < n.size();) {
    std::size_t j = i;
    while (j < n.size() && static_cast<double>(n[j]) <= 1.05 * static_cast<double>(n[i])) ++j;
    const int64_t median = n[i + (j - i) / 2];
    for (std::size_t k = i; k < j; ++k) out[n[k]] = median;
    i = j;
  }
  return out;
}

void FitOccupancyGrid(const std::vector<ProfilePoint>& points, twin::MeasuredTable* t, std::vector<std::string>* notes) {
  std::map<int64_t, std::vector<std::pair<double, double>>> cols;  // new tokens -> (span, seconds)
  const std::map<int64_t, int64_t> column = ColumnOf(points);
  std::size_t count = 0;
  for (const ProfilePoint& p : points) {
    if (p.kind != "occupancy" || !(p.seconds > 0) || p.kv_occupied_tokens <= 0 || p.new_tokens <= 0) continue;
    cols[column.at(p.new_tokens)].emplace_back(static_cast<double>(p.kv_occupied_tokens), p.seconds);
    ++count;
  }
  if (count == 0) return;
  if (count < 2) {
    notes->push_back("one occupancy point: no occupancy table (the curves price every step)");
    return;
  }
  const std::vector<std::pair<double, double>>* widest = nullptr;
  for (auto& [n, xy] : cols) {
    std::sort(xy.begin(), xy.end());
    if (widest == nullptr || xy.size() > widest->size()) widest = &xy;
  }
  twin::OccupancyTable g;
  for (const auto& [o, sec] : *widest) {
    if (g.kv_occupied.empty() || o > g.kv_occupied.back()) g.kv_occupied.push_back(o);
  }
  for (const auto& [n, xy] : cols) g.batch_tokens.push_back(static_cast<double>(n));
  g.seconds.assign(g.kv_occupied.size(), std::vector<double>(g.batch_tokens.size(), 0));
  std::size_t j = 0;
  for (const auto& [n, xy] : cols) {
    // A column of three or more spans: the least-squares line over them (slope >= 0). A
    // step's attention work grows linearly with the span for a fixed batch, and the line
    // keeps one noisy row (this VM: +50% for seconds at a time) from bending the column.
    double mo = 0, my = 0;
    for (const auto& [o, sec] : xy) {
      mo += o;
      my += sec;
    }
    mo /= static_cast<double>(xy.size());
    my /= static_cast<double>(xy.size());
    double sxy = 0, sxx = 0;
    for (const auto& [o, sec] : xy) {
      sxy += (o - mo) * (sec - my);
      sxx += (o - mo) * (o - mo);
    }
    const bool line = xy.size() >= 3 && sxx > 0;
    const double slope = line ? std::max(0.0, sxy / sxx) : 0;
    twin::PiecewiseLinear col;
    for (const auto& [o, sec] : xy) {
      if (!col.x.empty() && o <= col.x.back()) {  // a repeated span: keep the larger time
        col.y.back() = std::max(col.y.back(), sec);
        continue;
      }
      col.x.push_back(o);
      col.y.push_back(sec);
    }
    double floor = 0;
    for (std::size_t i = 0; i < g.kv_occupied.size(); ++i) {
      // Below the column's first point (a prefill column sits its own tokens higher than
      // the decode column): its first value, never a slope extended down to zero.
      const double o = std::max(g.kv_occupied[i], col.x.front());
      floor = std::max(floor, line ? std::max(1e-9, my + slope * (o - mo)) : col.At(o));
      g.seconds[i][j] = floor;
    }
    ++j;
  }
  if (!g.Validate("table.occupancy").ok()) {
    notes->push_back("occupancy points do not make a grid: no occupancy table");
    return;
  }
  // A grid whose columns do not grow along the span says the step does not depend on the
  // cells other slots hold: each slot has its own KV cache (llama.cpp since its per-slot
  // streams, kv_unified = false, the server's default). Such a grid would price a step of k
  // decoding sequences as k tokens of one prompt, where the curves carry the measured
  // decode batches; so the curves price every step.
  double growth = 0;
  for (std::size_t c = 0; c < g.batch_tokens.size(); ++c) {
    const double first = g.seconds.front()[c];
    if (first > 0) growth = std::max(growth, g.seconds.back()[c] / first - 1);
  }
  if (g.kv_occupied.size() >= 2 && growth < kOccupancyMinGrowth) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "occupancy: the step did not grow with the KV cells other slots hold (at most %+.0f%% from %.0f to "
                  "%.0f cells): each slot has its own KV cache (llama.cpp's kv_unified = false), so no occupancy "
                  "table; the curves price every step",
                  100 * growth, g.kv_occupied.front(), g.kv_occupied.back());
    notes->push_back(buf);
    return;
  }
  // Per cell, a unified cache's decode step grows as much with the cells other slots hold
  // as with the sequence's own context (attention spans both). A per-slot cache's grows far
  // less with the others' (CPU b11669: 0.9 us per other slot's cell, 14 us per own-context
  // cell), and then the own context, which the grid holds fixed, is what prices a step.
  const double span = g.kv_occupied.back() - g.kv_occupied.front();
  const double own = t->context.x.size() >= 2 && t->context.x.back() > t->context.x.front()
                         ? (t->context.y.back() - t->context.y.front()) / (t->context.x.back() - t->context.x.front())
                         : 0;
  if (g.batch_tokens.front() <= 1 && span > 0 && own > 0) {
    const double others = (g.seconds.back()[0] - g.seconds.front()[0]) / span;
    if (others < kOccupancyMinCellShare * own) {
      char buf[360];
      std::snprintf(buf, sizeof buf,
                    "occupancy: a cell another slot holds slowed the decode step by %.2f us, a cell of its own "
                    "context by %.2f us: each slot has its own KV cache (llama.cpp's kv_unified = false), so no "
                    "occupancy table; the curves price every step",
                    1e6 * others, 1e6 * own);
      notes->push_back(buf);
      return;
    }
  }
  t->occupancy = std::move(g);
}

}  // namespace

Result<twin::MeasuredTable> FitProfileTable(const std::vector<ProfilePoint>& points, std::vector<std::string>* notes) {
  std::vector<const ProfilePoint*> ctx, batch, prefill, front;
  for (const ProfilePoint& p : points) {
    if (!(p.seconds > 0)) continue;
    if (p.kind == "decode_context") ctx.push_back(&p);
    else if (p.kind == "decode_batch") batch.push_back(&p);
    else if (p.kind == "prefill") prefill.push_back(&p);
    else if (p.kind == "front_end") front.push_back(&p);
  }
  if (ctx.empty() && batch.empty()) {
    return Status::FailedPrecondition("no decode step was measured: the table needs at least one");
  }
  twin::MeasuredTable t;

  // context(c): batch-1 decode steps (a decode_batch point with batch 1 counts too).
  std::vector<const ProfilePoint*> one = ctx;
  for (const ProfilePoint* p : batch) {
    if (p->batch == 1) one.push_back(p);
  }
  std::sort(one.begin(), one.end(), [](auto* a, auto* b) { return a->context_tokens < b->context_tokens; });
  double base = 0;  // tokens(1): the batch-1 step at no context
  t.context = {{0}, {0}};
  if (!one.empty()) {
    const double c0 = static_cast<double>(one.front()->context_tokens);
    double slope0 = 0;
    for (std::size_t i = 1; i < one.size(); ++i) {
      const double dc = static_cast<double>(one[i]->context_tokens) - c0;
      if (dc > 0) {
        slope0 = std::max(0.0, (one[i]->seconds - one.front()->seconds) / dc);
        break;
      }
    }
    base = std::max(1e-9, one.front()->seconds - slope0 * c0);
    std::vector<std::pair<double, double>> xy = {{0.0, 0.0}};
    for (const ProfilePoint* p : one) {
      if (p->context_tokens > 0) xy.emplace_back(static_cast<double>(p->context_tokens), std::max(0.0, p->seconds - base));
    }
    t.context = Curve(std::move(xy));
    for (std::size_t i = 1; i < t.context.y.size(); ++i) t.context.y[i] = std::max(t.context.y[i], t.context.y[i - 1]);
    if (one.size() < 2) notes->push_back("one batch-1 decode point: the context term is taken as 0");
  } else {
    notes->push_back("no batch-1 decode step: the context term is taken as 0");
  }

  // tokens(n): decode steps of B streams, less their context term.
  std::vector<std::pair<double, double>> tok;
  if (!one.empty()) tok.emplace_back(1.0, base);
  for (const ProfilePoint* p : batch) {
    if (p->batch == 1) continue;
    tok.emplace_back(static_cast<double>(p->new_tokens),
                     std::max(1e-9, p->seconds - t.context.At(static_cast<double>(p->context_tokens))));
  }
  t.tokens = Curve(tok);

  // Front end: the tiny prompt's TTFT less its own prefill step, priced by the decode
  // points (a few tokens cost about a decode step of as many sequences).
  if (!front.empty()) {
    std::vector<double> fe;
    for (const ProfilePoint* p : front) fe.push_back(p->seconds - t.tokens.At(static_cast<double>(p->new_tokens)));
    std::sort(fe.begin(), fe.end());
    t.front_end_s = std::max(0.0, fe[fe.size() / 2]);
  } else {
    notes->push_back("no tiny-prompt TTFT: the front-end cost is taken as 0");
  }
  // Prefill steps: TTFT less the front end (prompts longer than the decode batches extend
  // the curve; shorter ones refine it).
  for (const ProfilePoint* p : prefill) {
    tok.emplace_back(static_cast<double>(p->new_tokens), std::max(1e-9, p->seconds - t.front_end_s - t.context.At(0)));
  }
  t.tokens = Curve(std::move(tok));
  FitOccupancyGrid(points, &t, notes);
  return t;
}

Status FitProfile(twin::ProfileFile* p) {
  INFERENG_ASSIGN_OR_RETURN(p->table, FitProfileTable(p->points, &p->notes));
  const std::vector<double> err = twin::TableRelativeErrors(p->table, p->points);
  double ss = 0, mx = 0;
  for (double e : err) {
    ss += e * e;
    mx = std::max(mx, std::abs(e));
  }
  p->fit_rms_rel_error = err.empty() ? 0 : std::sqrt(ss / static_cast<double>(err.size()));
  p->fit_max_rel_error = mx;
  return Status::Ok();
}

}  // namespace infereng::job
