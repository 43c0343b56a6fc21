// ctest-labels: litert webgpu
// Edge cases where lint for mldrift-webgpu@2.5.3 once disagreed with
// LiteRT.js 2.5.3's WebGPU delegate (SPLIT axis forms and version, TILE's
// int64 multiples, rank-2 int8 weight DEQUANTIZE, uint8 FULLY_CONNECTED
// weights, runtime permutation / axes / k, rank-2 PAD, SELECT_V2 version
// and broadcast condition, the two graphs the delegate accepts and then
// fails to compile), each with a near twin. All graphs are measured in ONE
// residency-only batch; lint's verdict must equal the delegate's: the same
// GPU node count where the model loads, a compile-failure finding where it
// does not. A disagreement is fixed in data/compat, never here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/probe.h"
#include "lint/lint_test_util.h"
#include "support/test_support.h"

namespace gpuclean::lint::webgpu_measured_edges {
namespace {

namespace tfl = ::gpuclean::tfl;
using builder::GraphBuilder;
using builder::Options;
constexpr char kTarget[] = "mldrift-webgpu@2.5.3";

struct Case {
  std::string name;
  ir::Model model;
  // The delegate takes the graph and then aborts the wasm module: nothing
  // after it in the same page runs, so it gets a harness call of its own.
  bool aborts = false;
};

std::vector<float> Ramp(size_t n, float step = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = step * static_cast<float>(static_cast<int>(i % 17) - 8);
  return v;
}

// Makes input `position` of the last op a runtime graph input.
void MakeRuntime(ir::Model& model, int position) {
  ir::Subgraph& g = model.main();
  const int t = g.ops.back().inputs.at(position);
  g.tensors[t].data.reset();
  g.inputs.push_back(t);
}

ir::Model Build(const std::function<void(GraphBuilder&)>& body) {
  GraphBuilder b;
  body(b);
  return b.Finish();
}

ir::Model SplitGraph(int32_t axis, bool axis_vector, int version = 1) {
  return Build([&](GraphBuilder& b) {
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
    const int a = axis_vector ? b.ConstI32("axis", {1}, {axis}) : b.ConstI32("axis", {}, {axis});
    tfl::SplitOptionsT o;
    o.num_splits = 2;
    for (int y : b.Op(tfl::BuiltinOperator_SPLIT, {a, x}, Options(o), version)) b.Output(y);
  });
}

ir::Model TileGraph(bool int64_multiples, bool int64_data) {
  return Build([&](GraphBuilder& b) {
    const int x = b.Input("x", int64_data ? tfl::TensorType_INT64 : tfl::TensorType_FLOAT32, {1, 2, 2, 4});
    const int m = int64_multiples ? b.Const("multiples", tfl::TensorType_INT64, {4},
                                            Bytes::FromValues<int64_t>(std::vector<int64_t>{1, 2, 2, 1}))
                                  : b.ConstI32("multiples", {4}, {1, 2, 2, 1});
    b.Output(b.Op(tfl::BuiltinOperator_TILE, {x, m}, Options(tfl::TileOptionsT{})).at(0));
  });
}

// int8 weights read through DEQUANTIZE: [16, 8] into FULLY_CONNECTED, or
// [8, 3, 3, 4] into CONV_2D.
ir::Model DequantizeInt8Graph(bool rank2) {
  return Build([&](GraphBuilder& b) {
    if (rank2) {
      const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8});
      const int w = b.ConstInt8("w", {16, 8}, std::vector<int8_t>(128, 3), 0.05f, 0);
      b.Output(b.FullyConnected(x, b.Dequantize(w), builder::kNoInput));
    } else {
      const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8, 8, 4});
      const int w = b.ConstInt8("w", {8, 3, 3, 4}, std::vector<int8_t>(288, 3), 0.05f, 0);
      b.Output(b.Conv2D(x, b.Dequantize(w), builder::kNoInput, tfl::Padding_SAME, 1, 1));
    }
  });
}

ir::Model FullyConnectedGraph(tfl::TensorType weights) {
  return Build([&](GraphBuilder& b) {
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8});
    int w;
    if (weights == tfl::TensorType_FLOAT32) {
      w = b.ConstF32("w", {16, 8}, Ramp(128));
    } else if (weights == tfl::TensorType_INT8) {
      w = b.ConstInt8("w", {16, 8}, std::vector<int8_t>(128, 3), 0.05f, 0);
    } else {
      w = b.Const("w", weights, {16, 8}, Bytes::Own(std::vector<uint8_t>(128, 131)));
      b.mutable_graph().tensors[w].quant.scale = {0.05f};
      b.mutable_graph().tensors[w].quant.zero_point = {128};
    }
    b.Output(b.FullyConnected(x, w, builder::kNoInput));
  });
}

ir::Model TransposeGraph(bool runtime_perm) {
  ir::Model m = Build([](GraphBuilder& b) {
    b.Output(b.Transpose(b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8}), {0, 3, 1, 2}));
  });
  if (runtime_perm) MakeRuntime(m, 1);
  return m;
}

