// Opens generated reports in a real browser (headless Chromium): the DOM must hold the
// expected charts and axis labels and reference nothing outside the file; a screenshot
// must render. Skipped with a message when Chromium is not installed
// (scripts/install-deps.sh installs it; CI has it). The browser runs with networking
// features off, host resolution disabled and a fresh profile; each call is bounded by
// `timeout`.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "report/report.h"
#include "report/test_run_dir.h"

namespace infereng::report {
namespace {

using namespace infereng::report::testing;
namespace fs = std::filesystem;

std::string FindChromium() {
  if (const char* env = std::getenv("INFERENG_CHROMIUM"); env && fs::exists(env)) return env;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (fs::exists(p)) return p;
  }
  return "";
}

// Runs a shell command, returns its stdout (stderr discarded) and exit status.
std::pair<int, std::string> RunShell(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!f) return {-1, ""};
  std::array<char, 8192> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  int rc = ::pclose(f);
  return {rc, out};
}

std::ptrdiff_t CountSvg(const std::string& dom) {
  static const std::regex kSvg("<svg[ >]");
  return std::distance(std::sregex_iterator(dom.begin(), dom.end(), kSvg), std::sregex_iterator());
}

std::string BrowserCommand(const std::string& chromium, const std::string& profile, const std::string& action,
                           const std::string& file) {
  return "timeout 60 " + chromium +
         " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
         " --disable-component-update --disable-sync --disable-extensions --host-resolver-rules='MAP * ~NOTFOUND'"
         " --user-data-dir=" + profile + " --window-size=1400,2000 " + action + " 'file://" + file + "'";
}

class BrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium not installed (scripts/install-deps.sh installs it; set INFERENG_CHROMIUM to use "
                      "another binary): browser rendering of report.html not checked";
    }
    dir_ = FreshDir("browser");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string chromium_, dir_;
};

TEST_F(BrowserTest, SweepReportRendersEveryChartOffline) {
  sweep::SweepFile f = MakeSweep(dir_, {2, 4, 6, 8, 16}, true);
  ASSERT_TRUE(sweep::WriteSweepJson(dir_ + "/sweep.json", f).ok());
  auto files = WriteReport(dir_);
  ASSERT_TRUE(files.ok()) << files.status().ToString();

  auto [rc, dom] = RunShell(BrowserCommand(chromium_, dir_ + "/profile1", "--dump-dom", files->html));
  ASSERT_EQ(rc, 0) << "chromium --dump-dom failed";
  ASSERT_FALSE(dom.empty());
  // The browser parsed every chart into the DOM (not as text): count the svg elements.
  std::ptrdiff_t svgs = CountSvg(dom);
  EXPECT_EQ(svgs, files->charts);
  EXPECT_GE(svgs, 13);
  for (const char* s : {"achieved throughput (req/s)", "offered load (req/s)", "attainment (%)", "time to first token (ms)",
                        "TTFT vs throughput", "max goodput @ 6", "knee (saturation) @ 8"}) {
    EXPECT_NE(dom.find(s), std::string::npos) << s;
  }
  // Nothing in the rendered document points outside the file.
  EXPECT_FALSE(std::regex_search(dom, std::regex("(src|href)=\"(https?:)?//")));
  EXPECT_FALSE(std::regex_search(dom, std::regex("<(script|link|img|iframe|object|embed)[ >]")));
  EXPECT_FALSE(std::regex_search(dom, std::regex("url\\((https?:)?//")));

  std::string png = dir_ + "/shot.png";
  auto [rc2, out2] = RunShell(BrowserCommand(chromium_, dir_ + "/profile2", "--screenshot=" + png, files->html));
  ASSERT_EQ(rc2, 0) << "chromium --screenshot failed";
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20'000u) << "a blank page compresses to almost nothing";
}

TEST_F(BrowserTest, HostileRunReportStaysText) {
  const std::string evil = "</svg><script>document.title='pwned'</script><img src=x onerror=alert(1)>";
  WriteRunDir(dir_, MakeRecords({.requests = 40, .error_every = 2, .error_message = evil}),
              {{"card", {{"name", evil}}}});
  auto files = WriteReport(dir_);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  auto [rc, dom] = RunShell(BrowserCommand(chromium_, dir_ + "/profile", "--dump-dom", files->html));
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_EQ(dom.find("pwned</title>"), std::string::npos);
  EXPECT_NE(dom.find("&lt;script&gt;"), std::string::npos);  // shown as text
  std::ptrdiff_t svgs = CountSvg(dom);
  EXPECT_EQ(svgs, files->charts);
}

}  // namespace
}  // namespace infereng::report
