// LEAKY_RELU against LiteRT.js: several alphas (0.2, 0, 1, negative, above 1)
// over shapes from scalar to rank 5 and a large tensor; special values.
#include "exec/elementwise_test_util.h"

namespace gpuclean::testing::ewt {
namespace {

TEST(LeakyRelu, Alphas) {
  for (float alpha : {0.2f, 0.0f, 1.0f, -0.5f, 3.0f}) {
    SCOPED_TRACE(alpha);
    ExpectUnaryMatches([alpha](GraphBuilder& b, int x) { return b.LeakyRelu(x, alpha); }, -5.0f, 5.0f, 3500);
  }
}

TEST(LeakyRelu, SpecialValues) {
  GraphBuilder b;
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e30f, INFINITY, -INFINITY, NAN};
  const int32_t n = static_cast<int32_t>(values.size());
  const int x = b.Input("x", kF32, {n});
  b.Output(b.LeakyRelu(x, 0.1f));
  b.Output(b.LeakyRelu(x, 0.0f));
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, {F32({n}, values)});
  ExpectSameFloats(ValuesOf<float>(RunOurs(model, {F32({n}, values)})[0]),
                   {0.0f, -0.0f, 1.0f, 0.1f * -1.0f, 1e-40f, 0.1f * -1e30f, INFINITY, -INFINITY, NAN});
}

}  // namespace
}  // namespace gpuclean::testing::ewt
