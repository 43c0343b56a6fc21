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
