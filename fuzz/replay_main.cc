// Replay driver: links with one fuzz/<name>_fuzzer.cc instead of libFuzzer and feeds
// LLVMFuzzerTestOneInput every file named on the command line, or every regular file
// directly inside a directory named there (sorted, not recursive; dotfiles such as
// .gitkeep skipped), like libFuzzer's own
// `fuzzer FILE...` replay mode. This builds with any compiler, so every preset replays the
// checked-in corpus and crash inputs as a ctest (`<name>_replay fuzz/corpus/<name>
// fuzz/regressions/<name>`); a crash or __builtin_trap in a harness fails the test.
//
// Each input is copied into a heap buffer of exactly its size, so under ASan a parser that
// reads one byte past the end is caught as it would be by libFuzzer. Arguments starting
// with '-' (libFuzzer flags) are ignored. Exit status: 0 all inputs ran, 2 a path could
// not be read or no input was found (a missing corpus must not pass silently).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

bool RunOne(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // An exact-size copy (not the vector's storage, which may have spare capacity).
  auto buf = std::make_unique<uint8_t[]>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), buf.get());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
  (void)LLVMFuzzerTestOneInput(buf.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry& e : fs::directory_iterator(arg, ec)) {
        if (e.is_regular_file() && !e.path().filename().string().starts_with(".")) files.push_back(e.path());
      }
      if (ec) {
        std::fprintf(stderr, "replay: cannot list %s: %s\n", arg.c_str(), ec.message().c_str());
        return 2;
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) {
        if (!RunOne(f)) return 2;
        ++ran;
      }
    } else if (fs::is_regular_file(arg, ec)) {
      if (!RunOne(arg)) return 2;
      ++ran;
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", arg.c_str());
      return 2;
    }
  }
  if (ran == 0) {
    std::fprintf(stderr, "replay: no inputs (usage: %s DIR_OR_FILE...)\n", argc > 0 ? argv[0] : "replay");
    return 2;
  }
  std::fprintf(stderr, "replay: %d inputs ran without a crash\n", ran);
  return 0;
}
