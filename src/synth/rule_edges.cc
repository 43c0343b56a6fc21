// Rule-edge probes: one plain graph per op, and for each matrix entry the
// same graph changed until the entry's `when` holds. The changes are made on
// the IR after the builder has inferred shapes, so a constant the builder
// needed (a permutation, reduction axes) can become a runtime input.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/op_table.h"
#include "gpuclean/synth.h"
#include "lint/graph_view.h"

namespace gpuclean::synth {
// Named, not anonymous: unity builds put other files' helpers beside these.
namespace rule_edges {

using builder::GraphBuilder;
using json = nlohmann::json;
using ir::DType;

constexpr DType kF32 = tfl::TensorType_FLOAT32;
constexpr DType kI32 = tfl::TensorType_INT32;
constexpr DType kBool = tfl::TensorType_BOOL;
const builder::Shape kMap = {1, 4, 4, 8};

std::optional<tfl::BuiltinOperator> BuiltinByName(const std::string& name) {
  for (tfl::BuiltinOperator code : tfl::EnumValuesBuiltinOperator())
    if (code != tfl::BuiltinOperator_CUSTOM && name == tfl::EnumNameBuiltinOperator(code)) return code;
  return std::nullopt;
}

std::optional<DType> DTypeByName(const std::string& name) {
  for (tfl::TensorType type : tfl::EnumValuesTensorType())
    if (ir::DTypeName(type) == name) return type;
  return std::nullopt;
}

ir::Model Finish(GraphBuilder& b, int output) {
  b.Output(output);
  return b.Finish();
}

ir::Model OneInput(const std::function<int(GraphBuilder&, int)>& make, const builder::Shape& shape = kMap,
                   DType dtype = kF32) {
  GraphBuilder b;
  const int x = b.Input("x", dtype, shape);
  return Finish(b, make(b, x));
}

ir::Model TwoInputs(const std::function<int(GraphBuilder&, int, int)>& make, DType dtype = kF32) {
  GraphBuilder b;
  const int x = b.Input("x", dtype, kMap);
  const int y = b.Input("y", dtype, kMap);
  return Finish(b, make(b, x, y));
}

// The plain graph of each op the probes cover: every parameter constant,
// every shape inside the delegate's usual limits.
using BaseMaker = std::function<ir::Model()>;
const std::map<std::string, BaseMaker>& ExplicitBases() {
  static const std::map<std::string, BaseMaker> bases = {
      {"ADD", [] { return TwoInputs([](GraphBuilder& b, int x, int y) { return b.Add(x, y); }); }},
      {"SUB", [] { return TwoInputs([](GraphBuilder& b, int x, int y) { return b.Sub(x, y); }); }},
      {"MUL", [] { return TwoInputs([](GraphBuilder& b, int x, int y) { return b.Mul(x, y); }); }},
      {"DIV", [] { return TwoInputs([](GraphBuilder& b, int x, int y) { return b.Div(x, y); }); }},
      {"LEAKY_RELU", [] { return OneInput([](GraphBuilder& b, int x) { return b.LeakyRelu(x, 0.1f); }); }},
      {"GELU", [] { return OneInput([](GraphBuilder& b, int x) { return b.Gelu(x, true); }); }},
      {"CAST", [] { return OneInput([](GraphBuilder& b, int x) { return b.Cast(x, kI32); }); }},
      {"CONV_2D",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           const int w = b.ConstF32("w", {8, 3, 3, 8}, std::vector<float>(8 * 3 * 3 * 8, 0.1f));
           return b.Conv2D(x, w, builder::kNoInput, tfl::Padding_SAME, 1, 1);
         });
       }},
      {"DEPTHWISE_CONV_2D",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           const int w = b.ConstF32("w", {1, 3, 3, 8}, std::vector<float>(3 * 3 * 8, 0.1f));
           return b.DepthwiseConv2D(x, w, builder::kNoInput, tfl::Padding_SAME, 1, 1);
         });
       }},
      {"FULLY_CONNECTED",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) {
               return b.FullyConnected(x, b.ConstF32("w", {4, 8}, std::vector<float>(32, 0.1f)), builder::kNoInput);
             },
             {1, 8});
       }},
      {"BATCH_MATMUL",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) {
               return b.BatchMatMul(x, b.ConstF32("w", {1, 8, 8}, std::vector<float>(64, 0.1f)));
             },
             {1, 8, 8});
       }},
      {"AVERAGE_POOL_2D",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.AveragePool2D(x, tfl::Padding_VALID, 2, 2, 2, 2); });
       }},
      {"MAX_POOL_2D",
       [] { return OneInput([](GraphBuilder& b, int x) { return b.MaxPool2D(x, tfl::Padding_VALID, 2, 2, 2, 2); }); }},
      {"TRANSPOSE", [] { return OneInput([](GraphBuilder& b, int x) {
                           return b.Transpose(x, {0, 2, 1, 3});
                         }); }},
      {"RESHAPE", [] { return OneInput([](GraphBuilder& b, int x) {
                         return b.Reshape(x, {16, 8});
                       }); }},
      {"RESIZE_BILINEAR", [] { return OneInput([](GraphBuilder& b, int x) { return b.ResizeBilinear(x, 8, 8); }); }},
      {"RESIZE_NEAREST_NEIGHBOR",
       [] { return OneInput([](GraphBuilder& b, int x) { return b.ResizeNearestNeighbor(x, 8, 8); }); }},
      {"MEAN", [] { return OneInput([](GraphBuilder& b, int x) {
                      return b.Mean(x, {1, 2}, true);
                    }); }},
      {"SUM", [] { return OneInput([](GraphBuilder& b, int x) {
                     return b.Sum(x, {1, 2}, true);
                   }); }},
      {"REDUCE_MAX", [] { return OneInput([](GraphBuilder& b, int x) {
                            return b.ReduceMax(x, {1, 2}, true);
                          }); }},
      {"REDUCE_MIN", [] { return OneInput([](GraphBuilder& b, int x) {
                            return b.ReduceMin(x, {1, 2}, true);
                          }); }},
      {"REDUCE_PROD", [] { return OneInput([](GraphBuilder& b, int x) {
                             return b.ReduceProd(x, {1, 2}, true);
                           }); }},
      {"REDUCE_ANY",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) {
               return b.Reduce(tfl::BuiltinOperator_REDUCE_ANY, x, {1, 2}, true);
             },
             kMap, kBool);
       }},
      {"REDUCE_ALL",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) {
               return b.Reduce(tfl::BuiltinOperator_REDUCE_ALL, x, {1, 2}, true);
             },
             kMap, kBool);
       }},
      {"PAD",
       [] { return OneInput([](GraphBuilder& b, int x) {
              return b.Pad(x, {{0, 0}, {1, 1}, {1, 1}, {0, 0}});
            }); }},
      {"PADV2",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.PadV2(x, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}, 0.0f); });
       }},
      {"MIRROR_PAD",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           return b.MirrorPad(x, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}, tfl::MirrorPadMode_REFLECT);
         });
       }},
      {"SOFTMAX",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.Softmax(x); }, {1, 16});
       }},
      {"DEPTH_TO_SPACE",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.DepthToSpace(x, 2); }, {1, 4, 4, 16});
       }},
      {"SPACE_TO_DEPTH", [] { return OneInput([](GraphBuilder& b, int x) { return b.SpaceToDepth(x, 2); }); }},
      {"STRIDED_SLICE",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) {
               return b.StridedSlice(x, {0, 0, 0}, {1, 6, 8}, {1, 1, 1});
             },
             {1, 6, 8});
       }},
      {"SLICE",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.Slice(x, {0, 1, 0}, {1, 4, 8}); }, {1, 6, 8});
       }},
      {"GATHER",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) {
               return b.Gather(x, b.ConstI32("i", {4}, {0, 1, 2, 3}), 1);
             },
             {1, 6, 8});
       }},
      {"CONCATENATION",
       [] { return TwoInputs([](GraphBuilder& b, int x, int y) {
              return b.Concatenation({x, y}, 3);
            }); }},
      {"SPLIT", [] { return OneInput([](GraphBuilder& b, int x) { return b.Split(x, 3, 2)[0]; }); }},
      {"SPLIT_V", [] { return OneInput([](GraphBuilder& b, int x) {
                         return b.SplitV(x, {4, 4}, 3)[0];
                       }); }},
      {"TILE", [] { return OneInput([](GraphBuilder& b, int x) {
                      return b.Tile(x, {1, 2, 1, 1});
                    }); }},
      {"CUMSUM", [] { return OneInput([](GraphBuilder& b, int x) { return b.Cumsum(x, 1); }); }},
      {"ARG_MAX", [] { return OneInput([](GraphBuilder& b, int x) { return b.ArgMax(x, 3); }); }},
      {"PRELU",
       [] {
         return OneInput(
             [](GraphBuilder& b, int x) { return b.Prelu(x, b.ConstF32("alpha", {8}, std::vector<float>(8, 0.1f))); });
       }},
      {"SELECT",
       [] {
         GraphBuilder b;
         const int c = b.Input("c", kBool, kMap);
         return Finish(b, b.Select(c, b.Input("x", kF32, kMap), b.Input("y", kF32, kMap)));
       }},
      {"SELECT_V2",
       [] {
         GraphBuilder b;
         const int c = b.Input("c", kBool, kMap);
         return Finish(b, b.SelectV2(c, b.Input("x", kF32, kMap), b.Input("y", kF32, kMap)));
       }},
      {"DYNAMIC_UPDATE_SLICE",
       [] {
         GraphBuilder b;
         const int x = b.Input("x", kF32, {1, 8, 8, 4});
         const int update = b.Input("u", kF32, {1, 2, 2, 4});
         const int start = b.Input("s", kI32, {4});
         return Finish(b, b.Op(tfl::BuiltinOperator_DYNAMIC_UPDATE_SLICE, {x, update, start})[0]);
       }},
      {"PACK",
       [] {
         GraphBuilder b;
         const int x = b.Input("x", kF32, {4, 8});
         return Finish(b, b.Pack({x, b.Input("y", kF32, {4, 8})}, 0));
       }},
      {"UNPACK",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.Unpack(x, 0)[0]; }, {2, 4, 8});
       }},
      {"REVERSE_V2",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           return b.Op(tfl::BuiltinOperator_REVERSE_V2, {x, b.ConstI32("axis", {1}, {1})})[0];
         });
       }},
      {"SQUEEZE",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.Squeeze(x, {2}); }, {1, 4, 1, 8});
       }},
      {"EXPAND_DIMS",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.ExpandDims(x, 0); }, {4, 4, 8});
       }},
      {"ARG_MIN", [] { return OneInput([](GraphBuilder& b, int x) { return b.ArgMin(x, 3); }); }},
      {"LOG_SOFTMAX", [] { return OneInput([](GraphBuilder& b, int x) { return b.LogSoftmax(x); }); }},
      {"L2_NORMALIZATION", [] { return OneInput([](GraphBuilder& b, int x) { return b.L2Normalization(x); }); }},
      {"BROADCAST_TO",
       [] {
         return OneInput([](GraphBuilder& b, int x) { return b.BroadcastTo(x, kMap); }, {1, 1, 4, 8});
       }},
      {"QUANTIZE",
       [] { return OneInput([](GraphBuilder& b, int x) { return b.Quantize(x, tfl::TensorType_INT8, 0.02f, 3); }); }},
      {"ZEROS_LIKE",
       [] { return OneInput([](GraphBuilder& b, int x) { return b.Op(tfl::BuiltinOperator_ZEROS_LIKE, {x})[0]; }); }},
      {"ADD_N",
       [] {
         GraphBuilder b;
         const int x = b.Input("x", kF32, kMap);
         return Finish(b, b.Op(tfl::BuiltinOperator_ADD_N, {x, b.Input("y", kF32, kMap)})[0]);
       }},
      {"SHAPE",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           tfl::ShapeOptionsT o;
           o.out_type = kI32;
           tfl::BuiltinOptionsUnion options;
           options.Set(o);
           return b.Op(tfl::BuiltinOperator_SHAPE, {x}, options)[0];
         });
       }},
      {"L2_POOL_2D",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           tfl::Pool2DOptionsT o;
           o.padding = tfl::Padding_VALID;
           o.stride_w = o.stride_h = 2;
           o.filter_width = o.filter_height = 2;
           tfl::BuiltinOptionsUnion options;
           options.Set(o);
           return b.Op(tfl::BuiltinOperator_L2_POOL_2D, {x}, options)[0];
         });
       }},
      {"TOPK_V2",
       [] {
         return OneInput([](GraphBuilder& b, int x) {
           return b.Op(tfl::BuiltinOperator_TOPK_V2, {x, b.ConstI32("k", {}, {2})})[0];
         });
       }},
  };
  return bases;
}

