#include <iostream>

#include "cli/commands.h"
#include "cli/image_flags.h"
#include "cli/input_shape_flag.h"
#include "gpuclean/error.h"
#include "gpuclean/lint.h"
#include "gpuclean/run.h"

namespace gpuclean::cli {

void AddRun(CLI::App& app, Handler& handler) {
  auto* cmd =
      app.add_subcommand("run", "Run a model on gpuclean's interpreter; writes DIR/out<i>.npy and DIR/meta.json");
  struct Args {
    exec::RunRequest request;
    std::vector<std::string> inputs, input_shapes;
    std::string precision = "fp32";
    ImageFlags image;
    std::string target = lint::kDefaultTarget;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->request.model_path, "the .tflite file")->required();
  cmd->add_option("--input", args->inputs,
                  "KEY=FILE.npy, KEY an input index or name (repeatable); inputs not given are generated "
                  "(float: uniform [0,1) from mulberry32 with --seed) and written to DIR/in<i>.npy");
  AddInputShapeFlag(cmd, args->input_shapes);
  cmd->add_option("--seed", args->request.seed, "seed for generated inputs")->default_val(0);
  cmd->add_option("--precision", args->precision,
                  "fp32 | fp16 (the --target's numeric model) | fp16-storage | fp16-compute | fp16-fused | fp16-f32acc")
      ->default_val("fp32");
  cmd->add_option("--target", args->target, "runtime target whose numeric model --precision fp16 means (data/compat/)")
      ->capture_default_str();
  cmd->add_option("--out", args->request.out_dir, "output folder")->required();
  cmd->add_option("--threads", args->request.threads, "worker threads")->default_val(1);
  cmd->add_option("--repeat", args->request.repeat,
                  "runs; meta.json reports the first apart and the median of the rest")
      ->default_val(1);
  cmd->add_option("--dump-tensors", args->request.dump_dir,
                  "write every intermediate tensor as <index>_<name>.npy plus index.json");
  args->image.Add(cmd);
  cmd->callback([args, &handler] {
    handler = [args] {
      args->request.inputs = ParseInputSpecs(args->inputs);
      args->request.input_shapes = exec::ParseInputShapes(args->input_shapes);
      args->request.precision = lint::ResolvePrecision(args->precision, args->target);
      if (args->precision == "fp16")
        std::cerr << "precision fp16 on " << args->target << ": " << exec::PrecisionName(args->request.precision)
                  << "\n";
      args->request.images = args->image.Parse();
      nlohmann::json meta = exec::RunToFolder(args->request);
      std::cerr << "ran " << args->request.model_path << " in " << meta["run_ms"].get<double>() << " ms; outputs in "
                << args->request.out_dir << "\n";
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
