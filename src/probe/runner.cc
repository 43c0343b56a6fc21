// Runs models on real runtimes through the Node harnesses in probe/:
// litert_run.mjs (LiteRT.js wasm CPU, plain Node), litert_webgpu.mjs
// (LiteRT.js WebGPU in headless Chromium) and onnx_run.mjs (onnxruntime-node
// CPU, for .onnx models). The harnesses write out<i>.npy and meta.json; this
// file finds them, starts them, and turns their results into ProbeResult,
// with the LiteRT residency re-parsed by ParseDelegateLog so every gpuclean
// caller sees the same rules.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/probe.h"
#include "gpuclean/stopwatch.h"

extern char** environ;

namespace gpuclean::probe {
namespace fs = std::filesystem;

Runtime ParseRuntime(const std::string& name) {
  return ::gpuclean::ParseRuntime(name, {Runtime::kLiteRtWasm, Runtime::kLiteRtWebGpu, Runtime::kOnnxRuntime});
}

namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

bool IsExecutable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (IsExecutable(candidate)) return candidate.string();
  }
  return "";
}

// The value of `gpuclean_SOURCE_DIR` (CMake's record of where the sources
// are) in a build folder's CMakeCache.txt, or "".
std::string SourceDirFromCMakeCache(const fs::path& cache) {
  std::ifstream in(cache);
  std::string line;
  const std::string key = "gpuclean_SOURCE_DIR:";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto eq = line.find('=');
    if (eq != std::string::npos) return line.substr(eq + 1);
  }
  return "";
}

bool HasHarness(const fs::path& dir) { return fs::exists(dir / "probe" / "litert_run.mjs"); }

// The source folder: where probe/ and node_modules/ live. Found from the
// running executable so that build/gpuclean, an out-of-tree build and the
// test executables under build/tests/ all work without configuration.
std::string FindSourceDir() {
  const std::string from_env = EnvOr("GPUCLEAN_SOURCE_DIR", "");
  if (!from_env.empty()) {
    if (!HasHarness(from_env))
      ThrowUnsupported("GPUCLEAN_SOURCE_DIR=" + from_env + " has no probe/litert_run.mjs");
    return from_env;
  }
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (; !ec && !dir.empty(); dir = dir.parent_path()) {
    if (HasHarness(dir)) return dir.string();
    if (fs::exists(dir / "CMakeCache.txt")) {
      const std::string source = SourceDirFromCMakeCache(dir / "CMakeCache.txt");
      if (!source.empty() && HasHarness(source)) return source;
    }
    if (dir == dir.root_path()) break;
  }
  // A library loaded into another program (the Python module): the source
  // folder it was built from.
#ifdef GPUCLEAN_SOURCE_ROOT
  if (HasHarness(GPUCLEAN_SOURCE_ROOT)) return GPUCLEAN_SOURCE_ROOT;
#endif
  ThrowUnsupported(
      "cannot find the LiteRT.js harness (probe/litert_run.mjs) above this executable; set GPUCLEAN_SOURCE_DIR to the "
      "gpuclean source folder");
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

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string err;
};

// fork/exec with stdout and stderr sent to files. The child gets its own
// process group so that a timeout can take down Chromium with it.
// `extra_env` entries ("NAME=value") override the inherited environment.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                         const fs::path& stdout_file, const fs::path& stderr_file, std::chrono::seconds timeout) {
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
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
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
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
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


