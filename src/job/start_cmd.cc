#include "job/start_cmd.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace infereng::job {

Status StartedProcess::Start(const std::string& command, const std::string& log_path) {
  if (pid_ > 0) return Status::FailedPrecondition("--start-cmd: already started");
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return Status::IoError("--start-cmd: cannot open " + log_path + ": " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    return Status::IoError(std::string("--start-cmd: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(log);
  ::setpgid(pid, pid);  // also from here: no race with the child's own call
  pid_ = pid;
  return Status::Ok();
}

bool StartedProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void StartedProcess::Stop(Nanos grace) {
  if (!Running()) return;
  ::kill(-pid_, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(grace);
  while (std::chrono::steady_clock::now() < until) {
    if (!Running()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace infereng::job
