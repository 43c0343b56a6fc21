// MatMul (any rank, numpy broadcasting) and Gemm. A constant 2-D right-hand
// side becomes FULLY_CONNECTED with the weights stored [N, K], as TFLite's
// own converter writes them; anything else is BATCH_MATMUL. Also the small
// linear algebra of ONNX's float ops: Det (n <= 3) and DFT.
#include <cmath>

#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

std::vector<float> TransposedWeights(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> t(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = w[r * cols + c];
  return t;
}

void MatMul(NodeContext& ctx) {
  auto& b = ctx.b();
  Dims as = ctx.Shape(0), bs = ctx.Shape(1);
  if (as.empty() || bs.empty()) ctx.BadModel("MatMul of a scalar");
  const bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
  if (ctx.IsConst(1) && bs.size() <= 2 && ctx.DType(1) == tfl::TensorType_FLOAT32 && !ctx.IsConst(0)) {
    const int64_t k = bs[0], n = b_vector ? 1 : bs[1];
    int a = ctx.Tensor(0);
    if (a_vector) a = b.Reshape(a, {1, static_cast<int32_t>(k)});
    const auto w = TransposedWeights(ctx.ConstFloats(1), k, n);
    const int weights = b.ConstF32(ctx.In(1).name + "|nk", {static_cast<int32_t>(n), static_cast<int32_t>(k)}, w);
    const int rank = static_cast<int>(b.shape(a).size());
    int y = b.FullyConnected(a, weights, builder::kNoInput, builder::kNoActivation, rank > 2);
    if (a_vector || b_vector) {
      Dims out(as.begin(), as.end() - 1);
      if (!b_vector) out.push_back(n);
      y = b.Reshape(y, ToShape32(out));
    }
    ctx.Out(0, y);
    return;
  }
  int a = ctx.Tensor(0), c = ctx.Tensor(1);
  if (a_vector) a = b.Reshape(a, {1, static_cast<int32_t>(as[0])});
  if (b_vector) c = b.Reshape(c, {static_cast<int32_t>(bs[0]), 1});
  int y = b.BatchMatMul(a, c);
  if (a_vector || b_vector) {
    Dims out = ctx.Shape(0);
    Dims ys(b.shape(y).begin(), b.shape(y).end());
    if (a_vector) ys.erase(ys.end() - 2);
    if (b_vector) ys.pop_back();
    y = b.Reshape(y, ToShape32(ys));
  }
  ctx.Out(0, y);
}

void Gemm(NodeContext& ctx) {
  auto& b = ctx.b();
  const float alpha = ctx.Float("alpha", 1.0f), beta = ctx.Float("beta", 1.0f);
  const bool trans_a = ctx.Int("transA", 0) != 0, trans_b = ctx.Int("transB", 0) != 0;
  if (ctx.Rank(0) != 2 || ctx.Rank(1) != 2) ctx.BadModel("Gemm inputs must be 2-D");
  int a = ctx.Tensor(0);
  if (trans_a) a = b.Transpose(a, {1, 0});
  const Dims bs = ctx.Shape(1);
  const int64_t k = trans_b ? bs[1] : bs[0], n = trans_b ? bs[0] : bs[1];
  int y;
  bool bias_fused = false;
  if (ctx.IsConst(1)) {
    std::vector<float> w = ctx.ConstFloats(1);
    if (!trans_b) w = TransposedWeights(w, k, n);
    if (alpha != 1.0f)
      for (float& v : w) v *= alpha;
    const int weights = b.ConstF32(ctx.In(1).name + "|nk", {static_cast<int32_t>(n), static_cast<int32_t>(k)}, w);
    int bias = builder::kNoInput;
    if (ctx.Has(2) && ctx.IsConst(2) && NumElements(ctx.Shape(2)) <= n &&
        (ctx.Rank(2) == 0 || ctx.Shape(2).back() == n || NumElements(ctx.Shape(2)) == 1) &&
        (ctx.Rank(2) < 2 || ctx.Shape(2)[0] == 1)) {
      std::vector<float> c = ctx.ConstFloats(2);
      std::vector<float> full(n);
      for (int64_t i = 0; i < n; ++i) full[i] = beta * (c.size() == 1 ? c[0] : c[i]);
      bias = b.ConstF32(ctx.In(2).name + "|bias", {static_cast<int32_t>(n)}, full);
      bias_fused = true;
    }
    y = b.FullyConnected(a, weights, bias);
  } else {
    y = b.BatchMatMul(a, ctx.Tensor(1), false, trans_b);
    if (alpha != 1.0f) y = b.Mul(y, ctx.ScalarF32(alpha));
  }
  if (ctx.Has(2) && !bias_fused) {
    int c = ctx.Tensor(2);
    if (beta != 1.0f) c = b.Mul(c, ctx.ScalarF32(beta));
    y = b.Add(y, c);
  }
  ctx.Out(0, y);
}

// Det of [..., n, n] for n <= 3 by cofactor expansion (Sarrus for 3x3) over
// the n*n entries sliced from a [batch, n*n] view.
void Det(NodeContext& ctx) {
  auto& b = ctx.b();
  const Dims& s = ctx.Shape(0);
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) ctx.BadModel("Det needs [..., n, n]");
  const int64_t n = s.back();
  if (n > 3) ctx.Fail(fmt::format("Det of {}x{} matrices is not supported (n <= 3)", n, n));
  const Dims batch_dims(s.begin(), s.end() - 2);
  const int32_t batch = static_cast<int32_t>(NumElements(batch_dims));
  const int flat = b.Reshape(ctx.Tensor(0), {batch, static_cast<int32_t>(n * n)});
  auto e = [&](int64_t i, int64_t j) { return b.Slice(flat, {0, static_cast<int32_t>(i * n + j)}, {batch, 1}); };
  int y;
  if (n == 1) {
    y = e(0, 0);
  } else if (n == 2) {
    y = b.Sub(b.Mul(e(0, 0), e(1, 1)), b.Mul(e(0, 1), e(1, 0)));
  } else {
    auto term = [&](int64_t a, int64_t c, int64_t d) { return b.Mul(b.Mul(e(0, a), e(1, c)), e(2, d)); };
    const int pos = b.Add(b.Add(term(0, 1, 2), term(1, 2, 0)), term(2, 0, 1));
    const int neg = b.Add(b.Add(term(2, 1, 0), term(0, 2, 1)), term(1, 0, 2));
    y = b.Sub(pos, neg);
  }
  ctx.Out(0, b.Reshape(y, ToShape32(batch_dims)));
}

