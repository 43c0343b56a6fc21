// Opset adaptation: each default-domain op whose semantics changed between
// opset 7 and 21 is rewritten into its opset-17 form here, by what the
// model's own opset says (the ONNX operator changelog is the source: an
// attribute that became an input, an input that became an attribute, a
// flattening Softmax, renamed modes, ops added after 17 that decompose into
// ones before it).
#include "onnx/opset_adapt.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpuclean/error.h"
#include "onnx/contrib_ops.h"
#include "onnx/onnx_model.h"
#include "onnx/proto_edit.h"

namespace gpuclean::onnx {
namespace pb = ::onnx;

namespace {

constexpr int64_t kNewestCheckerIr = 8;

}  // namespace

// Shapes and element types from a lenient inference of the original model
// (libonnx reads ops above its opset by their newest schema it knows;
// whatever it cannot infer stays unknown).
ShapeKnowledge LearnShapes(const pb::ModelProto& original) {
  ShapeKnowledge k;
  pb::ModelProto copy;
  *copy.mutable_opset_import() = original.opset_import();
  copy.set_ir_version(std::min<int64_t>(original.ir_version(), kNewestCheckerIr));
  auto* g = copy.mutable_graph();
  *g->mutable_input() = original.graph().input();
  *g->mutable_output() = original.graph().output();
  *g->mutable_node() = original.graph().node();
  // Initializers as typed, shaped inputs: inference needs their shapes,
  // not their bytes.
  for (const auto& t : original.graph().initializer()) {
    auto* v = g->add_input();
    v->set_name(t.name());
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.data_type());
    auto* shape = tt->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
  }
  try {
    pb::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/false);
    pb::shape_inference::InferShapes(copy, pb::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // Partial knowledge is fine: every use below has a shape-free fallback or a clear refusal.
  }
  auto learn = [&](const pb::ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) return;
    const auto& tt = v.type().tensor_type();
    if (tt.elem_type() != 0) k.types[v.name()] = tt.elem_type();
    if (!tt.has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    k.shapes[v.name()] = dims;
  };
  for (const auto& v : g->input()) learn(v);
  for (const auto& v : g->value_info()) learn(v);
  for (const auto& v : g->output()) learn(v);
  return k;
}

namespace {

class Adapter {
 public:
  Adapter(pb::GraphProto& graph, ShapeKnowledge& known, int64_t opset, const std::string& path,
          const std::map<std::string, const pb::TensorProto*>& outer_constants = {})
      : graph_(graph),
        known_(known),
        opset_(opset),
        path_(path),
        constants_(outer_constants),
        w_(known, fmt::format("opset{}", opset)) {
    for (const auto& t : graph_.initializer()) constants_[t.name()] = &t;
    for (const auto& n : graph_.node())
      if (n.op_type() == "Constant" && n.output_size() == 1)
        if (const auto* v = FindAttr(n, "value"); v && v->has_t()) constants_[n.output(0)] = &v->t();
  }

