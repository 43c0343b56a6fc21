#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/probe.h"
#include "gpuclean/run.h"

namespace gpuclean::cli {

namespace {

std::string ShapeText(const nlohmann::json& shape) {
  std::ostringstream out;
  out << "[";
  bool first = true;
  for (const auto& d : shape) {
    if (!first) out << ",";
    first = false;
    out << d.dump();
  }
  out << "]";
  return out.str();
}

// onnxruntime has no delegate, so no residency: the outputs and the times.
void PrintOnnxText(const probe::ProbeResult& r, const probe::ProbeRequest& q) {
  std::cout << r.model_path << " on onnxruntime " << r.meta.value("version", std::string("?")) << " ("
            << r.meta.value("execution_provider", std::string("cpu")) << ", " << q.threads
            << " thread(s), graph optimization " << r.meta.value("graph_optimization", std::string("?")) << ")\n";
  const auto outputs = r.meta.value("outputs", nlohmann::json::array());
  std::cout << outputs.size() << " output(s):\n";
  for (const auto& o : outputs)
    std::cout << "  " << o.value("file", std::string("?")) << "  " << o.value("name", std::string("?")) << "  "
              << o.value("dtype", std::string("?")) << " " << ShapeText(o.value("shape", nlohmann::json::array()))
              << "\n";
  std::cout << "compile " << r.compile_ms << " ms, run " << r.run_ms << " ms (first " << r.run_ms_first
            << " ms); results in " << q.out_dir << "\n";
}

void PrintText(const probe::ProbeResult& r, const probe::ProbeRequest& q) {
  if (r.runtime == probe::Runtime::kOnnxRuntime) return PrintOnnxText(r, q);
  const probe::Residency& res = r.residency;
  std::cout << r.model_path << " on " << probe::RuntimeName(r.runtime);
  if (r.runtime == probe::Runtime::kLiteRtWebGpu) {
    const auto& adapter = r.meta.value("adapter", nlohmann::json::object());
    std::cout << " (precision " << q.precision << ", adapter " << adapter.value("vendor", std::string("?")) << "/"
              << adapter.value("architecture", std::string("?")) << ")";
  }
  std::cout << "\n";
  std::cout << "residency: " << probe::Summarize(res) << "\n";
  if (!res.unsupported.empty()) {
    std::cout << "rejected by the GPU delegate:\n";
    for (const auto& u : res.unsupported)
      std::cout << "  " << u.op << ": " << (u.reason.empty() ? "(no reason logged)" : u.reason) << "\n";
  }
  for (const std::string& e : res.compile_errors) std::cout << "compile error: " << e << "\n";
  if (r.is_fully_accelerated && res.fully_delegated && *r.is_fully_accelerated != *res.fully_delegated)
    std::cout << "note: LiteRT.js isFullyAccelerated=" << (*r.is_fully_accelerated ? "true" : "false")
              << " disagrees with the delegate log; the log is the truth\n";
  std::cout << "compile " << r.compile_ms << " ms";
  if (!q.residency_only) std::cout << ", run " << r.run_ms << " ms (first " << r.run_ms_first << " ms)";
  std::cout << "; results in " << q.out_dir << "\n";
}

// Constants `convert` moved out of a .tflite, read from beside it for the
// inputs --input does not name: generated values there would be garbage.
void FeedHostInputsBeside(probe::ProbeRequest& request) {
  ir::Model model;
  try {
    model = format::ReadModel(request.model_path);
  } catch (const Error&) {
    return;  // the probe itself says what is wrong with the file, in its words
  }
  if (model.subgraphs.empty()) return;
  const ir::Subgraph& g = model.main();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::Tensor& t = g.tensors[g.inputs[i]];
    const bool given = std::any_of(request.inputs.begin(), request.inputs.end(),
                                   [&](const auto& in) { return in.first == t.name || in.first == std::to_string(i); });
    if (!given && exec::HostInputBeside(request.model_path, t))
      request.inputs.emplace_back(std::to_string(i), exec::HostInputPath(request.model_path, t.name));
  }
}

}  // namespace

