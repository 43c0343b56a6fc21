// onnxruntime's contrib ops as the standard ops that compute them. Formulas
// as onnxruntime's CPU kernels compute them (microsoft/onnxruntime:
// contrib_ops/cpu/activations.h, bert/bias_gelu.cc, skip_layer_norm.cc,
// fused_conv.cc, math/fused_matmul.cc, bert/attention_cpu_base.h,
// bert/multihead_attention.cc; core/providers/cpu/nn/layer_norm_impl.cc),
// each one proven against onnxruntime in tests/onnx/contrib_ops_test.cc.
// BiasAdd and BiasSplitGelu have no CPU kernel in onnxruntime, so nothing
// here could be proven for them: they stay refused with the other foreign ops.
#include "onnx/contrib_ops.h"

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpuclean/error.h"
#include "onnx/opset_adapt.h"
#include "onnx/proto_edit.h"

namespace gpuclean::onnx {
namespace pb = ::onnx;

namespace {

constexpr const char* kMicrosoft = "com.microsoft";

class Expander {
 public:
  Expander(pb::GraphProto& graph, ShapeKnowledge& known, const std::string& path,
           const std::map<std::string, const pb::TensorProto*>& outer_constants = {})
      : graph_(graph), known_(known), path_(path), constants_(outer_constants), w_(known, "contrib") {
    for (const auto& t : graph_.initializer()) constants_[t.name()] = &t;
  }

