// Quantized ops as float fake-quant, by the ONNX operator definitions
// (QuantizeLinear: saturate(round_half_even(x / scale) + zero_point);
// DequantizeLinear: (x - zero_point) * scale; DynamicQuantizeLinear's
// uint8 range from min(0, min x) and max(0, max x), scale 1 when both are
// 0; ConvInteger and MatMulInteger over zero-point-shifted integers;
// QLinearConv and QLinearMatMul as dequantize, compute, requantize).
// onnxruntime computes the QLinear ops in integers with a requantizing
// multiplier, so an output code can differ by one where the float result
// lands near a rounding boundary: the proof's noise floor (inputs moved by
// one ulp) measures exactly those flips.
#include "onnx/quantized_ops.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "gpuclean/error.h"
#include "onnx/opset_adapt.h"
#include "onnx/proto_edit.h"

namespace gpuclean::onnx {
namespace pb = ::onnx;

namespace {

struct CodeRange {
  float lo, hi;
};

// The codes of a quantized ONNX type; uint8 where no zero point says.
CodeRange RangeOf(int onnx_type) {
  switch (onnx_type) {
    case pb::TensorProto::INT8: return {-128.0f, 127.0f};
    case pb::TensorProto::UINT16: return {0.0f, 65535.0f};
    case pb::TensorProto::INT16: return {-32768.0f, 32767.0f};
    default: return {0.0f, 255.0f};
  }
}

class QuantExpander {
 public:
  QuantExpander(pb::GraphProto& graph, ShapeKnowledge& known, const std::string& path, int& expanded)
      : graph_(graph), known_(known), path_(path), expanded_(expanded), w_(known, "quant") {
    for (const auto& t : graph_.initializer()) {
      known_.types[t.name()] = t.data_type();
      known_.shapes[t.name()] = {t.dims().begin(), t.dims().end()};
    }
  }