ir::Model MeanGraph(bool runtime_axes) {
  ir::Model m = Build([](GraphBuilder& b) {
    b.Output(b.Mean(b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8}), {1, 2}, true));
  });
  if (runtime_axes) MakeRuntime(m, 1);
  return m;
}

ir::Model PadGraph(int rank) {
  return Build([&](GraphBuilder& b) {
    builder::Shape shape = {1, 4, 4, 8};
    shape.erase(shape.begin(), shape.begin() + (4 - rank));
    builder::Paddings pads(rank, {0, 0});
    pads[rank - 1] = {1, 1};
    if (rank >= 2) pads[rank - 2] = {2, 2};
    b.Output(b.Pad(b.Input("x", tfl::TensorType_FLOAT32, shape), pads));
  });
}

// SELECT_V2 on a GREATER mask (LiteRT.js takes no bool graph inputs): the
// mask's shape `mask`, the values [1, 4, 4, 8]; `scalar_fill`: y is a scalar.
ir::Model SelectV2Graph(builder::Shape mask, int version, bool scalar_fill = false) {
  return Build([&](GraphBuilder& b) {
    const int p = b.Input("p", tfl::TensorType_FLOAT32, mask);
    const int q = b.Input("q", tfl::TensorType_FLOAT32, mask);
    const int cond = b.Binary(tfl::BuiltinOperator_GREATER, p, q);
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
    const int y = scalar_fill ? b.ConstF32("fill", {}, {-1.0f}) : b.Input("y", tfl::TensorType_FLOAT32, {1, 4, 4, 8});
    b.Output(b.Op(tfl::BuiltinOperator_SELECT_V2, {cond, x, y}, Options(tfl::SelectV2OptionsT{}), version).at(0));
  });
}

ir::Model TopKGraph(bool runtime_k) {
  ir::Model m = Build([](GraphBuilder& b) {
    const auto [values, indices] = b.TopKV2(b.Input("x", tfl::TensorType_FLOAT32, {1, 8}), 2);
    b.Output(values);
    b.Output(indices);
  });
  if (runtime_k) MakeRuntime(m, 1);
  return m;
}

// CONV_2D with per-channel int8 weights [8, 3, 3, 4] quantized along
// `axis` (0: output channels, what converters write; 3: input channels).
ir::Model ConvInt8Graph(int32_t axis) {
  return Build([&](GraphBuilder& b) {
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8, 8, 4});
    const builder::Shape shape = {8, 3, 3, 4};
    const int w =
        b.ConstInt8PerChannel("w", shape, std::vector<int8_t>(288, 3), std::vector<float>(shape[axis], 0.05f), axis);
    const int bias = b.ConstF32("bias", {8}, Ramp(8));
    b.Output(b.Conv2D(x, w, bias, tfl::Padding_SAME, 1, 1));
  });
}

ir::Model DepthwiseGraph(bool runtime_bias) {
  ir::Model m = Build([](GraphBuilder& b) {
    const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8, 8, 8});
    const int w = b.ConstF32("w", {1, 3, 3, 8}, Ramp(72));
    const int bias = b.ConstF32("bias", {8}, Ramp(8));
    b.Output(b.DepthwiseConv2D(x, w, bias, tfl::Padding_SAME, 1, 1));
  });
  if (runtime_bias) MakeRuntime(m, 2);
  return m;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const auto add = [&](std::string name, ir::Model model, bool aborts = false) {
    cases.push_back({std::move(name), std::move(model), aborts});
  };
  add("split-axis-vector", SplitGraph(3, true));
  add("split-axis-scalar", SplitGraph(3, false));
  add("split-axis-negative", SplitGraph(-1, false));
  add("split-version-2", SplitGraph(3, false, 2));
  add("split-v.twin", Build([](GraphBuilder& b) {
        for (int y : b.SplitV(b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 8}), {4, 4}, 3)) b.Output(y);
      }));
  add("tile-int64-multiples", TileGraph(true, false));
  add("tile-int32-multiples.twin", TileGraph(false, false));
  add("tile-int64-data.twin", TileGraph(true, true));
  add("dequantize-int8-rank2", DequantizeInt8Graph(true));
  add("dequantize-int8-rank4.twin", DequantizeInt8Graph(false));
  add("dequantize-int8-rank2-add", Build([](GraphBuilder& b) {
        const int x = b.Input("x", tfl::TensorType_FLOAT32, {16, 8});
        b.Output(b.Add(x, b.Dequantize(b.ConstInt8("w", {16, 8}, std::vector<int8_t>(128, 3), 0.05f, 0))));
      }));
  add("dequantize-int8-rank2-bmm", Build([](GraphBuilder& b) {
        const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4, 8});
        b.Output(b.BatchMatMul(x, b.Dequantize(b.ConstInt8("w", {8, 16}, std::vector<int8_t>(128, 3), 0.05f, 0))));
      }));
  add("fully-connected-uint8-weights", FullyConnectedGraph(tfl::TensorType_UINT8));
  add("fully-connected-float-weights.twin", FullyConnectedGraph(tfl::TensorType_FLOAT32));
  add("transpose-runtime-perm", TransposeGraph(true));
  add("transpose-const-perm.twin", TransposeGraph(false));
  add("mean-runtime-axes", MeanGraph(true));
  add("mean-const-axes.twin", MeanGraph(false));
  add("pad-rank-2", PadGraph(2));
  add("pad-rank-3.twin", PadGraph(3));
  add("pad-rank-4.twin", PadGraph(4));
  add("select-v2-version-2", SelectV2Graph({1, 4, 4, 8}, 2));
  add("select-v2-version-1.twin", SelectV2Graph({1, 4, 4, 8}, 1));
  add("select-v2-broadcast-condition", SelectV2Graph({1, 1, 1, 8}, 1));
  add("select-v2-scalar-fill.twin", SelectV2Graph({1, 4, 4, 8}, 1, true));
  add("topk-v2-runtime-k", TopKGraph(true));
  add("topk-v2-const-k.twin", TopKGraph(false));
  add("conv-2d-int8-quantized-dim-3", ConvInt8Graph(3), true);
  add("conv-2d-int8-quantized-dim-0.twin", ConvInt8Graph(0));
  add("depthwise-conv-2d-runtime-bias", DepthwiseGraph(true), true);
  add("depthwise-conv-2d-const-bias.twin", DepthwiseGraph(false));
  return cases;
}

