#include "report/html_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/escape.h"
#include "report/svg_util.h"

namespace infereng::report {
namespace {

constexpr std::string_view kCss = R"css(
:root { --fg:#1d2127; --muted:#5f6b7a; --line:#e3e7ec; --bg:#f6f8fa; --good:#1a7f37; --bad:#c0392b; --accent:#0072b2; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
header.top { background:#fff; border-bottom:1px solid var(--line); padding:18px 28px 12px; }
header.top h1 { margin:0 0 4px; font-size:22px; }
header.top .meta { color:var(--muted); font-size:13px; }
nav { position:sticky; top:0; z-index:1; background:#fff; border-bottom:1px solid var(--line); padding:6px 28px; font-size:13px; display:flex; flex-wrap:wrap; row-gap:2px; }
nav a { color:var(--accent); text-decoration:none; margin-right:16px; white-space:nowrap; }
main { padding:8px 28px 40px; max-width:1400px; }
section { background:#fff; border:1px solid var(--line); border-radius:8px; padding:14px 18px 18px; margin:16px 0; }
section h2 { margin:0 0 8px; font-size:17px; }
section p.intro { margin:0 0 12px; color:var(--muted); }
.notice { border-left:4px solid #e69f00; background:#fff8e6; padding:8px 12px; margin:12px 0; border-radius:4px; }
.notice.info { border-color:var(--accent); background:#eef6fb; }
.kpis { display:grid; grid-template-columns:repeat(auto-fill, minmax(170px, 1fr)); gap:10px; }
.kpi { border:1px solid var(--line); border-radius:6px; padding:8px 12px; }
.kpi .label { color:var(--muted); font-size:12px; }
.kpi .value { font-size:21px; font-weight:600; font-variant-numeric: tabular-nums; }
.kpi .detail { color:var(--muted); font-size:12px; }
.kpi.good .value { color:var(--good); } .kpi.bad .value { color:var(--bad); }
.grid { display:grid; grid-template-columns:repeat(auto-fill, minmax(520px, 1fr)); gap:14px; }
svg.chart { width:100%; height:auto; border:1px solid var(--line); border-radius:6px; }
.wide svg.chart { max-width:1100px; }
table { border-collapse:collapse; width:100%; font-size:13px; font-variant-numeric: tabular-nums; }
th, td { border-bottom:1px solid var(--line); padding:4px 8px; text-align:left; vertical-align:top; }
th { background:var(--bg); font-weight:600; }
td.num, th.num { text-align:right; }
tr.hl td { background:#eef6fb; font-weight:600; }
pre { background:var(--bg); padding:10px; border-radius:6px; overflow-x:auto; font-size:12px; }
.table-wrap { overflow-x:auto; }
footer { color:var(--muted); font-size:12px; padding:0 28px 24px; }
@media print { nav { display:none; } section { break-inside: avoid; } }
)css";

}  // namespace

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::Header(std::string_view heading, const std::vector<std::string>& lines) {
  std::string h = "<header class=\"top\"><h1>" + EscapeXml(heading) + "</h1>";
  for (const std::string& l : lines) h += "<div class=\"meta\">" + EscapeXml(l) + "</div>";
  h += "</header>\n";
  body_.insert(0, h);  // always first, whenever it is called
}

void HtmlPage::Notice(std::string_view text, bool warning) {
  body_ += fmt::format("<div class=\"notice{}\">{}</div>\n", warning ? "" : " info", EscapeXml(text));
}

void HtmlPage::BeginSection(std::string_view id, std::string_view heading, std::string_view intro) {
  std::string sid = SanitizeId(id);
  nav_.emplace_back(sid, std::string(heading));
  body_ += fmt::format("<section id=\"{}\"><h2>{}</h2>\n", sid, EscapeXml(heading));
  if (!intro.empty()) body_ += "<p class=\"intro\">" + EscapeXml(intro) + "</p>\n";
}

void HtmlPage::EndSection() { body_ += "</section>\n"; }

void HtmlPage::Paragraph(std::string_view text) { body_ += "<p>" + EscapeXml(text) + "</p>\n"; }

void HtmlPage::Kpis(const std::vector<Kpi>& kpis) {
  body_ += "<div class=\"kpis\">";
  for (const Kpi& k : kpis) {
    const char* cls = k.state == Kpi::kGood ? " good" : k.state == Kpi::kBad ? " bad" : "";
    body_ += fmt::format("<div class=\"kpi{}\"><div class=\"label\">{}</div><div class=\"value\">{}</div>"
                         "<div class=\"detail\">{}</div></div>",
                         cls, EscapeXml(k.label), EscapeXml(k.value), EscapeXml(k.detail));
  }
  body_ += "</div>\n";
}

void HtmlPage::Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                     const std::vector<int>& numeric) {
  auto is_num = [&](std::size_t c) { return std::find(numeric.begin(), numeric.end(), static_cast<int>(c)) != numeric.end(); };
  body_ += "<div class=\"table-wrap\"><table><thead><tr>";
  for (std::size_t c = 0; c < header.size(); ++c) {
    body_ += fmt::format("<th{}>{}</th>", is_num(c) ? " class=\"num\"" : "", EscapeXml(header[c]));
  }
  body_ += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    bool hl = !row.empty() && !row[0].empty() && row[0][0] == '!';
    body_ += hl ? "<tr class=\"hl\">" : "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      std::string_view cell = row[c];
      if (c == 0 && hl) cell.remove_prefix(1);
      body_ += fmt::format("<td{}>{}</td>", is_num(c) ? " class=\"num\"" : "", EscapeXml(cell));
    }
    body_ += "</tr>\n";
  }
  body_ += "</tbody></table></div>\n";
}

void HtmlPage::Pre(std::string_view text) { body_ += "<pre>" + EscapeXml(text) + "</pre>\n"; }
void HtmlPage::BeginGrid() {
  body_ += "<div class=\"grid\">\n";
  in_grid_ = true;
}
void HtmlPage::AddSvg(const std::string& svg) { body_ += (in_grid_ ? "<div class=\"cell\">" : "<div class=\"wide\">") + svg + "</div>\n"; }
void HtmlPage::EndGrid() {
  body_ += "</div>\n";
  in_grid_ = false;
}

void HtmlPage::LocalLink(std::string_view href, std::string_view text) {
  // Only relative paths: no scheme, no leading slash, no "//" host.
  std::string h(href);
  bool safe = h.find(':') == std::string::npos && !h.empty() && h[0] != '/' && h.find("..") == std::string::npos;
  if (safe) {
    body_ += fmt::format("<a href=\"{}\">{}</a>", EscapeXml(h), EscapeXml(text));
  } else {
    body_ += EscapeXml(text);
  }
}

void HtmlPage::AddRaw(const std::string& html) { body_ += html; }

std::string HtmlPage::Finish() const {
  std::string nav = "<nav>";
  for (const auto& [id, heading] : nav_) nav += fmt::format("<a href=\"#{}\">{}</a>", id, EscapeXml(heading));
  nav += "</nav>\n";
  // Split the header (always first) from the rest so the nav sits under it.
  std::string header, rest = body_;
  if (rest.rfind("<header", 0) == 0) {
    std::size_t end = rest.find("</header>\n") + std::string_view("</header>\n").size();
    header = rest.substr(0, end);
    rest = rest.substr(end);
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
      "<title>{}</title>\n<style>{}</style></head>\n<body>\n{}{}<main>\n{}</main>\n"
      "<footer>Generated by infereng. Self-contained: no scripts, no external resources.</footer>\n</body></html>\n",
      EscapeXml(title_), kCss, header, nav, rest);
}

}  // namespace infereng::report
