// Bar chart and per-request waterfall (declared in svg_chart.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "report/axis.h"
#include "report/escape.h"
#include "report/svg_chart.h"
#include "report/svg_util.h"

namespace infereng::report {
namespace {

std::string ChartId(const std::string& id, const std::string& title) {
  return SanitizeId(id.empty() ? fmt::format("c{:x}", std::hash<std::string>{}(title)) : id);
}

// Label text cut to fit `px` pixels at 11 px, with an ellipsis.
std::string Fit(const std::string& s, double px) {
  if (TextWidth(s, 11) <= px) return s;
  std::string out;
  for (char c : s) {
    if (TextWidth(out + c, 11) > px - 8) break;
    out += c;
  }
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();  // no split UTF-8
  if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80)) out.pop_back();
  return out + "…";
}

}  // namespace

std::string RenderBarChart(const BarChartSpec& spec) {
  const double W = spec.width, row = 22, label_w = 200, right = 70;
  double top = 30 + (spec.subtitle.empty() ? 0 : 16) + 8;
  double n = static_cast<double>(std::max<std::size_t>(spec.bars.size(), 1));
  double H = top + n * row + 34;
  double vmax = 0;
  for (const auto& b : spec.bars) {
    if (std::isfinite(b.second)) vmax = std::max(vmax, b.second);
  }
  Ticks t = NiceLinearTicks({0, vmax > 0 ? vmax : 1}, 4);
  double pw = W - label_w - right;
  Scale sx(t.range, false, pw);
  std::string o = SvgOpen(W, H, spec.title);
  o += TitleText(spec.title, spec.subtitle, W);
  o += "<g font-size=\"11\" fill=\"#333\">\n";
  for (double v : t.values) {
    double x = label_w + sx(v);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e5e5e5\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
                     x, top - 4, top + n * row, top + n * row + 14, EscapeXml(FormatTick(v, t.step)));
  }
  if (spec.bars.empty()) {
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#999\">none</text>\n",
                     label_w + pw / 2, top + row * 0.7);
  }
  for (std::size_t i = 0; i < spec.bars.size(); ++i) {
    const auto& [label, value] = spec.bars[i];
    double y = top + i * row;
    double w = std::isfinite(value) ? std::max(sx(std::max(value, 0.0)), 1.0) : 0;
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", label_w - 8, y + 15,
                     EscapeXml(Fit(label, label_w - 12)));
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {}</title></rect>",
                     label_w, y + 4, w, row - 8, EscapeXml(spec.color), EscapeXml(label), EscapeXml(FormatNumber(value)));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", label_w + w + 6, y + 15, EscapeXml(FormatNumber(value)));
  }
  o += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>\n",
                   label_w + pw / 2, H - 6, EscapeXml(spec.value_label));
  o += "</g>\n</svg>\n";
  return o;
}

std::string RenderWaterfall(const WaterfallSpec& spec) {
  // The label column fits the widest label as Fit() measures it (at 11 px, so the 9 px text
  // has room to spare): "#1234 @123.4s" is never cut.
  double label_w = 0;
  for (const WaterfallRow& r : spec.rows) label_w = std::max(label_w, TextWidth(r.label, 11));
  const double W = spec.width, row = 12, left = std::clamp(std::ceil(label_w) + 12, 70.0, W / 4), right = 20;
  // The legend lists the phases and the error outline that these rows use, nothing else.
  std::vector<bool> used(spec.phases.size(), false);
  bool any_error = false;
  for (const WaterfallRow& r : spec.rows) {
    any_error = any_error || r.error;
    for (const auto& seg : r.segments) {
      if (seg.phase >= 0 && static_cast<std::size_t>(seg.phase) < used.size()) used[static_cast<std::size_t>(seg.phase)] = true;
    }
  }
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < spec.phases.size(); ++i) {
    if (used[i]) legend.push_back({spec.phases[i].first, spec.phases[i].second, LegendItem::kBox, false});
  }
  if (any_error) legend.push_back({"error", "#c0392b", LegendItem::kLine, false});
  double top = 30 + (spec.subtitle.empty() ? 0 : 16);
  double legend_y = top + 2;
  top += LegendHeight(legend, W - left - right) + 10;
  double n = static_cast<double>(std::max<std::size_t>(spec.rows.size(), 1));
  double ph = n * row, H = top + ph + 44, pw = W - left - right;
  double lo = 0, hi = 0;
  bool first = true;
  for (const WaterfallRow& r : spec.rows) {
    for (const auto& s : r.segments) {
      if (!std::isfinite(s.start) || !std::isfinite(s.end)) continue;
      if (first) { lo = s.start; hi = s.end; first = false; }
      lo = std::min(lo, s.start);
      hi = std::max(hi, s.end);
    }
  }
  Ticks t = NiceLinearTicks({std::min(lo, 0.0), hi > lo ? hi : lo + 1});
  Scale sx(t.range, false, pw);
  std::string id = ChartId(spec.id, spec.title);
  std::string o = SvgOpen(W, H, spec.title);
  o += TitleText(spec.title, spec.subtitle, W);
  o += RenderLegend(legend, left, legend_y, W - left - right);
  o += "<g font-size=\"11\" fill=\"#444\">\n";
  for (double v : t.values) {
    double x = left + sx(v);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e5e5e5\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                     x, top, top + ph, top + ph + 15, EscapeXml(FormatTick(v, t.step)));
  }
  o += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>\n",
                   left + pw / 2, H - 10, EscapeXml(spec.x_label));
  o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#888\"/>\n", left, top,
                   pw, ph);
  if (spec.rows.empty()) {
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#999\">no requests</text>\n",
                     left + pw / 2, top + row - 2);
  }
  o += "</g>\n";
  o += fmt::format("<g class=\"rows\" id=\"{}-rows\">\n", id);
  bool label_every = spec.rows.size() <= 40;
  for (std::size_t i = 0; i < spec.rows.size(); ++i) {
    const WaterfallRow& r = spec.rows[i];
    double y = top + i * row;
    if (label_every || i % 5 == 0) {
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"9\" fill=\"#666\">{}</text>", left - 4,
                       y + row - 3, EscapeXml(Fit(r.label, left - 8)));
    }
    o += "<g>";
    if (!r.tooltip.empty()) o += "<title>" + EscapeXml(r.tooltip) + "</title>";
    for (const auto& s : r.segments) {
      if (!std::isfinite(s.start) || !std::isfinite(s.end) || s.end < s.start) continue;
      std::string color = s.phase >= 0 && static_cast<std::size_t>(s.phase) < spec.phases.size() ? spec.phases[s.phase].second
                                                                                                  : "#999999";
      o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"{}/>", left + sx(s.start),
                       y + 1.5, std::max(sx(s.end) - sx(s.start), 0.8), row - 3, EscapeXml(color),
                       r.error ? " stroke=\"#c0392b\" stroke-width=\"1.2\"" : "");
    }
    o += "</g>\n";
  }
  o += "</g>\n</svg>\n";
  return o;
}

}  // namespace infereng::report