double NumberOr(const nlohmann::json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

// Log lines from meta.json, without the "[init]" lines that LiteRT.js prints
// while it starts (they belong to no model). Same filter as the harness.
std::string ModelLog(const nlohmann::json& meta) {
  std::string text;
  for (const auto& l : meta.value("log", nlohmann::json::array())) {
    if (!l.is_string()) continue;
    const std::string line = l.get<std::string>();
    if (line.rfind("[init]", 0) == 0 || line.rfind("[load]", 0) == 0) continue;
    text += line;
    text += '\n';
  }
  return text;
}

std::optional<int64_t> ModelOpCount(const std::string& model_path) {
  try {
    return static_cast<int64_t>(format::ReadModel(model_path).main().ops.size());
  } catch (const Error&) {
    return std::nullopt;  // LiteRT read it; our reader's view is only a bonus
  }
}

// Fills a ProbeResult from the harness's out folder; rewrites meta.json with
// gpuclean's residency (the harness's own parse is kept as harness_residency).
ProbeResult Collect(const ProbeRequest& request, double harness_ms) {
  ProbeResult r;
  r.model_path = request.model_path;
  r.runtime = request.runtime;
  r.harness_ms = harness_ms;
  const fs::path meta_path = fs::path(request.out_dir) / "meta.json";
  if (!fs::exists(meta_path)) {
    r.error = std::string(RuntimeName(request.runtime)) + ": harness wrote no " + meta_path.string();
    return r;
  }
  try {
    r.meta = nlohmann::json::parse(ReadText(meta_path));
  } catch (const nlohmann::json::exception& e) {
    r.error = meta_path.string() + ": not JSON: " + e.what();
    return r;
  }
  const bool litert = request.runtime != Runtime::kOnnxRuntime;
  if (!r.meta.value("ok", false)) {
    r.error = std::string(RuntimeName(request.runtime)) + ": " + r.meta.value("error", std::string("failed"));
    // Residency is still worth having when the run failed after compiling.
    if (litert) r.residency = ParseDelegateLog(ModelLog(r.meta));
    return r;
  }
  // onnxruntime has no delegate: its residency stays "not applicable".
  if (litert) r.residency = ParseDelegateLog(ModelLog(r.meta));
  if (request.runtime == Runtime::kLiteRtWasm) {
    // The wasm accelerator is the CPU by definition.
    if (auto n = ModelOpCount(request.model_path)) {
      r.residency.gpu_ops = 0;
      r.residency.cpu_ops = *n;
      r.residency.total_ops = *n;
      r.residency.partitions = 0;
      r.residency.counts_source = "model";
    }
    r.residency.fully_delegated = false;
  } else if (litert && r.residency.fully_delegated.value_or(false) && !r.residency.gpu_ops) {
    if (auto n = ModelOpCount(request.model_path)) {
      r.residency.gpu_ops = *n;
      r.residency.cpu_ops = 0;
      r.residency.total_ops = *n;
      r.residency.partitions = 1;
      r.residency.counts_source = "model";
    }
  }
  if (r.meta.contains("is_fully_accelerated") && r.meta["is_fully_accelerated"].is_boolean())
    r.is_fully_accelerated = r.meta["is_fully_accelerated"].get<bool>();
  r.compile_ms = NumberOr(r.meta, "compile_ms", 0);
  r.run_ms = NumberOr(r.meta, "run_ms", 0);
  r.run_ms_first = NumberOr(r.meta, "run_ms_first", 0);
  if (!request.residency_only) {
    for (const auto& o : r.meta.value("outputs", nlohmann::json::array())) {
      const std::string file = o.value("file", std::string());
      try {
        r.outputs.push_back(npy::Read((fs::path(request.out_dir) / file).string()));
      } catch (const Error& e) {
        r.error = std::string(RuntimeName(request.runtime)) + ": " + e.what();
        return r;
      }
    }
  }
  if (litert) {
    if (r.meta.contains("residency")) r.meta["harness_residency"] = r.meta["residency"];
    r.meta["residency"] = ToJson(r.residency);
  }
  r.meta["runtime_id"] = RuntimeName(request.runtime);
  r.meta["harness_ms"] = harness_ms;
  WriteFileAtomically(meta_path.string(), r.meta.dump(2) + "\n");
  r.ok = true;
  return r;
}

void CheckRequest(const ProbeRequest& q) {
  if (q.out_dir.empty()) throw Error(ErrorKind::kUsage, "probe needs an output folder (--out DIR)");
  if (q.precision != "fp32" && q.precision != "fp16")
    throw Error(ErrorKind::kUsage, "--precision expects fp32 or fp16, got '" + q.precision + "'");
  const bool onnx = q.runtime == Runtime::kOnnxRuntime;
  if (onnx && q.precision != "fp32")
    throw Error(ErrorKind::kUsage, "--precision fp16 needs --runtime litert-webgpu (onnxruntime runs the model's own types)");
  if (onnx && q.residency_only)
    throw Error(ErrorKind::kUsage, "residency-only needs --runtime litert-webgpu (onnxruntime has no GPU delegate)");
  if (!onnx && (!q.output_names.empty() || q.threads != 1 || !q.optimize || !q.dims.empty()))
    throw Error(ErrorKind::kUsage, "--outputs, --threads, --no-optimize and --dim need --runtime onnxruntime");
  if (q.threads < 1) throw Error(ErrorKind::kUsage, "--threads must be at least 1");
  for (const std::string& name : q.output_names)
    if (name.empty() || name.find(',') != std::string::npos)
      throw Error(ErrorKind::kUsage, "--outputs: bad output name '" + name + "'");
  for (const auto& [name, size] : q.dims)
    if (name.empty() || size < 0) throw Error(ErrorKind::kUsage, "--dim expects NAME=SIZE with SIZE >= 0");
  if (q.runtime == Runtime::kLiteRtWasm && q.precision != "fp32")
    throw Error(ErrorKind::kUsage, "--precision fp16 needs --runtime litert-webgpu (the wasm CPU path is fp32)");
  if (q.runtime == Runtime::kLiteRtWasm && q.residency_only)
    throw Error(ErrorKind::kUsage, "residency-only needs --runtime litert-webgpu (wasm has no GPU delegate)");
  if (q.repeat < 1) throw Error(ErrorKind::kUsage, "--repeat must be at least 1");
  if (!fs::is_regular_file(q.model_path)) ThrowBadInput(q.model_path + ": no such model file");
  for (const auto& [key, file] : q.inputs)
    if (!fs::is_regular_file(file)) ThrowBadInput("--input " + key + "=" + file + ": no such file");
  std::error_code ec;
  fs::create_directories(q.out_dir, ec);
  if (ec || !fs::is_directory(q.out_dir))
    throw Error(ErrorKind::kIo, q.out_dir + ": cannot create output folder" + (ec ? ": " + ec.message() : ""));
}

// A harness failure before any meta.json: missing runtime pieces are
// kUnsupported; anything else keeps the harness's own line.
[[noreturn]] void ThrowHarnessFailure(const std::string& harness, const ProcessResult& p) {
  if (p.timed_out) throw Error(ErrorKind::kIo, harness + " timed out (GPUCLEAN_PROBE_TIMEOUT_S)");
  const std::string line = FirstLine(p.err);
  if (line.find("not installed") != std::string::npos || line.find("not found") != std::string::npos ||
      line.find("cannot launch") != std::string::npos || line.find("no WebGPU adapter") != std::string::npos)
    ThrowUnsupported(line);
  ThrowBadInput(line.empty() ? harness + " exited with status " + std::to_string(p.exit_code) : line);
}

std::vector<ProbeResult> RunWebGpu(const std::vector<const ProbeRequest*>& requests, const ProbeEnvironment& env) {
  const ScratchDir scratch("gpuclean-probe");
  nlohmann::json jobs = nlohmann::json::array();
  for (const ProbeRequest* q : requests) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& [key, file] : q->inputs) inputs.push_back({{"key", key}, {"file", fs::absolute(file).string()}});
    jobs.push_back({{"model", fs::absolute(q->model_path).string()},
                    {"out", fs::absolute(q->out_dir).string()},
                    {"precision", q->precision},
                    {"inputs", inputs},
                    {"seed", q->seed},
                    {"repeat", q->repeat},
                    {"describe_residency", q->residency_only}});
  }
  WriteFileAtomically(scratch / "jobs.json", jobs.dump());
  const std::string harness = (fs::path(env.source_dir) / "probe" / "litert_webgpu.mjs").string();
  const Stopwatch t0;
  const ProcessResult p = RunProcess({env.node, harness, "--jobs", scratch / "jobs.json"},
                                     {"GPUCLEAN_CHROMIUM=" + env.chromium}, scratch / "stdout", scratch / "stderr",
                                     HarnessTimeout());
  const double ms = t0.ms();
  std::vector<ProbeResult> results;
  for (const ProbeRequest* q : requests) results.push_back(Collect(*q, ms));
  // Exit 2 with per-job meta.json files is a per-model failure, reported in
  // the results. Without them, or with the harness's setup_failure mark (it
  // could not start Chromium or LiteRT.js), nothing ran at all.
  bool setup_failed = p.exit_code != 0;
  for (const ProbeResult& r : results) setup_failed &= r.meta.is_null() || r.meta.value("setup_failure", false);
  if (setup_failed) ThrowHarnessFailure("litert_webgpu.mjs", p);
  return results;
}