  void Run() {
    std::vector<pb::NodeProto> nodes(graph_.node().begin(), graph_.node().end());
    std::set<std::string> retyped;
    for (auto& n : nodes) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) QuantExpander(*a.mutable_g(), known_, path_, expanded_).Run();
        for (auto& sub : *a.mutable_graphs()) QuantExpander(sub, known_, path_, expanded_).Run();
      }
      if (!IsExpandedQuantizedOp(n.domain(), n.op_type())) {
        w_.Keep(std::move(n));
        continue;
      }
      if (n.input_size() == 0 || n.input(0).empty() || n.output_size() == 0 || n.output(0).empty())
        Refuse(n, "has no input or no output");
      Expand(n);
      ++expanded_;
      for (const auto& out : n.output()) {
        floats_.insert(out);
        retyped.insert(out);
      }
    }
    w_.Commit(graph_);
    // The codes are float now: declared integer types of these values go.
    auto* infos = graph_.mutable_value_info();
    for (int i = infos->size() - 1; i >= 0; --i)
      if (retyped.count(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
    for (auto& out : *graph_.mutable_output())
      if (retyped.count(out.name()) && out.type().has_tensor_type())
        out.mutable_type()->mutable_tensor_type()->set_elem_type(pb::TensorProto::FLOAT);
  }

 private:
  [[noreturn]] void Refuse(const pb::NodeProto& n, const std::string& why) const {
    ThrowUnsupported(OneLine(fmt::format("{}: {}: {}", path_, NodeLabel(n), why)));
  }
  bool Has(const pb::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
  bool Wants(const pb::NodeProto& n, int k) const { return k < n.output_size() && !n.output(k).empty(); }
  int Rank(const std::string& name) const {
    const auto it = known_.shapes.find(name);
    return it == known_.shapes.end() ? -1 : static_cast<int>(it->second.size());
  }
  int64_t Elements(const std::string& name) const {
    const auto it = known_.shapes.find(name);
    if (it == known_.shapes.end()) return -1;
    int64_t n = 1;
    for (int64_t d : it->second) n = d < 0 ? -1 : n * d;
    return n;
  }
  int TypeOf(const std::string& name) const {
    const auto it = known_.types.find(name);
    return it == known_.types.end() ? pb::TensorProto::UNDEFINED : it->second;
  }
  std::string Temp(const pb::NodeProto& n, const std::string& what) { return w_.Fresh(n.output(0) + "_" + what); }
  std::string Op(const char* op, std::vector<std::string> inputs, const pb::NodeProto& n) {
    const std::string out = Temp(n, op);
    w_.Emit(op, std::move(inputs), {out}, n);
    return out;
  }
  // `name` as float: the codes this expansion made are already.
  std::string AsFloat(const std::string& name, const pb::NodeProto& n) {
    if (floats_.count(name) || TypeOf(name) == pb::TensorProto::FLOAT) return name;
    const std::string out = Temp(n, "f32");
    SetInt(w_.Emit("Cast", {name}, {out}, n), "to", pb::TensorProto::FLOAT);
    return out;
  }
  // A per-axis parameter (1-D, one value per index of `axis` of a rank-`rank`
  // tensor) shaped to broadcast against it; a per-tensor one as it is.
  std::string AlongAxis(const std::string& param, int64_t axis, int rank, const pb::NodeProto& n) {
    if (Rank(param) <= 0 || Elements(param) == 1) return param;
    if (rank < 0) Refuse(n, fmt::format("a per-axis parameter '{}' on an input of unknown rank", param));
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) Refuse(n, fmt::format("axis {} is out of range for rank {}", axis, rank));
    std::vector<int64_t> shape(rank, 1);
    shape[axis] = -1;
    return Op("Reshape", {param, w_.IntsConst(n.output(0) + "_axis_shape", shape)}, n);
  }
  // saturate(round(x / scale) + zero_point) into `y`, codes of `type`.
  void Quantize(const std::string& x, const std::string& scale, const std::string& zero_point, int type, int64_t axis,
                const std::string& y, const pb::NodeProto& n) {
    const int rank = Rank(x);
    std::string codes = Op("Round", {Op("Div", {x, AlongAxis(scale, axis, rank, n)}, n)}, n);
    if (!zero_point.empty()) codes = Op("Add", {codes, AsFloat(AlongAxis(zero_point, axis, rank, n), n)}, n);
    const CodeRange range = RangeOf(type);
    w_.Emit("Clip", {codes, w_.Scalar(y + "_lo", range.lo), w_.Scalar(y + "_hi", range.hi)}, {y}, n);
  }
  // (x - zero_point) * scale; axis < -rank: broadcast as the shapes are.
  std::string Dequantize(const std::string& x, const std::string& scale, const std::string& zero_point, int64_t axis,
                         const pb::NodeProto& n, const std::string& y = "") {
    const int rank = Rank(x);
    const auto along = [&](const std::string& p) { return axis < -rank ? p : AlongAxis(p, axis, rank, n); };
    std::string shifted = AsFloat(x, n);
    if (!zero_point.empty()) shifted = Op("Sub", {shifted, AsFloat(along(zero_point), n)}, n);
    const std::string out = y.empty() ? Temp(n, "dq") : y;
    w_.Emit("Mul", {shifted, along(scale)}, {out}, n);
    return out;
  }
  std::string Input(const pb::NodeProto& n, int i) const { return Has(n, i) ? n.input(i) : std::string(); }
  int ZeroPointType(const pb::NodeProto& n, int i) const {
    return Has(n, i) ? TypeOf(n.input(i)) : static_cast<int>(pb::TensorProto::UINT8);
  }
  static void CopyAttributes(const pb::NodeProto& from, pb::NodeProto& to) {
    for (const auto& a : from.attribute()) *to.add_attribute() = a;
  }

  void Expand(const pb::NodeProto& n) {
    const std::string& op = n.op_type();
    // Inputs every form reads (the rest are optional).
    static const std::map<std::string, int> kRequired = {
        {"QuantizeLinear", 2}, {"DequantizeLinear", 2}, {"DynamicQuantizeLinear", 1}, {"ConvInteger", 2},
        {"MatMulInteger", 2},  {"QLinearConv", 8},      {"QLinearMatMul", 8}};
    if (const auto r = kRequired.find(op); r != kRequired.end())
      for (int i = 0; i < r->second; ++i)
        if (!Has(n, i)) Refuse(n, fmt::format("needs {} inputs, input {} is missing", r->second, i));
    if (op == "QuantizeLinear") {
      if (IntAttr(n, "block_size", 0) != 0) Refuse(n, "blocked quantization is not supported");
      if (FindAttr(n, "output_dtype") && !Has(n, 2)) Refuse(n, "output_dtype without a zero point is not supported");
      if (!Has(n, 1)) Refuse(n, "has no scale");
      return Quantize(n.input(0), n.input(1), Input(n, 2), ZeroPointType(n, 2), IntAttr(n, "axis", 1), n.output(0), n);
    }
    if (op == "DequantizeLinear") {
      if (IntAttr(n, "block_size", 0) != 0) Refuse(n, "blocked quantization is not supported");
      if (!Has(n, 1)) Refuse(n, "has no scale");
      Dequantize(n.input(0), n.input(1), Input(n, 2), IntAttr(n, "axis", 1), n, n.output(0));
      return;
    }
    if (op == "DynamicQuantizeLinear") return DynamicQuantize(n);
    if (op == "ConvInteger") {
      const std::string x =
          Has(n, 2) ? Op("Sub", {AsFloat(n.input(0), n), AsFloat(n.input(2), n)}, n) : AsFloat(n.input(0), n);
      const std::string w =
          Has(n, 3) ? Op("Sub", {AsFloat(n.input(1), n), AsFloat(AlongAxis(n.input(3), 0, Rank(n.input(1)), n), n)}, n)
                    : AsFloat(n.input(1), n);
      CopyAttributes(n, w_.Emit("Conv", {x, w}, {n.output(0)}, n));
      return;
    }
    if (op == "MatMulInteger") {
      std::string a = AsFloat(n.input(0), n), b = AsFloat(n.input(1), n);
      // a's zero point is per row of A (its second-to-last axis), b's per column.
      if (Has(n, 2)) a = Op("Sub", {a, AsFloat(AlongAxis(n.input(2), -2, Rank(n.input(0)), n), n)}, n);
      if (Has(n, 3)) b = Op("Sub", {b, AsFloat(n.input(3), n)}, n);
      w_.Emit("MatMul", {a, b}, {n.output(0)}, n);
      return;
    }
    if (op == "QLinearConv") {
      if (n.input_size() < 8) Refuse(n, "needs 8 inputs");
      const std::string x = Dequantize(n.input(0), n.input(1), n.input(2), 1, n);
      const std::string w = Dequantize(n.input(3), n.input(4), n.input(5), 0, n);
      std::vector<std::string> inputs = {x, w};
      // The int32 bias is in units of x_scale * w_scale.
      if (Has(n, 8)) inputs.push_back(Op("Mul", {AsFloat(n.input(8), n), Op("Mul", {n.input(1), n.input(4)}, n)}, n));
      const std::string y = Temp(n, "conv");
      CopyAttributes(n, w_.Emit("Conv", inputs, {y}, n));
      return Quantize(y, n.input(6), n.input(7), ZeroPointType(n, 7), 1, n.output(0), n);
    }
    if (op == "QLinearMatMul") {
      if (n.input_size() < 8) Refuse(n, "needs 8 inputs");
      const std::string a = Dequantize(n.input(0), n.input(1), n.input(2), -2, n);
      const std::string b = Dequantize(n.input(3), n.input(4), n.input(5), /*broadcast*/ INT64_MIN, n);
      return Quantize(Op("MatMul", {a, b}, n), n.input(6), n.input(7), ZeroPointType(n, 7), 1, n.output(0), n);
    }
    Refuse(n, "no expansion");
  }

  // uint8 codes over [min(0, min x), max(0, max x)].
  void DynamicQuantize(const pb::NodeProto& n) {
    const std::string x = n.input(0);
    const std::string zero = w_.Scalar(n.output(0) + "_zero", 0.0f);
    pb::NodeProto& max = w_.Emit("ReduceMax", {x}, {Temp(n, "max")}, n);
    SetInt(max, "keepdims", 0);
    const std::string hi = Op("Max", {max.output(0), zero}, n);
    pb::NodeProto& min = w_.Emit("ReduceMin", {x}, {Temp(n, "min")}, n);
    SetInt(min, "keepdims", 0);
    const std::string lo = Op("Min", {min.output(0), zero}, n);
    const std::string span = Op("Sub", {hi, lo}, n);
    const std::string safe =
        Op("Where", {Op("Equal", {span, zero}, n), w_.Scalar(n.output(0) + "_one", 1.0f), span}, n);
    const std::string scale = Wants(n, 1) ? n.output(1) : Temp(n, "scale");
    w_.Emit("Div", {safe, w_.Scalar(n.output(0) + "_255", 255.0f)}, {scale}, n);
    const std::string zp = Wants(n, 2) ? n.output(2) : Temp(n, "zp");
    w_.Emit("Clip",
            {Op("Round", {Op("Neg", {Op("Div", {lo, scale}, n)}, n)}, n), zero, w_.Scalar(n.output(0) + "_hi", 255.0f)},
            {zp}, n);
    Quantize(x, scale, zp, pb::TensorProto::UINT8, 1, n.output(0), n);
  }

  pb::GraphProto& graph_;
  ShapeKnowledge& known_;
  std::string path_;
  int& expanded_;
  NodeWriter w_;
  std::set<std::string> floats_;  // values this expansion made float
};

}  // namespace

bool IsExpandedQuantizedOp(const std::string& domain, const std::string& op_type) {
  static const std::set<std::string> kStandard = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
                                                  "ConvInteger",    "MatMulInteger",    "QLinearConv",
                                                  "QLinearMatMul"};
  // onnxruntime's com.microsoft QuantizeLinear/DequantizeLinear take the
  // same inputs (and 16-bit codes before the standard ops did).
  if (domain == "com.microsoft") return op_type == "QuantizeLinear" || op_type == "DequantizeLinear";
  return (domain.empty() || domain == "ai.onnx") && kStandard.count(op_type) > 0;
}

int ExpandQuantizedOps(pb::ModelProto& model, const std::string& path) {
  if (!AnyNode(model.graph(), [](const pb::NodeProto& n) { return IsExpandedQuantizedOp(n.domain(), n.op_type()); }))
    return 0;
  ShapeKnowledge known = LearnShapes(model);
  int expanded = 0;
  QuantExpander(*model.mutable_graph(), known, path, expanded).Run();
  return expanded;
}

}  // namespace gpuclean::onnx
