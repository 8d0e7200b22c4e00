// Escaping of user data for HTML, SVG and CSV output.
//
// Card names, model ids, error messages and manifest values are user data: a report must
// render them as text, never as markup. Every string that reaches report.html goes through
// EscapeXml (valid for HTML text, HTML attributes and SVG, which is XML). Characters that
// are not allowed in XML 1.0 (most C0 controls) are replaced by U+FFFD so the SVG stays
// well-formed whatever a server sent us; invalid UTF-8 bytes are replaced the same way.
#pragma once

#include <string>
#include <string_view>

namespace infereng::report {

// &, <, >, ", ' become entities; disallowed control characters and invalid UTF-8 become
// U+FFFD. Tabs and newlines are kept.
std::string EscapeXml(std::string_view s);

// One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF; quotes doubled.
// A leading =, +, - or @ is prefixed with ' so spreadsheets do not evaluate it as a formula
// (error messages are user data) — except for plain numbers like "-1".
std::string CsvField(std::string_view s);

// Markdown table cell: escapes | and backslash, collapses newlines to spaces, and escapes
// < > & so a viewer that renders inline HTML shows text.
std::string MarkdownCell(std::string_view s);

}  // namespace infereng::report