// One `onnx_run.mjs --batch` call for requests that share threads and
// optimize (session options are per process).
std::vector<ProbeResult> RunOnnx(const std::vector<const ProbeRequest*>& requests, const ProbeEnvironment& env) {
  const ScratchDir scratch("gpuclean-probe");
  nlohmann::json jobs = nlohmann::json::array();
  for (const ProbeRequest* q : requests) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& [key, file] : q->inputs) inputs.push_back({{"key", key}, {"file", fs::absolute(file).string()}});
    nlohmann::json job = {{"model", fs::absolute(q->model_path).string()},
                          {"out", fs::absolute(q->out_dir).string()},
                          {"inputs", inputs},
                          {"seed", q->seed},
                          {"repeat", q->repeat}};
    if (!q->output_names.empty()) job["outputs"] = q->output_names;
    if (!q->dims.empty()) {
      nlohmann::json dims = nlohmann::json::object();
      for (const auto& [name, size] : q->dims) dims[name] = size;
      job["dims"] = dims;
    }
    jobs.push_back(std::move(job));
  }
  WriteFileAtomically(scratch / "jobs.json", jobs.dump());
  const std::string harness = (fs::path(env.source_dir) / "probe" / "onnx_run.mjs").string();
  std::vector<std::string> argv = {env.node, harness, "--batch", scratch / "jobs.json",
                                   "--threads", std::to_string(requests.front()->threads)};
  if (!requests.front()->optimize) argv.push_back("--no-optimize");
  const Stopwatch t0;
  const ProcessResult p = RunProcess(argv, {}, scratch / "stdout", scratch / "stderr", HarnessTimeout());
  const double ms = t0.ms();
  std::vector<ProbeResult> results;
  for (const ProbeRequest* q : requests) results.push_back(Collect(*q, ms));
  // As for WebGPU: exit 2 with per-job meta.json files is a per-model
  // failure; no meta.json at all, or setup_failure (onnxruntime-node could
  // not load), means nothing ran.
  bool setup_failed = p.exit_code != 0;
  for (const ProbeResult& r : results) setup_failed &= r.meta.is_null() || r.meta.value("setup_failure", false);
  if (setup_failed) ThrowHarnessFailure("onnx_run.mjs", p);
  return results;
}

