#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/gate_flags.h"
#include "gpuclean/host_steps.h"
#include "gpuclean/io.h"
#include "gpuclean/pipeline.h"

namespace gpuclean::cli {
namespace {

namespace fs = std::filesystem;

struct RunFlags {
  std::string runtime = "ours", precision = "fp32", work_dir;
  std::vector<std::string> inputs;
  uint32_t seed = 0;
  int threads = 1;
  bool json = false, quiet = false;

  void Add(CLI::App* cmd) {
    cmd->add_option("--runtime", runtime,
                    "ours (gpuclean's interpreter), litert-wasm (LiteRT.js on CPU) or litert / litert-webgpu (what "
                    "an app runs: gpu stages on LiteRT.js's WebGPU delegate, cpu stages on its wasm CPU path, in one "
                    "headless Chromium page)")
        ->capture_default_str();
    cmd->add_option("--precision", precision,
                    "ours: numeric mode of the gpu stages (fp32, fp16-storage, fp16-compute, fp16-fused, fp16-f32acc); "
                    "litert-webgpu: fp32 or fp16")
        ->capture_default_str();
    cmd->add_option("--input", inputs, "NAME=FILE.npy for a pipeline input (repeatable); others are generated");
    cmd->add_option("--seed", seed, "seed of generated inputs")->capture_default_str();
    cmd->add_option("--threads", threads, "interpreter threads")->capture_default_str()->check(CLI::Range(1, 256));
    cmd->add_flag("--json", json, "print JSON");
    cmd->add_flag("-q,--quiet", quiet, "no per-stage progress on stderr");
  }
  std::map<std::string, std::string> Inputs() const {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : ParseInputSpecs(inputs)) out[k] = v;
    return out;
  }
  pipeline::RunOptions Options(const std::string& folder) const {
    pipeline::RunOptions o;
    o.runtime = pipeline::ParseRuntime(runtime);
    o.precision = pipeline::ParsePrecisionFor(o.runtime, precision);
    o.seed = seed;
    o.threads = threads;
    o.work_dir = folder;
    o.progress = !quiet && !json;
    return o;
  }
};

// An output value name as a file name: path separators and odd characters
// become '_'.
std::string FileNameFor(const std::string& value) {
  std::string out;
  for (char c : value) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out.empty() ? "value" : out;
}

void AddRunCommand(CLI::App* parent, Handler& handler) {
  auto* cmd = parent->add_subcommand("run", "Run every stage of a pipeline spec and write its outputs");
  struct Args {
    std::string spec, out;
    RunFlags flags;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("SPEC", args->spec, "the PREFIX.pipeline.json")->required();
  cmd->add_option("--out", args->out, "folder for <output>.npy, in<i>.npy (generated inputs) and meta.json")
      ->required();
  args->flags.Add(cmd);
  cmd->callback([args, &handler] {
    handler = [args] {
      const pipeline::Spec spec = pipeline::LoadSpec(args->spec);
      fs::create_directories(args->out);
      const pipeline::RunOptions options = args->flags.Options((fs::path(args->out) / "stages").string());
      const auto given = args->flags.Inputs();
      const auto inputs = pipeline::PrepareInputs(spec, given, args->flags.seed);
      const pipeline::RunResult result = pipeline::Run(spec, inputs, options);
      nlohmann::json meta = {{"spec", args->spec}, {"runtime", args->flags.runtime}, {"seed", args->flags.seed}};
      meta["inputs"] = nlohmann::json::array();
      for (size_t i = 0; i < spec.inputs.size(); ++i) {
        const bool generated = !given.count(spec.inputs[i]);
        if (generated) npy::Write((fs::path(args->out) / fmt::format("in{}.npy", i)).string(), inputs[i]);
        meta["inputs"].push_back({{"name", spec.inputs[i]}, {"generated", generated}});
      }
      meta["outputs"] = nlohmann::json::array();
      for (size_t o = 0; o < spec.outputs.size(); ++o) {
        const std::string file = FileNameFor(spec.outputs[o]) + ".npy";
        npy::Write((fs::path(args->out) / file).string(), result.outputs[o]);
        meta["outputs"].push_back({{"name", spec.outputs[o]}, {"file", file}});
      }
      meta.update(pipeline::StagesJson(result));
      WriteFileAtomically((fs::path(args->out) / "meta.json").string(), meta.dump(2) + "\n");
      if (args->flags.json) {
        std::cout << meta.dump(2) << "\n";
      } else {
        std::cout << fmt::format("ran {} ({} stages, runtime {})\n", args->spec, result.stages.size(),
                                 args->flags.runtime);
        for (const auto& s : result.stages) {
          std::cout << fmt::format("  {:<16} {:<22} {:8.1f} ms", s.name, s.where, s.ms);
          if (s.residency)
            std::cout << fmt::format(" (invoke {:.1f} ms)  {}", s.run_ms, probe::Summarize(*s.residency));
          std::cout << "\n";
        }
        std::cout << fmt::format("wrote {} output(s) to {}\n", spec.outputs.size(), args->out);
      }
      return 0;
    };
  });
}

void AddProveCommand(CLI::App* parent, Handler& handler) {
  auto* cmd = parent->add_subcommand(
      "prove", "Run a pipeline and the monolithic model it replaces on the same inputs; apply task gates per output");
  struct Args {
    std::string spec, against, work;
    RunFlags flags;
    GateFlags gates;
    bool no_match_boxes = false;
    std::optional<double> detections;
    bool no_detections = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("SPEC", args->spec, "the PREFIX.pipeline.json")->required();
  cmd->add_option("--against", args->against,
                  "the monolithic model: .tflite (our interpreter, fp32) or .onnx "
                  "(onnxruntime)")
      ->required();
  cmd->add_option("--work", args->work, "folder for the runtimes' files (default: a temporary folder)");
  args->flags.Add(cmd);
  args->gates.Add(cmd);
  cmd->add_option("--detections", args->detections,
                  "SCORE: judge a detector's outputs ([1,N,C] scores, [1,N,4] boxes, [1,N,H,W] masks) together: every "
                  "reference detection above SCORE found again at box IoU >= 0.95, same class, mask IoU >= 0.95 "
                  "(default: on at 0.5 when no --gate is given)");
  cmd->add_flag("--no-detections", args->no_detections, "never judge a detector's outputs together");
  cmd->add_flag("--no-match-boxes", args->no_match_boxes,
                "compare detections position by position (default: with a box gate on [..., N, 4], pair the chain's "
                "detections with the monolith's by box first and reorder the outputs that share [..., N] alike)");
  cmd->callback([args, &handler] {
    handler = [args] {
      const pipeline::Spec spec = pipeline::LoadSpec(args->spec);
      std::string work = args->work;
      std::optional<fs::path> temporary;
      if (work.empty()) {
        temporary = fs::temp_directory_path() / fmt::format("gpuclean-prove-{}", ::getpid());
        work = temporary->string();
      }
      fs::create_directories(work);
      pipeline::ProveOptions options;
      options.run = args->flags.Options(work);
      options.gates = args->gates.Specs();
      options.gate_options = args->gates.Options();
      options.inputs = args->flags.Inputs();
      options.match_boxes = !args->no_match_boxes;
      options.detections = !args->no_detections;
      if (args->detections) {
        options.detections_given = true;
        options.detection_gate.score_threshold = *args->detections;
      }
      pipeline::ProveReport report;
      try {
        report = pipeline::Prove(spec, args->against, options);
      } catch (...) {
        if (temporary) fs::remove_all(*temporary);
        throw;
      }
      if (temporary) fs::remove_all(*temporary);
      std::cout << (args->flags.json ? pipeline::ToJson(report).dump(2) + "\n" : pipeline::RenderProve(report));
      return report.passed ? 0 : 1;
    };
  });
}

void AddStepsCommand(CLI::App* parent, Handler& handler) {
  auto* cmd = parent->add_subcommand("steps", "List the host steps a pipeline spec can name");
  cmd->callback([&handler] {
    handler = [] {
      for (const pipeline::HostStepInfo& s : pipeline::HostSteps())
        std::cout << fmt::format("{:<16} ({}) -> ({}){}\n{:<16} replaces {}\n", s.name, s.inputs, s.outputs,
                                 s.params.empty() ? "" : "  params: " + s.params, "", s.replaces);
      return 0;
    };
  });
}

}  // namespace

void AddPipeline(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("pipeline", "Run and prove multi-graph pipelines with host steps (docs/pipeline.md)");
  cmd->require_subcommand(1);
  AddRunCommand(cmd, handler);
  AddProveCommand(cmd, handler);
  AddStepsCommand(cmd, handler);
}

}  // namespace gpuclean::cli
