#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "gpuclean/recipe.h"

namespace gpuclean::cli {

void AddRecipe(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "recipe",
      "Lay out a converted model (a .tflite, or a PREFIX.pipeline.json) as a model recipe in a new folder: README "
      "with files, inputs, outputs, residency per stage and fidelity per output measured here, refs/ with reference "
      "inputs and outputs, run.mjs that runs every stage with LiteRT.js by name, pipeline.json. Exit 0 written with "
      "every fidelity gate passing; 1 written with a gate failing; 2 bad input");
  struct Args {
    recipe::Options options;
    std::vector<std::string> inputs;
    GateFlags gates;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->options.source, "a .tflite (constants from MODEL.<input>.npy) or PREFIX.pipeline.json")
      ->required();
  cmd->add_option("-o,--output", args->options.out_dir, "the folder to write (must be new or empty)")->required();
  cmd->add_option("--against", args->options.against,
                  "the reference model: .onnx (onnxruntime) or .tflite (default: the pipeline's source)");
  cmd->add_option("--target", args->options.target,
                  "GPU target(s), comma-separated: predicted residency and the "
                  "arithmetic fidelity is judged in")
      ->capture_default_str();
  cmd->add_option("--input", args->inputs, "NAME=FILE.npy the realistic input (set 1; repeatable)");
  cmd->add_option("--seeds", args->options.seeded_sets, "seeded input sets after the realistic one")
      ->capture_default_str();
  cmd->add_flag("--measure", args->options.measure,
                "also run on LiteRT.js: GPU stages on the WebGPU delegate (fp16), CPU stages on wasm, one Chromium "
                "page (measured residency and fidelity)");
  cmd->add_option("--title", args->options.title, "what the model is (the README's heading)");
  args->gates.Add(cmd);
  cmd->add_flag("-q,--quiet", args->quiet, "no progress lines on stderr");
  cmd->callback([args, &handler] {
    handler = [args] {
      for (const auto& [name, file] : ParseInputSpecs(args->inputs)) args->options.inputs[name] = file;
      args->options.gates = args->gates.Specs();
      args->options.gate_options = args->gates.Options();
      if (!args->quiet)
        args->options.progress = [](const std::string& line) { std::cerr << "recipe: " << line << "\n"; };
      std::string command = "gpuclean recipe " + args->options.source + " -o " + args->options.out_dir;
      if (!args->options.against.empty()) command += " --against " + args->options.against;
      command += " --target " + args->options.target;
      for (const std::string& input : args->inputs) command += " --input " + input;
      if (args->options.measure) command += " --measure";
      args->options.commands.push_back(command);
      const recipe::Result r = recipe::WriteRecipe(args->options);
      std::cout << fmt::format("wrote the recipe {} ({} files); fidelity: {}\n", r.out_dir, r.files.size(),
                               r.passed ? "every gate passed" : "a gate FAILED (see its README)");
      return r.passed ? 0 : 1;
    };
  });
}

}  // namespace gpuclean::cli
