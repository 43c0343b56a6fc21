// Finding what the probe runs: Node, Chromium, the harnesses in probe/ and
// the npm packages beside them.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gpuclean/error.h"
#include "gpuclean/probe.h"
#include "probe/internal.h"

namespace gpuclean::probe {
namespace fs = std::filesystem;
using internal::EnvOr;

namespace {

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
    if (!HasHarness(from_env)) ThrowUnsupported("GPUCLEAN_SOURCE_DIR=" + from_env + " has no probe/litert_run.mjs");
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
    ThrowUnsupported("LiteRT.js is not installed in " + env.source_dir +
                     "/node_modules; run npm ci there (tools/setup.sh)");
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
      ThrowUnsupported(env.chromium +
                       " not found; the WebGPU probe needs Chromium (apt-get install chromium, see tools/setup.sh) or "
                       "GPUCLEAN_CHROMIUM");
    if (!fs::exists(fs::path(env.source_dir) / "node_modules" / "playwright-core" / "package.json"))
      ThrowUnsupported("playwright-core is not installed in " + env.source_dir +
                       "/node_modules; run npm ci there (tools/setup.sh)");
  }
  return env;
}

}  // namespace gpuclean::probe
