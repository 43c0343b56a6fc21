// bmm-split-rows: LiteRT.js 2.5.3's WebGPU backend returns zeros for a
// BATCH_MATMUL whose second operand holds more than 32768 rows (measured:
// data/compat/mldrift-webgpu@2.5.3.json, bmm-rhs-rows), and with it every
// output of the graph. Window attention over many windows crosses that
// (SAM 2's Hiera: 512 windows x 96 channels). The product is computed in
// batch chunks whose second operands stay at or under the limit,
// concatenated on the batch axis; a single matrix above it is split along
// its rows too: the contraction (partial products summed) or, for adj_y,
// the output columns (concatenated). Batch chunks compute the same dot
// products: bit-identical; a split contraction re-associates one sum.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

using Shape = std::vector<int32_t>;

int64_t Rows(const Shape& s) {
  int64_t n = 1;
  for (size_t d = 0; d + 1 < s.size(); ++d) n *= s[d];
  return n;
}

int32_t Batch(const Shape& s) {
  int32_t n = 1;
  for (size_t d = 0; d + 2 < s.size(); ++d) n *= s[d];
  return n;
}

class BmmSplitRowsPass final : public OpPass {
 public:
  BmmSplitRowsPass()
      : OpPass(
            {"bmm-split-rows", Exactness::kExact,
             "float32 BATCH_MATMUL whose second operand has more than bmm_max_rhs_rows rows, both operands of the "
             "same batch dimensions (or a 2-D second operand): computed in batch chunks (and, for one matrix past the "
             "limit, row chunks) that stay within it, joined by CONCATENATION (or ADD of partial products)"},
            {tfl::BuiltinOperator_BATCH_MATMUL}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const int64_t limit = site.options.bmm_max_rhs_rows;
    const ir::Op& op = site.op;
    if (op.inputs.size() != 2 || op.outputs.size() != 1) return std::nullopt;
    const ir::Subgraph& g = site.graph();
    const Shape a = g.tensors[op.inputs[0]].shape, b = g.tensors[op.inputs[1]].shape;
    const Shape out = g.tensors[op.outputs[0]].shape;
    if (a.size() < 2 || b.size() < 2 || Rows(b) <= limit) return std::nullopt;
    const auto* o = op.options.AsBatchMatMulOptions();
    const bool adj_x = o && o->adj_x, adj_y = o && o->adj_y;
    std::string why;
    const bool same_batch = a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin());
    if (g.tensors[op.inputs[0]].dtype != tfl::TensorType_FLOAT32)
      why = "not float32";
    else if (!same_batch && b.size() != 2)
      why = "its operands broadcast over the batch";
    if (!why.empty()) {
      site.Skip({g.tensors[op.outputs[0]].name}, why);
      return std::nullopt;
    }
    builder::GraphBuilder& bb = site.b();
    const int32_t batch = same_batch ? Batch(a) : 1;
    const int32_t a_rows = a[a.size() - 2], a_cols = a.back(), b_rows = b[b.size() - 2], b_cols = b.back();
    const int av = bb.Reshape(op.inputs[0], {Batch(a), a_rows, a_cols});
    const int bv = b.size() == 2 ? op.inputs[1] : bb.Reshape(op.inputs[1], {batch, b_rows, b_cols});
    auto matmul = [&](int x, int y) { return bb.BatchMatMul(x, y, adj_x, adj_y); };
    std::vector<int> parts;
    int concat_axis = 0;  // batch chunks join on the batch axis
    std::string what;
    if (b_rows <= limit && b.size() > 2) {
      const int32_t per = static_cast<int32_t>(std::max<int64_t>(1, limit / b_rows));
      for (int32_t first = 0; first < batch; first += per) {
        const int32_t n = std::min(per, batch - first);
        parts.push_back(
            matmul(bb.Slice(av, {first, 0, 0}, {n, a_rows, a_cols}), bb.Slice(bv, {first, 0, 0}, {n, b_rows, b_cols})));
      }
      what = fmt::format("batch {} -> {} chunks of <= {}", batch, parts.size(), per);
    } else {
      // One matrix is past the limit: split its rows.
      const int32_t per = static_cast<int32_t>(limit);
      const bool rank2 = b.size() == 2;
      auto b_rows_slice = [&](int32_t first, int32_t n) {
        return rank2 ? bb.Slice(bv, {first, 0}, {n, b_cols}) : bb.Slice(bv, {0, first, 0}, {batch, n, b_cols});
      };
      int acc = -1;
      for (int32_t first = 0; first < b_rows; first += per) {
        const int32_t n = std::min(per, b_rows - first);
        if (adj_y) {
          parts.push_back(matmul(av, b_rows_slice(first, n)));  // columns of the output
          concat_axis = 2;
        } else {
          // Rows of the second operand are the contraction: its columns of the first.
          const int x = adj_x ? bb.Slice(av, {0, first, 0}, {Batch(a), n, a_cols})
                              : bb.Slice(av, {0, 0, first}, {Batch(a), a_rows, n});
          const int p = matmul(x, b_rows_slice(first, n));
          acc = acc < 0 ? p : bb.Add(acc, p);
        }
      }
      if (!adj_y) parts = {acc};
      what = fmt::format("{} rows of one matrix -> chunks of <= {}", b_rows, per);
    }
    int y = parts.size() == 1 ? parts[0] : bb.Concatenation(parts, concat_axis);
    y = bb.Reshape(y, out);
    site.edit.Replace(site.node, {y});
    const std::string site_what = fmt::format("second operand [{}] ({} rows): {}", fmt::join(b, ","), Rows(b), what);
    return site_what;
  }
};

}  // namespace

const Pass& BmmSplitRows() {
  static const BmmSplitRowsPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
