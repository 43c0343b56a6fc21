// relu0to1-to-relus: RELU_0_TO_1(x) -> RELU(x) - RELU(x - 1). ML Drift took
// RELU_0_TO_1 (hard-sigmoid) up to 2.1.3 and rejects it from 2.1.5 on
// (LiteRT#8598). clamp(x, 0, 1) = max(x, 0) - max(x - 1, 0) for every real x:
// below 0 both terms vanish, in [0, 1] only the first is non-zero, above 1
// they differ by exactly 1. In float x - 1 rounds, but only where x > 1 does
// the second term matter, and there (x) - (x - 1) is exact for x < 2^24
// (Sterbenz for x in [1, 2], integer spacing above), so the pass is exact.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class Relu0To1ToRelusPass final : public OpPass {
 public:
  Relu0To1ToRelusPass()
      : OpPass({"relu0to1-to-relus", Exactness::kExact,
                "any float32 RELU_0_TO_1; clamp(x,0,1) = relu(x) - relu(x-1) holds for every x"},
               {tfl::BuiltinOperator_RELU_0_TO_1}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    if (site.op.inputs.size() != 1) return std::nullopt;
    const int x = site.op.inputs[0];
    if (site.tensor(x).dtype != tfl::TensorType_FLOAT32) return std::nullopt;
    builder::GraphBuilder& b = site.b();
    const int y = b.Sub(b.Relu(x), b.Relu(b.Sub(x, site.edit.SharedScalarF32("one", 1.0f))));
    site.edit.Replace(site.node, {y});
    return "RELU(x) - RELU(x - 1)";
  }
};

}  // namespace

const Pass& Relu0To1ToRelus() {
  static const Relu0To1ToRelusPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
