#include "gpuclean/latency.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/run.h"
#include "gpuclean/stopwatch.h"

namespace gpuclean::latency {
namespace {

namespace fs = std::filesystem;

// Splits 1 + warmup + repeat run times into the result's fields.
void Summarize(const std::vector<double>& all_ms, BenchResult& r) {
  if (all_ms.size() != static_cast<size_t>(1 + r.warmup + r.repeat))
    ThrowInternal(fmt::format("bench expected {} run times, got {}", 1 + r.warmup + r.repeat, all_ms.size()));
  r.first_ms = all_ms.front();
  r.timed_ms.assign(all_ms.begin() + 1 + r.warmup, all_ms.end());
  r.median_ms = Median(r.timed_ms);
  r.min_ms = *std::min_element(r.timed_ms.begin(), r.timed_ms.end());
  r.max_ms = *std::max_element(r.timed_ms.begin(), r.timed_ms.end());
}

// A tap that charges the time since the previous op finished to the op that
// just did; an op's later outputs cost nothing more.
exec::TapFn OpClock(std::map<int, std::vector<double>>& op_ms) {
  auto last = std::make_shared<Stopwatch>();
  auto last_op = std::make_shared<int>(-1);
  return [&op_ms, last, last_op](int op, int, const exec::Tensor&) {
    if (op == *last_op) return;
    op_ms[op].push_back(last->ms());
    *last = Stopwatch();
    *last_op = op;
  };
}

void SummarizeOps(const exec::Interpreter& interpreter, const std::map<int, std::vector<double>>& op_ms,
                  BenchResult& r) {
  const ir::Subgraph& g = interpreter.graph();
  std::map<std::string, std::vector<double>> type_ms;  // per type, per run
  std::map<std::string, int> type_count;
  for (const auto& [op, runs] : op_ms) {
    const std::string type = interpreter.RunsAs(op);
    auto& sums = type_ms[type];
    sums.resize(std::max(sums.size(), runs.size()), 0.0);
    for (size_t i = 0; i < runs.size(); ++i) sums[i] += runs[i];
    ++type_count[type];
    const auto& outputs = g.ops[static_cast<size_t>(op)].outputs;
    r.slowest_ops.push_back(
        {type, outputs.empty() ? "" : g.tensors[static_cast<size_t>(outputs[0])].name, op, 1, Median(runs)});
  }
  for (const auto& [type, sums] : type_ms) r.by_op.push_back({type, "", -1, type_count[type], Median(sums)});
  const auto slower = [](const OpTime& a, const OpTime& b) { return a.ms > b.ms; };
  std::sort(r.by_op.begin(), r.by_op.end(), slower);
  std::sort(r.slowest_ops.begin(), r.slowest_ops.end(), slower);
  if (r.slowest_ops.size() > 10) r.slowest_ops.resize(10);
}

void BenchOurs(const BenchOptions& o, BenchResult& r) {
  const exec::Precision precision = exec::ParsePrecision(o.precision);
  auto model = std::make_shared<const ir::Model>(format::ReadModel(o.model_path));
  const Stopwatch prepare_start;
  exec::Interpreter interpreter(model, {.threads = o.threads, .precision = precision});
  r.prepare_ms = prepare_start.ms();
  const std::vector<npy::Array> inputs = exec::PrepareInputs(interpreter.graph(), {}, o.seed);
  for (int i = 0; i < interpreter.num_inputs(); ++i) interpreter.SetInput(i, inputs[static_cast<size_t>(i)]);
  std::vector<double> all_ms;
  // op index -> its time in each timed run (by_op)
  std::map<int, std::vector<double>> op_ms;
  for (int run = 0; run < 1 + o.warmup + o.repeat; ++run) {
    const bool timed = run > o.warmup;
    const Stopwatch start;
    if (o.by_op && timed)
      interpreter.Invoke(OpClock(op_ms), exec::Tapping::kAsUntapped);
    else
      interpreter.Invoke();
    // Copying the outputs out is part of what a caller waits for.
    for (int i = 0; i < interpreter.num_outputs(); ++i) (void)interpreter.Output(i);
    all_ms.push_back(start.ms());
  }
  if (o.by_op) {
    SummarizeOps(interpreter, op_ms, r);
    r.ops_at_prepare = interpreter.ops_folded();
    r.ops_skipped = interpreter.ops_skipped();
  }
  r.timed = "Invoke() + copying the outputs out";
  r.residency_line = "gpuclean reference interpreter on the CPU (no delegate)";
  Summarize(all_ms, r);
}

void BenchProbe(const BenchOptions& o, BenchResult& r) {
  // The harness writes its outputs and meta.json somewhere; bench only needs
  // the times, so that somewhere is a folder removed afterwards.
  const ScratchDir scratch("gpuclean-bench");
  probe::ProbeRequest request;
  request.model_path = o.model_path;
  request.runtime =
      o.runtime == BenchRuntime::kLiteRtWasm ? probe::Runtime::kLiteRtWasm : probe::Runtime::kLiteRtWebGpu;
  request.precision = o.precision;
  request.seed = o.seed;
  request.repeat = 1 + o.warmup + o.repeat;
  request.out_dir = scratch.path();
  const probe::ProbeResult p = probe::RunProbe(request);
  std::vector<double> all_ms;
  for (const auto& t : p.meta.value("run_ms_all", nlohmann::json::array()))
    if (t.is_number()) all_ms.push_back(t.get<double>());
  r.prepare_ms = p.compile_ms;
  // The harness's run_ms_all covers run() and the copy of every output back
  // to the host (probe/README.md); on WebGPU that copy waits for the GPU.
  r.timed = o.runtime == BenchRuntime::kLiteRtWasm ? "run() + copying the outputs off the wasm heap"
                                                   : "run() + GPU->CPU readback of the outputs";
  r.residency_line = probe::Summarize(p.residency);
  r.residency = probe::ToJson(p.residency);
  Summarize(all_ms, r);
}

std::string Ms(double ms) { return fmt::format("{:.3f} ms", ms); }

nlohmann::json OpTimesJson(const std::vector<OpTime>& times) {
  nlohmann::json a = nlohmann::json::array();
  for (const OpTime& t : times) {
    nlohmann::json j = {{"op", t.op}, {"ms", t.ms}};
    if (t.op_index >= 0)
      j["op_index"] = t.op_index, j["tensor"] = t.tensor;
    else
      j["count"] = t.count;
    a.push_back(j);
  }
  return a;
}

}  // namespace

BenchRuntime ParseBenchRuntime(const std::string& name) {
  return ParseRuntime(name, {BenchRuntime::kOurs, BenchRuntime::kLiteRtWasm, BenchRuntime::kLiteRtWebGpu});
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void Validate(const BenchOptions& o) {
  if (o.repeat < 1) throw Error(ErrorKind::kUsage, "--repeat must be at least 1");
  if (o.warmup < 0) throw Error(ErrorKind::kUsage, "--warmup must not be negative");
  if (o.threads < 1) throw Error(ErrorKind::kUsage, "--threads must be at least 1");
  if (o.runtime != BenchRuntime::kOurs && o.threads != 1)
    throw Error(ErrorKind::kUsage,
                "--threads applies to --runtime ours only (the LiteRT.js wasm build is single-threaded)");
  if (o.runtime != BenchRuntime::kOurs && o.by_op)
    throw Error(ErrorKind::kUsage, "--by-op applies to --runtime ours only (the real runtimes time whole runs)");
  if (o.runtime == BenchRuntime::kLiteRtWasm && o.precision != "fp32")
    throw Error(ErrorKind::kUsage, "--precision on litert-wasm is fp32 only");
  if (o.runtime == BenchRuntime::kLiteRtWebGpu && o.precision != "fp32" && o.precision != "fp16")
    throw Error(ErrorKind::kUsage, "--precision on litert-webgpu expects fp32 or fp16, got '" + o.precision + "'");
}

BenchResult Bench(const BenchOptions& o) {
  Validate(o);
  BenchResult r;
  r.model = o.model_path;
  r.runtime = RuntimeName(o.runtime);
  r.precision = o.precision;
  r.threads = o.threads;
  r.warmup = o.warmup;
  r.repeat = o.repeat;
  if (o.runtime == BenchRuntime::kOurs)
    BenchOurs(o, r);
  else
    BenchProbe(o, r);
  return r;
}

nlohmann::json ToJson(const BenchResult& r) {
  return {{"model", r.model},
          {"runtime", r.runtime},
          {"precision", r.precision},
          {"threads", r.threads},
          {"timed", r.timed},
          {"warmup", r.warmup},
          {"repeat", r.repeat},
          {"prepare_ms", r.prepare_ms},
          {"first_ms", r.first_ms},
          {"median_ms", r.median_ms},
          {"min_ms", r.min_ms},
          {"max_ms", r.max_ms},
          {"timed_ms", r.timed_ms},
          {"residency_line", r.residency_line},
          {"residency", r.residency},
          {"by_op", OpTimesJson(r.by_op)},
          {"slowest_ops", OpTimesJson(r.slowest_ops)},
          {"ops_at_prepare", r.ops_at_prepare},
          {"ops_skipped", r.ops_skipped},
          // Desktop runs cannot read a phone's thermal state; say so rather than omit it.
          {"thermal_state", nullptr}};
}

std::string RenderText(const BenchResult& r) {
  std::string s = fmt::format("model      {}\n", r.model);
  s += fmt::format("runtime    {} ({}{})\n", r.runtime, r.precision,
                   r.runtime == "ours" ? fmt::format(", {} thread(s)", r.threads) : "");
  s += fmt::format("residency  {}\n", r.residency_line);
  s += fmt::format("timed      {}\n", r.timed);
  s += fmt::format("prepare    {}\n", Ms(r.prepare_ms));
  s += fmt::format("first run  {} (not in the statistics)\n", Ms(r.first_ms));
  s += fmt::format("median     {}  over {} runs after {} warm-up run(s)\n", Ms(r.median_ms), r.repeat, r.warmup);
  s += fmt::format("min        {}\n", Ms(r.min_ms));
  s += fmt::format("max        {}\n", Ms(r.max_ms));
  if (r.by_op.empty()) return s;
  // Per-op times include the tap's own cost, so their sum is a little over the median.
  double total = 0;
  for (const OpTime& t : r.by_op) total += t.ms;
  s += "\nby op type (median per run over the timed runs)\n";
  if (r.ops_at_prepare > 0)
    s += fmt::format("  ({} op(s) on constants only were computed once, before the runs)\n", r.ops_at_prepare);
  if (r.ops_skipped > 0)
    s += fmt::format(
        "  ({} op(s) not run, their work done by an op after them: PADs by the convolution or pool reading "
        "them, LOGISTICs by their SiLU MUL, a LayerNorm's MEANs, SUB, square, ADD and RSQRT by its MUL (LayerNorm), "
        "a grouped convolution's SPLIT and CONV_2Ds by one CONV_2D (grouped))\n",
        r.ops_skipped);
  for (const OpTime& t : r.by_op)
    s += fmt::format("  {:<24} {:>5} op(s) {:>12} {:>5.1f}%\n", t.op, t.count, Ms(t.ms),
                     total > 0 ? 100 * t.ms / total : 0);
  s += "slowest ops\n";
  for (const OpTime& t : r.slowest_ops)
    s += fmt::format("  #{:<5} {:<22} {:>12}  {}\n", t.op_index, t.op, Ms(t.ms), t.tensor);
  return s;
}

}  // namespace gpuclean::latency