std::optional<ir::Model> BaseGraph(const std::string& op) {
  const auto& bases = ExplicitBases();
  if (auto it = bases.find(op); it != bases.end()) return it->second();
  const auto code = BuiltinByName(op);
  if (!code) return std::nullopt;
  switch (ir::TraitsOf(*code).family) {
    case ir::OpFamily::kUnaryMath:
    case ir::OpFamily::kActivation: return OneInput([&](GraphBuilder& b, int x) { return b.Unary(*code, x); });
    case ir::OpFamily::kBinaryMath:
    case ir::OpFamily::kComparison:
      return TwoInputs([&](GraphBuilder& b, int x, int y) { return b.Binary(*code, x, y); });
    case ir::OpFamily::kLogical:
      if (*code == tfl::BuiltinOperator_LOGICAL_NOT)
        return OneInput([&](GraphBuilder& b, int x) { return b.Unary(*code, x); }, kMap, kBool);
      return TwoInputs([&](GraphBuilder& b, int x, int y) { return b.Binary(*code, x, y); }, kBool);
    default: return std::nullopt;
  }
}

// Changes the last op of `model` until `when` holds; a reason when it cannot.
class Mutator {
 public:
  explicit Mutator(ir::Model& model) : g_(model.main()), op_(g_.ops.back()) {}