  void Run() {
    RefuseOpsTheCanonicalOpsetLacks();
    std::vector<pb::NodeProto> nodes(graph_.node().begin(), graph_.node().end());
    for (auto& n : nodes) {
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) Adapter(*a.mutable_g(), known_, opset_, path_, constants_).Run();
        for (auto& sub : *a.mutable_graphs()) Adapter(sub, known_, opset_, path_, constants_).Run();
      }
      if (!n.domain().empty() && n.domain() != "ai.onnx") {
        w_.Keep(std::move(n));
        continue;
      }
      AdaptNode(std::move(n));
    }
    w_.Commit(graph_);
  }

 private:
  int Rank(const std::string& name) const {
    auto it = known_.shapes.find(name);
    return it == known_.shapes.end() ? -1 : static_cast<int>(it->second.size());
  }
  int64_t Dim(const std::string& name, int axis) const {
    auto it = known_.shapes.find(name);
    if (it == known_.shapes.end()) return -1;
    const int rank = static_cast<int>(it->second.size());
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank ? it->second[axis] : -1;
  }
  bool IsFloat(const std::string& name) const {
    auto it = known_.types.find(name);
    return it == known_.types.end() || it->second == pb::TensorProto::FLOAT;
  }
  const pb::TensorProto* Constant(const std::string& name) const {
    auto it = constants_.find(name);
    return it == constants_.end() ? nullptr : it->second;
  }

  [[noreturn]] void Refuse(const pb::NodeProto& n, const std::string& why) const {
    ThrowUnsupported(OneLine(fmt::format("{}: {} (opset {}): {}", path_, NodeLabel(n), opset_, why)));
  }

  // Moves an INTS attribute to input `index` (empty inputs fill the gap).
  void AttrToInput(pb::NodeProto& n, const std::string& attr, int index) {
    const auto* a = FindAttr(n, attr);
    if (!a) return;
    const std::vector<int64_t> values(a->ints().begin(), a->ints().end());
    const std::string name = w_.IntsConst(n.output_size() ? n.output(0) + "_" + attr : attr, values);
    RemoveAttr(n, attr);
    while (n.input_size() < index) n.add_input("");
    if (n.input_size() == index)
      n.add_input(name);
    else
      *n.mutable_input(index) = name;
  }

  void RequireFloat(const pb::NodeProto& n, const std::string& what) const {
    if (!IsFloat(n.input(0))) Refuse(n, what + " on a non-float32 input has no opset-17 form gpuclean writes");
  }

  // Ops that the canonical opset does not define and no adapter below
  // decomposes: listed together, as the lowering lists ops it lacks.
  void RefuseOpsTheCanonicalOpsetLacks() const {
    static const std::set<std::string> kDecomposed = {"GroupNormalization", "Gelu", "Mish", "Upsample"};
    std::map<std::string, std::pair<int, std::string>> missing;
    for (const auto& n : graph_.node()) {
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      if (kDecomposed.count(n.op_type()) || IsExpandedContribOp(n.domain(), n.op_type())) continue;
      if (pb::OpSchemaRegistry::Schema(n.op_type(), kCanonicalOpset, "")) continue;
      auto& [count, first] = missing[n.op_type()];
      if (count++ == 0) first = NodeLabel(n);
    }
    if (missing.empty()) return;
    std::string list;
    for (const auto& [op, c] : missing)
      list += (list.empty() ? "" : "; ") + fmt::format("{} ({} node(s), first {})", op, c.first, c.second);
    ThrowUnsupported(
        OneLine(fmt::format("{}: ops of opset {} that gpuclean does not convert: {}", path_, opset_, list)));
  }

  void AdaptNode(pb::NodeProto n) {
    // Every form below reads an input and names things after an output; a
    // node without them is left for the checker to refuse.
    if (n.input_size() == 0 || n.input(0).empty() || n.output_size() == 0 || n.output(0).empty()) {
      w_.Keep(std::move(n));
      return;
    }
    const std::string& op = n.op_type();
    if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") return SoftmaxFamily(std::move(n));
    if (op == "Upsample") return Upsample(std::move(n));
    if (op == "Resize") return Resize(std::move(n));
    if (op == "GroupNormalization") return GroupNormalization(std::move(n));
    if (op == "Gelu") return Gelu(std::move(n));
    if (op == "Mish") return Mish(std::move(n));
    if (op == "Split") {
      Split(n);
      if (n.op_type().empty()) return;  // replaced by slices
    } else if (op == "Clip" && opset_ < 11) {
      Clip(n);
    } else if (op == "Pad") {
      Pad(n);
    } else if (op == "Slice" && opset_ < 10) {
      AttrToInput(n, "starts", 1);
      AttrToInput(n, "ends", 2);
      AttrToInput(n, "axes", 3);
    } else if (op == "TopK" && opset_ < 10) {
      const int64_t k = IntAttr(n, "k", -1);
      RemoveAttr(n, "k");
      n.add_input(w_.IntsConst(n.output(0) + "_k", {k}));
    } else if ((op == "Squeeze" || op == "Unsqueeze") && opset_ < 13) {
      AttrToInput(n, "axes", 1);
    } else if (op.rfind("Reduce", 0) == 0) {
      Reduce(n);
    } else if (op == "Dropout" && opset_ < 12) {
      RemoveAttr(n, "ratio");
      RemoveAttr(n, "is_test");
    } else if (op == "BatchNormalization" && opset_ < 9) {
      if (IntAttr(n, "spatial", 1) == 0) Refuse(n, "spatial=0 (per-element statistics) is not supported");
      RemoveAttr(n, "spatial");
    } else if ((op == "Cast" || op == "CastLike") && opset_ >= 19) {
      RemoveAttr(n, "saturate");  // float8 targets only; refused as types
    } else if (op == "AveragePool" && opset_ >= 19) {
      if (const auto* d = FindAttr(n, "dilations")) {
        for (int64_t v : d->ints())
          if (v != 1) Refuse(n, "dilated average pooling (opset 19) is not supported");
        RemoveAttr(n, "dilations");
      }
    } else if (op == "GridSample" && opset_ >= 20) {
      const std::string mode = StrAttr(n, "mode", "linear");
      SetStr(n, "mode", mode == "linear" ? "bilinear" : mode == "cubic" ? "bicubic" : mode);
    } else if ((op == "ScatterND" || op == "ScatterElements") && opset_ >= 18) {
      const std::string reduction = StrAttr(n, "reduction", "none");
      if (reduction == "max" || reduction == "min") Refuse(n, "reduction '" + reduction + "' is not supported");
    }
    w_.Keep(std::move(n));
  }

  // Before 13 the input is coerced to 2-D at `axis` (default 1) and the op
  // runs over the flattened trailing block.
  void SoftmaxFamily(pb::NodeProto n) {
    if (opset_ >= 13) {
      w_.Keep(std::move(n));
      return;
    }
    const int64_t axis = IntAttr(n, "axis", 1);
    const std::string x = n.input(0);
    const int rank = Rank(x);
    if (rank >= 0 && (axis == rank - 1 || axis == -1)) {
      SetInt(n, "axis", -1);
      w_.Keep(std::move(n));
      return;
    }
    const std::string flat = w_.Fresh(x + "_flat"), soft = w_.Fresh(n.output(0) + "_2d"),
                      shape = w_.Fresh(x + "_shape");
    SetInt(w_.Emit("Flatten", {x}, {flat}, n), "axis", axis);
    pb::NodeProto& op = w_.Emit(n.op_type(), {flat}, {soft}, n);
    SetInt(op, "axis", 1);
    w_.Emit("Shape", {x}, {shape}, n);
    w_.Emit("Reshape", {soft, shape}, {n.output(0)}, n);
  }

  void Clip(pb::NodeProto& n) {
    const auto* lo = FindAttr(n, "min");
    const auto* hi = FindAttr(n, "max");
    if (!lo && !hi) return;
    RequireFloat(n, "Clip with min/max attributes");
    const std::string x = n.input(0);
    const std::string lo_name = lo ? w_.Scalar(n.output(0) + "_min", lo->f()) : "";
    const std::string hi_name = hi ? w_.Scalar(n.output(0) + "_max", hi->f()) : "";
    RemoveAttr(n, "min");
    RemoveAttr(n, "max");
    n.clear_input();
    n.add_input(x);
    n.add_input(lo_name);
    n.add_input(hi_name);
  }

  void Pad(pb::NodeProto& n) {
    if (opset_ < 11) {
      const auto* pads = FindAttr(n, "pads") ? FindAttr(n, "pads") : FindAttr(n, "paddings");
      if (!pads) Refuse(n, "has no pads");
      const std::vector<int64_t> values(pads->ints().begin(), pads->ints().end());
      const float value = FindAttr(n, "value") ? FindAttr(n, "value")->f() : 0.0f;
      RemoveAttr(n, "pads");
      RemoveAttr(n, "paddings");
      RemoveAttr(n, "value");
      n.add_input(w_.IntsConst(n.output(0) + "_pads", values));
      if (StrAttr(n, "mode", "constant") == "constant" && value != 0.0f) {
        RequireFloat(n, "Pad with a non-zero value attribute");
        n.add_input(w_.Scalar(n.output(0) + "_value", value));
      }
      return;
    }
    if (StrAttr(n, "mode", "constant") == "wrap") Refuse(n, "mode 'wrap' (opset 19) is not supported");
    if (n.input_size() < 4 || n.input(3).empty()) return;
    // Opset 18's axes input: spread the pads over every axis.
    const auto* axes_t = Constant(n.input(3));
    const auto* pads_t = Constant(n.input(1));
    const int rank = Rank(n.input(0));
    if (!axes_t || !pads_t || rank < 0) Refuse(n, "an axes input needs constant axes and pads and a known input rank");
    const std::vector<int64_t> axes = IntsOf(*axes_t), pads = IntsOf(*pads_t);
    if (pads.size() != 2 * axes.size()) Refuse(n, fmt::format("{} pads for {} axes", pads.size(), axes.size()));
    std::vector<int64_t> full(2 * rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank) Refuse(n, fmt::format("axis {} is out of range for rank {}", axes[i], rank));
      full[a] = pads[i];
      full[a + rank] = pads[i + axes.size()];
    }
    *n.mutable_input(1) = w_.IntsConst(n.output(0) + "_pads", full);
    n.mutable_input()->RemoveLast();
  }

  void Split(pb::NodeProto& n) {
    if (opset_ < 13) {
      AttrToInput(n, "split", 1);
      return;
    }
    const auto* num = FindAttr(n, "num_outputs");
    if (!num) return;
    RemoveAttr(n, "num_outputs");
    if (n.input_size() > 1 && !n.input(1).empty()) return;
    const int64_t parts = num->i();
    const int64_t dim = Dim(n.input(0), static_cast<int>(IntAttr(n, "axis", 0)));
    if (parts <= 0) Refuse(n, "num_outputs must be positive");
    if (dim < 0) return SplitShapeFree(n, parts);
    if (dim % parts == 0) return;  // the opset-13 equal split
    // Opset 18: every part but the last has ceil(dim / parts) elements.
    const int64_t chunk = (dim + parts - 1) / parts;
    std::vector<int64_t> sizes;
    for (int64_t left = dim; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
    if (static_cast<int64_t>(sizes.size()) != n.output_size())
      Refuse(n, fmt::format("{} outputs for {} parts of an axis of {}", n.output_size(), sizes.size(), dim));
    n.add_input(w_.IntsConst(n.output(0) + "_split", sizes));
  }

  // Opset 18's num_outputs on an axis inference did not size (inside a
  // branch): each part a Slice of ceil(dim / parts) elements computed from
  // Shape(x), which the lowering folds. The node becomes a no-op marker
  // replaced by the slices (emitted after `n` is dropped).
  void SplitShapeFree(pb::NodeProto& n, int64_t parts) {
    const std::string x = n.input(0), base = n.output(0);
    const int64_t axis = IntAttr(n, "axis", 0);
    const std::string shape = w_.Fresh(base + "_shape"), dim = w_.Fresh(base + "_dim"),
                      padded = w_.Fresh(base + "_padded"), chunk = w_.Fresh(base + "_chunk");
    const std::string axes = w_.IntsConst(base + "_axis", {axis});
    w_.Emit("Shape", {x}, {shape}, n);
    // Shape(x)[axis:axis+1], a negative axis counted from the end as Slice does.
    const int64_t end = axis == -1 ? INT64_MAX : axis + 1;
    w_.Emit("Slice", {shape, w_.IntsConst(base + "_a0", {axis}), w_.IntsConst(base + "_a1", {end})}, {dim}, n);
    w_.Emit("Add", {dim, w_.IntsConst(base + "_round", {parts - 1})}, {padded}, n);
    w_.Emit("Div", {padded, w_.IntsConst(base + "_parts", {parts})}, {chunk}, n);
    for (int k = 0; k < n.output_size(); ++k) {
      const std::string start = w_.Fresh(base + "_start"), end = w_.Fresh(base + "_end");
      w_.Emit("Mul", {chunk, w_.IntsConst(base + "_k", {k})}, {start}, n);
      w_.Emit("Mul", {chunk, w_.IntsConst(base + "_k1", {k + 1})}, {end}, n);
      w_.Emit("Slice", {x, start, end, axes}, {n.output(k)}, n);
    }
    n.set_op_type("");  // dropped by AdaptNode
  }

  // ReduceSum took its axes as an input from 13, the rest from 18; opset 17
  // reads ReduceSum's from an input and the others' from an attribute.
  void Reduce(pb::NodeProto& n) {
    const bool sum = n.op_type() == "ReduceSum";
    if (sum && opset_ < 13) {
      AttrToInput(n, "axes", 1);
      return;
    }
    if (sum || opset_ < 18) return;
    const bool noop = IntAttr(n, "noop_with_empty_axes", 0) != 0;
    RemoveAttr(n, "noop_with_empty_axes");
    if (n.input_size() < 2 || n.input(1).empty()) {
      if (noop) {
        n.set_op_type("Identity");
        n.clear_attribute();
      }
      while (n.input_size() > 1) n.mutable_input()->RemoveLast();
      return;
    }
    const auto* axes = Constant(n.input(1));
    if (!axes) Refuse(n, "axes computed at run time are not supported");
    const std::vector<int64_t> values = IntsOf(*axes);
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    if (values.empty() && noop) {
      n.set_op_type("Identity");
      n.clear_attribute();
      return;
    }
    if (!values.empty()) SetInts(n, "axes", values);
  }

  // Upsample (7: scales attribute; 9: scales input) and Resize 10 sample
  // asymmetrically and round nearest down; Resize 11's defaults differ.
  void Upsample(pb::NodeProto n) {
    std::string scales;
    if (const auto* a = FindAttr(n, "scales")) {
      scales = w_.FloatsConst(n.output(0) + "_scales", {a->floats_size()}, {a->floats().begin(), a->floats().end()});
    } else if (n.input_size() > 1) {
      scales = n.input(1);
    } else {
      Refuse(n, "has no scales");
    }
    std::string mode = StrAttr(n, "mode", "nearest");
    if (mode == "bilinear") mode = "linear";
    pb::NodeProto& r = w_.Emit("Resize", {n.input(0), "", scales}, {n.output(0)}, n);
    r.set_name(n.name());
    SetStr(r, "mode", mode);
    SetStr(r, "coordinate_transformation_mode", "asymmetric");
    SetStr(r, "nearest_mode", "floor");
  }

  void Resize(pb::NodeProto n) {
    if (opset_ < 11) {
      if (n.input_size() < 2) Refuse(n, "has no scales input");
      const std::string x = n.input(0), scales = n.input(1);
      n.clear_input();
      n.add_input(x);
      n.add_input("");
      n.add_input(scales);
      SetStr(n, "coordinate_transformation_mode", "asymmetric");
      SetStr(n, "nearest_mode", "floor");
      w_.Keep(std::move(n));
      return;
    }
    if (opset_ >= 18) {
      if (IntAttr(n, "antialias", 0) != 0) Refuse(n, "antialiased resizing (opset 18) is not supported");
      if (StrAttr(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
        Refuse(n, "keep_aspect_ratio_policy other than 'stretch' is not supported");
      if (StrAttr(n, "coordinate_transformation_mode", "half_pixel") == "half_pixel_symmetric")
        Refuse(n, "coordinate_transformation_mode 'half_pixel_symmetric' (opset 19) is not supported");
      RemoveAttr(n, "antialias");
      RemoveAttr(n, "keep_aspect_ratio_policy");
      if (const auto* axes_attr = FindAttr(n, "axes")) {
        const std::vector<int64_t> axes(axes_attr->ints().begin(), axes_attr->ints().end());
        RemoveAttr(n, "axes");
        SpreadResizeAxes(n, axes);
      }
    }
    w_.Keep(std::move(n));
  }

  // Opset 18's axes attribute: scales or sizes over the named axes only,
  // written out for every axis (1 or the input's own size elsewhere).
  void SpreadResizeAxes(pb::NodeProto& n, const std::vector<int64_t>& axes) {
    const int rank = Rank(n.input(0));
    if (rank < 0) Refuse(n, "an axes attribute needs a known input rank");
    std::vector<int> position(rank, -1);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank) Refuse(n, fmt::format("axis {} is out of range for rank {}", axes[i], rank));
      position[a] = static_cast<int>(i);
    }
    const bool by_sizes = n.input_size() > 3 && !n.input(3).empty();
    const int slot = by_sizes ? 3 : 2;
    const auto* given = n.input_size() > slot ? Constant(n.input(slot)) : nullptr;
    if (!given) Refuse(n, "an axes attribute needs constant scales or sizes");
    if (by_sizes) {
      const std::vector<int64_t> sizes = IntsOf(*given);
      if (sizes.size() != axes.size()) Refuse(n, fmt::format("{} sizes for {} axes", sizes.size(), axes.size()));
      std::vector<int64_t> full(rank);
      for (int a = 0; a < rank; ++a) {
        full[a] = position[a] >= 0 ? sizes.at(position[a]) : Dim(n.input(0), a);
        if (full[a] < 0) Refuse(n, "an axes attribute needs the input's size on the axes it leaves out");
      }
      *n.mutable_input(3) = w_.IntsConst(n.output(0) + "_sizes", full);
    } else {
      const std::vector<float> scales = FloatsOf(*given);
      if (scales.size() != axes.size()) Refuse(n, fmt::format("{} scales for {} axes", scales.size(), axes.size()));
      std::vector<float> full(rank, 1.0f);
      for (int a = 0; a < rank; ++a)
        if (position[a] >= 0) full[a] = scales.at(position[a]);
      *n.mutable_input(2) = w_.FloatsConst(n.output(0) + "_scales", {rank}, full);
    }
  }

  // GroupNormalization (18: scale and bias per group; 21: per channel) as
  // InstanceNormalization over [N, groups, rest], then the affine step.
  void GroupNormalization(pb::NodeProto n) {
    RequireFloat(n, "GroupNormalization");
    if (n.input_size() < 3) Refuse(n, "needs scale and bias inputs");
    const int64_t groups = IntAttr(n, "num_groups", 0);
    if (groups <= 0) Refuse(n, "num_groups must be positive");
    const auto* eps_attr = FindAttr(n, "epsilon");
    const float eps = eps_attr ? eps_attr->f() : 1e-5f;
    const std::string x = n.input(0), scale = n.input(1), bias = n.input(2), y = n.output(0);
    const std::string grouped = w_.Fresh(x + "_groups"), normed = w_.Fresh(y + "_normed"),
                      shape = w_.Fresh(x + "_shape");
    w_.Emit("Reshape", {x, w_.IntsConst(x + "_group_shape", {0, groups, -1})}, {grouped}, n);
    pb::NodeProto& in = w_.Emit("InstanceNormalization",
                                {grouped, w_.FloatsConst(y + "_ones", {groups}, std::vector<float>(groups, 1.0f)),
                                 w_.FloatsConst(y + "_zeros", {groups}, std::vector<float>(groups, 0.0f))},
                                {normed}, n);
    SetFloat(in, "epsilon", eps);
    w_.Emit("Shape", {x}, {shape}, n);
    std::vector<int64_t> trailing;
    std::string affine_in = normed;
    if (opset_ >= 21) {
      const int rank = Rank(x);
      if (rank < 2) Refuse(n, "needs a known input rank");
      affine_in = w_.Fresh(y + "_unflat");
      w_.Emit("Reshape", {normed, shape}, {affine_in}, n);
      for (int a = 1; a < rank - 1; ++a) trailing.push_back(a);
    } else {
      trailing = {1};
    }
    const std::string s = w_.Fresh(scale + "_bcast"), b = w_.Fresh(bias + "_bcast"), scaled = w_.Fresh(y + "_scaled");
    w_.Emit("Unsqueeze", {scale, w_.IntsConst(scale + "_axes", trailing)}, {s}, n);
    w_.Emit("Unsqueeze", {bias, w_.IntsConst(bias + "_axes", trailing)}, {b}, n);
    w_.Emit("Mul", {affine_in, s}, {scaled}, n);
    if (opset_ >= 21) {
      w_.Emit("Add", {scaled, b}, {y}, n);
    } else {
      const std::string shifted = w_.Fresh(y + "_shifted");
      w_.Emit("Add", {scaled, b}, {shifted}, n);
      w_.Emit("Reshape", {shifted, shape}, {y}, n);
    }
  }

  // Gelu (opset 20): the exact form through Erf, or the tanh approximation.
  void Gelu(pb::NodeProto n) {
    RequireFloat(n, "Gelu");
    const std::string approximate = StrAttr(n, "approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      Refuse(n, "approximate '" + approximate + "' is not 'none' or 'tanh'");
    w_.EmitGelu(n.input(0), n.output(0), approximate == "tanh", n);
  }

  // Mish (opset 18): x * tanh(softplus(x)).
  void Mish(pb::NodeProto n) {
    RequireFloat(n, "Mish");
    const std::string x = n.input(0), sp = w_.Fresh(x + "_softplus"), t = w_.Fresh(x + "_tanh");
    w_.Emit("Softplus", {x}, {sp}, n);
    w_.Emit("Tanh", {sp}, {t}, n);
    w_.Emit("Mul", {x, t}, {n.output(0)}, n);
  }

  pb::GraphProto& graph_;
  ShapeKnowledge& known_;
  int64_t opset_;
  std::string path_;
  std::map<std::string, const pb::TensorProto*> constants_;
  NodeWriter w_;
};

}  // namespace

void AdaptToCanonicalOpset(pb::ModelProto& model, int64_t opset, const std::string& path) {
  if (opset != kCanonicalOpset) {
    ShapeKnowledge known = LearnShapes(model);
    Adapter(*model.mutable_graph(), known, opset, path).Run();
  }
  for (auto& o : *model.mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(kCanonicalOpset);
  if (model.ir_version() > kNewestCheckerIr) model.set_ir_version(kNewestCheckerIr);
}

}  // namespace gpuclean::onnx
