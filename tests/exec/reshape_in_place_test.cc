// A RESHAPE (SQUEEZE, EXPAND_DIMS) whose input dies at it writes its output
// over the input's buffer instead of copying; one whose input is read later
// keeps a buffer of its own. Values are the same either way.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/exec.h"
#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::testing::reshape_in_place {
namespace {

using builder::GraphBuilder;
constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;

TEST(ReshapeInPlace, AnInputThatDiesThereSharesItsBufferWithTheOutput) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 6});
  const int doubled = b.Add(x, x);
  const int reshaped = b.Reshape(doubled, {3, 4});
  const int squeezed = b.Reshape(reshaped, {12});
  b.Output(b.Mul(squeezed, squeezed));
  exec::Interpreter it(std::make_shared<const ir::Model>(b.Finish()));
  EXPECT_EQ(it.tensor(doubled).data, it.tensor(reshaped).data);
  EXPECT_EQ(it.tensor(reshaped).data, it.tensor(squeezed).data);

  std::vector<float> values(12), want(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i) - 5.5f, want[i] = 4 * values[i] * values[i];
  it.SetInput(0, F32({2, 6}, values));
  it.Invoke();
  ExpectFloatsNear(ValuesOf<float>(it.Output(0)), want);
}

TEST(ReshapeInPlace, AnInputReadLaterKeepsItsOwnBuffer) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {2, 6});
  const int doubled = b.Add(x, x);
  const int reshaped = b.Reshape(doubled, {12});
  b.Output(b.Reshape(b.Add(reshaped, reshaped), {2, 6}));
  b.Output(b.Sub(doubled, x));  // `doubled` is still read after the RESHAPE
  exec::Interpreter it(std::make_shared<const ir::Model>(b.Finish()));
  EXPECT_NE(it.tensor(doubled).data, it.tensor(reshaped).data);
  // A graph input is never written over, and outputs stay readable.
  GraphBuilder c;
  const int y = c.Input("y", kF32, {2, 6});
  const int flat = c.Reshape(y, {12});
  c.Output(flat);
  exec::Interpreter it2(std::make_shared<const ir::Model>(c.Finish()));
  EXPECT_NE(it2.tensor(y).data, it2.tensor(flat).data);

  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i);
  it.SetInput(0, F32({2, 6}, values));
  it.Invoke();
  std::vector<float> four(12);
  for (int i = 0; i < 12; ++i) four[i] = 4 * values[i];
  ExpectFloatsNear(ValuesOf<float>(it.Output(0)), four);
  ExpectFloatsNear(ValuesOf<float>(it.Output(1)), values);
}

}  // namespace
}  // namespace gpuclean::testing::reshape_in_place
