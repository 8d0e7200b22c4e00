#include "report/svg_util.h"

#include <fmt/format.h>

#include "report/escape.h"

namespace infereng::report {
namespace {

constexpr double kLegendFont = 11, kLegendRow = 16, kSwatch = 18;

// Walks the legend layout; calls place(item, x, y) for each item, returns the rows used.
template <typename F>
int LayoutLegend(const std::vector<LegendItem>& items, double width, F&& place) {
  if (items.empty()) return 0;
  double x = 0;
  int row = 0;
  for (const LegendItem& it : items) {
    double w = kSwatch + 4 + TextWidth(it.label, kLegendFont) + 14;
    if (x > 0 && x + w > width) {
      x = 0;
      ++row;
    }
    place(it, x, row * kLegendRow);
    x += w;
  }
  return row + 1;
}

}  // namespace

std::string SvgOpen(double width, double height, std::string_view title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {0:.0f} {1:.0f}\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\">"
      "<title>{2}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      width, height, EscapeXml(title));
}

std::string TitleText(std::string_view title, std::string_view subtitle, double width) {
  std::string o = fmt::format("<text class=\"title\" x=\"12\" y=\"19\" font-size=\"14\" font-weight=\"600\" fill=\"#111\">{}</text>\n",
                              EscapeXml(title));
  if (!subtitle.empty()) {
    o += fmt::format("<text class=\"subtitle\" x=\"12\" y=\"36\" font-size=\"11\" fill=\"#666\">{}</text>\n",
                     EscapeXml(subtitle));
  }
  return o;
}

std::string SanitizeId(std::string_view id) {
  std::string out;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out += ok ? c : '-';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9') || out[0] == '-') out.insert(out.begin(), 'c');
  return out;
}

double TextWidth(std::string_view text, double font_px) {
  double units = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    if (c == ' ' || c == '.' || c == ',' || c == 'i' || c == 'l' || c == '1' || c == '(' || c == ')') {
      units += 0.32;
    } else if (c >= 'A' && c <= 'Z') {
      units += 0.68;
    } else {
      units += 0.56;
    }
  }
  return units * font_px;
}

double LegendHeight(const std::vector<LegendItem>& items, double width) {
  return LayoutLegend(items, width, [](const LegendItem&, double, double) {}) * kLegendRow;
}

std::string RenderLegend(const std::vector<LegendItem>& items, double x0, double y0, double width) {
  std::string o = "<g class=\"legend\" font-size=\"11\" fill=\"#333\">";
  LayoutLegend(items, width, [&](const LegendItem& it, double x, double y) {
    double cx = x0 + x, cy = y0 + y + kLegendRow / 2;
    std::string color = EscapeXml(it.color);
    switch (it.shape) {
      case LegendItem::kLine:
        o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                         cx, cy, cx + kSwatch, cy, color, it.dashed ? " stroke-dasharray=\"4 3\"" : "");
        break;
      case LegendItem::kDot:
        o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>", cx + kSwatch / 2, cy, color);
        break;
      case LegendItem::kRing:
        o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"1.5\"/>",
                         cx + kSwatch / 2, cy, color);
        break;
      case LegendItem::kDiamond:
        o += fmt::format("<path d=\"M{:.1f} {:.1f}l5 5l-5 5l-5 -5z\" fill=\"{}\"/>", cx + kSwatch / 2, cy - 5, color);
        break;
      case LegendItem::kBox:
        o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"9\" fill=\"{}\"/>", cx + 2, cy - 4.5,
                         kSwatch - 4, color);
        break;
    }
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", cx + kSwatch + 4, cy + 4, EscapeXml(it.label));
  });
  o += "</g>\n";
  return o;
}

}  // namespace infereng::report
