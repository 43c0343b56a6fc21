// gather-onehot-matmul: GATHER / GATHER_ND of a constant float table at
// runtime int32 indices (embedding of a class id, a codebook lookup, a
// small learned position table) -> one-hot rows times the table.
//
//   onehot[m, n] = CAST(EQUAL(index[m], n))           EQUAL on int32, exact
//   out[m, :]    = FULLY_CONNECTED(onehot, table^T)   one term is 1·row, the rest 0·row
//
// The GPU delegates reject GATHER and GATHER_ND but take EQUAL, a bool ->
// float32 CAST and FULLY_CONNECTED. For an in-range index every output
// element is 1·t plus zeros, so the result is the table entry exactly (a
// finite table is required: 0·inf is NaN). GATHER_ND's K index components
// get one one-hot each, combined by an outer product (MUL with broadcast)
// into the one-hot of the row-major flat index.
//
// Out of range: LiteRT fails the invocation (GATHER and GATHER_ND check
// every index); the rewrite cannot fail at run time and yields a zero row
// (for GATHER_ND, when any component is out of its range).
//
// The one-hot tensor is [indices, rows] and the matmul costs rows × row
// width per index, so tables with more rows than PassOptions::onehot_max_rows
// (`--onehot-max-rows`, default 1024) are left alone: big vocabularies
// belong on the host (gather-to-host).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <numeric>
#include <variant>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

