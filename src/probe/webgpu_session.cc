// One WebGPU harness (litert_webgpu.mjs --serve) kept running across jobs.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <thread>

#include "gpuclean/error.h"
#include "gpuclean/probe.h"
#include "gpuclean/stopwatch.h"
#include "probe/internal.h"

namespace gpuclean::probe {
namespace fs = std::filesystem;
using namespace internal;

WebGpuSession::WebGpuSession() {
  ProbeNeeds needs;
  needs.browser = true;
  env_ = FindProbeEnvironment(needs);
}

WebGpuSession::~WebGpuSession() { Stop(); }

// The harness reads jobs from one end of a socket pair (not a pipe: a write
// to a harness that died must fail with EPIPE, not kill us with SIGPIPE).
void WebGpuSession::Start() {
  CheckTestLane(Runtime::kLiteRtWebGpu);
  scratch_ = std::make_unique<ScratchDir>("gpuclean-webgpu");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(ErrorKind::kIo, "cannot create a socket pair for the WebGPU harness");
  const std::string harness = (fs::path(env_.source_dir) / "probe" / "litert_webgpu.mjs").string();
  pid_t pid;
  try {
    pid = Spawn({env_.node, harness, "--serve"}, {"GPUCLEAN_CHROMIUM=" + env_.chromium},
                {.stdin_fd = fds[1], .stdout_fd = fds[1], .stderr_file = *scratch_ / "stderr"});
  } catch (const Error&) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  pid_ = pid;
  socket_ = fds[0];
}

[[noreturn]] void WebGpuSession::Died(const std::string& model) {
  int status = 0;
  ProcessResult p;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    p.exit_code = ExitCodeOf(status);
  }
  pid_ = -1;
  p.err = ReadText(*scratch_ / "stderr");
  if (p.err.empty()) p.err = "litert_webgpu.mjs --serve ended while running " + model;
  ThrowHarnessFailure("litert_webgpu.mjs", p);
}

std::string WebGpuSession::ReadAnswer(const std::string& model) {
  const auto deadline = std::chrono::steady_clock::now() + HarnessTimeout();
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      throw Error(ErrorKind::kIo, "litert_webgpu.mjs timed out on " + model + " (GPUCLEAN_PROBE_TIMEOUT_S)");
    }
    pollfd p{socket_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) Died(model);
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::recv(socket_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Died(model);
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

ProbeResult WebGpuSession::Run(const ProbeRequest& request) {
  // wasm requests run in the same page: a pipeline's CPU graphs beside its GPU ones.
  if (request.runtime != Runtime::kLiteRtWebGpu && request.runtime != Runtime::kLiteRtWasm)
    ThrowInternal("WebGpuSession runs LiteRT.js requests only");
  CheckRequest(request);
  if (pid_ < 0) {
    if (runs_ > 0) throw Error(ErrorKind::kIo, "the WebGPU harness of this session has stopped");
    Start();
  }
  const std::string line = WebGpuJob(request).dump() + "\n";
  const Stopwatch t0;
  for (size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::send(socket_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Died(request.model_path);
    sent += static_cast<size_t>(n);
  }
  const std::string answer = ReadAnswer(request.model_path);
  ++runs_;
  ProbeResult r = Collect(request, t0.ms());
  if (!r.ok) {
    // A job the harness could not parse writes no meta.json: its answer says why.
    const nlohmann::json a = nlohmann::json::parse(answer, nullptr, false);
    if (r.meta.is_null() && a.is_object() && a.contains("error") && a["error"].is_string())
      ThrowBadInput("litert-webgpu: " + a["error"].get<std::string>());
    ThrowBadInput(r.error);
  }
  return r;
}

void WebGpuSession::Stop() {
  if (socket_ >= 0) {
    ::shutdown(socket_, SHUT_WR);  // end of input: the harness closes Chromium and exits
  }
  if (pid_ > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  scratch_.reset();
}

}  // namespace gpuclean::probe