ProbeResult RunWasm(const ProbeRequest& q, const ProbeEnvironment& env) {
  const ScratchDir scratch("gpuclean-probe");
  const std::string harness = (fs::path(env.source_dir) / "probe" / "litert_run.mjs").string();
  std::vector<std::string> argv = {env.node, harness, fs::absolute(q.model_path).string(),
                                   "--out", fs::absolute(q.out_dir).string(),
                                   "--seed", std::to_string(q.seed),
                                   "--repeat", std::to_string(q.repeat)};
  for (const auto& [key, file] : q.inputs) {
    argv.push_back("--input");
    argv.push_back(key + "=" + fs::absolute(file).string());
  }
  const Stopwatch t0;
  const ProcessResult p = RunProcess(argv, {}, scratch / "stdout", scratch / "stderr", HarnessTimeout());
  const double ms = t0.ms();
  ProbeResult r = Collect(q, ms);
  if (p.exit_code != 0 && r.meta.is_null()) ThrowHarnessFailure("litert_run.mjs", p);
  return r;
}

}  // namespace

ProbeEnvironment FindProbeEnvironment(bool need_browser) {
  ProbeNeeds needs;
  needs.browser = need_browser;
  return FindProbeEnvironment(needs);
}

ProbeEnvironment FindProbeEnvironment(const ProbeNeeds& needs) {
  ProbeEnvironment env;
  env.node = EnvOr("GPUCLEAN_NODE", "");
  if (env.node.empty()) env.node = FindOnPath("node");
  if (env.node.empty() || !IsExecutable(env.node))
    ThrowUnsupported(std::string("node not found on PATH (set GPUCLEAN_NODE); the ") +
                     (needs.litert || needs.browser ? "LiteRT.js" : "onnxruntime") +
                     " probe needs Node.js 20 (tools/setup.sh)");
  env.source_dir = FindSourceDir();
  if ((needs.litert || needs.browser) &&
      !fs::exists(fs::path(env.source_dir) / "node_modules" / "@litertjs" / "core" / "package.json"))
    ThrowUnsupported("LiteRT.js is not installed in " + env.source_dir + "/node_modules; run npm ci there (tools/setup.sh)");
  if (needs.onnxruntime) {
    if (!fs::exists(fs::path(env.source_dir) / "probe" / "onnx_run.mjs"))
      ThrowUnsupported(env.source_dir + " has no probe/onnx_run.mjs (the onnxruntime harness)");
    if (!fs::exists(fs::path(env.source_dir) / "node_modules" / "onnxruntime-node" / "package.json"))
      ThrowUnsupported("onnxruntime-node is not installed in " + env.source_dir +
                       "/node_modules; run tools/fetch_models.sh there");
  }
  if (needs.browser) {
    env.chromium = EnvOr("GPUCLEAN_CHROMIUM", "/usr/bin/chromium");
    if (!IsExecutable(env.chromium))
      ThrowUnsupported(env.chromium + " not found; the WebGPU probe needs Chromium (apt-get install chromium, see tools/setup.sh) or GPUCLEAN_CHROMIUM");
    if (!fs::exists(fs::path(env.source_dir) / "node_modules" / "playwright-core" / "package.json"))
      ThrowUnsupported("playwright-core is not installed in " + env.source_dir + "/node_modules; run npm ci there (tools/setup.sh)");
  }
  return env;
}

