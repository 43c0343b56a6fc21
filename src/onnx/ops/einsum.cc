// Einsum with one or two operands, reduced to SUM / TRANSPOSE / RESHAPE /
// BATCH_MATMUL (and MUL for two operands without a contraction): letters
// only one operand has and the output lacks are summed first; the rest are
// batch (both operands and the output), contracted (both operands, not the
// output) or free (one operand and the output). Each operand is brought to
// [batch, free, contracted] / [batch, contracted, free], one BATCH_MATMUL
// multiplies them, and the result is transposed to the output's order.
// Ellipses broadcast numpy-style (equal sizes only). Refused: three or more
// operands, a letter repeated within one operand (diagonals), and batch
// dimensions that only broadcast (size 1 against n).
#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <map>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

using Labels = std::string;  // one char per dimension; ellipsis dims are '0'..'9'

struct Parsed {
  std::vector<Labels> inputs;
  Labels output;
};

Parsed Parse(NodeContext& ctx, std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(terms.size()) != ctx.num_inputs())
    ctx.BadModel(fmt::format("the equation has {} operands, the node {}", terms.size(), ctx.num_inputs()));
  int ell_rank = 0;
  Parsed p;
  std::vector<int> ell_of(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t e = terms[i].find("...");
    if (e != std::string::npos) {
      const int letters = static_cast<int>(terms[i].size()) - 3;
      ell_of[i] = ctx.Rank(static_cast<int>(i)) - letters;
      if (ell_of[i] < 0) ctx.BadModel("the ellipsis covers a negative number of dimensions");
      if (ell_of[i] > 10) ctx.Fail("ellipses of more than 10 dimensions are not supported");
      ell_rank = std::max(ell_rank, ell_of[i]);
    }
  }
  auto ellipsis = [&](int n) {
    Labels l;
    for (int k = ell_rank - n; k < ell_rank; ++k) l.push_back(static_cast<char>('0' + k));
    return l;
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    Labels l;
    for (size_t c = 0; c < terms[i].size(); ++c) {
      if (terms[i].compare(c, 3, "...") == 0) {
        l += ellipsis(ell_of[i]);
        c += 2;
      } else if (std::isalpha(static_cast<unsigned char>(terms[i][c]))) {
        l.push_back(terms[i][c]);
      } else {
        ctx.BadModel(fmt::format("unexpected '{}' in the equation", terms[i][c]));
      }
    }
    if (static_cast<int>(l.size()) != ctx.Rank(static_cast<int>(i)))
      ctx.BadModel(fmt::format("operand {} has rank {}, the equation {}", i, ctx.Rank(static_cast<int>(i)), l.size()));
    for (size_t a = 0; a < l.size(); ++a)
      if (l.find(l[a], a + 1) != std::string::npos)
        ctx.Fail(fmt::format("'{}' repeats within operand {} (a diagonal); not supported", l[a], i));
    p.inputs.push_back(l);
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t c = 0; c < rhs.size(); ++c) {
      if (rhs.compare(c, 3, "...") == 0) {
        p.output += ellipsis(ell_rank);
        c += 2;
      } else {
        p.output.push_back(rhs[c]);
      }
    }
  } else {
    // Implicit output: the ellipsis, then the letters that occur once, sorted.
    p.output = ellipsis(ell_rank);
    std::string all;
    for (const auto& l : p.inputs) all += l;
    std::string once;
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1) once.push_back(c);
    std::sort(once.begin(), once.end());
    p.output += once;
  }
  return p;
}

struct Operand {
  int tensor;
  Labels labels;
};

// Sums away the labels of `op` not in `keep`.
Operand SumOut(NodeContext& ctx, Operand op, const std::string& keep) {
  std::vector<int32_t> axes;
  Labels rest;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (keep.find(op.labels[i]) == std::string::npos)
      axes.push_back(static_cast<int32_t>(i));
    else
      rest.push_back(op.labels[i]);
  }
  if (axes.empty()) return op;
  op.tensor = ctx.b().Sum(op.tensor, axes, false);
  op.labels = rest;
  return op;
}

