// relu0to1-to-relus: RELU_0_TO_1(x) -> RELU(x) - RELU(x - 1). ML Drift took
// RELU_0_TO_1 (hard-sigmoid) up to 2.1.3 and rejects it from 2.1.5 on
// (LiteRT#8598). clamp(x, 0, 1) = max(x, 0) - max(x - 1, 0) for every real x:
// below 0 both terms vanish, in [0, 1] only the first is non-zero, above 1
// they differ by exactly 1. In float x - 1 rounds, but only where x > 1 does
// the second term matter, and there (x) - (x - 1) is exact for x < 2^24
// (Sterbenz for x in [1, 2], integer spacing above), so the pass is exact.
#include <fmt/format.h>

#include "rewrite/graph_edit.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite::passes {
namespace {

class Relu0To1ToRelusPass final : public Pass {
 public:
  std::string_view id() const override { return "relu0to1-to-relus"; }
  Exactness exactness() const override { return Exactness::kExact; }
  std::string_view contract() const override {
    return "any float32 RELU_0_TO_1; clamp(x,0,1) = relu(x) - relu(x-1) holds for every x";
  }

  PassResult Apply(ir::Model& model, const PassOptions&) const override {
    PassResult result;
    GraphEdit edit(model, std::string(id()));
    int one = -1;  // shared by every match
    const size_t count = edit.graph().ops.size();
    for (size_t i = 0; i < count; ++i) {
      const ir::Op& op = edit.graph().ops[i];
      if (op.code != tfl::BuiltinOperator_RELU_0_TO_1 || op.inputs.size() != 1) continue;
      const int x = op.inputs[0];
      if (edit.graph().tensors.at(x).dtype != tfl::TensorType_FLOAT32) continue;
      if (one < 0) one = edit.ConstF32("one", {}, {1.0f});
      const int y = edit.b().Sub(edit.b().Relu(x), edit.b().Relu(edit.b().Sub(x, one)));
      result.sites.push_back({static_cast<int>(i), "RELU_0_TO_1", "RELU(x) - RELU(x - 1)"});
      edit.Replace(static_cast<int>(i), {y});
    }
    edit.Commit();
    return result;
  }
};

}  // namespace

const Pass& Relu0To1ToRelus() {
  static const Relu0To1ToRelusPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
