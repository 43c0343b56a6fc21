#pragma once
// Shared by the op-family tests: convert a small ONNX model and prove it
// against onnxruntime.
#include <gtest/gtest.h>

#include <string>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean::testing {

inline int CountOp(const convert::Report& r, const std::string& op) {
  auto it = r.ops_out.find(op);
  return it == r.ops_out.end() ? 0 : it->second;
}

// Converts `m` (no file written) and returns the report; the caller asserts
// report.proven.
inline convert::Report ConvertModel(const OnnxTestModel& m, const std::string& name = "model.onnx") {
  TempDir dir;
  convert::Options o;
  o.onnx_path = m.Write(dir.file(name));
  o.target = "none";  // the lowering itself, before any GPU rewrite
  return convert::Convert(o).report;
}

// A two-stage query selection as detectors write it: features [1,P,8] ->
// scores -> TopK(k) -> Squeeze -> Gather of the chosen rows -> a head (a
// matmul and a bias, which the GPU computes).
// Outputs "head" and "top_scores".
inline OnnxTestModel TwoStageSelectionModel(int64_t proposals, int64_t k, uint32_t seed) {
  OnnxTestModel m;
  m.Input("features", {1, proposals, 8});
  m.InitF32("scale", {8}, RandomValues(8, seed));
  m.Node("Mul", {"features", "scale"}, {"scaled"});
  m.Node("Tanh", {"scaled"}, {"feats"});
  m.Node("ReduceMax", {"feats"}, {"scores"}).Ints("axes", {2}).Int("keepdims", 0);
  m.InitI64("k", {1}, {k});
  m.Node("TopK", {"scores", "k"}, {"top_scores", "top_index"});
  m.InitI64("axis0", {1}, {0});
  m.Node("Squeeze", {"top_index", "axis0"}, {"index"});
  m.Node("Gather", {"feats", "index"}, {"queries"}).Int("axis", 1);
  m.InitF32("head_w", {8, 8}, RandomValues(64, seed + 2));
  m.Node("MatMul", {"queries", "head_w"}, {"projected"});
  m.InitF32("bias", {8}, RandomValues(8, seed + 1));
  m.Node("Add", {"projected", "bias"}, {"head"});
  m.Output("head");
  m.Output("top_scores");
  return m;
}

// The kUnsupported message converting `m` throws ("" when it converts).
inline std::string RefusalOf(const OnnxTestModel& m) {
  try {
    ConvertModel(m);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Adds nodes turning the float input `x` (the proof feeds [-1, 1)) into
// run-time int64 values in lo..hi: Cast(Floor((x + 1) / 2 * (hi - lo + 1) + lo)).
inline void IntsFrom(OnnxTestModel& m, const std::string& x, const std::string& out, int64_t lo, int64_t hi) {
  const float span = static_cast<float>(hi - lo + 1);
  m.InitF32(out + "_scale", {}, {span / 2.0f * 0.999f});
  m.InitF32(out + "_shift", {}, {span / 2.0f * 0.999f + static_cast<float>(lo)});
  m.Node("Mul", {x, out + "_scale"}, {out + "_m"});
  m.Node("Add", {out + "_m", out + "_shift"}, {out + "_a"});
  m.Node("Floor", {out + "_a"}, {out + "_f"});
  m.Node("Cast", {out + "_f"}, {out}).Int("to", kOnnxInt64);
}

}  // namespace gpuclean::testing
