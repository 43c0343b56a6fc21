#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "gpuclean/convert.h"
#include "gpuclean/convert_pipeline.h"
#include "gpuclean/error.h"
#include "gpuclean/lint.h"
#include "gpuclean/node_suite.h"
#include "gpuclean/npy.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/recipe.h"
#include "gpuclean/run.h"
#include "gpuclean/split.h"

namespace gpuclean::cli {

namespace {

// --recipe DIR: the recipe of what was written, its references from the
// same ONNX model and the same realistic input.
template <typename Args>
int WriteRecipeFor(const Args& args, const std::string& written, int exit_code) {
  if (args.recipe.empty()) return exit_code;
  if (exit_code != 0 || written.empty()) {
    std::cerr << "gpuclean: no recipe written: the conversion did not pass\n";
    return exit_code;
  }
  recipe::Options options;
  options.source = written;
  options.out_dir = args.recipe;
  options.against = args.options.onnx_path;
  options.target = args.options.target;
  for (const auto& [name, file] : ParseInputSpecs(args.inputs)) options.inputs[name] = file;
  std::string command = "gpuclean convert " + args.options.onnx_path + " --target " + args.options.target;
  if (args.host_ops == "auto") command += " --host-ops auto";
  for (const std::string& input : args.inputs) command += " --input " + input;
  options.commands = {command + " -o " + args.options.output_path};
  if (!args.quiet) options.progress = [](const std::string& line) { std::cerr << "recipe: " << line << "\n"; };
  const recipe::Result r = recipe::WriteRecipe(options);
  if (!args.json)
    std::cout << fmt::format("wrote the recipe {} ({} files){}\n", r.out_dir, r.files.size(),
                             r.passed ? "" : "; a fidelity gate FAILED (see its README)");
  return r.passed ? 0 : 1;
}

// --host-ops auto: the library's pipeline conversion (convert_pipeline.h).
template <typename Args>
int ConvertToPipeline(Args& args) {
  convert::PipelineOptions options;
  options.islands = split::ParseIslands(args.islands);
  options.fp16_check = !args.no_fp16_check;
  const convert::PipelineResult result = convert::ConvertToPipeline(args.options, options);
  if (args.json)
    std::cout << result.ToJson().dump(2) << "\n";
  else
    std::cout << result.RenderText();
  if (!result.cut_made) return WriteRecipeFor(args, result.single_path, result.exit_code());
  return WriteRecipeFor(args, result.spec_path, result.exit_code());
}

}  // namespace

void AddConvert(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert an ONNX model to .tflite, proven against onnxruntime before it is written: every output within "
      "1e-4*max(1,|ref|) and correlation >= 0.99999 on two seeded input sets (--weights fp16: 1e-2 and 0.9999), and "
      "GPU-clean "
      "for --target: lint's suggested rewrites are applied and proven first. Exit 0 proven, clean and written; 1 the "
      "proof "
      "failed (the first diverging ONNX node is named), lint errors remain for the target, or the outputs in the "
      "target's fp16 arithmetic fail their task gate (argmax, mask IoU, detections found again, error in the output's "
      "units) (nothing written unless --allow-remaining); 2 bad input or unsupported ops");
  struct Args {
    convert::Options options;
    std::vector<std::string> input_shapes, input_values, inputs;
    std::string io_layout = "onnx";
    std::string weights = "fp32";
    bool json = false;
    bool no_prove = false;
    bool quiet = false;
    std::string host_ops = "none";
    std::string islands = "cpu";
    std::string recipe;
    bool no_fp16_check = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->options.onnx_path, "the .onnx file")->required();
  cmd->add_option("-o,--output", args->options.output_path, "the .tflite to write (atomically, only when proven)");
  cmd->add_option("--input-shape", args->input_shapes,
                  "NAME=d0,d1,... pin graph input NAME's unknown dimensions (repeatable)");
  cmd->add_option("--input-value", args->input_values,
                  "NAME=v0,v1,... fix graph input NAME to these values (row-major, its declared shape) at convert "
                  "time: what depends on it folds (an If on a sample rate is inlined) and the .tflite no longer has "
                  "the input; the proof feeds the same values to onnxruntime (repeatable)");
  cmd->add_option("--input", args->inputs,
                  "NAME=FILE.npy a real input (ONNX layout and dtype) for the first proof set, in place of its seeded "
                  "values: a photograph, a chunk of speech (repeatable)");
  cmd->add_option("--io-layout", args->io_layout,
                  "onnx: inputs and outputs keep ONNX's layout (NCHW); nhwc: rank-4 float inputs/outputs are NHWC, "
                  "which drops their transposes")
      ->check(CLI::IsMember({"onnx", "nhwc"}))
      ->default_val("onnx");
  cmd->add_option("--weights", args->weights,
                  "fp32; fp16: float weights stored as float16 with DEQUANTIZE; int8: conv-like weights stored int8, "
                  "one symmetric scale per tensor, with DEQUANTIZE")
      ->check(CLI::IsMember({"fp32", "fp16", "int8"}))
      ->default_val("fp32");
  cmd->add_option("--target", args->options.target,
                  "GPU target the result must be clean for (an id of data/compat, `gpuclean matrix list`), or several "
                  "joined by commas (clean for each: mldrift-webgpu@2.5.3,mldrift-cl@2.1.6): lint, apply the proven "
                  "rewrites lint suggests, re-lint; none: plain lowering")
      ->default_val(lint::kDefaultTarget);
  cmd->add_flag("--allow-remaining", args->options.allow_remaining,
                "write the proven model even when lint errors remain for the target (exit stays 1)");
  cmd->add_flag(
      "--bake-constants", [args](int64_t) { args->options.host_feed_large_constants = false; },
      "keep large constants baked even where the target mishandles them (default: each becomes a graph "
      "input written beside the model as OUT.<input>.npy)");
  cmd->add_flag("--probe", args->options.probe,
                "run the written model on LiteRT.js's WebGPU delegate (fp16, headless Chromium) and compare with "
                "onnxruntime; prints measured residency");
  cmd->add_option("--seeds", args->options.proof_seeds, "seeded input sets the proof runs")
      ->default_val(2)
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--no-prove", args->no_prove, "write without running onnxruntime (the report says unproven)");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress lines on stderr");
  cmd->add_option("--host-ops", args->host_ops,
                  "auto: ops the --target keeps off the GPU (TopK, Gather on runtime indices, BroadcastTo, ...) run "
                  "in CPU graphs between GPU graphs; -o is then the prefix of a pipeline (PREFIX.pipeline.json, "
                  "docs/pipeline.md), proven against onnxruntime in fp32 and in each target's GPU arithmetic")
      ->check(CLI::IsMember({"none", "auto"}))
      ->default_val("none");
  cmd->add_option("--islands", args->islands,
                  "with --host-ops auto, what the ops off the GPU become: cpu (CPU graphs LiteRT's CPU path runs) or "
                  "steps (host steps, for an app that runs no CPU graph)")
      ->check(CLI::IsMember({"cpu", "steps"}))
      ->default_val("cpu");
  cmd->add_option("--recipe", args->recipe,
                  "after a conversion that passes, lay out what was written as a model recipe in this new folder "
                  "(gpuclean recipe: README with measured tables, refs/, run.mjs)");
  cmd->add_flag("--no-fp16-check", args->no_fp16_check,
                "with --host-ops auto, prove the pipeline in fp32 only (the report then says nothing of the GPU's "
                "arithmetic)");
  cmd->callback([args, &handler] {
    handler = [args] {
      for (const exec::InputShape& s : exec::ParseInputShapes(args->input_shapes))
        args->options.input_shapes[s.key] = std::vector<int64_t>(s.dims.begin(), s.dims.end());
      args->options.input_values = convert::ParseInputValues(args->input_values);
      for (const std::string& spec : args->inputs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
          throw Error(ErrorKind::kUsage, "--input expects NAME=FILE.npy, got '" + spec + "'");
        args->options.proof_inputs[spec.substr(0, eq)] = npy::Read(spec.substr(eq + 1));
      }
      args->options.nhwc_io = args->io_layout == "nhwc";
      args->options.fp16_weights = args->weights == "fp16";
      args->options.int8_weights = args->weights == "int8";
      args->options.prove = !args->no_prove;
      if (args->options.output_path.empty() && !args->json && !args->quiet)
        std::cerr << "gpuclean: note: no -o given; converting and proving only\n";
      if (!args->quiet)
        args->options.progress = [](const std::string& line) { std::cerr << "convert: " << line << "\n"; };
      if (args->host_ops == "auto") return ConvertToPipeline(*args);
      const convert::Result result = convert::Convert(args->options);
      if (args->json)
        std::cout << result.report.ToJson().dump(2) << "\n";
      else
        std::cout << result.report.RenderText();
      return WriteRecipeFor(*args, result.report.written ? args->options.output_path : std::string(),
                            result.exit_code());
    };
  });

  // Hidden: ONNX's backend node tests through convert (docs/convert.md,
  // "ONNX node-test suite"); --markdown prints that section's body.
  auto* suite = app.add_subcommand(
      "convert-node-suite", "Run ONNX's backend node tests (libonnx-testdata) through convert and our interpreter");
  suite->group("");
  struct SuiteArgs {
    convert::SuiteOptions options;
    bool json = false, markdown = false, no_isolate = false;
  };
  auto sargs = std::make_shared<SuiteArgs>();
  suite->add_option("--dir", sargs->options.dir, "the node/ folder of the ONNX test data")
      ->default_val(convert::kDefaultNodeSuiteDir);
  suite->add_option("--filter", sargs->options.filter, "only tests whose name contains this");
  suite->add_flag("--json", sargs->json, "print the results as JSON");
  suite->add_flag("--markdown", sargs->markdown, "print the docs/convert.md section body");
  suite->add_flag("--no-isolate", sargs->no_isolate, "run tests in this process (no fork per test)");
  suite->callback([sargs, &handler] {
    handler = [sargs] {
      sargs->options.isolate = !sargs->no_isolate;
      const convert::SuiteReport r = convert::RunNodeSuite(sargs->options);
      if (sargs->json)
        std::cout << r.ToJson().dump(2) << "\n";
      else if (sargs->markdown)
        std::cout << r.RenderMarkdown();
      else
        std::cout << r.RenderTable()
                  << fmt::format("# {} tests, {} run, {} pass ({:.1f}%); float32 op types supported {}/{}; {:.1f} s\n",
                                 r.tests.size(), r.Runnable(), r.Count(convert::TestStatus::kPass), 100 * r.PassRate(),
                                 r.float32_ops_supported.size(), r.float32_ops.size(), r.ms / 1000);
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