// Transposes `op` so its labels read `order` (a permutation of them).
int Arrange(NodeContext& ctx, const Operand& op, const Labels& order) {
  std::vector<int32_t> perm;
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) {
    perm.push_back(static_cast<int32_t>(op.labels.find(order[i])));
    identity = identity && perm.back() == static_cast<int32_t>(i);
  }
  return identity ? op.tensor : ctx.b().Transpose(op.tensor, perm);
}

void Einsum(NodeContext& ctx) {
  const Parsed p = Parse(ctx, ctx.Str("equation", ""));
  if (p.inputs.size() > 2) ctx.Fail("einsum of more than two operands is not supported");
  auto& b = ctx.b();
  std::map<char, int64_t> size;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    for (size_t a = 0; a < p.inputs[i].size(); ++a) {
      const int64_t d = ctx.Shape(static_cast<int>(i))[a];
      auto [it, fresh] = size.emplace(p.inputs[i][a], d);
      if (!fresh && it->second != d)
        ctx.Fail(fmt::format("'{}' has sizes {} and {}; broadcasting within einsum is not supported", p.inputs[i][a],
                             it->second, d));
    }
  for (char c : p.output)
    if (!size.count(c)) ctx.BadModel(fmt::format("output label '{}' is in no operand", c));
  auto dims_of = [&](const Labels& l) {
    Shape32 s;
    for (char c : l) s.push_back(static_cast<int32_t>(size[c]));
    return s;
  };
  if (p.inputs.size() == 1) {
    const Operand a = SumOut(ctx, {ctx.Tensor(0), p.inputs[0]}, p.output);
    int y = Arrange(ctx, a, p.output);
    if (y == ctx.Tensor(0)) y = b.Reshape(y, b.shape(y));
    ctx.Out(0, y);
    return;
  }
  if (ctx.DType(0) != tfl::TensorType_FLOAT32 || ctx.DType(1) != tfl::TensorType_FLOAT32)
    ctx.Fail("two-operand einsum of non-float tensors is not supported");
  Operand a{ctx.Tensor(0), p.inputs[0]}, c{ctx.Tensor(1), p.inputs[1]};
  a = SumOut(ctx, a, p.output + c.labels);
  c = SumOut(ctx, c, p.output + a.labels);
  Labels batch, contracted, free_a, free_c;
  for (char l : a.labels) {
    const bool in_c = c.labels.find(l) != std::string::npos, in_out = p.output.find(l) != std::string::npos;
    if (in_c && in_out)
      batch.push_back(l);
    else if (in_c)
      contracted.push_back(l);
    else
      free_a.push_back(l);
  }
  for (char l : c.labels)
    if (a.labels.find(l) == std::string::npos) free_c.push_back(l);
  auto product = [&](const Labels& l) {
    int64_t n = 1;
    for (char ch : l) n *= size[ch];
    return static_cast<int32_t>(n);
  };
  const int32_t nb = product(batch), m = product(free_a), k = product(contracted), n = product(free_c);
  int ta = b.Reshape(Arrange(ctx, a, batch + free_a + contracted), {nb, m, k});
  int tc = b.Reshape(Arrange(ctx, c, batch + contracted + free_c), {nb, k, n});
  int y = k == 1 ? b.Mul(b.Reshape(ta, {nb, m, 1}), b.Reshape(tc, {nb, 1, n})) : b.BatchMatMul(ta, tc);
  const Labels have = batch + free_a + free_c;
  y = b.Reshape(y, dims_of(have));
  ctx.Out(0, Arrange(ctx, {y, have}, p.output));
}

}  // namespace

void RegisterEinsum(Registry& r) { r.Add("Einsum", Einsum); }

}  // namespace gpuclean::onnx::ops