  void Run() {
    std::vector<pb::NodeProto> nodes(graph_.node().begin(), graph_.node().end());
    for (auto& n : nodes) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) Expander(*a.mutable_g(), known_, path_, constants_).Run();
        for (auto& sub : *a.mutable_graphs()) Expander(sub, known_, path_, constants_).Run();
      }
      if (!IsExpandedContribOp(n.domain(), n.op_type())) {
        w_.Keep(std::move(n));
        continue;
      }
      if (n.input_size() == 0 || n.input(0).empty() || n.output_size() == 0 || n.output(0).empty())
        Refuse(n, "has no input or no output");
      Expand(n);
    }
    w_.Commit(graph_);
  }

 private:
  [[noreturn]] void Refuse(const pb::NodeProto& n, const std::string& why) const {
    ThrowUnsupported(
        OneLine(fmt::format("{}: {} ({}): {}", path_, NodeLabel(n), n.domain().empty() ? "ai.onnx" : n.domain(), why)));
  }

  bool Has(const pb::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
  bool Wants(const pb::NodeProto& n, int k) const { return k < n.output_size() && !n.output(k).empty(); }
  int Rank(const std::string& name) const {
    auto it = known_.shapes.find(name);
    return it == known_.shapes.end() ? -1 : static_cast<int>(it->second.size());
  }
  int64_t LastDim(const std::string& name) const {
    auto it = known_.shapes.find(name);
    return it == known_.shapes.end() || it->second.empty() ? -1 : it->second.back();
  }
  int64_t Dim(const std::string& name, int axis) const {
    auto it = known_.shapes.find(name);
    return it == known_.shapes.end() || axis >= static_cast<int>(it->second.size()) ? -1 : it->second[axis];
  }
  std::string Temp(const pb::NodeProto& n, const std::string& what) { return w_.Fresh(n.output(0) + "_" + what); }
  std::string Binary(const char* op, const std::string& a, const std::string& b, const pb::NodeProto& n) {
    const std::string out = Temp(n, op);
    w_.Emit(op, {a, b}, {out}, n);
    return out;
  }
  std::string Unary(const char* op, const std::string& a, const pb::NodeProto& n) {
    const std::string out = Temp(n, op);
    w_.Emit(op, {a}, {out}, n);
    return out;
  }
  void Forward(const std::string& from, const std::string& to, const pb::NodeProto& n) {
    w_.Emit("Identity", {from}, {to}, n);
  }

  void Expand(const pb::NodeProto& n) {
    const std::string& op = n.op_type();
    const std::string x = n.input(0), y = n.output(0);
    if (op == "Gelu") return w_.EmitGelu(x, y, /*tanh=*/false, n);
    if (op == "FastGelu") return w_.EmitGelu(Has(n, 1) ? Binary("Add", x, n.input(1), n) : x, y, /*tanh=*/true, n);
    if (op == "BiasGelu") {
      if (!Has(n, 1)) Refuse(n, "has no bias");
      return w_.EmitGelu(Binary("Add", x, n.input(1), n), y, /*tanh=*/false, n);
    }
    if (op == "QuickGelu") {
      const std::string gate =
          Unary("Sigmoid", Binary("Mul", x, w_.Scalar(y + "_alpha", FloatAttr(n, "alpha", 1.702f)), n), n);
      w_.Emit("Mul", {x, gate}, {y}, n);
      return;
    }
    if (op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") return SkipNorm(n);
    if (op == "SimplifiedLayerNormalization") return SimplifiedLayerNorm(n);
    if (op == "FusedMatMul") return FusedMatMul(n);
    if (op == "FusedConv") return FusedConv(n);
    if (op == "Attention") return Attention(n);
    if (op == "MultiHeadAttention") return MultiHeadAttention(n);
    Refuse(n, "no expansion");
  }

  // x / sqrt(mean(x^2 over `axes`) + eps) * scale.
  void Rms(const std::string& x, const std::string& scale, float eps, const std::vector<int64_t>& axes,
           const std::string& y, const pb::NodeProto& n) {
    const std::string mean = Temp(n, "meansq");
    SetInts(SetKeep(w_.Emit("ReduceMean", {Binary("Mul", x, x, n)}, {mean}, n)), "axes", axes);
    const std::string rms = Unary("Sqrt", Binary("Add", mean, w_.Scalar(y + "_eps", eps), n), n);
    w_.Emit("Mul", {Binary("Div", x, rms, n), scale}, {y}, n);
  }
  static pb::NodeProto& SetKeep(pb::NodeProto& node) {
    SetInt(node, "keepdims", 1);
    return node;
  }

  // s = input + skip (+ bias); normalised over the last axis. Output 3 is s.
  void SkipNorm(const pb::NodeProto& n) {
    const bool simplified = n.op_type() == "SkipSimplifiedLayerNormalization";
    if (n.input_size() < 3) Refuse(n, "needs input, skip and gamma");
    const int bias_at = simplified ? 3 : 4;
    std::string sum = Binary("Add", n.input(0), n.input(1), n);
    if (Has(n, bias_at)) sum = Binary("Add", sum, n.input(bias_at), n);
    const float eps = FloatAttr(n, "epsilon", 1e-12f);
    if (simplified) {
      if (Wants(n, 1) || Wants(n, 2)) Refuse(n, "the mean and inverse-deviation outputs are not expanded");
      Rms(sum, n.input(2), eps, {-1}, n.output(0), n);
    } else {
      std::vector<std::string> outs = {n.output(0)};
      for (int k = 1; k <= 2; ++k) outs.push_back(Wants(n, k) ? n.output(k) : "");
      while (outs.back().empty()) outs.pop_back();
      std::vector<std::string> ins = {sum, n.input(2)};
      if (Has(n, 3)) ins.push_back(n.input(3));
      pb::NodeProto& ln = w_.Emit("LayerNormalization", ins, outs, n);
      SetInt(ln, "axis", -1);
      SetFloat(ln, "epsilon", eps);
    }
    if (Wants(n, 3)) Forward(sum, n.output(3), n);
  }

  void SimplifiedLayerNorm(const pb::NodeProto& n) {
    if (n.input_size() < 2) Refuse(n, "needs X and scale");
    if (Wants(n, 1)) Refuse(n, "the inverse-deviation output is not expanded");
    const int64_t axis = IntAttr(n, "axis", -1);
    std::vector<int64_t> axes;
    const int rank = Rank(n.input(0));
    if (axis == -1 || (rank > 0 && axis == rank - 1)) {
      axes = {-1};
    } else {
      if (rank < 0) Refuse(n, "an axis other than the last needs a known input rank");
      for (int64_t a = axis < 0 ? axis + rank : axis; a < rank; ++a) axes.push_back(a);
    }
    Rms(n.input(0), n.input(1), FloatAttr(n, "epsilon", 1e-5f), axes, n.output(0), n);
  }

  // A or B with its last two axes swapped (rank from shape inference).
  std::string SwapLastTwo(const std::string& x, const pb::NodeProto& n) {
    const int rank = Rank(x);
    if (rank < 0) Refuse(n, "a transposed operand needs a known rank");
    if (rank < 2) return x;  // ignored for 1-D, as onnxruntime does
    std::vector<int64_t> perm;
    for (int i = 0; i < rank; ++i) perm.push_back(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    const std::string out = Temp(n, "t");
    SetInts(w_.Emit("Transpose", {x}, {out}, n), "perm", perm);
    return out;
  }

  void FusedMatMul(const pb::NodeProto& n) {
    if (n.input_size() < 2) Refuse(n, "needs A and B");
    if (IntAttr(n, "transBatchA", 0) || IntAttr(n, "transBatchB", 0)) Refuse(n, "batch transposes are not expanded");
    const std::string a = IntAttr(n, "transA", 0) ? SwapLastTwo(n.input(0), n) : n.input(0);
    const std::string b = IntAttr(n, "transB", 0) ? SwapLastTwo(n.input(1), n) : n.input(1);
    const float alpha = FloatAttr(n, "alpha", 1.0f);
    if (alpha == 1.0f) {
      w_.Emit("MatMul", {a, b}, {n.output(0)}, n);
      return;
    }
    w_.Emit("Mul", {Binary("MatMul", a, b, n), w_.Scalar(n.output(0) + "_alpha", alpha)}, {n.output(0)}, n);
  }

  // act(conv(X, W) + B + Z).
  void FusedConv(const pb::NodeProto& n) {
    if (n.input_size() < 2) Refuse(n, "needs X and W");
    const std::string conv = Temp(n, "conv");
    pb::NodeProto& c = w_.Emit("Conv", {n.input(0), n.input(1), Has(n, 2) ? n.input(2) : ""}, {conv}, n);
    for (const auto& a : n.attribute())
      if (a.name() != "activation" && a.name() != "activation_params") *c.add_attribute() = a;
    if (!Has(n, 2)) c.mutable_input()->RemoveLast();
    // The optional sum input Z: onnxruntime 1.22's own CPU path fails on it
    // ("output and sum shape must match" in its NCHWc conv), so there is
    // nothing to prove an expansion against.
    if (Has(n, 3)) Refuse(n, "the sum input Z is not expanded (onnxruntime cannot run it on CPU to prove against)");
    const std::string& pre = conv;
    const std::string act = StrAttr(n, "activation", "");
    const std::vector<float> params = [&] {
      const auto* a = FindAttr(n, "activation_params");
      return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
    }();
    const auto need = [&](size_t count) {
      if (params.size() != count)
        Refuse(n, fmt::format("activation {} takes {} parameter(s), {} given", act, count, params.size()));
    };
    const std::string& y = n.output(0);
    if (act.empty()) {
      Forward(pre, y, n);
    } else if (act == "Relu" || act == "Tanh" || act == "Sigmoid") {
      w_.Emit(act, {pre}, {y}, n);
    } else if (act == "Silu") {
      w_.Emit("Mul", {pre, Unary("Sigmoid", pre, n)}, {y}, n);
    } else if (act == "LeakyRelu") {
      need(1);
      SetFloat(w_.Emit("LeakyRelu", {pre}, {y}, n), "alpha", params[0]);
    } else if (act == "Clip") {
      need(2);
      w_.Emit("Clip", {pre, w_.Scalar(y + "_min", params[0]), w_.Scalar(y + "_max", params[1])}, {y}, n);
    } else if (act == "HardSigmoid") {
      need(2);
      pb::NodeProto& h = w_.Emit("HardSigmoid", {pre}, {y}, n);
      SetFloat(h, "alpha", params[0]);
      SetFloat(h, "beta", params[1]);
    } else {
      Refuse(n, "activation '" + act + "' is not one onnxruntime implements");
    }
  }

  // [B, S, N*H] -> [B, N, S, H] (`keys`: [B, N, H, S]).
  std::string Heads(const std::string& x, int64_t heads, bool keys, const pb::NodeProto& n) {
    const std::string split = Temp(n, "heads"), moved = Temp(n, keys ? "keys" : "bnsh");
    w_.Emit("Reshape", {x, w_.IntsConst(n.output(0) + "_heads_shape", {0, 0, heads, -1})}, {split}, n);
    SetInts(w_.Emit("Transpose", {split}, {moved}, n), "perm",
            keys ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
    return moved;
  }

  // softmax(scale q k^T + bias + causal) v over heads, back to [B, S, N*Hv].
  void ScaledDotProduct(const std::string& q, const std::string& k, const std::string& v, int64_t heads,
                        int64_t head_size, const pb::NodeProto& n, const std::string& attention_bias,
                        int64_t causal_length) {
    float scale = FloatAttr(n, "scale", 0.0f);
    if (scale == 0.0f) scale = 1.0f / std::sqrt(static_cast<float>(head_size));
    std::string scores = Binary("Mul", Binary("MatMul", Heads(q, heads, false, n), Heads(k, heads, true, n), n),
                                w_.Scalar(n.output(0) + "_scale", scale), n);
    if (!attention_bias.empty()) scores = Binary("Add", scores, attention_bias, n);
    if (causal_length > 0) {
      // Keys after the query's own position get mask_filter_value added.
      const float filter = FloatAttr(n, "mask_filter_value", -10000.0f);
      std::vector<float> mask(causal_length * causal_length, 0.0f);
      for (int64_t s = 0; s < causal_length; ++s)
        for (int64_t t = s + 1; t < causal_length; ++t) mask[s * causal_length + t] = filter;
      scores = Binary("Add", scores, w_.FloatsConst(n.output(0) + "_causal", {causal_length, causal_length}, mask), n);
    }
    const std::string probs = Temp(n, "probs");
    SetInt(w_.Emit("Softmax", {scores}, {probs}, n), "axis", -1);
    const std::string context = Binary("MatMul", probs, Heads(v, heads, false, n), n), bsnh = Temp(n, "bsnh");
    SetInts(w_.Emit("Transpose", {context}, {bsnh}, n), "perm", {0, 2, 1, 3});
    w_.Emit("Reshape", {bsnh, w_.IntsConst(n.output(0) + "_out_shape", {0, 0, -1})}, {n.output(0)}, n);
  }

  int64_t NumHeads(const pb::NodeProto& n) {
    const int64_t heads = IntAttr(n, "num_heads", 0);
    if (heads <= 0) Refuse(n, "num_heads must be positive");
    return heads;
  }

  // Attention: packed projection weights [D_in, D + D + D_v], no mask, no past.
  void Attention(const pb::NodeProto& n) {
    if (n.input_size() < 2) Refuse(n, "needs input and weights");
    if (Has(n, 3) || Has(n, 4) || Has(n, 6)) Refuse(n, "mask_index and past state are not expanded");
    if (Wants(n, 1)) Refuse(n, "the present output is not expanded");
    if (FindAttr(n, "do_rotary") && IntAttr(n, "do_rotary", 0)) Refuse(n, "rotary embeddings are not expanded");
    const int64_t heads = NumHeads(n);
    auto weights = constants_.find(n.input(1));
    if (weights == constants_.end() || weights->second->dims_size() != 2)
      Refuse(n, "the weights must be a constant [D_in, D + D + D_v]");
    const int64_t columns = weights->second->dims(1);
    std::vector<int64_t> sizes = IntsAttr(n, "qkv_hidden_sizes");
    if (sizes.empty()) sizes = {columns / 3, columns / 3, columns / 3};
    if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] + sizes[1] + sizes[2] != columns || sizes[0] % heads)
      Refuse(n, fmt::format("qkv sizes do not split {} columns into {} heads", columns, heads));
    std::string qkv = Binary("MatMul", n.input(0), n.input(1), n);
    if (Has(n, 2)) qkv = Binary("Add", qkv, n.input(2), n);
    const std::string q = Temp(n, "q"), k = Temp(n, "k"), v = Temp(n, "v");
    SetInt(w_.Emit("Split", {qkv, w_.IntsConst(n.output(0) + "_qkv_sizes", sizes)}, {q, k, v}, n), "axis", -1);
    ScaledDotProduct(q, k, v, heads, sizes[0] / heads, n, Has(n, 5) ? n.input(5) : "", CausalLength(n, n.input(0)));
  }

  int64_t CausalLength(const pb::NodeProto& n, const std::string& query) {
    if (!IntAttr(n, "unidirectional", 0)) return 0;
    const int64_t length = Dim(query, 1);
    if (length <= 0) Refuse(n, "unidirectional attention needs a known sequence length");
    return length;
  }

  // MultiHeadAttention with separate 3-D query, key and value; optional
  // packed bias [D + D + D_v]; no padding mask, no past.
  void MultiHeadAttention(const pb::NodeProto& n) {
    if (n.input_size() < 3 || !Has(n, 1) || !Has(n, 2)) Refuse(n, "packed query/key/value are not expanded");
    if (Has(n, 4) || Has(n, 6) || Has(n, 7) || Has(n, 8)) Refuse(n, "key_padding_mask and past state are not expanded");
    for (int k = 1; k < n.output_size(); ++k)
      if (Wants(n, k)) Refuse(n, "present and qk outputs are not expanded");
    if (Rank(n.input(1)) == 4 || Rank(n.input(2)) == 4)
      Refuse(n, "key/value already split into heads are not expanded");
    if (IntAttr(n, "unidirectional", 0)) Refuse(n, "unidirectional is not expanded");
    const int64_t heads = NumHeads(n);
    const int64_t d = LastDim(n.input(0));
    if (d <= 0 || d % heads) Refuse(n, "needs the query's hidden size, a multiple of num_heads");
    std::string q = n.input(0), k = n.input(1), v = n.input(2);
    if (Has(n, 3)) {
      const auto part = [&](const std::string& x, int64_t from, int64_t to, const char* what) {
        const std::string b = Temp(n, what);
        w_.Emit("Slice",
                {n.input(3), w_.IntsConst(n.output(0) + "_b0", {from}), w_.IntsConst(n.output(0) + "_b1", {to})}, {b},
                n);
        return Binary("Add", x, b, n);
      };
      q = part(q, 0, d, "qbias");
      k = part(k, d, 2 * d, "kbias");
      v = part(v, 2 * d, INT64_MAX, "vbias");
    }
    ScaledDotProduct(q, k, v, heads, d / heads, n, Has(n, 5) ? n.input(5) : "", 0);
  }

  pb::GraphProto& graph_;
  ShapeKnowledge& known_;
  std::string path_;
  std::map<std::string, const pb::TensorProto*> constants_;
  NodeWriter w_;
};

}  // namespace

bool IsExpandedContribOp(const std::string& domain, const std::string& op_type) {
  static const std::set<std::string> kMicrosoftOps = {"Gelu",
                                                      "FastGelu",
                                                      "BiasGelu",
                                                      "QuickGelu",
                                                      "SkipLayerNormalization",
                                                      "SkipSimplifiedLayerNormalization",
                                                      "FusedMatMul",
                                                      "FusedConv",
                                                      "Attention",
                                                      "MultiHeadAttention",
                                                      "SimplifiedLayerNormalization"};
  if (domain == kMicrosoft) return kMicrosoftOps.count(op_type) > 0;
  // onnxruntime registers SimplifiedLayerNormalization in the default domain.
  return (domain.empty() || domain == "ai.onnx") && op_type == "SimplifiedLayerNormalization";
}

void ExpandContribOps(pb::ModelProto& model, const std::string& path) {
  if (!AnyNode(model.graph(), [](const pb::NodeProto& n) { return IsExpandedContribOp(n.domain(), n.op_type()); }))
    return;
  ShapeKnowledge known = LearnShapes(model);
  Expander(*model.mutable_graph(), known, path).Run();
}

}  // namespace gpuclean::onnx
