// SVG charts generated in C++: an XY chart (lines, points, steps, reference lines,
// annotated markers, legend) plus a horizontal bar chart and a per-request waterfall.
//
// Output is a standalone <svg> element (inline in report.html, no scripts, no external
// references). Every piece of text goes through EscapeXml: titles, series names and
// labels are user data (card names, error messages). Non-finite values are skipped; log
// axes skip non-positive values; empty charts draw their frame with "no data".
// Large series are thinned to `max_points` for file size (every k-th point, ends kept).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace infereng::report {

struct AxisSpec {
  std::string label{};
  bool log = false;
  bool from_zero = false;  // linear: include 0 in the range
  double min = 0, max = 0; // forced bounds when min < max
};

struct Series {
  enum class Style { kLine, kPoints, kLinePoints, kStep };
  std::string name{};
  std::vector<double> x{}, y{};
  Style style = Style::kLine;
  std::string color{};   // "" = palette colour by index
  bool dashed = false;
  bool hollow = false;  // points drawn as rings (e.g. over-saturated sweep points)
  std::vector<std::string> point_labels{};  // optional hover text per point (<title>)
};

// A horizontal (y = value) or vertical (x = value) line across the plot, e.g. an SLO.
struct RefLine {
  bool vertical = true;
  double value = 0;
  std::string label{};
  std::string color = "#c0392b";
};

// A highlighted point with a text label, e.g. the knee or the max-goodput point.
struct Marker {
  double x = 0, y = 0;
  std::string label{};
  std::string color = "#000000";
};

struct ChartSpec {
  std::string id{};        // unique in the page (clip-path ids); "" = derived from the title
  std::string title{};
  std::string subtitle{};  // one line under the title (units, sample counts)
  AxisSpec x{}, y{};
  std::vector<Series> series{};
  std::vector<RefLine> ref_lines{};
  std::vector<Marker> markers{};
  int width = 640;
  int height = 360;
  std::size_t max_points = 1500;  // per series
};

std::string RenderChart(const ChartSpec& spec);

// Horizontal bars, one per (label, value), largest first as given.
struct BarChartSpec {
  std::string id{}, title{}, subtitle{}, value_label{};
  std::vector<std::pair<std::string, double>> bars{};
  std::string color = "#c0392b";
  int width = 640;
};
std::string RenderBarChart(const BarChartSpec& spec);

// One row per request: coloured segments on a shared time axis (queue, prefill, decode).
struct WaterfallRow {
  std::string label{};
  struct Segment {
    double start = 0, end = 0;
    int phase = 0;  // index into WaterfallSpec::phases
  };
  std::vector<Segment> segments{};
  std::string tooltip{};
  bool error = false;  // drawn with a red outline
};
struct WaterfallSpec {
  std::string id{}, title{}, subtitle{}, x_label{};
  std::vector<std::pair<std::string, std::string>> phases{};  // (name, colour)
  std::vector<WaterfallRow> rows{};
  int width = 640;
};
std::string RenderWaterfall(const WaterfallSpec& spec);

// Palette colour i (colour-blind-safe, cycles).
const std::string& PaletteColor(std::size_t i);

}  // namespace infereng::report
