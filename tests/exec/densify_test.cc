// ctest-labels: litert slow
// DENSIFY against LiteRT.js on hand-built sparse constants: CSR rows
// (float32, int32 index vectors), a block-sparse float16 weight (uint16
// segments, uint8 indices, 1x2 blocks) feeding DEQUANTIZE, and a
// column-major traversal order. Also the whole sparse fixture model, whose 46
// fp16 weights go through DENSIFY -> DEQUANTIZE.
#include <fp16.h>

#include "exec/shape_test_util.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "support/test_support.h"

namespace gpuclean::testing {
namespace {

std::unique_ptr<tfl::DimensionMetadataT> Dense(int32_t size) {
  auto m = std::make_unique<tfl::DimensionMetadataT>();
  m->format = tfl::DimensionType_DENSE;
  m->dense_size = size;
  return m;
}

template <typename SegT, typename IdxT>
std::unique_ptr<tfl::DimensionMetadataT> Csr(SegT segments, IdxT indices) {
  auto m = std::make_unique<tfl::DimensionMetadataT>();
  m->format = tfl::DimensionType_SPARSE_CSR;
  m->array_segments.Set(std::move(segments));
  m->array_indices.Set(std::move(indices));
  return m;
}

// sparse (dtype) -> DENSIFY -> [DEQUANTIZE when fp16] -> ADD runtime input;
// optionally also the dense weight as a second output (for our own checks:
// LiteRT.js returns garbage for an output that is a folded constant).
ir::Model SparseGraph(tfl::TensorType dtype, std::vector<int32_t> shape, Bytes stored,
                      tfl::SparsityParametersT sparsity, bool also_output_dense) {
  ir::Model model;
  model.subgraphs.emplace_back();
  ir::Subgraph& g = model.main();
  g.name = "main";
  ir::Tensor s;
  s.name = "sparse";
  s.dtype = dtype;
  s.shape = shape;
  s.data = std::move(stored);
  s.sparsity = std::move(sparsity);
  const int sparse = g.AddTensor(std::move(s));
  auto tensor = [&](std::string name, tfl::TensorType type) {
    ir::Tensor t;
    t.name = std::move(name);
    t.dtype = type;
    t.shape = shape;
    return g.AddTensor(std::move(t));
  };
  const int dense = tensor("dense", dtype);
  int weight = dense;
  const int x = tensor("x", tfl::TensorType_FLOAT32);
  g.inputs.push_back(x);
  auto add_op = [&](tfl::BuiltinOperator code, std::vector<int32_t> in, int32_t out, tfl::BuiltinOptionsUnion opts) {
    ir::Op op;
    op.code = code;
    op.inputs = std::move(in);
    op.outputs = {out};
    op.options = std::move(opts);
    op.version = 1;
    const int index = g.AddOp(std::move(op));
    g.ops[index].version = builder::DefaultOpVersion(g, g.ops[index]);
  };
  add_op(tfl::BuiltinOperator_DENSIFY, {sparse}, dense, builder::Options(tfl::DensifyOptionsT{}));
  if (dtype == tfl::TensorType_FLOAT16) {
    weight = tensor("dequantized", tfl::TensorType_FLOAT32);
    add_op(tfl::BuiltinOperator_DEQUANTIZE, {dense}, weight, builder::Options(tfl::DequantizeOptionsT{}));
  }
  const int y = tensor("y", tfl::TensorType_FLOAT32);
  add_op(tfl::BuiltinOperator_ADD, {weight, x}, y, builder::Options(tfl::AddOptionsT{}));
  g.outputs.push_back(y);
  if (also_output_dense) g.outputs.push_back(weight);
  model.Validate();
  return model;
}

uint16_t Half(float v) { return fp16_ieee_from_fp32_value(v); }

TEST(Densify, CsrRowsFromTheBuilder) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {4, 7});
  const std::vector<float> dense = {0, 1.5f, 0, 0, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    3, 0,    0, 4, 0,  5, 6, 0, 0, 0, 0, 0, 0, -7};
  b.Output(b.Add(b.Densify(b.ConstSparseF32("w", {4, 7}, dense)), x));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {RandomF32({4, 7}, 291)});
  const auto out = RunOurs(model, {F32({4, 7}, std::vector<float>(28, 0.0f))});
  EXPECT_EQ(ValuesOf<float>(out[0]), dense);
}

// The graph fuzzer's find: a FULLY_CONNECTED wired straight to the sparse
// constant read its few stored values as a dense [4,7] (past the buffer).
TEST(Densify, OnlyDensifyReadsASparseConstant) {
  GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 7});
  const std::vector<float> dense = {0, 1.5f, 0, 0, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    3, 0,    0, 4, 0,  5, 6, 0, 0, 0, 0, 0, 0, -7};
  b.Output(b.FullyConnected(x, b.ConstSparseF32("w", {4, 7}, dense), builder::kNoInput));
  const auto model = std::make_shared<const ir::Model>(b.Finish());
  try {
    exec::Interpreter interpreter(model);
    FAIL() << "a sparse constant read directly was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("only through DENSIFY"), std::string::npos) << e.what();
  }
}

