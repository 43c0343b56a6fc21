#pragma once
// Each subcommand registers its flags and a handler. Handlers return the exit
// code (0 ok, 1 findings / failed gate); errors are thrown as gpuclean::Error.
#include <CLI/CLI.hpp>
#include <functional>

namespace gpuclean::cli {

using Handler = std::function<int()>;

void AddInspect(CLI::App& app, Handler& handler);
void AddRun(CLI::App& app, Handler& handler);
void AddProbe(CLI::App& app, Handler& handler);
void AddLint(CLI::App& app, Handler& handler);
void AddMatrix(CLI::App& app, Handler& handler);

}  // namespace gpuclean::cli
