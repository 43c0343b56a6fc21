#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "gpuclean/latency.h"

namespace gpuclean::cli {

void AddBench(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "bench", "Latency of a model: median and min after warm-up, the first run apart, with its residency line");
  struct Args {
    std::string model, runtime = "ours";
    latency::BenchOptions options;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  latency::BenchOptions& o = args->options;
  cmd->add_option("MODEL", o.model_path, "the .tflite file")->required();
  cmd->add_option("--runtime", args->runtime, "ours | litert-wasm | litert-webgpu")->default_val("ours");
  cmd->add_option("--repeat", o.repeat, "timed runs")->default_val(10);
  cmd->add_option("--warmup", o.warmup, "untimed runs after the first one")->default_val(2);
  cmd->add_option("--threads", o.threads, "worker threads (ours only)")->default_val(1);
  cmd->add_option("--seed", o.seed, "seed for the generated inputs")->default_val(0);
  cmd->add_option("--precision", o.precision, "ours: fp32 | fp16-storage | fp16-compute; litert-webgpu: fp32 | fp16")
      ->default_val("fp32");
  cmd->add_flag("--by-op", o.by_op,
                "ours: also time each op of the timed runs and list the totals per op type and the ten slowest ops");
  cmd->add_flag("--json", args->json, "print the result as JSON to stdout");
  cmd->callback([args, &handler] {
    handler = [args] {
      args->options.runtime = latency::ParseBenchRuntime(args->runtime);
      latency::Validate(args->options);
      if (args->options.runtime != latency::BenchRuntime::kOurs)
        std::cerr << "bench: running on " << args->runtime << "...\n";
      const latency::BenchResult result = latency::Bench(args->options);
      if (args->json)
        std::cout << latency::ToJson(result).dump(2) << "\n";
      else
        std::cout << latency::RenderText(result);
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
