#pragma once
// Shared vocabulary of the ONNX op lowerings (one file per op family).
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/lowering.h"

namespace gpuclean::onnx::ops {

namespace tfl = ::gpuclean::tfl;
using Shape32 = std::vector<int32_t>;

// Dims -> the builder's int32 shape (checked).
Shape32 ToShape32(const Dims& dims);
int64_t NumElements(const Dims& dims);

// Each op family's registration (registry.cc calls them all).
// A one-input TFLite op in the input's layout (elementwise.cc).
void LowerUnary(NodeContext& ctx, tfl::BuiltinOperator code);

void RegisterElementwise(Registry& r);
void RegisterActivations(Registry& r);
void RegisterConv(Registry& r);
void RegisterPool(Registry& r);
void RegisterMatMul(Registry& r);
void RegisterShapeOps(Registry& r);
void RegisterNormalization(Registry& r);
void RegisterSoftmax(Registry& r);
void RegisterReduce(Registry& r);
void RegisterResize(Registry& r);
void RegisterPad(Registry& r);
void RegisterDepthSpace(Registry& r);
void RegisterEinsum(Registry& r);
void RegisterMathExtra(Registry& r);
void RegisterTopK(Registry& r);
void RegisterCumSum(Registry& r);
void RegisterTrilu(Registry& r);
void RegisterOneHot(Registry& r);
void RegisterGatherNd(Registry& r);
void RegisterLrn(Registry& r);
void RegisterGridSample(Registry& r);
void RegisterRecurrent(Registry& r);
void RegisterControlFlow(Registry& r);
void RegisterDataDependent(Registry& r);
// NonZero of a run-time tensor, padded (data_dependent.cc).
void LowerNonZeroPadded(NodeContext& ctx);

}  // namespace gpuclean::onnx::ops