std::vector<ProbeResult> RunProbes(const std::vector<ProbeRequest>& requests) {
  ProbeNeeds needs;
  needs.litert = false;
  for (const ProbeRequest& q : requests) {
    CheckRequest(q);
    needs.litert |= q.runtime != Runtime::kOnnxRuntime;
    needs.browser |= q.runtime == Runtime::kLiteRtWebGpu;
    needs.onnxruntime |= q.runtime == Runtime::kOnnxRuntime;
  }
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j)
      if (fs::absolute(requests[i].out_dir) == fs::absolute(requests[j].out_dir))
        throw Error(ErrorKind::kUsage, "two probe requests share the output folder " + requests[i].out_dir);
  if (requests.empty()) return {};
  const ProbeEnvironment env = FindProbeEnvironment(needs);
  std::vector<ProbeResult> results(requests.size());
  std::vector<const ProbeRequest*> webgpu;
  std::vector<size_t> webgpu_index;
  // onnxruntime: one harness call per (threads, optimize).
  std::map<std::pair<int, bool>, std::vector<size_t>> onnx_groups;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].runtime == Runtime::kLiteRtWebGpu) {
      webgpu.push_back(&requests[i]);
      webgpu_index.push_back(i);
    } else if (requests[i].runtime == Runtime::kOnnxRuntime) {
      onnx_groups[{requests[i].threads, requests[i].optimize}].push_back(i);
    } else {
      results[i] = RunWasm(requests[i], env);
    }
  }
  for (const auto& [options, indices] : onnx_groups) {
    std::vector<const ProbeRequest*> group;
    for (size_t i : indices) group.push_back(&requests[i]);
    std::vector<ProbeResult> got = RunOnnx(group, env);
    for (size_t k = 0; k < got.size(); ++k) results[indices[k]] = std::move(got[k]);
  }
  if (!webgpu.empty()) {
    std::vector<ProbeResult> got = RunWebGpu(webgpu, env);
    for (size_t k = 0; k < got.size(); ++k) results[webgpu_index[k]] = std::move(got[k]);
  }
  return results;
}

ProbeResult RunProbe(const ProbeRequest& request) {
  ProbeResult r = std::move(RunProbes({request}).at(0));
  if (!r.ok) ThrowBadInput(r.error);
  return r;
}

WebGpuSession::WebGpuSession() {
  ProbeNeeds needs;
  needs.browser = true;
  env_ = FindProbeEnvironment(needs);
}

WebGpuSession::~WebGpuSession() { Stop(); }

// The harness reads jobs from one end of a socket pair (not a pipe: a write
// to a harness that died must fail with EPIPE, not kill us with SIGPIPE).
void WebGpuSession::Start() {
  scratch_ = std::make_unique<ScratchDir>("gpuclean-webgpu");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(ErrorKind::kIo, "cannot create a socket pair for the WebGPU harness");
  const std::string harness = (fs::path(env_.source_dir) / "probe" / "litert_webgpu.mjs").string();
  const std::string err_file = *scratch_ / "stderr";
  std::vector<std::string> argv = {env_.node, harness, "--serve"};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<char*> envp;
  const std::string chromium = "GPUCLEAN_CHROMIUM=" + env_.chromium;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("GPUCLEAN_CHROMIUM=", 0) != 0) envp.push_back(*e);
  envp.push_back(const_cast<char*>(chromium.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ErrorKind::kIo, "cannot start the WebGPU harness: fork failed");
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0) ::_exit(127);
    ::dup2(fds[1], 0);
    ::dup2(fds[1], 1);
    ::dup2(err, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
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
    p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
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
  if (request.runtime != Runtime::kLiteRtWebGpu) ThrowInternal("WebGpuSession runs litert-webgpu requests only");
  CheckRequest(request);
  if (pid_ < 0) {
    if (runs_ > 0) throw Error(ErrorKind::kIo, "the WebGPU harness of this session has stopped");
    Start();
  }
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& [key, file] : request.inputs) inputs.push_back({{"key", key}, {"file", fs::absolute(file).string()}});
  const nlohmann::json job = {{"model", fs::absolute(request.model_path).string()},
                              {"out", fs::absolute(request.out_dir).string()},
                              {"precision", request.precision},
                              {"inputs", inputs},
                              {"seed", request.seed},
                              {"repeat", request.repeat},
                              {"describe_residency", request.residency_only}};
  const std::string line = job.dump() + "\n";
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
