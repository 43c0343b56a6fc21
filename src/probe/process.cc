// Starting and waiting for the harness processes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "gpuclean/error.h"
#include "probe/internal.h"

extern char** environ;

namespace gpuclean::probe::internal {
namespace fs = std::filesystem;

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FirstLine(const std::string& text) {
  std::string s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  const auto nl = s.rfind('\n');  // the harness's one line is its last one
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, const SpawnIo& io) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Built before fork(): the child may only call async-signal-safe functions.
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    bool overridden = false;
    for (const std::string& x : extra_env)
      overridden |= entry.substr(0, entry.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
    if (!overridden) envp.push_back(*e);
  }
  for (const std::string& x : extra_env) envp.push_back(const_cast<char*>(x.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrorKind::kIo, std::string("cannot start ") + argv[0] + ": fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = io.stdin_fd >= 0 ? io.stdin_fd : ::open("/dev/null", O_RDONLY);
    const int out =
        io.stdout_fd >= 0 ? io.stdout_fd : ::open(io.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(io.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

int ExitCodeOf(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                         const fs::path& stdout_file, const fs::path& stderr_file, std::chrono::seconds timeout) {
  const pid_t pid = Spawn(argv, extra_env, {.stdout_file = stdout_file.string(), .stderr_file = stderr_file.string()});
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.exit_code = ExitCodeOf(status);
  result.err = ReadText(stderr_file);
  return result;
}

std::chrono::seconds HarnessTimeout() {
  const std::string s = EnvOr("GPUCLEAN_PROBE_TIMEOUT_S", "600");
  try {
    return std::chrono::seconds(std::max(1L, std::stol(s)));
  } catch (...) {
    return std::chrono::seconds(600);
  }
}

}  // namespace gpuclean::probe::internal
