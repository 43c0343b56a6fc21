#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/image_flags.h"
#include "cli/input_shape_flag.h"
#include "gpuclean/bisect.h"
#include "gpuclean/convert.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/lint.h"
#include "gpuclean/npy.h"
#include "gpuclean/run.h"

namespace gpuclean::cli {
namespace {

// --a/--b: a numeric mode ("fp16": the target's numeric model), or another
// model file run in fp32.
analyze::BisectSide Side(const std::string& spec, const std::string& target,
                         const std::shared_ptr<const ir::Model>& model) {
  const std::vector<std::string>& modes = exec::PrecisionNames();
  if (spec == "fp16" || std::find(modes.begin(), modes.end(), spec) != modes.end()) {
    const exec::Precision precision = lint::ResolvePrecision(spec, target);
    return {model, std::string(exec::PrecisionName(precision)), precision};
  }
  if (!std::filesystem::exists(spec))
    throw Error(ErrorKind::kUsage, "--a/--b take fp16 (the --target's numeric model), " +
                                       fmt::format("{}", fmt::join(modes, ", ")) + " or a model file; '" + spec +
                                       "' is neither");
  return {std::make_shared<const ir::Model>(format::ReadModel(spec)), spec, exec::Precision::kFp32};
}

// MODEL.onnx --b OUT.tflite: onnxruntime against our interpreter, tensor by
// tensor in ONNX node order.
int BisectOnnx(const std::string& onnx_path, const std::string& tflite, const std::vector<std::string>& input_specs,
               uint32_t seed, bool json) {
  if (tflite.size() < 8 || tflite.substr(tflite.size() - 7) != ".tflite")
    throw Error(ErrorKind::kUsage, "bisect MODEL.onnx needs --b CONVERTED.tflite (the graph convert wrote)");
  std::vector<npy::Array> inputs;
  for (const auto& [key, file] : ParseInputSpecs(input_specs)) {
    if (key != std::to_string(inputs.size()))
      throw Error(ErrorKind::kUsage, "bisect MODEL.onnx takes --input 0=FILE.npy, 1=..., in input order (ONNX layout)");
    inputs.push_back(npy::Read(file));
  }
  std::cerr << "bisect: onnxruntime on " << onnx_path << " vs our interpreter on " << tflite
            << ", every shared tensor tapped...\n";
  const convert::Divergence d = convert::BisectAcrossFormats(onnx_path, format::ReadModel(tflite), inputs, seed);
  if (json) {
    nlohmann::json j = {
        {"onnx", onnx_path}, {"tflite", tflite}, {"tensors_compared", d.compared}, {"diverged", d.found}};
    if (d.found)
      j["first_divergence"] = {{"node", d.node},
                               {"tensor", d.tensor},
                               {"max_abs_diff", d.max_abs_diff},
                               {"max_scaled_diff", d.max_scaled_diff}};
    std::cout << j.dump(2) << "\n";
  } else if (d.found) {
    std::cout << fmt::format(
        "first diverging ONNX node: {} (output '{}': max |diff| {:.3g}, scaled {:.3g}); {} "
        "tensor(s) compared\n",
        d.node, d.tensor, d.max_abs_diff, d.max_scaled_diff, d.compared);
  } else {
    std::cout << fmt::format("no divergence: {} shared tensor(s) within 1e-4*max(1,|ref|)\n", d.compared);
  }
  return d.found ? 1 : 0;
}

}  // namespace

void AddBisect(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "bisect", "Find the first op whose numbers break between two numeric modes (or two models), its cause and fix");
  struct Args {
    std::string model, a = "fp32", b = "fp16", html, overlay;
    std::string target = lint::kDefaultTarget;
    std::vector<std::string> inputs, input_shapes;
    uint32_t seed = 0;
    double min_correlation = 0.999;
    int threads = 1;
    bool json = false;
    ImageFlags image;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->model, "the .tflite file, or an .onnx model with --b its converted .tflite")
      ->required();
  cmd->add_option("--input", args->inputs, "KEY=FILE.npy (repeatable); inputs not given are generated as by `run`");
  AddInputShapeFlag(cmd, args->input_shapes);
  cmd->add_option("--seed", args->seed, "seed for generated inputs")->default_val(0);
  cmd->add_option("--a", args->a,
                  "reference: fp32 | fp16 | fp16-storage | fp16-compute | fp16-fused | fp16-f32acc | another .tflite "
                  "(run in fp32)")
      ->default_val("fp32");
  cmd->add_option("--b", args->b,
                  "compared: fp16 (the --target's numeric model) | fp32 | fp16-storage | "
                  "fp16-compute | fp16-fused | fp16-f32acc | another .tflite with matching tensor names (run in fp32)")
      ->default_val("fp16");
  cmd->add_option("--target", args->target, "runtime target whose numeric model fp16 means (data/compat/)")
      ->capture_default_str();
  cmd->add_option("--min-correlation", args->min_correlation, "a tensor diverges below this correlation")
      ->default_val(0.999);
  cmd->add_option("--threads", args->threads, "worker threads")->default_val(1);
  cmd->add_flag("--json", args->json, "print the report as JSON to stdout");
  cmd->add_option("--html", args->html, "also write a self-contained HTML report");
  cmd->add_option("--overlay", args->overlay, "also write a Google Model Explorer node data overlay (JSON)");
  args->image.Add(cmd);
  cmd->callback([args, &handler] {
    handler = [args] {
      if (args->model.size() > 5 && args->model.substr(args->model.size() - 5) == ".onnx")
        return BisectOnnx(args->model, args->b, args->inputs, args->seed, args->json);
      if (args->threads < 1) throw Error(ErrorKind::kUsage, "--threads must be at least 1");
      auto model = std::make_shared<const ir::Model>(ReadModelAtShapes(args->model, args->input_shapes));
      const analyze::BisectSide a = Side(args->a, args->target, model), b = Side(args->b, args->target, model);
      const std::vector<npy::Array> inputs = exec::PrepareInputs(model->main(), ParseInputSpecs(args->inputs),
                                                                 args->seed, args->image.Parse(), args->model);
      std::cerr << "bisect: running " << a.label << " and " << b.label << " with every tensor tapped...\n";
      analyze::BisectReport report =
          analyze::Bisect(a, b, inputs, {.min_correlation = args->min_correlation, .threads = args->threads});
      report.model = args->model;
      if (!args->html.empty()) WriteFileAtomically(args->html, analyze::RenderHtml(report, model->main()));
      if (!args->overlay.empty()) WriteFileAtomically(args->overlay, analyze::ModelExplorerOverlay(report).dump(2));
      if (args->json)
        std::cout << analyze::ToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      else
        std::cout << analyze::RenderText(report);
      return report.first_break ? 1 : 0;
    };
  });
}

}  // namespace gpuclean::cli