// A graph LiteRT.js does not load: lint must refuse it (a compile-failure
// finding, or a rejected one where LiteRT.js refuses a tensor type).
bool PredictsNoLoad(const Report& report) {
  for (const Finding& f : report.findings)
    if (f.severity == Severity::kError && (f.consequence == "compile-failure" || f.status == Status::kRejected))
      return true;
  return false;
}

TEST(WebGpuMeasuredEdges, LintAgreesWithTheDelegateOnEveryEdgeAndTwin) {
  gpuclean::testing::TempDir tmp;
  // GPUCLEAN_EDGES_OUT keeps the graphs (for gpuclean probe / lint by hand).
  const char* keep = std::getenv("GPUCLEAN_EDGES_OUT");
  const std::string dir = keep && *keep ? std::string(keep) : tmp.file("edges");
  std::filesystem::create_directories(dir);
  const Matrix& webgpu = lint::testing::Target(kTarget);
  std::vector<Case> cases = Cases();
  std::vector<probe::ProbeRequest> requests;
  std::vector<size_t> batch, alone;
  for (size_t i = 0; i < cases.size(); ++i) (cases[i].aborts ? alone : batch).push_back(i);
  for (const Case& c : cases) {
    probe::ProbeRequest r;
    r.model_path = dir + "/" + c.name + ".tflite";
    format::WriteModel(c.model, r.model_path);
    r.runtime = probe::Runtime::kLiteRtWebGpu;
    r.residency_only = true;
    r.out_dir = dir + "/" + c.name;
    requests.push_back(r);
  }
  // One Chromium process for every graph that does not abort the module,
  // then one each for those that do (an abort leaves the page dead: the
  // rest of a batch would wait for the harness timeout).
  std::vector<probe::ProbeResult> results(cases.size());
  std::vector<probe::ProbeRequest> batched;
  for (size_t i : batch) batched.push_back(requests[i]);
  std::vector<probe::ProbeResult> got = probe::RunProbes(batched);
  ASSERT_EQ(got.size(), batch.size());
  for (size_t k = 0; k < batch.size(); ++k) results[batch[k]] = std::move(got[k]);
  for (size_t i : alone) results[i] = std::move(probe::RunProbes({requests[i]}).at(0));
  int loaded = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const probe::ProbeResult& r = results[i];
    const Report report = Lint(cases[i].model, webgpu);
    const SubgraphResidency& predicted = report.residency.at(0);
    std::string measured;
    if (r.ok && r.residency.gpu_ops && r.residency.total_ops) {
      ++loaded;
      measured = probe::Summarize(r.residency);
      EXPECT_EQ(predicted.gpu_nodes, *r.residency.gpu_ops)
          << cases[i].name << ": lint " << PredictedLine(predicted) << ", measured " << measured;
      EXPECT_EQ(predicted.nodes, *r.residency.total_ops) << cases[i].name;
    } else {
      // The delegate took the graph and then failed to compile it (or the
      // load failed): lint must say so, not predict a residency.
      measured = "load/compile failed: " + (r.ok ? std::string("no residency in the log") : r.error);
      EXPECT_TRUE(PredictsNoLoad(report)) << cases[i].name << ": " << measured << "; lint " << PredictedLine(predicted);
    }
    std::cout << cases[i].name << ": measured " << measured << " | lint " << PredictedLine(predicted) << "\n";
  }
  // 19 graphs load (the rest fail to compile or abort, as measured); fewer
  // means the runtime changed, not the matrix.
  EXPECT_GE(loaded, 19);
}

}  // namespace
}  // namespace gpuclean::lint::webgpu_measured_edges
