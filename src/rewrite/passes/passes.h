#pragma once
// One accessor per pass; each is defined in passes/<id>.cc. registry.cc
// lists them in the order Fix() applies them.
#include "gpuclean/rewrite.h"

namespace gpuclean::rewrite::passes {

const Pass& DensifyOffline();
const Pass& LayerScaleFold();
const Pass& AddOutputAlias();
const Pass& HostFedConstants();
const Pass& TokenOutputLeaf();
const Pass& SafeLayerNormV2();
const Pass& RmsNormScaleFirst();
const Pass& DotScaleFirst();
const Pass& Rank5ToRank4();
const Pass& SplitToSlices();
const Pass& PackToReshapeConcat();
const Pass& Padv2ToPad0();
const Pass& MeanSplitAxes();
const Pass& TransposeConvZeroStuff();
const Pass& StridedSliceToAvgPool();
const Pass& Relu0To1ToRelus();
const Pass& DivIdenticalInputs();
const Pass& ConstFold();
const Pass& BroadcastToFold();
const Pass& PowToExpLog();
const Pass& SelectToBlend();
const Pass& GeluTanh();
const Pass& GatherOneHotMatMul();
const Pass& BmmConstLhs();
const Pass& BmmSplitRows();
const Pass& ConvWinogradSplit();
const Pass& ConstOperandRank4();

}  // namespace gpuclean::rewrite::passes
