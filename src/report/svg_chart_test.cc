#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "report/axis.h"
#include "report/escape.h"

namespace infereng::report {
namespace {

int Count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

TEST(EscapeTest, EscapesMarkupAndQuotes) {
  EXPECT_EQ(EscapeXml("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
}

TEST(EscapeTest, ReplacesControlCharsAndInvalidUtf8) {
  EXPECT_EQ(EscapeXml(std::string("a\x01z", 3)), "a\xEF\xBF\xBDz");
  EXPECT_EQ(EscapeXml("\xC3\xA9"), "\xC3\xA9");             // é kept
  EXPECT_EQ(EscapeXml("x\xC3"), "x\xEF\xBF\xBD");           // truncated sequence
  EXPECT_EQ(EscapeXml("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(EscapeXml("a\nb\tc"), "a\nb\tc");
}

TEST(EscapeTest, CsvQuotesAndDefusesFormulas) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("=cmd()"), "'=cmd()");
  EXPECT_EQ(CsvField("-1.5"), "-1.5");
  EXPECT_EQ(MarkdownCell("a|b\n<i>"), "a\\|b &lt;i&gt;");
}

TEST(AxisTest, NiceLinearTicksCoverData) {
  Ticks t = NiceLinearTicks({0.3, 9.2}, 5);
  EXPECT_DOUBLE_EQ(t.step, 2);
  EXPECT_DOUBLE_EQ(t.range.lo, 0);
  EXPECT_DOUBLE_EQ(t.range.hi, 10);
  EXPECT_EQ(t.values.size(), 6u);
  Ticks u = NiceLinearTicks({112, 187}, 5);
  EXPECT_LE(u.range.lo, 112);
  EXPECT_GE(u.range.hi, 187);
  EXPECT_DOUBLE_EQ(u.step, 20);
}

TEST(AxisTest, DegenerateRangesAreWidened) {
  Ticks t = NiceLinearTicks({5, 5});
  EXPECT_LT(t.range.lo, 5);
  EXPECT_GT(t.range.hi, 5);
  Ticks z = NiceLinearTicks({0, 0});
  EXPECT_GE(z.range.lo, 0);
  EXPECT_GT(z.range.hi, 0);
  Ticks nan = NiceLinearTicks({std::nan(""), 1});
  EXPECT_LT(nan.range.lo, nan.range.hi);
}

TEST(AxisTest, LogTicksAreDecades) {
  Ticks t = NiceLogTicks({3, 4000});
  ASSERT_FALSE(t.values.empty());
  EXPECT_DOUBLE_EQ(t.values.front(), 1);
  EXPECT_DOUBLE_EQ(t.values.back(), 10000);
  EXPECT_EQ(t.values.size(), 5u);
  Ticks fine = NiceLogTicks({12, 80});
  EXPECT_DOUBLE_EQ(fine.values.front(), 10);
  EXPECT_DOUBLE_EQ(fine.values.back(), 100);
  EXPECT_GT(fine.values.size(), 2u);  // 10 20 50 100
}

TEST(AxisTest, FormatTick) {
  EXPECT_EQ(FormatTick(0.5, 0.1), "0.5");
  EXPECT_EQ(FormatTick(2.5, 2.5), "2.5");
  EXPECT_EQ(FormatTick(20000, 5000), "20k");
  EXPECT_EQ(FormatTick(1500000, 500000), "1.5M");
  EXPECT_EQ(FormatTick(100, 50), "100");
  EXPECT_EQ(FormatNumber(0.012345), "0.0123");
  EXPECT_EQ(FormatNumber(123.456), "123");
  EXPECT_EQ(FormatNumber(std::nan("")), "-");
}

TEST(AxisTest, ScaleMapsLinearAndLog) {
  Scale lin({0, 10}, false, 100);
  EXPECT_DOUBLE_EQ(lin(5), 50);
  Scale lg({1, 100}, true, 100);
  EXPECT_NEAR(lg(10), 50, 1e-9);
}

ChartSpec SampleChart() {
  ChartSpec c;
  c.id = "ttft";
  c.title = "TTFT CDF";
  c.x = {.label = "TTFT (ms)"};
  c.y = {.label = "share of requests"};
  c.series.push_back({.name = "measured", .x = {1, 2, 3}, .y = {0.33, 0.66, 1}, .style = Series::Style::kStep});
  c.ref_lines.push_back({.vertical = true, .value = 2.5, .label = "SLO P99 2.5 ms"});
  return c;
}

TEST(SvgChartTest, RendersAxesSeriesAndRefLines) {
  std::string svg = RenderChart(SampleChart());
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("TTFT (ms)"), std::string::npos);
  EXPECT_NE(svg.find("share of requests"), std::string::npos);
  EXPECT_NE(svg.find("SLO P99 2.5 ms"), std::string::npos);
  EXPECT_EQ(Count(svg, "<path d=\"M"), 1);  // one series line
  EXPECT_NE(svg.find("clip-path=\"url(#ttft-clip)\""), std::string::npos);
  EXPECT_EQ(svg.find("no data"), std::string::npos);
  EXPECT_EQ(Count(svg, "<svg"), Count(svg, "</svg>"));
}

TEST(SvgChartTest, EscapesEveryUserString) {
  ChartSpec c = SampleChart();
  const std::string evil = "<script>alert(1)</script>\"'&";
  c.title = evil;
  c.subtitle = evil;
  c.x.label = evil;
  c.series[0].name = evil;
  c.series[0].color = "red\" onload=\"x";
  c.ref_lines[0].label = evil;
  c.markers.push_back({.x = 2, .y = 0.5, .label = evil});
  std::string svg = RenderChart(c);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("onload=\""), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);

  BarChartSpec b{.title = evil, .bars = {{evil, 3}}};
  std::string bars = RenderBarChart(b);
  EXPECT_EQ(bars.find("<script"), std::string::npos);
  WaterfallSpec w{.title = evil, .phases = {{evil, "#123456"}}};
  w.rows.push_back({.label = evil, .segments = {{0, 1, 0}}, .tooltip = evil});
  std::string wf = RenderWaterfall(w);
  EXPECT_EQ(wf.find("<script"), std::string::npos);
}

TEST(SvgChartTest, EmptyAndDegenerateDataDoNotCrash) {
  ChartSpec empty{.title = "empty"};
  std::string svg = RenderChart(empty);
  EXPECT_NE(svg.find("no data"), std::string::npos);

  ChartSpec one{.title = "one point"};
  one.series.push_back({.name = "p", .x = {3}, .y = {3}, .style = Series::Style::kPoints});
  EXPECT_NE(RenderChart(one).find("<circle"), std::string::npos);

  const double inf = std::numeric_limits<double>::infinity();
  ChartSpec bad{.title = "bad", .x = {.log = true}, .y = {.log = true}};
  bad.series.push_back({.name = "s", .x = {0, -1, std::nan(""), inf, 10}, .y = {1, 1, 1, 1, 100}});
  std::string b = RenderChart(bad);
  EXPECT_EQ(b.find("nan"), std::string::npos);
  EXPECT_EQ(b.find("inf"), std::string::npos);

  EXPECT_NE(RenderBarChart({.title = "none"}).find("none"), std::string::npos);
  EXPECT_NE(RenderWaterfall({.title = "w"}).find("no requests"), std::string::npos);
}

// A measured run's waterfall: its labels are whole (they used to be cut to "#12345 @1…")
// and its legend names only what the rows show (no server queue or prefill, which a client
// cannot see; no error outline when nothing failed).
TEST(SvgChartTest, WaterfallLabelsAreWholeAndTheLegendListsOnlyWhatIsDrawn) {
  WaterfallSpec w{.title = "w", .phases = {{"client lag", "#bbbbbb"}, {"server queue", "#e69f00"},
                                           {"prefill", "#0072b2"}, {"decode", "#009e73"},
                                           {"send→first token", "#56b4e9"}, {"until error", "#f2b8b0"}}};
  w.rows.push_back({.label = "#123456 @1234.5s", .segments = {{0, 1, 0}, {1, 5, 4}, {5, 9, 3}}});
  w.rows.push_back({.label = "#7 @0.1s", .segments = {{0, 2, 4}, {2, 3, 3}}});
  const std::string svg = RenderWaterfall(w);
  EXPECT_NE(svg.find(">#123456 @1234.5s</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("…"), std::string::npos);
  for (const char* shown : {"client lag", "decode", "send→first token"}) EXPECT_NE(svg.find(shown), std::string::npos) << shown;
  for (const char* absent : {"server queue", "prefill", "until error", ">error<"}) {
    EXPECT_EQ(svg.find(absent), std::string::npos) << absent;
  }
}

TEST(SvgChartTest, ThinsLargeSeries) {
  ChartSpec c{.title = "big", .max_points = 100};
  Series s{.name = "s", .style = Series::Style::kPoints};
  for (int i = 0; i < 10000; ++i) {
    s.x.push_back(i);
    s.y.push_back(i % 7);
  }
  c.series.push_back(s);
  int circles = Count(RenderChart(c), "<circle");
  EXPECT_GE(circles, 100);
  EXPECT_LE(circles, 102);
}

TEST(SvgChartTest, LogAxisLabelsSayLog) {
  ChartSpec c = SampleChart();
  c.x.log = true;
  EXPECT_NE(RenderChart(c).find("TTFT (ms) (log)"), std::string::npos);
}

}  // namespace
}  // namespace infereng::report
