// ctest-labels: litert
// Every op in the op table (src/ir/ops.def) as its graph (synth::OpGraph, the
// graphs the WebGPU measurement uses) on LiteRT.js's wasm CPU kernels, in ONE
// batch, against our interpreter on the same generated inputs: each row's
// kernel agrees with the real runtime on at least one real graph.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "gpuclean/op_table.h"
#include "gpuclean/probe.h"
#include "gpuclean/synth.h"
#include "support/conformance.h"
#include "support/op_graphs.h"
#include "support/test_support.h"

namespace gpuclean::testing {
namespace {

// LiteRT computes SHAPE at prepare into a persistent read-only tensor
// (tflite/kernels/shape.cc:66), which LiteRT.js returns as zeros when it is
// a graph output; read through a CAST, it is the shape.
ir::Model ReadableShapeGraph() {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
  tfl::ShapeOptionsT options;
  options.out_type = tfl::TensorType_INT32;
  tfl::BuiltinOptionsUnion shape_options;
  shape_options.Set(options);
  b.Output(b.Cast(b.Op(tfl::BuiltinOperator_SHAPE, {x}, shape_options)[0], tfl::TensorType_FLOAT32));
  return b.Finish();
}

TEST(OpTableLiteRt, EveryRowsKernelAgreesWithLiteRtOnItsGraph) {
  TempDir dir;
  OpGraphBatch batch = OpGraphRequests(dir, probe::Runtime::kLiteRtWasm, [](tfl::BuiltinOperator code) {
    return code == tfl::BuiltinOperator_SHAPE ? std::optional(ReadableShapeGraph()) : std::nullopt;
  });
  for (probe::ProbeRequest& r : batch.requests) r.seed = 7;
  const auto& [requests, models, names, no_graph] = batch;
  // These four need inputs no plain float graph has (a quantized or sparse
  // constant, gather indices, an output-shape tensor); their own tests run
  // them on LiteRT.js: tests/exec/{dequantize,densify,gather_nd,transpose_conv}_test.cc.
  EXPECT_EQ(no_graph, " DEQUANTIZE DENSIFY GATHER_ND TRANSPOSE_CONV") << "rows without a graph (synth::OpGraph)";
  const std::vector<probe::ProbeResult> results = probe::RunProbes(requests);
  ASSERT_EQ(results.size(), requests.size());
  for (size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE(names[i]);
    const probe::ProbeResult& r = results[i];
    ASSERT_TRUE(r.ok) << r.error;
    std::vector<npy::Array> inputs;
    for (size_t k = 0; k < models[i].main().inputs.size(); ++k)
      inputs.push_back(npy::Read(requests[i].out_dir + "/in" + std::to_string(k) + ".npy"));
    const std::vector<npy::Array> ours = RunOurs(models[i], inputs);
    ASSERT_EQ(ours.size(), r.outputs.size());
    for (size_t k = 0; k < ours.size(); ++k) ExpectAgrees(r.outputs[k], ours[k], 1e-5);
  }
}

}  // namespace
}  // namespace gpuclean::testing
