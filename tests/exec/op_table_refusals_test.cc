// What the kernels added for the last op-table rows refuse, as LiteRT
// refuses it (or where gpuclean does not follow): one error of the right
// kind, naming the op; through the CLI, one line and exit 2.
#include <gtest/gtest.h>

#include "elementwise_test_util.h"
#include "gpuclean/format.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(OpTableRefusals, ReverseV2WithAxesThatAreNotContiguous) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 3, 4});
  b.Output(b.Op(tfl::BuiltinOperator_REVERSE_V2, {x, b.ConstI32("axes", {2}, {0, 2})})[0]);
  ExpectInvokeFails(b.Finish(), {RandomF32({2, 3, 4}, 1)}, "contiguous");
}

TEST(OpTableRefusals, DynamicUpdateSliceWithStartsOfTheWrongLength) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {4, 4});
  const int update = b.Input("u", kF32, {2, 2});
  const int starts = b.Input("s", kI32, {3});
  b.Output(b.Op(tfl::BuiltinOperator_DYNAMIC_UPDATE_SLICE, {x, update, starts})[0]);
  ExpectInvokeFails(b.Finish(), {RandomF32({4, 4}, 1), RandomF32({2, 2}, 2), I32({3}, {0, 0, 0})},
                    "one value per dimension");
}

TEST(OpTableRefusals, QuantizeToPerChannelScalesOrFromAQuantizedInput) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {1, 4});
  const int q = b.Quantize(x, tfl::TensorType_INT8, 0.5f, 0);
  b.Output(b.Dequantize(q));
  ir::Model model = b.Finish();
  model.main().tensors[q].quant.scale = {0.5f, 0.25f};  // a second scale
  model.main().tensors[q].quant.zero_point = {0, 0};
  ExpectInterpreterRefuses(model);

  TempDir dir;
  format::WriteModel(model, dir.file("quantize.tflite"));
  const CommandResult r = RunGpuclean("run " + dir.file("quantize.tflite") + " --out " + dir.file("out"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("QUANTIZE"), std::string::npos) << r.err;
}

TEST(OpTableRefusals, AddNOfOneInputAndFloorModByAZeroInt) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {3});
  b.Output(b.Op(tfl::BuiltinOperator_ADD_N, {x})[0]);  // LiteRT wants two or more
  ExpectInterpreterRefuses(b.Finish());

  GraphBuilder c;
  const int a = c.Input("a", kI32, {3});
  const int d = c.Input("d", kI32, {3});
  c.Output(c.Binary(tfl::BuiltinOperator_FLOOR_MOD, a, d));
  ExpectInvokeFails(c.Finish(), {I32({3}, {7, -7, 5}), I32({3}, {2, 0, 3})}, "division by 0");
}

}  // namespace
}  // namespace gpuclean::testing::ewt