  std::string Apply(const json& when) {
    for (const auto& [key, want] : when.items()) {
      const std::string why = One(key, want);
      if (!why.empty()) return why;
    }
    return "";
  }

 private:
  int InputAt(int position) const { return position < static_cast<int>(op_.inputs.size()) ? op_.inputs[position] : -1; }
  bool IsGraphInput(int t) const { return std::find(g_.inputs.begin(), g_.inputs.end(), t) != g_.inputs.end(); }

  std::string MakeRuntime(int position) {
    const int t = InputAt(position);
    if (t < 0 || !g_.tensors[t].is_const())
      return fmt::format("input {} is not a constant in the plain graph", position);
    g_.tensors[t].data.reset();
    g_.inputs.push_back(t);
    return "";
  }
  std::string MakeConst(int position) {
    const int t = InputAt(position);
    if (t < 0 || !IsGraphInput(t)) return fmt::format("input {} is not a graph input in the plain graph", position);
    ZeroData(g_.tensors[t]);
    std::erase(g_.inputs, t);
    return "";
  }
  static void ZeroData(ir::Tensor& tensor) {
    const size_t size = ir::DTypeSize(tensor.dtype) * static_cast<size_t>(std::max<int64_t>(tensor.num_elements(), 1));
    tensor.data = Bytes::Own(std::vector<uint8_t>(size, 0));
  }

