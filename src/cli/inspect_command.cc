#include <iostream>

#include "cli/commands.h"
#include "gpuclean/format.h"
#include "gpuclean/inspect.h"

namespace gpuclean::cli {

void AddInspect(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("inspect", "Show a model's structure: inputs/outputs, ops, weights, signatures");
  struct Args {
    std::string model;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->model, "the .tflite file")->required();
  cmd->add_flag("--json", args->json, "print JSON (documented in docs/inspect.md) to stdout");
  cmd->callback([args, &handler] {
    handler = [args] {
      ir::Model model = format::ReadModel(args->model);
      nlohmann::json summary = inspect::Summarize(model);
      if (args->json)
        // Tensor names come from the file and need not be UTF-8.
        std::cout << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      else
        std::cout << inspect::RenderText(summary);
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
