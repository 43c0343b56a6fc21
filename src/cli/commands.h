#pragma once
// Each subcommand registers its flags and a handler. Handlers return the exit
// code (0 ok, 1 findings / failed gate); errors are thrown as gpuclean::Error.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/error.h"

namespace gpuclean::cli {

using Handler = std::function<int()>;

// --input KEY=FILE.npy values as (KEY, FILE) pairs; Error(kUsage) otherwise.
inline std::vector<std::pair<std::string, std::string>> ParseInputSpecs(const std::vector<std::string>& specs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(ErrorKind::kUsage, "--input expects KEY=FILE.npy, got '" + spec + "'");
    out.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  }
  return out;
}

void AddInspect(CLI::App& app, Handler& handler);
void AddRun(CLI::App& app, Handler& handler);
void AddProbe(CLI::App& app, Handler& handler);
void AddLint(CLI::App& app, Handler& handler);
void AddMatrix(CLI::App& app, Handler& handler);
void AddBisect(CLI::App& app, Handler& handler);
void AddCheck(CLI::App& app, Handler& handler);
void AddCompare(CLI::App& app, Handler& handler);
void AddRecord(CLI::App& app, Handler& handler);
void AddBench(CLI::App& app, Handler& handler);
void AddSynth(CLI::App& app, Handler& handler);
void AddFix(CLI::App& app, Handler& handler);
void AddSplit(CLI::App& app, Handler& handler);
void AddConvert(CLI::App& app, Handler& handler);
void AddPipeline(CLI::App& app, Handler& handler);
void AddRecipe(CLI::App& app, Handler& handler);

}  // namespace gpuclean::cli