  std::string One(const std::string& key, const json& want) {
    if (key == "version_above") {
      const int cap = want.get<int>();
      if (op_.version > cap)
        return fmt::format("the plain graph's op version {} is already above {}", op_.version, cap);
      op_.version = cap + 1;
      return "";
    }
    if (key == "inputs_above") {
      // One more runtime input like input 0 until the count passes the cap.
      const int cap = want.get<int>();
      if (op_.inputs.empty() || op_.inputs[0] < 0) return "the plain graph's op has no input 0 to repeat";
      while (static_cast<int>(op_.inputs.size()) <= cap) {
        ir::Tensor extra = g_.tensors[op_.inputs[0]];
        extra.name = fmt::format("extra_{}", op_.inputs.size());
        extra.data = {};
        g_.tensors.push_back(std::move(extra));
        const int t = static_cast<int>(g_.tensors.size()) - 1;
        g_.inputs.push_back(t);
        op_.inputs.push_back(t);
      }
      return "";
    }
    if (key == "runtime_input_at" || key == "const_input_at") {
      std::vector<int> positions;
      if (want.is_number_integer())
        positions.push_back(want.get<int>());
      else
        for (const auto& p : want) positions.push_back(p.get<int>());
      for (int p : positions)
        if (std::string why = key == "runtime_input_at" ? MakeRuntime(p) : MakeConst(p); !why.empty()) return why;
      return "";
    }
    if (key == "runtime_inputs") {
      if (want.get<int>() != 0) return "only runtime_inputs 0 is built";
      for (size_t p = 0; p < op_.inputs.size(); ++p)
        if (InputAt(static_cast<int>(p)) >= 0 && !g_.tensors[InputAt(static_cast<int>(p))].is_const())
          if (std::string why = MakeConst(static_cast<int>(p)); !why.empty()) return why;
      return "";
    }
    if (key == "identical_inputs") {
      if (!want.get<bool>() || op_.inputs.size() < 2) return "only identical_inputs true on two inputs is built";
      op_.inputs[1] = op_.inputs[0];
      return "";
    }
    if (key == "attrs") {
      for (const auto& [field, value] : want.items()) {
        if (lint::OptionValue(op_, field) == value)
          return fmt::format("the plain graph already has {} = {}", field, value.dump());
        if (!lint::SetOptionValue(op_, field, value)) return fmt::format("the op has no option {}", field);
      }
      return "";
    }
    if (key == "attrs_not") {
      for (const auto& [field, avoid] : want.items()) {
        if (lint::OptionValue(op_, field) != avoid)
          return fmt::format("the plain graph's {} is not {}", field, avoid.dump());
        bool set = false;
        if (avoid.is_boolean())
          set = lint::SetOptionValue(op_, field, !avoid.get<bool>());
        else if (avoid.is_number_float())
          set = lint::SetOptionValue(op_, field, avoid.get<double>() + 0.5);
        else if (avoid.is_number_integer())
          set = lint::SetOptionValue(op_, field, avoid.get<int64_t>() + 1);
        else
          for (int value = 0; value < 4 && !set; ++value)
            set = lint::SetOptionValue(op_, field, value) && lint::OptionValue(op_, field) != avoid;
        if (!set) return fmt::format("cannot give option {} another value", field);
      }
      return "";
    }
    if (key == "dtype_at" || key == "input_rank") {
      const int t = InputAt(want.value("input", 0));
      if (t < 0) return "the input is absent";
      ir::Tensor& tensor = g_.tensors[t];
      if (key == "dtype_at") {
        const auto dtype = DTypeByName(want.at("in").at(0).get<std::string>());
        if (!dtype || ir::DTypeSize(*dtype) == 0) return "no fixed-size dtype to build";
        tensor.dtype = *dtype;
      } else {
        // The listed rank nearest the plain graph's: the smallest step past the edge.
        int rank = want.at("in").at(0).get<int>();
        for (const auto& r : want.at("in"))
          if (std::abs(r.get<int>() - tensor.rank()) < std::abs(rank - tensor.rank())) rank = r.get<int>();
        std::vector<int32_t> shape = tensor.shape;
        if (rank <= static_cast<int>(shape.size()))
          shape.erase(shape.begin(), shape.end() - rank);
        else
          shape.insert(shape.begin(), rank - shape.size(), 1);
        tensor.shape = shape;
        tensor.shape_signature.clear();
      }
      if (tensor.is_const()) ZeroData(tensor);
      return "";
    }
    return fmt::format("synth cannot build the constraint '{}'", key);
  }

