#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "report/axis.h"
#include "report/escape.h"
#include "report/svg_util.h"

namespace infereng::report {
namespace {

constexpr double kLeft = 64, kRight = 20, kBottom = 46, kTitle = 26;

struct Bounds {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) { lo = std::min(lo, v); hi = std::max(hi, v); }
  bool empty() const { return !(lo <= hi); }
};

bool Usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

Ticks AxisTicks(const AxisSpec& a, Bounds b) {
  if (a.min < a.max) {
    b.lo = a.min;
    b.hi = a.max;
  }
  if (b.empty()) b = {a.log ? 1.0 : 0.0, a.log ? 10.0 : 1.0};
  if (a.log) return NiceLogTicks({b.lo, b.hi});
  if (a.from_zero) {
    b.lo = std::min(b.lo, 0.0);
    b.hi = std::max(b.hi, 0.0);
  }
  // A little headroom so lines at the data's edge (an SLO threshold) do not sit on the frame.
  if (b.hi > b.lo) b.hi += (b.hi - b.lo) * 0.02;
  Ticks t = NiceLinearTicks({b.lo, b.hi});
  if (a.min < a.max) t.range = {a.min, a.max};  // forced: keep exact bounds
  return t;
}

// Indices of the points to draw: all, or every k-th with both ends kept.
std::vector<std::size_t> Thin(std::size_t n, std::size_t max_points) {
  std::vector<std::size_t> idx;
  if (n == 0) return idx;
  std::size_t stride = max_points == 0 || n <= max_points ? 1 : (n + max_points - 1) / max_points;
  for (std::size_t i = 0; i < n; i += stride) idx.push_back(i);
  if (idx.back() != n - 1) idx.push_back(n - 1);
  return idx;
}

}  // namespace

const std::string& PaletteColor(std::size_t i) {
  // Okabe–Ito (colour-blind safe), blue first.
  static const std::string kPalette[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                         "#56b4e9", "#d55e00", "#7f7f7f", "#f0e442"};
  return kPalette[i % std::size(kPalette)];
}

