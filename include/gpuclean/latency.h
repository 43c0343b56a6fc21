#pragma once
// `gpuclean bench`: latency of one model on our interpreter or on a real
// LiteRT runtime. Reports the median and minimum of the timed runs after
// warm-up; the first run (shader compilation, caches, lazy allocation) is
// reported apart and never mixed into them. Probe runtimes time run() and
// the output readback together: run() only enqueues GPU work.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/probe.h"
#include "gpuclean/runtime.h"

namespace gpuclean::latency {

using BenchRuntime = ::gpuclean::Runtime;                 // kOurs, kLiteRtWasm or kLiteRtWebGpu
BenchRuntime ParseBenchRuntime(const std::string& name);  // ours | litert-wasm | litert-webgpu; Error(kUsage)

struct BenchOptions {
  std::string model_path;
  BenchRuntime runtime = BenchRuntime::kOurs;
  int repeat = 10;  // timed runs
  int warmup = 2;   // runs after the first one that are not timed
  int threads = 1;  // ours only
  uint32_t seed = 0;
  // ours: fp32 | fp16-storage | fp16-compute; litert-webgpu: fp32 | fp16;
  // litert-wasm: fp32.
  std::string precision = "fp32";
  // ours only: time each op of the timed runs (the interpreter's tap) and
  // report the totals per op type and the slowest single ops.
  bool by_op = false;
};

// One op type's share of a run (by_op), or one op's (slowest_ops).
struct OpTime {
  std::string op;      // op type, e.g. CONV_2D
  std::string tensor;  // slowest_ops: the op's first output tensor; empty per type
  int op_index = -1;   // slowest_ops: the op's index in the graph
  int count = 0;       // by_op: ops of this type that ran
  double ms = 0;       // median over the timed runs of the summed time
};

struct BenchResult {
  std::string model;
  std::string runtime;  // RuntimeName
  std::string precision;
  std::string timed;  // what one timed run covers, in words
  int threads = 1;
  int warmup = 0;
  int repeat = 0;
  double prepare_ms = 0;  // interpreter prepare / model compile, not a run
  double first_ms = 0;    // the first run, alone
  double median_ms = 0;   // over the timed runs
  double min_ms = 0;
  double max_ms = 0;
  std::vector<double> timed_ms;
  // A latency number never travels without its residency line.
  std::string residency_line;
  nlohmann::json residency;         // probe::ToJson for probe runtimes; null for ours
  std::vector<OpTime> by_op;        // by_op: per op type, slowest first
  std::vector<OpTime> slowest_ops;  // by_op: the ten slowest single ops
  int ops_at_prepare = 0;           // by_op: ops on constants only, computed once before the runs
  int ops_skipped = 0;              // by_op: ops an untapped run skips (Interpreter::ops_skipped)
};

// Runs 1 + warmup + repeat times. Error(kUsage) for repeat < 1, warmup < 0,
// threads < 1, --threads or --by-op on a probe runtime or a precision the runtime lacks;
// errors of the model or the runtime as their modules throw them.
BenchResult Bench(const BenchOptions& options);
// The option checks Bench starts with, for callers that print progress first.
void Validate(const BenchOptions& options);

// The median of `values` (mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

nlohmann::json ToJson(const BenchResult& result);
std::string RenderText(const BenchResult& result);

}  // namespace gpuclean::latency
