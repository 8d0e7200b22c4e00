#include "cli/interrupt.h"

#include <csignal>

namespace infereng::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "touched from a signal handler");

extern "C" void OnInterruptSignal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);  // the first signal names the exit code
  g_interrupted.store(true);
  std::signal(sig, SIG_DFL);  // a second Ctrl-C ends the process at once
}

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted.store(false);
  g_signal.store(0);
  prev_int_ = std::signal(SIGINT, OnInterruptSignal);
  prev_term_ = std::signal(SIGTERM, OnInterruptSignal);
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, prev_int_);
  std::signal(SIGTERM, prev_term_);
}

const std::atomic<bool>& InterruptFlag() { return g_interrupted; }

int InterruptSignal() { return g_signal.load(); }

}  // namespace infereng::cli