int64_t ProductOfDims(const std::vector<int32_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// What one match looks like once its preconditions hold.
struct Lookup {
  int table = -1, indices = -1;
  std::vector<int32_t> table_shape;
  int axis = 0;                       // GATHER: the gathered axis of the table
  std::vector<int32_t> indexed_dims;  // the table dims the index components select
  int64_t rows = 0;                   // product of indexed_dims
  std::vector<float> values;          // the table, row-major
};

// The match at GATHER / GATHER_ND `op`, or why it is left alone.
std::variant<Lookup, std::string> MatchLookup(const ir::Subgraph& g, const ir::Op& op, int64_t max_rows) {
  Lookup l;
  if (op.inputs.size() < 2 || op.outputs.size() != 1) return std::string("it does not have two inputs");
  l.table = op.inputs[0];
  l.indices = op.inputs[1];
  const ir::Tensor& table = g.tensors[l.table];
  const ir::Tensor& indices = g.tensors[l.indices];
  if (IsConstantValued(g, l.indices))
    return std::string("its indices are constant (a grid of them is strided-slice-to-avgpool's)");
  if (!IsConstantValued(g, l.table)) return std::string("the table it reads is not a constant");
  if (indices.dtype != tfl::TensorType_INT32)
    return fmt::format("its indices are {}, not int32", ir::DTypeName(indices.dtype));
  if (g.tensors[op.outputs[0]].dtype != tfl::TensorType_FLOAT32) return std::string("the table is not float");
  if (table.is_dynamic() || indices.is_dynamic() || g.tensors[op.outputs[0]].is_dynamic())
    return std::string("a shape is dynamic");
  l.table_shape = table.shape;
  if (op.code == tfl::BuiltinOperator_GATHER) {
    const auto* o = op.options.AsGatherOptions();
    const int rank = table.rank();
    l.axis = o ? o->axis : 0;
    if (l.axis < 0) l.axis += rank;
    if (l.axis < 0 || l.axis >= rank) return std::string("its axis is out of range");
    if (o && o->batch_dims != 0) return fmt::format("batch_dims is {}, not 0", o->batch_dims);
    l.indexed_dims = {table.shape[l.axis]};
  } else {
    if (indices.rank() < 1) return std::string("its indices are a scalar");
    const int depth = indices.shape.back();
    if (depth < 1 || depth > table.rank()) return fmt::format("its index depth {} does not fit the table", depth);
    l.indexed_dims.assign(table.shape.begin(), table.shape.begin() + depth);
  }
  l.rows = std::accumulate(l.indexed_dims.begin(), l.indexed_dims.end(), int64_t{1}, std::multiplies<>());
  if (l.rows > max_rows)
    return fmt::format(
        "the table has {} rows, more than --onehot-max-rows {}: a one-hot that wide belongs on the "
        "host; run this lookup as the host step '{}' (`gpuclean split MODEL --host {}`, "
        "docs/pipeline.md)",
        l.rows, max_rows, op.code == tfl::BuiltinOperator_GATHER_ND ? "gather_nd" : "gather", op.name());
  if (table.is_const()) {
    l.values = ConstFloats(g, l.table);
    if (l.values.empty()) return fmt::format("the table is {}, not float", ir::DTypeName(table.dtype));
  } else {  // computed from constants only (DEQUANTIZE of fp16 weights)
    const npy::Array value = EvaluateConstant(g, l.table);
    if (value.dtype != tfl::TensorType_FLOAT32) return std::string("the table is not float32");
    l.values.assign(value.as<float>(), value.as<float>() + value.num_elements());
  }
  for (float v : l.values)
    if (!std::isfinite(v)) return std::string("the table holds a non-finite value (0 x inf would be NaN)");
  return l;
}

// [m, d] float one-hot of int32 `column` ([m, 1]) over 0..d-1.
int OneHot(GraphEdit& edit, int column, int32_t d, const std::string& name) {
  std::vector<int32_t> range(d);
  std::iota(range.begin(), range.end(), 0);
  const int values = edit.b().ConstI32(edit.prefix() + name, {d}, range);
  return edit.b().Cast(edit.b().Equal(column, values), tfl::TensorType_FLOAT32);
}

class GatherOneHotMatMulPass final : public PatternPass<Lookup> {
 public:
  GatherOneHotMatMulPass()
      : PatternPass(
            {"gather-onehot-matmul", Exactness::kExact,
             "GATHER (batch_dims 0, any axis) or GATHER_ND of a constant, finite float32 table at runtime int32 "
             "indices, the table having at most --onehot-max-rows (1024) indexed rows; exact for in-range "
             "indices (LiteRT fails on others, the rewrite gives a zero row)"},
            {tfl::BuiltinOperator_GATHER, tfl::BuiltinOperator_GATHER_ND}) {}

 private:
  std::optional<Lookup> Match(const OpSite& site) const override {
    const ir::Op& op = site.op;
    auto matched = MatchLookup(site.graph(), op, site.options.onehot_max_rows);
    if (auto* why = std::get_if<std::string>(&matched)) {
      std::vector<std::string> names;
      for (int t : op.inputs)
        if (t >= 0) names.push_back(site.tensor(t).name);
      names.push_back(site.tensor(op.outputs[0]).name);
      site.Skip(std::move(names), std::move(*why));
      return std::nullopt;
    }
    return std::get<Lookup>(std::move(matched));
  }

  std::string Rewrite(OpSite& site, const Lookup& l) const override {
    const std::vector<int32_t> out_shape = site.tensor(site.op.outputs[0]).shape;
    site.edit.Replace(site.node, {Emit(site.edit, site.op, l, out_shape, site.node)});
    return fmt::format("one-hot over {} row(s) of [{}] x FULLY_CONNECTED", l.rows, fmt::join(l.table_shape, ","));
  }

 private:
  static int Emit(GraphEdit& edit, const ir::Op& op, const Lookup& l, const std::vector<int32_t>& out_shape, int node) {
    builder::GraphBuilder& b = edit.b();
    const std::vector<int32_t> index_shape = edit.graph().tensors[l.indices].shape;
    const bool nd = op.code == tfl::BuiltinOperator_GATHER_ND;
    const int depth = static_cast<int>(l.indexed_dims.size());
    // m: how many lookups; every index component becomes an [m, 1] column.
    const int32_t m = static_cast<int32_t>(ProductOfDims(index_shape, 0, index_shape.size() - (nd ? 1 : 0)));
    const std::vector<int32_t> columns = {m, nd ? depth : 1};
    const int flat = index_shape == columns ? l.indices : b.Reshape(l.indices, columns);
    int onehot = -1;
    int32_t width = 1;
    for (int k = 0; k < depth; ++k) {
      const int column = depth == 1 ? flat : b.Slice(flat, {0, k}, {m, 1});
      const int32_t d = l.indexed_dims[k];
      const int hot = OneHot(edit, column, d, fmt::format("range_{}_{}", node, k));
      // Row-major flat index: the outer product of the running one-hot and this one.
      onehot =
          k == 0 ? hot : b.Reshape(b.Mul(b.Reshape(onehot, {m, width, 1}), b.Reshape(hot, {m, 1, d})), {m, width * d});
      width *= d;
    }
    // FULLY_CONNECTED weights [outputs, rows]: weight[(pre, post), n] = table[pre, n, post].
    const int64_t pre = nd ? 1 : ProductOfDims(l.table_shape, 0, l.axis);
    const int64_t post = ProductOfDims(l.table_shape, nd ? depth : l.axis + 1, l.table_shape.size());
    std::vector<float> weights(static_cast<size_t>(pre * post * l.rows));
    for (int64_t p = 0; p < pre; ++p)
      for (int64_t n = 0; n < l.rows; ++n)
        for (int64_t q = 0; q < post; ++q) weights[(p * post + q) * l.rows + n] = l.values[(p * l.rows + n) * post + q];
    const int w = edit.ConstF32(fmt::format("table_{}", node),
                                {static_cast<int32_t>(pre * post), static_cast<int32_t>(l.rows)}, weights);
    int y = b.FullyConnected(onehot, w, builder::kNoInput);
    // [m, pre * post] -> the gathered rows between the table's outer and inner dims.
    if (pre > 1) y = b.Transpose(b.Reshape(y, {m, static_cast<int32_t>(pre), static_cast<int32_t>(post)}), {1, 0, 2});
    return edit.graph().tensors[y].shape == out_shape ? y : b.Reshape(y, out_shape);
  }
};

}  // namespace

const Pass& GatherOneHotMatMul() {
  static const GatherOneHotMatMulPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
