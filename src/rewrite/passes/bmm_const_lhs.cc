// bmm-const-lhs: BATCH_MATMUL(C, X) with a constant C -> the transpose of
// BATCH_MATMUL(X^T, C^T), C^T stored. ML Drift's WebGPU backend declines a
// batched matmul whose first operand is a constant ("Not supported batched
// mat mul case: non-constant tensor") and takes one whose second is (measured
// here: data/compat/mldrift-webgpu@2.5.3.json, batch-matmul-const-lhs). A
// DETR decoder's first cross-attention has such a C once its zero target
// tokens are folded. (C X)^T = X^T C^T: the same dot products, so the
// outputs are bit-identical; only data moves.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

// Swaps the last two axes of a rank >= 2 shape (or permutation).
std::vector<int32_t> SwapLastTwo(std::vector<int32_t> v) {
  std::swap(v[v.size() - 1], v[v.size() - 2]);
  return v;
}

std::vector<int32_t> LastTwoSwapped(int rank) {
  std::vector<int32_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return SwapLastTwo(perm);
}

class BmmConstLhsPass final : public OpPass {
 public:
  BmmConstLhsPass()
      : OpPass({"bmm-const-lhs", Exactness::kExact,
                "float32 BATCH_MATMUL without adjoint flags whose first input is constant-valued and second is "
                "runtime, both of rank 2..4 and the same rank; rewritten as a TRANSPOSE of BATCH_MATMUL(X^T, C^T) "
                "with C^T stored (the same dot products: bit-identical)"},
               {tfl::BuiltinOperator_BATCH_MATMUL}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return std::nullopt;
    const int c = op.inputs[0], x = op.inputs[1];
    const ir::Subgraph& g = site.graph();
    if (c < 0 || x < 0 || !IsConstantValued(g, c) || IsConstantValued(g, x)) return std::nullopt;
    const auto* options = op.options.AsBatchMatMulOptions();
    const std::string name = g.tensors[c].name;
    std::string why;
    if (options && (options->adj_x || options->adj_y))
      why = "adjoint flags are set";
    else if (g.tensors[c].dtype != tfl::TensorType_FLOAT32 || g.tensors[x].dtype != tfl::TensorType_FLOAT32)
      why = "an operand is not float32";
    else if (g.tensors[c].rank() != g.tensors[x].rank() || g.tensors[c].rank() < 2 || g.tensors[c].rank() > 4)
      why = "the operands' ranks differ or are outside 2..4";
    if (!why.empty()) {
      site.Skip({name}, why);
      return std::nullopt;
    }
    const int rank = g.tensors[c].rank();
    const std::vector<int32_t> perm = LastTwoSwapped(rank);
    // C^T, computed once here and stored (row-major [.., k, m]).
    const npy::Array value = EvaluateConstant(g, c);
    const std::vector<int32_t> shape = g.tensors[c].shape;
    const int64_t m = shape[rank - 2], k = shape[rank - 1], batch = value.num_elements() / (m * k);
    std::vector<float> transposed(static_cast<size_t>(value.num_elements()));
    const float* src = value.as<float>();
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < k; ++col) transposed[(bi * k + col) * m + r] = src[(bi * m + r) * k + col];
    builder::GraphBuilder& b = site.b();
    const int ct = site.edit.ConstF32(fmt::format("{}_t_{}", name, site.node), SwapLastTwo(shape), transposed);
    const int y = b.Transpose(b.BatchMatMul(b.Transpose(x, perm), ct), perm);
    site.edit.Replace(site.node, {y});
    return fmt::format("constant '{}' [{}] moved to the second operand (transposed)", name, fmt::join(shape, ","));
  }
};

}  // namespace

const Pass& BmmConstLhs() {
  static const BmmConstLhsPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
