// The one list of ONNX op lowerings. A static library drops object files
// nothing references, so registration is explicit rather than by static
// initialisers.
#include <climits>

#include "gpuclean/error.h"
#include "onnx/lowering.h"
#include "onnx/ops/ops.h"

namespace gpuclean::onnx {

namespace ops {

Shape32 ToShape32(const Dims& dims) {
  Shape32 out;
  for (int64_t d : dims) {
    if (d < 0 || d > INT32_MAX) ThrowUnsupported("dimension " + std::to_string(d) + " does not fit the format");
    out.push_back(static_cast<int32_t>(d));
  }
  return out;
}

int64_t NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace ops

void Registry::Add(const std::string& op_type, LowerFn fn) {
  if (!rules.emplace(op_type, std::move(fn)).second) ThrowInternal("two lowerings registered for ONNX op " + op_type);
}

const Registry& Rules() {
  static const Registry registry = [] {
    Registry r;
    ops::RegisterElementwise(r);
    ops::RegisterActivations(r);
    ops::RegisterConv(r);
    ops::RegisterPool(r);
    ops::RegisterMatMul(r);
    ops::RegisterShapeOps(r);
    ops::RegisterNormalization(r);
    ops::RegisterSoftmax(r);
    ops::RegisterReduce(r);
    ops::RegisterResize(r);
    ops::RegisterPad(r);
    ops::RegisterDepthSpace(r);
    ops::RegisterEinsum(r);
    ops::RegisterMathExtra(r);
    ops::RegisterTopK(r);
    ops::RegisterCumSum(r);
    ops::RegisterTrilu(r);
    ops::RegisterOneHot(r);
    ops::RegisterGatherNd(r);
    ops::RegisterLrn(r);
    ops::RegisterGridSample(r);
    ops::RegisterRecurrent(r);
    ops::RegisterControlFlow(r);
    ops::RegisterDataDependent(r);
    return r;
  }();
  return registry;
}

}  // namespace gpuclean::onnx