// 4x6 with 1x2 blocks along dim 1: blocked shape 4x3, rows dense, block
// columns CSR, each block dense.
//   row0: [1,2, 0,0, 3,4]   blocks 0, 2
//   row1: all zero          none
//   row2: [0,5, 6,0, 0,0]   blocks 0, 1
//   row3: [0,0, 0,0, 7,0]   block 2
const std::vector<float> kBlockDense = {1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0};

tfl::SparsityParametersT BlockSparsity() {
  tfl::SparsityParametersT sp;
  sp.traversal_order = {0, 1, 2};
  sp.block_map = {1};
  tfl::Uint16VectorT segments;
  segments.values = {0, 2, 2, 4, 5};
  tfl::Uint8VectorT indices;
  indices.values = {0, 2, 0, 1, 2};
  sp.dim_metadata.push_back(Dense(4));
  sp.dim_metadata.push_back(Csr(std::move(segments), std::move(indices)));
  sp.dim_metadata.push_back(Dense(2));
  return sp;
}

TEST(Densify, BlockSparseFloat16ThroughDequantize) {
  const std::vector<float> stored = {1, 2, 3, 4, 0, 5, 6, 0, 7, 0};
  std::vector<uint16_t> halves;
  for (float v : stored) halves.push_back(Half(v));
  const ir::Model model = SparseGraph(tfl::TensorType_FLOAT16, {4, 6},
                                      Bytes::FromValues(std::span<const uint16_t>(halves)), BlockSparsity(), false);
  ExpectMatchesLiteRt(model, {RandomF32({4, 6}, 292)});
  const ir::Model both = SparseGraph(tfl::TensorType_FLOAT16, {4, 6},
                                     Bytes::FromValues(std::span<const uint16_t>(halves)), BlockSparsity(), true);
  const auto out = RunOurs(both, {RandomF32({4, 6}, 292)});
  EXPECT_EQ(ValuesOf<float>(out[1]), kBlockDense);
}

TEST(Densify, ColumnMajorTraversal) {
  // Dense 3x4, traversal order (1, 0): columns dense, rows CSR per column.
  //   [[0, 8, 0, 1],
  //    [2, 0, 0, 0],
  //    [0, 9, 0, 3]]
  auto sparsity = [] {
    tfl::SparsityParametersT sp;
    sp.traversal_order = {1, 0};
    tfl::Int32VectorT segments, indices;
    segments.values = {0, 1, 3, 3, 5};
    indices.values = {1, 0, 2, 0, 2};
    sp.dim_metadata.push_back(Dense(4));
    sp.dim_metadata.push_back(Csr(std::move(segments), std::move(indices)));
    return sp;
  };
  const std::vector<float> stored = {2, 8, 9, 1, 3};
  const Bytes bytes = Bytes::FromValues(std::span<const float>(stored));
  ExpectMatchesLiteRt(SparseGraph(tfl::TensorType_FLOAT32, {3, 4}, bytes, sparsity(), false), {RandomF32({3, 4}, 293)});
  const auto out =
      RunOurs(SparseGraph(tfl::TensorType_FLOAT32, {3, 4}, bytes, sparsity(), true), {RandomF32({3, 4}, 293)});
  EXPECT_EQ(ValuesOf<float>(out[1]), (std::vector<float>{0, 8, 0, 1, 2, 0, 0, 0, 0, 9, 0, 3}));
}

TEST(Densify, RejectsIndicesOutsideTheTensor) {
  tfl::SparsityParametersT sp;
  sp.traversal_order = {0, 1};
  tfl::Int32VectorT segments, indices;
  segments.values = {0, 1, 1};
  indices.values = {5};  // column 5 of a 2x3 tensor
  sp.dim_metadata.push_back(Dense(2));
  sp.dim_metadata.push_back(Csr(std::move(segments), std::move(indices)));
  const std::vector<float> stored = {1};
  const ir::Model model = SparseGraph(tfl::TensorType_FLOAT32, {2, 3},
                                      Bytes::FromValues(std::span<const float>(stored)), std::move(sp), false);
  EXPECT_THROW(RunOurs(model, {RandomF32({2, 3}, 294)}), Error);
}

TEST(Densify, SparseFixtureModelMatchesLiteRt) {
  const std::string path = FixtureModel("face_detection_full_range_sparse.tflite");
  const ir::Model model = format::ReadModel(path);
  int sparse = 0, densify = 0;
  for (const ir::Tensor& t : model.main().tensors) sparse += t.sparsity.has_value();
  for (const ir::Op& op : model.main().ops) densify += op.code == tfl::BuiltinOperator_DENSIFY;
  EXPECT_EQ(sparse, 46);
  EXPECT_EQ(densify, 46);
  std::vector<npy::Array> inputs;
  for (size_t i = 0; i < model.main().inputs.size(); ++i)
    inputs.push_back(exec::GenerateInput(model.main().tensors[model.main().inputs[i]], 3, static_cast<int>(i)));
  const std::vector<npy::Array> theirs = RunLiteRt(path, inputs);
  const std::vector<npy::Array> ours = RunOurs(model, inputs);
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const Agreement a = Compare(theirs[i], ours[i]);
    EXPECT_EQ(ours[i].shape, theirs[i].shape);
    EXPECT_LE(a.max_abs_diff, 1e-4 * std::max(1.0, a.max_abs_ref)) << "output " << i;
  }
}

}  // namespace
}  // namespace gpuclean::testing
