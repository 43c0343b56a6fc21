// log-softmax-decompose: LOG_SOFTMAX(x) -> d - LOG(SUM(EXP(d))) with
// d = x - REDUCE_MAX(x), all over the last axis. LiteRT.js 2.5.3's WebGPU
// delegate (measured), ML Drift 2.2.0's builder and its IR path (their op
// switches) reject LOG_SOFTMAX; every op of the decomposition is taken. It is
// the formula TFLite's own kernel evaluates (the maximum subtracted first,
// so EXP never overflows and the sum is at least 1), in other ops, so it is
// approximate only by rounding. In half precision d <= 0, EXP(d) <= 1 and
// the sum is at most the row length: nothing leaves fp16's range for rows
// shorter than 65504.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class LogSoftmaxDecomposePass final : public OpPass {
 public:
  LogSoftmaxDecomposePass()
      : OpPass({"log-softmax-decompose", Exactness::kApprox,
                "float32 LOG_SOFTMAX with a static last axis; the same max-subtracted formula in separate ops, "
                "different only by rounding (bound 1e-5)"},
               {tfl::BuiltinOperator_LOG_SOFTMAX}) {}
  double bound(const PassOptions&) const override { return 1e-5; }

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    if (site.op.inputs.size() != 1 || site.op.outputs.size() != 1) return std::nullopt;
    const int x = site.op.inputs[0];
    const ir::Tensor in = site.tensor(x);
    if (in.dtype != tfl::TensorType_FLOAT32 || !in.quant.empty() || in.rank() < 1) return std::nullopt;
    if (in.is_dynamic()) {
      site.Skip({in.name}, "a dynamic shape");
      return std::nullopt;
    }
    builder::GraphBuilder& b = site.b();
    const int32_t last = static_cast<int32_t>(in.rank()) - 1;
    const int d = b.Sub(x, b.ReduceMax(x, {last}, true));
    const int y = b.Sub(d, b.Log(b.Sum(b.Exp(d), {last}, true)));
    site.edit.Replace(site.node, {y});
    return fmt::format("d - LOG(SUM(EXP(d))), d = x - REDUCE_MAX(x), over axis {}", last);
  }
};

}  // namespace

const Pass& LogSoftmaxDecompose() {
  static const LogSoftmaxDecomposePass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
