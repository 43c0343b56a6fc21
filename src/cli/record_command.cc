#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "gpuclean/record.h"

namespace gpuclean::cli {

void AddRecord(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("record",
                                 "Append one device verification record to a recipe README's table (and a JSON file)");
  struct Args {
    analyze::RecordRequest request;
    GateFlags gates;
  };
  auto args = std::make_shared<Args>();
  analyze::RecordRequest& q = args->request;
  // Required-ness of --device, --runtime and --log is checked by the library
  // so that every refusal reads the same ("record refused: ...").
  cmd->add_option("--ref", q.ref_dir, "folder of reference .npy files (the source model's dump)")->required();
  cmd->add_option("--got", q.got_dir, "folder of the device run's .npy outputs")->required();
  cmd->add_option("--log", q.log_path, "the device run's delegate log (logcat / console text): the residency line");
  cmd->add_option("--device", q.device, "device, e.g. \"Pixel 8a (Mali-G615)\"");
  cmd->add_option("--runtime", q.runtime, "runtime version, e.g. 2.1.6");
  cmd->add_option("--accelerator", q.accelerator, "gpu | cpu");
  cmd->add_option("--model", q.model_path,
                  "the .tflite, to count nodes when the log shows full delegation without a count");
  args->gates.Add(cmd);
  cmd->add_option("--readme", q.readme_path, "recipe README.md; the row goes under \"## Device records\"")->required();
  cmd->add_option("--json", q.json_path, "JSON array file that receives the record too");
  cmd->add_option("--date", q.date, "record date YYYY-MM-DD (default: today, UTC)");
  cmd->callback([args, &handler] {
    handler = [args] {
      args->request.gates = args->gates.Specs();
      args->request.gate_options = args->gates.Options();
      const analyze::RecordResult result = analyze::Record(args->request);
      std::cout << analyze::RenderText(result);
      if (result.comparison.silent_fallback_suspected) std::cerr << analyze::SilentFallbackWarning(result.comparison);
      return result.exit_code;
    };
  });
}

}  // namespace gpuclean::cli