  ir::Subgraph& g_;
  ir::Op& op_;
};

// LiteRT.js loads no model with a bool input or output ("Element type BOOL
// is not supported"), so ops that take or give bools are measured between
// a comparison that makes the bools and a CAST back to float32; likewise
// with int8 ("Element type INT8"): QUANTIZE is read back by a DEQUANTIZE.
std::optional<ir::Model> FloatIoGraph(tfl::BuiltinOperator code) {
  GraphBuilder b;
  const auto x = [&](const char* name) { return b.Input(name, kF32, kMap); };
  const auto mask = [&](const char* name) { return b.Greater(x(name), b.ConstF32("zero", {}, {0.0f})); };
  int out = -1;
  switch (code) {
    case tfl::BuiltinOperator_LOGICAL_NOT: out = b.LogicalNot(mask("x")); break;
    case tfl::BuiltinOperator_LOGICAL_AND:
    case tfl::BuiltinOperator_LOGICAL_OR: out = b.Binary(code, mask("x"), mask("y")); break;
    case tfl::BuiltinOperator_REDUCE_ANY:
    case tfl::BuiltinOperator_REDUCE_ALL: out = b.Reduce(code, mask("x"), {3}, false); break;
    case tfl::BuiltinOperator_SELECT: return Finish(b, b.Select(mask("c"), x("x"), x("y")));
    case tfl::BuiltinOperator_SELECT_V2: return Finish(b, b.SelectV2(mask("c"), x("x"), x("y")));
    case tfl::BuiltinOperator_NON_MAX_SUPPRESSION_V4: {
      const int boxes = b.Input("boxes", kF32, {16, 4});
      const auto [kept, count] = b.NonMaxSuppressionV4(boxes, b.Input("scores", kF32, {16}), 8, 0.3f, -0.5f);
      return Finish(b, b.Cast(b.Concatenation({kept, b.Reshape(count, {1})}, 0), kF32));
    }
    // LiteRT.js returns no int8 tensor: the codes are read back through a DEQUANTIZE.
    case tfl::BuiltinOperator_QUANTIZE:
      return Finish(b, b.Dequantize(b.Quantize(x("x"), tfl::TensorType_INT8, 0.02f, 3)));
    default:
      if (ir::TraitsOf(code).family != ir::OpFamily::kComparison) return std::nullopt;
      out = b.Binary(code, x("x"), x("y"));
  }
  return Finish(b, b.Cast(out, kF32));
}

}  // namespace rule_edges