void AddProbe(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "probe",
      "Run a model on a real runtime (LiteRT.js wasm CPU or WebGPU in headless Chromium, or onnxruntime for "
      ".onnx models) and report GPU residency from the delegate log (LiteRT); writes DIR/out<i>.npy and "
      "DIR/meta.json");
  struct Args {
    probe::ProbeRequest request;
    std::string runtime;
    std::vector<std::string> inputs;
    std::string outputs;
    std::vector<std::string> dims;
    bool no_optimize = false;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->request.model_path, "the .tflite file (.onnx for onnxruntime)")->required();
  cmd->add_option("--runtime", args->runtime, "litert-wasm | litert-webgpu | onnxruntime")->required();
  cmd->add_option("--precision", args->request.precision, "WebGPU gpuOptions.precision: fp32 | fp16")
      ->default_val("fp32");
  cmd->add_option("--input", args->inputs,
                  "KEY=FILE.npy, KEY an input index or name (repeatable); inputs not given are generated "
                  "(float: uniform [0,1) from mulberry32 with --seed, the same as the wasm harness) and written "
                  "to DIR/in<i>.npy");
  cmd->add_option("--seed", args->request.seed, "seed for generated inputs")->default_val(0);
  cmd->add_option("--repeat", args->request.repeat, "runs; run_ms is the median of runs 2..N")->default_val(1);
  cmd->add_flag("--residency-only", args->request.residency_only,
                "WebGPU: compile and report residency without running (faster)");
  cmd->add_option("--outputs", args->outputs,
                  "onnxruntime: NAME[,NAME...] fetch only these outputs, in this order (default: all, model order)");
  cmd->add_option("--threads", args->request.threads, "onnxruntime: intra-op threads")->default_val(1);
  cmd->add_flag("--no-optimize", args->no_optimize, "onnxruntime: graph optimization 'disabled' (default 'all')");
  cmd->add_option("--dim", args->dims,
                  "onnxruntime: NAME=SIZE for a symbolic input dimension of a generated input (repeatable)");
  cmd->add_option("--out", args->request.out_dir, "output folder")->required();
  cmd->add_flag("--json", args->json, "print meta.json (with the parsed residency) to stdout");
  cmd->callback([args, &handler] {
    handler = [args] {
      for (const std::string& spec : args->inputs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
          throw Error(ErrorKind::kUsage, "--input expects KEY=FILE.npy, got '" + spec + "'");
        args->request.inputs.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
      }
      if (!args->outputs.empty()) {
        std::stringstream names(args->outputs);
        std::string name;
        while (std::getline(names, name, ',')) {
          if (name.empty())
            throw Error(ErrorKind::kUsage, "--outputs expects NAME[,NAME...], got '" + args->outputs + "'");
          args->request.output_names.push_back(name);
        }
      }
      for (const std::string& spec : args->dims) {
        const auto eq = spec.find('=');
        int64_t size = -1;
        if (eq != std::string::npos && eq > 0 && eq + 1 < spec.size() &&
            spec.find_first_not_of("0123456789", eq + 1) == std::string::npos && spec.size() - eq - 1 <= 12)
          size = std::stoll(spec.substr(eq + 1));
        if (size < 0) throw Error(ErrorKind::kUsage, "--dim expects NAME=SIZE, got '" + spec + "'");
        args->request.dims.emplace_back(spec.substr(0, eq), size);
      }
      args->request.optimize = !args->no_optimize;
      args->request.runtime = probe::ParseRuntime(args->runtime);
      if (args->request.runtime != probe::Runtime::kOnnxRuntime) FeedHostInputsBeside(args->request);
      const probe::ProbeResult result = probe::RunProbe(args->request);
      if (args->json)
        std::cout << result.meta.dump(2) << "\n";
      else
        PrintText(result, args->request);
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
