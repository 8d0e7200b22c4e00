// HtmlPage: builds one self-contained HTML document (inline CSS, inline SVG, no scripts,
// no external fonts, images or links to other hosts), so report.html opens offline and
// can be mailed or attached to a ticket as a single file.
//
// Every method that takes text escapes it (EscapeXml); only AddSvg/AddRaw take markup,
// and callers pass markup they generated themselves (the SVG renderers escape their text).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace infereng::report {

struct Kpi {
  std::string label;
  std::string value;
  std::string detail;
  enum State { kNeutral, kGood, kBad } state = kNeutral;
};

class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  // Title block: the page title and grey lines under it.
  void Header(std::string_view heading, const std::vector<std::string>& lines);
  // A notice box (problems, warnings).
  void Notice(std::string_view text, bool warning = true);

  void BeginSection(std::string_view id, std::string_view heading, std::string_view intro = "");
  void EndSection();
  void Paragraph(std::string_view text);
  void Kpis(const std::vector<Kpi>& kpis);
  // A table; columns listed in `numeric` are right-aligned. A row whose first cell starts
  // with "!" is highlighted (the "!" is dropped).
  void Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::vector<int>& numeric = {});
  void Pre(std::string_view text);
  // Charts laid out in a responsive grid.
  void BeginGrid();
  void AddSvg(const std::string& svg);  // trusted markup from the SVG renderers
  void EndGrid();
  // A link to a file next to the report (relative path; never another host).
  void LocalLink(std::string_view href, std::string_view text);
  void AddRaw(const std::string& html);  // trusted markup

  std::string Finish() const;

 private:
  std::string title_;
  std::vector<std::pair<std::string, std::string>> nav_;  // (id, heading)
  std::string body_;
  bool in_grid_ = false;
};

}  // namespace infereng::report
