// ctest-labels: litert
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// Three different inputs stacked, so an axis or order mix-up changes values.
ir::Model PackThree(const builder::Shape& shape, int32_t axis) {
  GraphBuilder b;
  int x = b.Input("x", F32, shape);
  int y = b.Input("y", F32, shape);
  b.Output(b.Pack({x, b.Relu(y), b.Neg(x)}, axis));
  return b.Finish();
}

std::vector<npy::Array> TwoInputs(const builder::Shape& shape, uint32_t seed) {
  const std::vector<int64_t> s(shape.begin(), shape.end());
  return {synth::HashUniform(s, -4, 4, seed), synth::HashUniform(s, -4, 4, seed + 1)};
}

TEST(PackToReshapeConcat, PackOnEveryAxisBecomesReshapesAndConcat) {
  // A middle axis, the last axis (written negative) and the leading axis.
  for (int32_t axis : {1, -1, 0}) {
    SCOPED_TRACE(axis);
    const ir::Model model = PackThree({2, 3, 5}, axis);
    const testing::PassProof proof =
        testing::ExpectPassProven("pack-to-reshape-concat", model, TwoInputs({2, 3, 5}, 10 + axis));
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PACK), 0);
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_RESHAPE), 3);
    EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CONCATENATION), 1);
    for (const ir::Tensor& t : proof.rewritten.main().tensors) EXPECT_LE(t.rank(), 4) << t.name;
    testing::ExpectFindingGone(model, proof.rewritten, "pack");
  }
}

TEST(PackToReshapeConcat, FixesThePackProbe) {
  const ir::Model model = synth::Build("pack");
  const testing::PassProof proof = testing::ExpectPassProven("pack-to-reshape-concat", model, TwoInputs({1, 4, 4}, 20));
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PACK), 0);
  testing::ExpectFindingGone(model, proof.rewritten, "pack");
}

TEST(PackToReshapeConcat, PackOfOneTensorIsAReshape) {
  GraphBuilder b;
  int x = b.Input("x", F32, {4, 6});
  b.Output(b.Tanh(b.Pack({x}, 1)));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("pack-to-reshape-concat", model, {synth::HashUniform({4, 6}, -4, 4, 30)});
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_PACK), 0);
  EXPECT_EQ(testing::CountOps(proof.rewritten, tfl::BuiltinOperator_CONCATENATION), 0);
}

TEST(PackToReshapeConcat, LeavesAPackWithADynamicOutputAlone) {
  ir::Model model = PackThree({2, 3, 5}, 0);
  // A dynamic batch: the static shape is only a placeholder, so the reshape
  // targets the pass would bake in could be wrong at run time.
  for (ir::Tensor& t : model.main().tensors)
    if (!t.is_const()) {
      t.shape_signature = t.shape;
      t.shape_signature[0] = -1;
    }
  const size_t ops = model.main().ops.size();
  const PassResult result = FindPass("pack-to-reshape-concat")->Apply(model, {});
  EXPECT_TRUE(result.sites.empty());
  EXPECT_EQ(model.main().ops.size(), ops);
  EXPECT_EQ(testing::CountOps(model, tfl::BuiltinOperator_PACK), 1);
}

}  // namespace
}  // namespace gpuclean::rewrite
