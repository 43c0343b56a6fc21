#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "cli/image_flags.h"
#include "cli/input_shape_flag.h"
#include "gpuclean/check.h"

namespace gpuclean::cli {

void AddCheck(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "check",
      "The main job: inspect, lint with predicted residency, fp16 bisect and (with Node/Chromium) the real "
      "WebGPU delegate, in one report with a verdict");
  struct Args {
    std::string model;
    check::CheckOptions options;
    bool json = false, no_probe = false;
    std::vector<std::string> inputs, input_shapes;
    GateFlags gates;
    ImageFlags image;
    bool no_image = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option(
      "MODEL", args->model,
      "the .tflite file (default: .cache/models/face_detection_full_range_sparse.tflite, fetched by tools/setup.sh: "
      "a real model with a finding, its fix and its proof)");
  cmd->add_option("--target", args->options.target, "compatibility target (gpuclean matrix list)")
      ->default_val(lint::kDefaultTarget);
  cmd->add_option("--seed", args->options.seed, "seed for generated inputs")->default_val(0);
  cmd->add_option("--threads", args->options.threads, "worker threads")->default_val(1);
  cmd->add_option("--input", args->inputs, "KEY=FILE.npy (repeatable); inputs not given are generated as by `run`");
  AddInputShapeFlag(cmd, args->input_shapes);
  args->image.Add(cmd);
  cmd->add_flag("--no-image", args->no_image,
                "feed generated noise instead of the default photograph (.cache/images/grace_hopper.jpg) that check "
                "uses for an image-shaped input when no input is given");
  args->gates.Add(cmd);
  cmd->add_flag("--no-probe", args->no_probe, "skip the real WebGPU delegate run");
  cmd->add_flag("--json", args->json, "print the report as JSON to stdout");
  cmd->callback([args, &handler] {
    handler = [args] {
      if (args->model.empty()) {
        args->model = ".cache/models/face_detection_full_range_sparse.tflite";
        if (!std::filesystem::exists(args->model))
          throw Error(ErrorKind::kUsage, "no MODEL given and the default model " + args->model +
                                             " is missing (run tools/setup.sh from the repository root)");
        std::cerr << "check: no MODEL given; using " << args->model << "\n";
      }
      args->options.probe = !args->no_probe;
      args->options.inputs = ParseInputSpecs(args->inputs);
      args->options.input_shapes = exec::ParseInputShapes(args->input_shapes);
      args->options.gates = args->gates.Specs();
      args->options.images = args->image.Parse();
      args->options.default_image = !args->no_image;
      args->options.gate_options = args->gates.Options();
      args->options.progress = [](const std::string& step) { std::cerr << "check: " << step << "\n"; };
      const check::CheckReport report = check::Check(args->model, args->options);
      if (args->json)
        std::cout << check::ToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      else
        std::cout << check::RenderText(report);
      return report.verdict == check::Verdict::kGpuClean ? 0 : 1;
    };
  });
}

}  // namespace gpuclean::cli
