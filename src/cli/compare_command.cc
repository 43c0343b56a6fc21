#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "gpuclean/compare.h"

namespace gpuclean::cli {

void AddCompare(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("compare", "Metrics and gates between two .npy files or two folders of them");
  struct Args {
    std::string ref, got, got_accelerator, log;
    GateFlags gates;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("REF", args->ref, "reference .npy file or folder (the source model's dump, or the CPU run)")
      ->required();
  cmd->add_option("GOT", args->got, "compared .npy file or folder (matched by file name)")->required();
  args->gates.Add(cmd);
  cmd->add_option("--got-accelerator", args->got_accelerator,
                  "gpu | cpu: what produced GOT; a GPU run bit-identical to REF is flagged as a silent fallback");
  cmd->add_option("--log", args->log, "delegate log (logcat or console text) of the GOT run: prints its residency");
  cmd->add_flag("--json", args->json, "print the report as JSON to stdout");
  cmd->callback([args, &handler] {
    handler = [args] {
      analyze::CompareOptions options{args->gates.Specs(), args->gates.Options(), args->got_accelerator};
      analyze::CompareReport report = analyze::CompareOutputs(args->ref, args->got, options);
      if (!args->log.empty()) {
        report.residency = analyze::ReadResidencyLog(args->log);
        report.log_path = args->log;
      }
      if (args->json) {
        std::cout << analyze::ToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        std::cerr << analyze::SilentFallbackWarning(report);  // loud even when stdout goes to a file
      } else {
        std::cout << analyze::RenderText(report);
      }
      return report.exit_code();
    };
  });
}

}  // namespace gpuclean::cli