// DFT (opset 17) as two FULLY_CONNECTED products with constant cos/sin
// matrices: the signal axis is read last but one (before the real/imaginary
// axis), the rest flattened to rows.
void Dft(NodeContext& ctx) {
  auto& b = ctx.b();
  const Dims& s = ctx.Shape(0);
  const int rank = static_cast<int>(s.size());
  if (rank < 3 || (s.back() != 1 && s.back() != 2)) ctx.BadModel("DFT needs [batch, ..., n, 1 or 2]");
  const int axis = NormalizeAxis(ctx.Int("axis", 1), rank, ctx.node().Label());
  if (axis == rank - 1 || axis == 0) ctx.BadModel("the DFT axis must be a signal axis");
  const int64_t n = s[axis];
  if (ctx.Has(1) && ctx.ConstInts(1).at(0) != n) ctx.Fail("dft_length other than the signal length is not supported");
  const bool inverse = ctx.Int("inverse", 0) != 0, onesided = ctx.Int("onesided", 0) != 0;
  if (onesided && (inverse || s.back() != 1)) ctx.Fail("onesided DFT of complex or inverse input is not supported");
  const int64_t out_n = onesided ? n / 2 + 1 : n;
  Perm perm;
  for (int i = 0; i < rank - 1; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  int64_t rows = 1;
  for (int i = 0; i < rank - 1; ++i)
    if (i != axis) rows *= s[i];
  const int32_t m32 = static_cast<int32_t>(rows), n32 = static_cast<int32_t>(n), o32 = static_cast<int32_t>(out_n);
  const int x = b.Reshape(ctx.TensorIn(0, perm), {m32, n32, static_cast<int32_t>(s.back())});
  const int re = b.Reshape(b.Slice(x, {0, 0, 0}, {m32, n32, 1}), {m32, n32});
  std::vector<float> cs(static_cast<size_t>(out_n * n)), sn(cs.size());
  const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  for (int64_t k = 0; k < out_n; ++k)
    for (int64_t t = 0; t < n; ++t) {
      const double theta = 2.0 * M_PI * static_cast<double>((k * t) % n) / static_cast<double>(n);
      cs[k * n + t] = static_cast<float>(std::cos(theta) * scale);
      sn[k * n + t] = static_cast<float>(std::sin(theta) * scale * (inverse ? 1.0 : -1.0));
    }
  const std::string base = ctx.node().outputs[0];
  const int wc = b.ConstF32(base + "/cos", {o32, n32}, cs), ws = b.ConstF32(base + "/sin", {o32, n32}, sn);
  // (re + i im)(cos + i sin'), sin' the signed sine: re cos - im sin', re sin' + im cos.
  int y_re = b.FullyConnected(re, wc, builder::kNoInput), y_im = b.FullyConnected(re, ws, builder::kNoInput);
  if (s.back() == 2) {
    const int im = b.Reshape(b.Slice(x, {0, 0, 1}, {m32, n32, 1}), {m32, n32});
    y_re = b.Sub(y_re, b.FullyConnected(im, ws, builder::kNoInput));
    y_im = b.Add(y_im, b.FullyConnected(im, wc, builder::kNoInput));
  }
  const int y = b.Concatenation({b.Reshape(y_re, {m32, o32, 1}), b.Reshape(y_im, {m32, o32, 1})}, 2);
  Dims stored;
  for (int i = 0; i < rank - 1; ++i)
    if (i != axis) stored.push_back(s[i]);
  stored.push_back(out_n);
  stored.push_back(2);
  ctx.Out(0, b.Reshape(y, ToShape32(stored)), perm);
}

}  // namespace

void RegisterMatMul(Registry& r) {
  r.Add("MatMul", MatMul);
  r.Add("Gemm", Gemm);
  r.Add("Det", Det);
  r.Add("DFT", Dft);
}

}  // namespace gpuclean::onnx::ops
