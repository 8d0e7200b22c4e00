// Small SVG building blocks shared by the chart renderers (svg_chart.cc, svg_bars.cc):
// the <svg> opening tag, the title block and the legend. Internal to report/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace infereng::report {

// Opening <svg> with xmlns, viewBox, a <title> (accessible name) and the font.
std::string SvgOpen(double width, double height, std::string_view title);

// Title (bold) and optional subtitle (grey) at the top left.
std::string TitleText(std::string_view title, std::string_view subtitle, double width);

// Keeps [A-Za-z0-9_-]; anything else becomes '-'; prefixes "c" when it starts with a digit.
std::string SanitizeId(std::string_view id);

// Approximate rendered width of `text` at `font_px` in a sans-serif font (no layout engine).
double TextWidth(std::string_view text, double font_px);

struct LegendItem {
  enum Shape { kLine, kDot, kRing, kDiamond, kBox };
  std::string label;
  std::string color;
  Shape shape = kLine;
  bool dashed = false;
};

// Items flow left to right and wrap within `width`.
double LegendHeight(const std::vector<LegendItem>& items, double width);
std::string RenderLegend(const std::vector<LegendItem>& items, double x, double y, double width);

}  // namespace infereng::report
