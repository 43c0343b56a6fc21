#pragma once
// What the probe's files share (src/probe/): starting and waiting for the
// harness processes, finding Node, Chromium and the harnesses, and turning a
// harness's out folder into a ProbeResult.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/probe.h"

namespace gpuclean::probe::internal {

// ------------------------------------------------------------- process.cc

// The value of environment variable `name`, or `fallback` when unset or empty.
std::string EnvOr(const char* name, const std::string& fallback);
std::string ReadText(const std::filesystem::path& p);
// The last non-empty line of a harness's stderr: its one-line reason.
std::string FirstLine(const std::string& text);

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string err;
};

// Where a spawned process's standard streams go. stdin_fd / stdout_fd: a
// descriptor of ours (duplicated into the child), or -1 for /dev/null /
// stdout_file.
struct SpawnIo {
  int stdin_fd = -1;
  int stdout_fd = -1;
  std::string stdout_file;
  std::string stderr_file;
};
// fork/exec of argv in a process group of its own (so that killing the
// group takes down Chromium with it). `extra_env` entries ("NAME=value")
// override the inherited environment. Returns the child's pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, const SpawnIo& io);
// The exit code a shell would report for a waitpid() status.
int ExitCodeOf(int status);
// Spawn with stdout and stderr sent to files; waits up to `timeout`, then
// kills the process group.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                         const std::filesystem::path& stdout_file, const std::filesystem::path& stderr_file,
                         std::chrono::seconds timeout);
// GPUCLEAN_PROBE_TIMEOUT_S, default 600 s.
std::chrono::seconds HarnessTimeout();

// ----------------------------------------------------------- results.cc

// Fills a ProbeResult from the harness's out folder; rewrites meta.json with
// gpuclean's residency (the harness's own parse is kept as harness_residency).
ProbeResult Collect(const ProbeRequest& request, double harness_ms);
// A harness failure before any meta.json: missing runtime pieces are
// kUnsupported; anything else keeps the harness's own line.
[[noreturn]] void ThrowHarnessFailure(const std::string& harness, const ProcessResult& p);

// ------------------------------------------------------------ runner.cc

// Usage and input checks of one request; creates its out folder.
void CheckRequest(const ProbeRequest& q);
// The WebGPU harness's job line for one request.
nlohmann::json WebGpuJob(const ProbeRequest& q);

}  // namespace gpuclean::probe::internal