std::string RenderChart(const ChartSpec& spec) {
  const double W = spec.width, H = spec.height;
  std::string id = spec.id.empty() ? fmt::format("c{:x}", std::hash<std::string>{}(spec.title)) : spec.id;
  id = SanitizeId(id);

  // Legend entries: series with names, then reference lines and markers.
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const Series& s = spec.series[i];
    if (s.name.empty()) continue;
    bool points = s.style == Series::Style::kPoints;
    legend.push_back({s.name, s.color.empty() ? PaletteColor(i) : s.color,
                      points ? (s.hollow ? LegendItem::kRing : LegendItem::kDot) : LegendItem::kLine, s.dashed});
  }
  for (const RefLine& r : spec.ref_lines) {
    if (!r.label.empty()) legend.push_back({r.label, r.color, LegendItem::kLine, true});
  }
  for (const Marker& m : spec.markers) {
    if (!m.label.empty()) legend.push_back({m.label, m.color, LegendItem::kDiamond, false});
  }
  double top = kTitle + (spec.subtitle.empty() ? 0 : 16);
  double legend_y = top + 6;
  double legend_h = LegendHeight(legend, W - kLeft - kRight);
  top += legend_h + 12;
  const double pw = W - kLeft - kRight, ph = H - top - kBottom;

  Bounds bx, by;
  for (const Series& s : spec.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (Usable(s.x[i], spec.x.log) && Usable(s.y[i], spec.y.log)) {
        bx.Add(s.x[i]);
        by.Add(s.y[i]);
      }
    }
  }
  bool has_data = !bx.empty();
  for (const RefLine& r : spec.ref_lines) {
    if (Usable(r.value, r.vertical ? spec.x.log : spec.y.log)) (r.vertical ? bx : by).Add(r.value);
  }
  for (const Marker& m : spec.markers) {
    if (Usable(m.x, spec.x.log) && Usable(m.y, spec.y.log)) {
      bx.Add(m.x);
      by.Add(m.y);
    }
  }
  Ticks tx = AxisTicks(spec.x, bx), ty = AxisTicks(spec.y, by);
  Scale sx(tx.range, spec.x.log, pw), sy(ty.range, spec.y.log, ph);
  auto X = [&](double v) { return kLeft + sx(v); };
  auto Y = [&](double v) { return top + ph - sy(v); };

  std::string o = SvgOpen(W, H, spec.title);
  o += fmt::format("<defs><clipPath id=\"{}-clip\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/></clipPath></defs>\n",
                   id, kLeft, top, pw, ph);
  o += TitleText(spec.title, spec.subtitle, W);
  o += RenderLegend(legend, kLeft, legend_y, W - kLeft - kRight);

  // Grid, ticks and tick labels.
  o += "<g class=\"axis\" font-size=\"11\" fill=\"#444\">\n";
  for (double v : tx.values) {
    double x = X(v);
    if (x < kLeft - 0.5 || x > kLeft + pw + 0.5) continue;
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e5e5e5\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                     x, top, top + ph, top + ph + 15, EscapeXml(FormatTick(v, tx.step)));
  }
  for (double v : ty.values) {
    double y = Y(v);
    if (y < top - 0.5 || y > top + ph + 0.5) continue;
    o += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\" stroke=\"#e5e5e5\"/>"
                     "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                     y, kLeft, kLeft + pw, kLeft - 6, y + 4, EscapeXml(FormatTick(v, ty.step)));
  }
  o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#888\"/>\n",
                   kLeft, top, pw, ph);
  o += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>\n",
                   kLeft + pw / 2, H - 10, EscapeXml(spec.x.label + (spec.x.log ? " (log)" : "")));
  o += fmt::format("<text class=\"ylabel\" transform=\"translate(14 {:.1f}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>\n",
                   top + ph / 2, EscapeXml(spec.y.label + (spec.y.log ? " (log)" : "")));
  o += "</g>\n";

  if (!has_data) {
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"14\" fill=\"#999\">no data</text>\n",
                     kLeft + pw / 2, top + ph / 2);
  }

  // Series, clipped to the plot area.
  o += fmt::format("<g clip-path=\"url(#{}-clip)\">\n", id);
  for (std::size_t si = 0; si < spec.series.size(); ++si) {
    const Series& s = spec.series[si];
    const std::string& color = s.color.empty() ? PaletteColor(si) : s.color;
    std::size_t n = std::min(s.x.size(), s.y.size());
    std::vector<std::size_t> idx = Thin(n, spec.max_points);
    bool line = s.style != Series::Style::kPoints;
    bool dots = s.style == Series::Style::kPoints || s.style == Series::Style::kLinePoints;
    if (line) {
      std::string d;
      bool pen_down = false;
      double last_y = 0;
      for (std::size_t i : idx) {
        if (!Usable(s.x[i], spec.x.log) || !Usable(s.y[i], spec.y.log)) {
          pen_down = false;  // a gap in the data breaks the line
          continue;
        }
        double x = X(s.x[i]), y = Y(s.y[i]);
        if (!pen_down) {
          d += fmt::format("M{:.1f} {:.1f}", x, y);
          pen_down = true;
        } else if (s.style == Series::Style::kStep) {
          d += fmt::format("H{:.1f}V{:.1f}", x, y);
        } else {
          d += fmt::format("L{:.1f} {:.1f}", x, y);
        }
        last_y = y;
      }
      (void)last_y;
      if (!d.empty()) {
        o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{}/>\n", d, EscapeXml(color),
                         s.dashed ? " stroke-dasharray=\"5 3\"" : "");
      }
    }
    if (dots) {
      double r = idx.size() > 300 ? 1.6 : 3;
      if (s.hollow) {
        o += fmt::format("<g fill=\"#fff\" stroke=\"{}\" stroke-width=\"1.5\">", EscapeXml(color));
      } else {
        o += fmt::format("<g fill=\"{}\"{}>", EscapeXml(color), idx.size() > 300 ? " fill-opacity=\"0.5\"" : "");
      }
      for (std::size_t i : idx) {
        if (!Usable(s.x[i], spec.x.log) || !Usable(s.y[i], spec.y.log)) continue;
        if (i < s.point_labels.size() && !s.point_labels[i].empty()) {
          o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"><title>{}</title></circle>", X(s.x[i]), Y(s.y[i]), r,
                           EscapeXml(s.point_labels[i]));
        } else {
          o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>", X(s.x[i]), Y(s.y[i]), r);
        }
      }
      o += "</g>\n";
    }
  }
  for (const RefLine& r : spec.ref_lines) {
    if (!Usable(r.value, r.vertical ? spec.x.log : spec.y.log)) continue;
    if (r.vertical) {
      o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>{4}</title></line>\n",
                       X(r.value), top, top + ph, EscapeXml(r.color), EscapeXml(r.label));
    } else {
      o += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\" stroke=\"{3}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>{4}</title></line>\n",
                       Y(r.value), kLeft, kLeft + pw, EscapeXml(r.color), EscapeXml(r.label));
    }
  }
  for (const Marker& m : spec.markers) {
    if (!Usable(m.x, spec.x.log) || !Usable(m.y, spec.y.log)) continue;
    double x = X(m.x), y = Y(m.y);
    o += fmt::format("<path d=\"M{:.1f} {:.1f}l7 7l-7 7l-7 -7z\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"1\"><title>{}</title></path>\n",
                     x, y - 7, EscapeXml(m.color), EscapeXml(m.label));
  }
  o += "</g>\n</svg>\n";
  return o;
}

}  // namespace infereng::report