std::optional<ir::Model> PlainGraph(const std::string& op) { return rule_edges::BaseGraph(op); }

std::optional<ir::Model> OpGraph(tfl::BuiltinOperator code) {
  if (std::optional<ir::Model> wrapped = rule_edges::FloatIoGraph(code)) return wrapped;
  return rule_edges::BaseGraph(ir::BuiltinName(code));
}

RuleEdgeSet RuleEdgeProbes(const lint::Matrix& matrix) {
  using rule_edges::BaseGraph;
  using rule_edges::Mutator;
  RuleEdgeSet set;
  for (const lint::Entry& entry : matrix.entries) {
    if (entry.op == "*" || entry.when.empty()) continue;
    std::optional<ir::Model> base;
    try {
      base = BaseGraph(entry.op);
    } catch (const Error& error) {  // the builder has no shape rule for the op
      set.skipped.push_back(fmt::format("{}: {}", entry.id, error.what()));
      continue;
    }
    if (!base) {
      set.skipped.push_back(fmt::format("{}: no plain graph for {}", entry.id, entry.op));
      continue;
    }
    ir::Model past = *base;
    if (const std::string why = Mutator(past).Apply(entry.when); !why.empty()) {
      set.skipped.push_back(fmt::format("{}: {}", entry.id, why));
      continue;
    }
    try {
      past.Validate();
    } catch (const Error& error) {
      // TFLite itself would refuse the file: the delegate's rule is not reachable this way.
      set.skipped.push_back(fmt::format("{}: one step past is not a valid model ({})", entry.id, error.what()));
      continue;
    }
    set.probes.push_back({entry.id, entry.op, std::move(*base), std::move(past)});
  }
  return set;
}

}  // namespace gpuclean::synth
