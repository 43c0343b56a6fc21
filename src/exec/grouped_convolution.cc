#include "exec/grouped_convolution.h"

#include <algorithm>
#include <optional>

namespace gpuclean::exec {
namespace {

// A one-element integer constant's value.
std::optional<int64_t> ScalarInt(const Tensor& t) {
  if (t.num_elements() != 1 || !t.data) return {};
  if (t.dtype == tfl::TensorType_INT32) return t.as<int32_t>()[0];
  if (t.dtype == tfl::TensorType_INT64) return t.as<int64_t>()[0];
  return {};
}

bool IsChannelAxis(std::optional<int64_t> axis) { return axis && (*axis == 3 || *axis == -1); }

class Finder {
 public:
  Finder(const ir::Subgraph& g, const std::vector<Tensor>& tensors, const std::vector<bool>& known,
         const std::vector<bool>& stored_in_half)
      : g_(g), tensors_(tensors), known_(known), half_(stored_in_half), consumers_(g.Consumers()) {}

  std::optional<GroupedConvolution> At(int split_index) const {
    const ir::Op& split = g_.ops[split_index];
    GroupedConvolution found;
    found.split = split_index;
    if (!SplitsChannelsEvenly(split, &found.input)) return {};
    const Tensor& x = tensors_[found.input];
    if (x.dtype != tfl::TensorType_FLOAT32 || x.rank() != 4) return {};

    const tfl::Conv2DOptionsT* first_options = nullptr;  // the first part's
    int concat = -1;
    for (int32_t part : split.outputs) {
      if (!ReadOnlyOnceBy(part, tfl::BuiltinOperator_CONV_2D) || half_[part] != half_[found.input]) return {};
      const int c = consumers_[part][0];
      const ir::Op& conv = g_.ops[c];
      const tfl::Conv2DOptionsT* o = conv.options.AsConv2DOptions();
      if (!o || conv.inputs.size() < 2 || conv.inputs[0] != part || conv.outputs.size() != 1 ||
          std::count(conv.inputs.begin(), conv.inputs.end(), part) != 1 || !Fixed(conv.inputs[1]))
        return {};
      // Each convolution ungrouped: its filter reads every channel of its part.
      const Tensor& filter = tensors_[conv.inputs[1]];
      if (filter.rank() != 4 || filter.dim(3) != tensors_[part].dim(3) || filter.dtype != tfl::TensorType_FLOAT32)
        return {};
      const int32_t bias = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
      if (bias >= 0 && (!Fixed(bias) || tensors_[bias].dtype != tfl::TensorType_FLOAT32)) return {};
      if (!first_options) {
        first_options = o;
      } else {
        const ir::Op& first = g_.ops[found.convs[0]];
        const int32_t first_bias = first.inputs.size() > 2 ? first.inputs[2] : -1;
        if (!SameGeometry(*o, *first_options) || tensors_[conv.inputs[1]].shape != tensors_[first.inputs[1]].shape ||
            (bias >= 0) != (first_bias >= 0))
          return {};
      }
      const int32_t y = conv.outputs[0];
      if (!ReadOnlyOnceBy(y, tfl::BuiltinOperator_CONCATENATION) || (concat >= 0 && consumers_[y][0] != concat))
        return {};
      concat = consumers_[y][0];
      found.convs.push_back(c);
    }
    const ir::Op& cat = g_.ops[concat];
    const tfl::ConcatenationOptionsT* co = cat.options.AsConcatenationOptions();
    if (!co || cat.outputs.size() != 1 || cat.inputs.size() != found.convs.size()) return {};
    const std::optional<int64_t> axis = co->axis;
    if (!IsChannelAxis(axis)) return {};
    for (size_t k = 0; k < found.convs.size(); ++k) {
      const int32_t y = g_.ops[found.convs[k]].outputs[0];
      if (cat.inputs[k] != y || half_[y] != half_[cat.outputs[0]]) return {};
    }
    if (co->fused_activation_function != tfl::ActivationFunctionType_NONE) return {};
    found.concat = concat;
    return found;
  }

 private:
  bool Fixed(int32_t t) const { return t >= 0 && known_[t]; }

  // Read by one op of `code` only, and not a graph output.
  bool ReadOnlyOnceBy(int32_t t, tfl::BuiltinOperator code) const {
    return t >= 0 && consumers_[t].size() == 1 && g_.ops[consumers_[t][0]].code == code && !g_.IsGraphOutput(t);
  }

  // A SPLIT, or a SPLIT_V of equal sizes, of a rank-4 tensor's last axis
  // into at least two parts; sets the tensor split.
  bool SplitsChannelsEvenly(const ir::Op& op, int32_t* input) const {
    if (op.outputs.size() < 2) return false;
    if (op.code == tfl::BuiltinOperator_SPLIT) {
      if (op.inputs.size() != 2 || !Fixed(op.inputs[0]) || op.inputs[1] < 0) return false;
      *input = op.inputs[1];
      if (!IsChannelAxis(ScalarInt(tensors_[op.inputs[0]]))) return false;
    } else if (op.code == tfl::BuiltinOperator_SPLIT_V) {
      if (op.inputs.size() != 3 || op.inputs[0] < 0 || !Fixed(op.inputs[1]) || !Fixed(op.inputs[2])) return false;
      *input = op.inputs[0];
      if (!IsChannelAxis(ScalarInt(tensors_[op.inputs[2]]))) return false;
    } else {
      return false;
    }
    // Equal parts, whichever op: every output's shape is the inferred one.
    const Tensor& x = tensors_[*input];
    if (x.rank() != 4) return false;
    const auto parts = static_cast<int32_t>(op.outputs.size());
    if (x.dim(3) % parts != 0) return false;
    for (int32_t part : op.outputs) {
      const Tensor& p = tensors_[part];
      if (p.rank() != 4 || p.dim(3) != x.dim(3) / parts) return false;
    }
    return true;
  }

  static bool SameGeometry(const tfl::Conv2DOptionsT& a, const tfl::Conv2DOptionsT& b) {
    return a.padding == b.padding && a.stride_w == b.stride_w && a.stride_h == b.stride_h &&
           a.fused_activation_function == b.fused_activation_function && a.dilation_w_factor == b.dilation_w_factor &&
           a.dilation_h_factor == b.dilation_h_factor;
  }

  const ir::Subgraph& g_;
  const std::vector<Tensor>& tensors_;
  const std::vector<bool>& known_;
  const std::vector<bool>& half_;
  const std::vector<std::vector<int>> consumers_;
};

}  // namespace

std::vector<GroupedConvolution> FindGroupedConvolutions(const ir::Subgraph& graph, const std::vector<Tensor>& tensors,
                                                        const std::vector<int>& runs, const std::vector<bool>& known,
                                                        const std::vector<bool>& stored_in_half) {
  std::vector<GroupedConvolution> found;
  const Finder finder(graph, tensors, known, stored_in_half);
  std::vector<bool> runs_now(graph.ops.size(), false);
  for (int i : runs) runs_now[i] = true;
  for (int i : runs) {
    const tfl::BuiltinOperator code = graph.ops[i].code;
    if (code != tfl::BuiltinOperator_SPLIT && code != tfl::BuiltinOperator_SPLIT_V) continue;
    std::optional<GroupedConvolution> group = finder.At(i);
    if (!group || !runs_now[group->concat] ||
        !std::all_of(group->convs.begin(), group->convs.end(), [&](int c) { return runs_now[c]; }))
      continue;
    found.push_back(std::move(*group));
  }
  return found;
}

}  // namespace gpuclean::exec
