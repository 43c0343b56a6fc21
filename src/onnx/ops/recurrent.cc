// RNN, GRU and LSTM, unrolled over the (convert-time known) sequence: per
// step, FULLY_CONNECTED on the input and on the previous hidden state, the
// gate activations and elementwise updates - ops every GPU delegate runs.
// Forward, reverse and bidirectional; layout 0 ([seq, batch, .]) and 1
// ([batch, seq, .]), the latter without a transpose (the outputs are stored
// in layout 0's order and handed on with a permutation).
#include <cmath>

#include <fmt/format.h>

#include "onnx/ops/ops.h"

namespace gpuclean::onnx::ops {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int Activate(NodeContext& ctx, const std::string& name, int x) {
  auto& b = ctx.b();
  if (name == "Sigmoid") return b.Logistic(x);
  if (name == "Tanh") return b.Tanh(x);
  if (name == "Relu") return b.Relu(x);
  ctx.Fail(fmt::format("activation '{}' is not supported", name));
}

// Rows [row0, row0 + rows) of a constant [dirs, R, C] for direction `dir`,
// as a [rows, C] constant (FULLY_CONNECTED's [out, in] weights).
int WeightRows(NodeContext& ctx, const std::vector<float>& w, const Dims& shape, int64_t dir, int64_t row0,
               int64_t rows, const std::string& role) {
  const int64_t r = shape[1], c = shape[2];
  std::vector<float> out(w.begin() + (dir * r + row0) * c, w.begin() + (dir * r + row0 + rows) * c);
  return ctx.b().ConstF32(
      fmt::format("{}/{}{}_{}", ctx.node().outputs.empty() ? ctx.node().op_type : ctx.node().name, role, dir, row0),
      {static_cast<int32_t>(rows), static_cast<int32_t>(c)}, out);
}

void Recurrent(NodeContext& ctx, Cell cell) {
  auto& b = ctx.b();
  const int gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  const std::string direction = ctx.Str("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.BadModel("direction '" + direction + "'");
  if (ctx.HasAttr("clip")) ctx.Fail("clip is not supported");
  if (cell == Cell::kLstm && ctx.Int("input_forget", 0) != 0) ctx.Fail("input_forget is not supported");
  const bool batch_first = ctx.Int("layout", 0) != 0;
  const Dims& xs = ctx.Shape(0);
  if (xs.size() != 3) ctx.BadModel("X must be rank 3");
  const int64_t seq = batch_first ? xs[1] : xs[0], batch = batch_first ? xs[0] : xs[1], in_size = xs[2];
  const Dims ws = ctx.Shape(1), rs = ctx.Shape(2);
  const int64_t hs = rs.at(2);
  if (ws.size() != 3 || ws[0] != dirs || ws[1] != gates * hs || ws[2] != in_size || rs[0] != dirs ||
      rs[1] != gates * hs)
    ctx.BadModel("W/R shapes do not match the input, the hidden size and the direction");
  const std::vector<float> w = ctx.ConstFloats(1), r = ctx.ConstFloats(2);
  std::vector<float> bias(static_cast<size_t>(dirs * 2 * gates * hs), 0.0f);
  if (ctx.Has(3)) bias = ctx.ConstFloats(3);
  if (static_cast<int64_t>(bias.size()) != dirs * 2 * gates * hs) ctx.BadModel("B does not match");
  if (ctx.Has(4)) {
    for (int64_t len : ctx.ConstInts(4))
      if (len != seq) ctx.Fail("sequence_lens shorter than the sequence are not supported");
  }
  std::vector<std::string> acts;
  if (ctx.HasAttr("activations")) acts = ctx.node().attributes.at("activations").strings;
  const size_t per_dir = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
  if (acts.empty()) {
    for (int64_t d = 0; d < dirs; ++d) {
      if (cell == Cell::kRnn)
        acts.push_back("Tanh");
      else
        acts.insert(acts.end(), {"Sigmoid", "Tanh"});
      if (cell == Cell::kLstm) acts.push_back("Tanh");
    }
  }
  if (acts.size() != per_dir * dirs) ctx.BadModel("activations do not match the cell and direction");
  if (ctx.HasAttr("activation_alpha") || ctx.HasAttr("activation_beta"))
    ctx.Fail("activation_alpha/beta are not supported");
  const int initial_h_input = 5, initial_c_input = 6, peephole_input = 7;
  std::vector<float> peep;
  if (cell == Cell::kLstm && ctx.Has(peephole_input)) {
    peep = ctx.ConstFloats(peephole_input);
    if (static_cast<int64_t>(peep.size()) != dirs * 3 * hs) ctx.BadModel("P does not match");
  }
  const int x = ctx.Tensor(0);
  // The stored state inputs [dirs, batch, hs] (layout 1: [batch, dirs, hs]).
  auto initial = [&](int input, int64_t d) {
    if (!ctx.Has(input)) return ctx.ConstF32({batch, hs}, std::vector<float>(static_cast<size_t>(batch * hs), 0.0f));
    const int t = ctx.Tensor(input);
    const int s =
        batch_first
            ? b.Slice(t, {0, static_cast<int32_t>(d), 0}, {static_cast<int32_t>(batch), 1, static_cast<int32_t>(hs)})
            : b.Slice(t, {static_cast<int32_t>(d), 0, 0}, {1, static_cast<int32_t>(batch), static_cast<int32_t>(hs)});
    return b.Reshape(s, {static_cast<int32_t>(batch), static_cast<int32_t>(hs)});
  };
  auto step_input = [&](int64_t t) {
    const int s = batch_first ? b.Slice(x, {0, static_cast<int32_t>(t), 0},
                                        {static_cast<int32_t>(batch), 1, static_cast<int32_t>(in_size)})
                              : b.Slice(x, {static_cast<int32_t>(t), 0, 0},
                                        {1, static_cast<int32_t>(batch), static_cast<int32_t>(in_size)});
    return b.Reshape(s, {static_cast<int32_t>(batch), static_cast<int32_t>(in_size)});
  };
  auto gate_bias = [&](int64_t d, int which, int64_t row0, int64_t rows) {  // which 0: Wb, 1: Rb
    const auto begin = bias.begin() + d * 2 * gates * hs + which * gates * hs + row0;
    return std::vector<float>(begin, begin + rows);
  };
  auto slice_cols = [&](int t, int64_t col0, int64_t cols) {
    return b.Slice(t, {0, static_cast<int32_t>(col0)}, {static_cast<int32_t>(batch), static_cast<int32_t>(cols)});
  };
  std::vector<std::vector<int>> ys(dirs, std::vector<int>(seq, -1));
  std::vector<int> last_h(dirs), last_c(dirs);
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const std::string* act = &acts[d * per_dir];
    int h = initial(initial_h_input, d);
    int c = cell == Cell::kLstm ? initial(initial_c_input, d) : -1;
    const int wx = WeightRows(ctx, w, ws, d, 0, gates * hs, "W");
    std::vector<float> xb(static_cast<size_t>(gates * hs));
    // Input-side bias: Wb (+ Rb except for GRU's h gate without
    // linear_before_reset, where Rb_h sits inside the reset product).
    const bool lbr = cell == Cell::kGru && ctx.Int("linear_before_reset", 0) != 0;
    const auto wb = gate_bias(d, 0, 0, gates * hs), rb = gate_bias(d, 1, 0, gates * hs);
    for (int64_t i = 0; i < gates * hs; ++i) xb[i] = wb[i] + (cell == Cell::kGru && i >= 2 * hs ? 0.0f : rb[i]);
    const int xbias = ctx.ConstF32({gates * hs}, xb);
    for (int64_t k = 0; k < seq; ++k) {
      const int64_t t = reverse ? seq - 1 - k : k;
      const int xw = b.FullyConnected(step_input(t), wx, xbias);  // [batch, gates*hs]
      if (cell == Cell::kRnn) {
        h = Activate(ctx, act[0],
                     b.Add(xw, b.FullyConnected(h, WeightRows(ctx, r, rs, d, 0, hs, "R"), builder::kNoInput)));
      } else if (cell == Cell::kGru) {
        const int hr = b.FullyConnected(h, WeightRows(ctx, r, rs, d, 0, 2 * hs, "R"), builder::kNoInput);
        const int zr = Activate(ctx, act[0], b.Add(slice_cols(xw, 0, 2 * hs), hr));
        const int z = slice_cols(zr, 0, hs), rg = slice_cols(zr, hs, hs);
        const int rh = WeightRows(ctx, r, rs, d, 2 * hs, hs, "R");
        const int rbh = ctx.ConstF32({hs}, gate_bias(d, 1, 2 * hs, hs));
        const int inner = lbr ? b.Mul(rg, b.FullyConnected(h, rh, rbh)) : b.FullyConnected(b.Mul(rg, h), rh, rbh);
        const int cand = Activate(ctx, act[1], b.Add(slice_cols(xw, 2 * hs, hs), inner));
        // (1 - z) * cand + z * h == cand + z * (h - cand)
        h = b.Add(cand, b.Mul(z, b.Sub(h, cand)));
      } else {
        const int pre = b.Add(xw, b.FullyConnected(h, WeightRows(ctx, r, rs, d, 0, 4 * hs, "R"), builder::kNoInput));
        int gi = slice_cols(pre, 0, hs), go = slice_cols(pre, hs, hs), gf = slice_cols(pre, 2 * hs, hs);
        const int gc = slice_cols(pre, 3 * hs, hs);
        auto peephole = [&](int k_gate) {
          return ctx.ConstF32(
              {hs}, std::vector<float>(peep.begin() + (d * 3 + k_gate) * hs, peep.begin() + (d * 3 + k_gate + 1) * hs));
        };
        if (!peep.empty()) {
          gi = b.Add(gi, b.Mul(c, peephole(0)));
          gf = b.Add(gf, b.Mul(c, peephole(2)));
        }
        const int i_t = Activate(ctx, act[0], gi), f_t = Activate(ctx, act[0], gf);
        c = b.Add(b.Mul(f_t, c), b.Mul(i_t, Activate(ctx, act[1], gc)));
        if (!peep.empty()) go = b.Add(go, b.Mul(c, peephole(1)));
        h = b.Mul(Activate(ctx, act[0], go), Activate(ctx, act[2], c));
      }
      ys[d][t] = h;
    }
    last_h[d] = h;
    last_c[d] = c;
  }
  const int32_t b32 = static_cast<int32_t>(batch), h32 = static_cast<int32_t>(hs);
  // Stored in layout 0's order; layout 1's outputs are handed on permuted.
  if (ctx.HasOutput(0)) {
    std::vector<int> steps;
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t d = 0; d < dirs; ++d) steps.push_back(b.Reshape(ys[d][t], {1, 1, b32, h32}));
    const int y = steps.size() == 1 ? steps[0] : b.Concatenation(steps, 0);
    const int shaped = b.Reshape(y, {static_cast<int32_t>(seq), static_cast<int32_t>(dirs), b32, h32});
    ctx.Out(0, shaped, batch_first ? Perm{1, 2, 0, 3} : Perm{});
  }
  auto state_out = [&](int k, const std::vector<int>& last) {
    if (!ctx.HasOutput(k)) return;
    std::vector<int> parts;
    for (int t : last) parts.push_back(b.Reshape(t, {1, b32, h32}));
    const int y = parts.size() == 1 ? b.Reshape(parts[0], {1, b32, h32}) : b.Concatenation(parts, 0);
    ctx.Out(k, y, batch_first ? Perm{1, 0, 2} : Perm{});
  };
  state_out(1, last_h);
  if (cell == Cell::kLstm) state_out(2, last_c);
}

}  // namespace

void RegisterRecurrent(Registry& r) {
  r.Add("RNN", [](NodeContext& c) { Recurrent(c, Cell::kRnn); });
  r.Add("GRU", [](NodeContext& c) { Recurrent(c, Cell::kGru); });
  r.Add("LSTM", [](NodeContext& c) { Recurrent(c, Cell::kLstm); });
}

}  // namespace gpuclean::onnx::ops
