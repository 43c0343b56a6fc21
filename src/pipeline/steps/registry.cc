// Host steps by name: what a pipeline spec's host stage runs. Parameters are
// JSON; every one is read with its type checked and named in the error.
#include <cctype>
#include <functional>
#include <map>
#include <optional>

#include <fmt/ranges.h>

#include "gpuclean/host_steps.h"
#include "pipeline/steps/step_util.h"

namespace gpuclean::pipeline {
using steps::Fail;

namespace {

using Json = nlohmann::json;
using Arrays = std::vector<npy::Array>;

struct Params {
  std::string_view step;
  const Json& json;

  const Json* Find(const char* name) const {
    if (json.is_null()) return nullptr;
    auto it = json.find(name);
    return it == json.end() ? nullptr : &*it;
  }
  double Number(const char* name, std::optional<double> fallback = std::nullopt) const {
    const Json* v = Find(name);
    if (!v) {
      if (!fallback) Fail(step, "parameter '{}' is missing", name);
      return *fallback;
    }
    if (!v->is_number()) Fail(step, "parameter '{}' must be a number, got {}", name, v->dump());
    return v->get<double>();
  }
  int64_t Int(const char* name, std::optional<int64_t> fallback = std::nullopt) const {
    const Json* v = Find(name);
    if (!v) {
      if (!fallback) Fail(step, "parameter '{}' is missing", name);
      return *fallback;
    }
    if (!v->is_number_integer()) Fail(step, "parameter '{}' must be an integer, got {}", name, v->dump());
    return v->get<int64_t>();
  }
  int Axis(const char* name, int fallback) const {
    const int64_t v = Int(name, fallback);
    if (v < -64 || v > 64) Fail(step, "parameter '{}' = {} is not an axis", name, v);
    return static_cast<int>(v);
  }
  bool Bool(const char* name, bool fallback) const {
    const Json* v = Find(name);
    if (!v) return fallback;
    if (!v->is_boolean()) Fail(step, "parameter '{}' must be true or false, got {}", name, v->dump());
    return v->get<bool>();
  }
  std::string String(const char* name, std::optional<std::string> fallback = std::nullopt) const {
    const Json* v = Find(name);
    if (!v) {
      if (!fallback) Fail(step, "parameter '{}' is missing", name);
      return *fallback;
    }
    if (!v->is_string()) Fail(step, "parameter '{}' must be a string, got {}", name, v->dump());
    return v->get<std::string>();
  }
  std::vector<int64_t> Ints(const char* name, std::optional<size_t> size = std::nullopt) const {
    const Json* v = Find(name);
    if (!v) Fail(step, "parameter '{}' is missing", name);
    if (!v->is_array()) Fail(step, "parameter '{}' must be a list of integers, got {}", name, v->dump());
    std::vector<int64_t> out;
    for (const Json& e : *v) {
      if (!e.is_number_integer()) Fail(step, "parameter '{}' must be a list of integers, got {}", name, v->dump());
      out.push_back(e.get<int64_t>());
    }
    if (size && out.size() != *size) Fail(step, "parameter '{}' must have {} entries, got {}", name, *size, out.size());
    return out;
  }
  BoxLayout Layout(const char* name, BoxLayout fallback) const {
    const Json* v = Find(name);
    if (!v) return fallback;
    const std::string text = String(name);
    if (text != "xyxy" && text != "cxcywh")
      Fail(step, "parameter '{}' must be \"xyxy\" or \"cxcywh\", got {}", name, v->dump());
    return ParseBoxLayout(text);
  }
};

struct Step {
  HostStepInfo info;
  int min_inputs, max_inputs;
  std::function<int(const Params&)> outputs;  // nullptr: one output
  std::function<Arrays(const Params&, const Arrays&)> run;
};

Step BinaryStep(const char* name, BinaryFn fn, const char* replaces) {
  return {{name, "a, b", "out", "", replaces}, 2, 2, nullptr, [fn](const Params&, const Arrays& in) {
            return Arrays{Binary(fn, in[0], in[1])};
          }};
}
Step UnaryStep(const char* name, UnaryFn fn, const char* replaces) {
  return {{name, "x", "out", "", replaces}, 1, 1, nullptr, [fn](const Params&, const Arrays& in) {
            return Arrays{Unary(fn, in[0])};
          }};
}

const std::vector<Step>& Registry() {
  static const std::vector<Step> steps = [] {
    std::vector<Step> s = {
        BinaryStep("add", BinaryFn::kAdd, "ADD"),
        BinaryStep("sub", BinaryFn::kSub, "SUB"),
        BinaryStep("mul", BinaryFn::kMul, "MUL"),
        BinaryStep("div", BinaryFn::kDiv, "DIV"),
        BinaryStep("maximum", BinaryFn::kMaximum, "MAXIMUM"),
        BinaryStep("minimum", BinaryFn::kMinimum, "MINIMUM"),
        BinaryStep("pow", BinaryFn::kPow, "POW"),
        UnaryStep("sigmoid", UnaryFn::kSigmoid, "LOGISTIC"),
        UnaryStep("exp", UnaryFn::kExp, "EXP"),
        UnaryStep("log", UnaryFn::kLog, "LOG"),
        UnaryStep("relu", UnaryFn::kRelu, "RELU"),
        UnaryStep("tanh", UnaryFn::kTanh, "TANH"),
        UnaryStep("neg", UnaryFn::kNeg, "NEG"),
        UnaryStep("abs", UnaryFn::kAbs, "ABS"),
        UnaryStep("sqrt", UnaryFn::kSqrt, "SQRT"),
    };
    s.push_back({{"affine", "x", "out", "scale (number, 1), offset (number, 0)", "MUL then ADD of scalars"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   return Arrays{Affine(in[0], static_cast<float>(p.Number("scale", 1.0)),
                                        static_cast<float>(p.Number("offset", 0.0)))};
                 }});
    s.push_back({{"threshold", "x", "mask (bool)", "threshold (number)", "GREATER against a scalar"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   return Arrays{Threshold(in[0], static_cast<float>(p.Number("threshold")))};
                 }});
    const std::pair<const char*, CompareFn> comparisons[] = {
        {"less", CompareFn::kLess},       {"less_equal", CompareFn::kLessEqual},
        {"greater", CompareFn::kGreater}, {"greater_equal", CompareFn::kGreaterEqual},
        {"equal", CompareFn::kEqual},     {"not_equal", CompareFn::kNotEqual}};
    for (const auto& [name, fn] : comparisons) {
      std::string replaces = name;
      for (char& c : replaces) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      s.push_back(
          {{name, "a, b", "mask (bool)", "", replaces}, 2, 2, nullptr, [fn = fn](const Params&, const Arrays& in) {
             return Arrays{Compare(fn, in[0], in[1])};
           }});
    }
    s.push_back({{"select", "condition (bool), a, b", "out", "", "SELECT_V2, SELECT"},
                 3,
                 3,
                 nullptr,
                 [](const Params&, const Arrays& in) { return Arrays{Select(in[0], in[1], in[2])}; }});
    s.push_back({{"cast", "x", "out", "to (\"float32\" | \"int32\" | \"int64\" | \"uint8\" | \"bool\")", "CAST"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   static const std::map<std::string, ir::DType> types = {{"float32", tfl::TensorType_FLOAT32},
                                                                          {"int32", tfl::TensorType_INT32},
                                                                          {"int64", tfl::TensorType_INT64},
                                                                          {"uint8", tfl::TensorType_UINT8},
                                                                          {"bool", tfl::TensorType_BOOL}};
                   const std::string to = p.String("to");
                   auto it = types.find(to);
                   if (it == types.end())
                     Fail(p.step, "parameter 'to' must be float32, int32, int64, uint8 or bool, got \"{}\"", to);
                   return Arrays{Cast(in[0], it->second)};
                 }});
    s.push_back({{"topk", "x", "values, indices (int32)", "k (int)", "TOPK_V2"},
                 1,
                 1,
                 [](const Params&) { return 2; },
                 [](const Params& p, const Arrays& in) {
                   TopKResult r = TopK(in[0], p.Int("k"));
                   return Arrays{std::move(r.values), std::move(r.indices)};
                 }});
    s.push_back({{"gather", "params, indices", "out", "axis (int, 0), batch_dims (int, 0)", "GATHER"},
                 2,
                 2,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   return Arrays{Gather(in[0], in[1], p.Axis("axis", 0), p.Axis("batch_dims", 0))};
                 }});
    s.push_back(
        {{"gather_nd", "params, indices", "out", "", "GATHER_ND"}, 2, 2, nullptr, [](const Params&, const Arrays& in) {
           return Arrays{GatherNd(in[0], in[1])};
         }});
    s.push_back(
        {{"gather_elements", "x, indices", "out", "axis (int, 0)", "ONNX GatherElements"},
         2,
         2,
         nullptr,
         [](const Params& p, const Arrays& in) { return Arrays{GatherElements(in[0], in[1], p.Axis("axis", 0))}; }});
    s.push_back({{"concat", "x1, x2, ...", "out", "axis (int)", "CONCATENATION"},
                 1,
                 1 << 16,
                 nullptr,
                 [](const Params& p, const Arrays& in) { return Arrays{Concat(in, p.Axis("axis", 0))}; }});
    s.push_back({{"reshape", "x", "out", "shape (list of int, one -1 allowed)", "RESHAPE"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) { return Arrays{Reshape(in[0], p.Ints("shape"))}; }});
    s.push_back({{"tile", "x", "out", "multiples (list of int, one per axis)", "TILE"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) { return Arrays{Tile(in[0], p.Ints("multiples"))}; }});
    s.push_back({{"box_convert", "boxes", "boxes", "from, to (\"xyxy\" | \"cxcywh\")",
                  "SLICE/MUL/ADD/CONCATENATION on box coordinates"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   return Arrays{
                       ConvertBoxes(in[0], p.Layout("from", BoxLayout::kCxcywh), p.Layout("to", BoxLayout::kXyxy))};
                 }});
    s.push_back(
        {{"box_decode", "deltas, anchors (cxcywh)", "boxes (cxcywh)",
          "weights (4 numbers, [1,1,1,1]), max_log_scale (number, log(1000/16))", "torchvision BoxCoder.decode"},
         2,
         2,
         nullptr,
         [](const Params& p, const Arrays& in) {
           std::array<float, 4> w = {1, 1, 1, 1};
           if (const Json* v = p.Find("weights")) {
             if (!v->is_array() || v->size() != 4)
               Fail(p.step, "parameter 'weights' must be 4 numbers, got {}", v->dump());
             for (size_t i = 0; i < 4; ++i) {
               if (!(*v)[i].is_number()) Fail(p.step, "parameter 'weights' must be 4 numbers, got {}", v->dump());
               w[i] = (*v)[i].get<float>();
             }
           }
           return Arrays{
               DecodeBoxDeltas(in[0], in[1], w, static_cast<float>(p.Number("max_log_scale", 4.135166556742356)))};
         }});
    s.push_back({{"box_reparam", "deltas, reference (cxcywh)", "boxes (cxcywh)", "",
                  "DETR refinement: xy*ref.wh + ref.xy, exp(wh)*ref.wh"},
                 2,
                 2,
                 nullptr,
                 [](const Params&, const Arrays& in) { return Arrays{ReparamBoxes(in[0], in[1])}; }});
    s.push_back({{"nms", "boxes [N,4], scores [N], classes [N] (optional)", "indices (int32)",
                  "iou_threshold (0.5), score_threshold (-inf), max_detections (100), layout (\"xyxy\")",
                  "NON_MAX_SUPPRESSION_V5 (hard), per class as torchvision batched_nms"},
                 2,
                 3,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   NmsOptions o;
                   o.iou_threshold = static_cast<float>(p.Number("iou_threshold", 0.5));
                   o.score_threshold =
                       static_cast<float>(p.Number("score_threshold", -std::numeric_limits<double>::infinity()));
                   o.max_detections = p.Int("max_detections", 100);
                   o.layout = p.Layout("layout", BoxLayout::kXyxy);
                   return Arrays{NonMaxSuppression(in[0], in[1], in.size() > 2 ? in[2] : npy::Array{}, o)};
                 }});
    s.push_back({{"resize_bilinear", "masks [..., H, W]", "masks [..., h, w]",
                  "size ([h, w]), align_corners (false), half_pixel_centers (false)", "RESIZE_BILINEAR"},
                 1,
                 1,
                 nullptr,
                 [](const Params& p, const Arrays& in) {
                   const std::vector<int64_t> size = p.Ints("size", 2);
                   return Arrays{ResizeBilinear(in[0], size[0], size[1], p.Bool("align_corners", false),
                                                p.Bool("half_pixel_centers", false))};
                 }});
    return s;
  }();
  return steps;
}

