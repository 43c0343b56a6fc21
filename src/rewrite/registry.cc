#include "gpuclean/rewrite.h"
#include "rewrite/passes/passes.h"

namespace gpuclean::rewrite {

std::string_view ExactnessName(Exactness exactness) { return exactness == Exactness::kExact ? "exact" : "approx"; }

// Order matters where passes feed each other: weights are made dense and
// constants folded before passes that read constant values; structural
// splits (SPLIT, PACK) run before the passes that match their results.
const std::vector<const Pass*>& Registry() {
  static const std::vector<const Pass*> registry = {
      &passes::DensifyOffline(),
      &passes::ConstFold(),
      &passes::Rank5ToRank4(),
      &passes::LayerScaleFold(),
      &passes::SafeLayerNormV2(),
      &passes::RmsNormScaleFirst(),  // after safe-layernorm-v2: a LayerNorm is an RMSNorm of x - mean
      &passes::DotScaleFirst(),
      &passes::AddOutputAlias(),
      &passes::TokenOutputLeaf(),
      &passes::HostFedConstants(),
      &passes::SplitToSlices(),
      &passes::PackToReshapeConcat(),
      &passes::Padv2ToPad0(),
      &passes::MeanSplitAxes(),
      &passes::TransposeConvZeroStuff(),
      &passes::StridedSliceToAvgPool(),
      &passes::GatherOneHotMatMul(),  // after strided-slice-to-avgpool: constant-index grids are not lookups
      &passes::Relu0To1ToRelus(),
      &passes::DivIdenticalInputs(),
      &passes::BmmConstLhs(),
      &passes::BmmSplitRows(),  // after bmm-const-lhs: it may swap the operands
      &passes::ConvWinogradSplit(),
      &passes::ConstOperandRank4(),
      &passes::BroadcastToFold(),
      &passes::PowToExpLog(),
      &passes::SelectToBlend(),
      &passes::GeluTanh(),
  };
  return registry;
}

const Pass* FindPass(std::string_view id) {
  for (const Pass* pass : Registry())
    if (pass->id() == id) return pass;
  return nullptr;
}

}  // namespace gpuclean::rewrite
