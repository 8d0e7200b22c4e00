// libFuzzer harness for the production-trace readers behind `characterize` (and trace
// replay): TraceReader over every format, then the Characterizer over what it read (with
// the conversation linker when there is no session column) and the card writer. None
// may crash, hang, leak or grow without bound on any file; an error must name the file.
// The first byte picks the format (auto, azure, mooncake, burstgpt, csv, jsonl); the rest is
// the file, handed over through a memfd (/proc/self/fd/N), so nothing touches the disk.
// Seeds: fuzz/corpus/trace/ (slices of the real traces in src/trace/testdata and the
// readers' edge cases). Build: make fuzz; run: scripts/fuzz.sh 60 trace.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "trace/card_out.h"
#include "trace/characterization.h"
#include "trace/reader.h"

using namespace infereng::trace;

namespace {

constexpr Format kFormats[] = {Format::kAuto, Format::kAzure, Format::kMooncake,
                               Format::kBurstGpt, Format::kCsv, Format::kJsonl};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  ReaderOptions ro;
  ro.format = kFormats[data[0] % (sizeof(kFormats) / sizeof(kFormats[0]))];
  const int fd = memfd_create("trace", 0);
  if (fd < 0) return 0;
  size_t off = 1;
  while (off < size) {
    const ssize_t n = write(fd, data + off, size - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  CharacterizeOptions co;
  co.cache_blocks = {4, 64};
  auto c = CharacterizeFile(path, ro, co);
  if (!c.ok() && c.status().message().find(path) == std::string::npos) __builtin_trap();  // errors name the file
  if (c.ok()) {
    // The card writer over whatever was characterised, per request and as sessions (which
    // refuses a trace without sessions): it may fail, never crash.
    (void)TrafficCard(*c, "fuzz");
    (void)TrafficCard(*c, "fuzz", {.sessions = true});
  }
  close(fd);
  return 0;
}