const Step& Find(const std::string& name) {
  for (const Step& s : Registry())
    if (s.info.name == name) return s;
  std::vector<std::string> names;
  for (const Step& s : Registry()) names.push_back(s.info.name);
  ThrowBadInput(fmt::format("unknown host step '{}' (known: {})", name, fmt::join(names, ", ")));
}

}  // namespace

const std::vector<HostStepInfo>& HostSteps() {
  static const std::vector<HostStepInfo> infos = [] {
    std::vector<HostStepInfo> out;
    for (const Step& s : Registry()) out.push_back(s.info);
    return out;
  }();
  return infos;
}

int HostStepOutputCount(const std::string& name, const nlohmann::json& params) {
  const Step& s = Find(name);
  return s.outputs ? s.outputs(Params{name, params}) : 1;
}

std::vector<npy::Array> RunHostStep(const std::string& name, const nlohmann::json& params,
                                    const std::vector<npy::Array>& inputs) {
  const Step& s = Find(name);
  if (!params.is_null() && !params.is_object()) Fail(name, "params must be a JSON object, got {}", params.dump());
  const int n = static_cast<int>(inputs.size());
  if (n < s.min_inputs || n > s.max_inputs) {
    if (s.min_inputs == s.max_inputs) Fail(name, "takes {} input(s) ({}), got {}", s.min_inputs, s.info.inputs, n);
    Fail(name, "takes {} to {} inputs ({}), got {}", s.min_inputs, s.max_inputs, s.info.inputs, n);
  }
  return s.run(Params{name, params}, inputs);
}

}  // namespace gpuclean::pipeline
