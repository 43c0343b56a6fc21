#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/ranges.h>

#include "exec/grouped_convolution.h"
#include "exec/kernel.h"
#include "exec/kernels/fp16_compute.h"
#include "exec/layer_norm_pattern.h"
#include "exec/zeroed_pages.h"
#include "gpuclean/limits.h"
#include "gpuclean/op_table.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec {
namespace {

constexpr size_t kArenaAlignment = 64;

size_t AlignUp(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool IsQuantizedInteger(const ir::Tensor& t) {
  const bool integer = t.dtype == tfl::TensorType_INT8 || t.dtype == tfl::TensorType_UINT8 ||
                       t.dtype == tfl::TensorType_INT16 || t.dtype == tfl::TensorType_INT4;
  return integer && !t.quant.scale.empty();
}

void RoundToHalf(Tensor& t) {
  if (t.dtype != tfl::TensorType_FLOAT32) return;
  float* v = t.as<float>();
  kernels::fp16::RoundInPlace(v, t.num_elements());
}

}  // namespace

[[noreturn]] void ThrowUnsupportedDtype(const ir::Subgraph& graph, const ir::Op& op, ir::DType dtype) {
  int index = -1;
  for (size_t i = 0; i < graph.ops.size(); ++i)
    if (&graph.ops[i] == &op) index = static_cast<int>(i);
  ThrowUnsupported(fmt::format("op {} ({}): dtype {} is not supported by gpuclean's interpreter", index, op.name(),
                               ir::DTypeName(dtype)));
}

void RequireDtypes(const ir::Subgraph& graph, const ir::Op& op, std::initializer_list<ir::DType> dtypes) {
  auto check = [&](int32_t t) {
    if (t < 0) return;
    const ir::DType d = graph.tensors[t].dtype;
    if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) ThrowUnsupportedDtype(graph, op, d);
  };
  for (int32_t t : op.inputs) check(t);
  for (int32_t t : op.outputs) check(t);
}

struct Interpreter::Impl {
  std::shared_ptr<const ir::Model> model;
  InterpreterOptions options;
  const ir::Subgraph* graph = nullptr;
  std::vector<Tensor> tensors;
  std::vector<int> run_order;  // ops evaluated per Invoke (constant-only ops are folded away)
  std::vector<const Kernel*> kernels;
  std::vector<ZeroedPages> owned;  // folded constants, fp16-rounded weights
  // Per tensor: written as binary16 in this mode (op outputs; inputs and
  // weights follow their own rules in Prepare).
  std::vector<bool> stored_in_half;
  std::vector<bool> fixed;         // per tensor: value fixed at prepare time
  std::vector<std::any> op_state;  // per op: KernelContext::state
  // Per op: not run unless a tap wants its output: a PAD its only reader
  // pads through (AbsorbPads), a LOGISTIC its SiLU MUL computes (FuseSilu),
  // a LayerNorm's ops before its normalizing MUL (FuseLayerNorms), the
  // SPLIT and per-group CONV_2Ds of a grouped convolution
  // (GroupConvolutions).
  std::vector<bool> skipped;
  // An op that computes what skipped ops before it did, with another
  // kernel reading other tensors: a SiLU's MUL reads x, a LayerNorm's
  // normalizing MUL reads x and the epsilon.
  struct Replacement {
    const Kernel* kernel = nullptr;
    std::vector<int32_t> inputs;
    const char* runs_as = "";
  };
  std::vector<Replacement> replaced;  // per op; kernel null where the op runs as itself
  // Per op: the convolution's skipped PAD (its index), or -1, and its amounts.
  std::vector<int> absorbed_pad;
  std::vector<std::array<int, 4>> absorbed_amounts;
  // Per op: a CONCATENATION that runs the grouped convolution it closes
  // (GroupConvolutions): its index in grouped_ops, or -1. grouped_ops are
  // CONV_2Ds over the split tensor with every group's filter and bias,
  // held as tensors past the graph's own.
  std::vector<int> grouped_op;
  std::vector<ir::Op> grouped_ops;
  std::vector<int32_t> grouped_input;  // per grouped op: the tensor split
  std::vector<int> concat_of_split;    // per op: a grouped SPLIT's CONCATENATION, or -1
  size_t folded_bytes = 0;
  ZeroedPages arena_storage;
  uint8_t* arena = nullptr;
  size_t arena_size = 0;
  std::unique_ptr<ThreadPool> pool;
  const Kernel fused_silu_kernel = kernels::FusedSiluKernel();
  const Kernel fused_layer_norm_kernel = kernels::FusedLayerNormKernel();
  MemoryCharge charge;  // the owned copies and the arena, while this interpreter lives

  uint8_t* Own(size_t bytes) {
    owned.emplace_back(bytes);
    charge.Add(bytes);
    return owned.back().data();
  }

  void Prepare() {
    const ir::Subgraph& g = *graph;
    const int num_tensors = static_cast<int>(g.tensors.size());
    tensors.resize(num_tensors);
    stored_in_half.assign(num_tensors, options.precision != Precision::kFp32);
    if (options.precision == Precision::kFp16Fused) {
      const std::vector<bool> in_float = KeptInFloat(g);
      for (int t = 0; t < num_tensors; ++t) stored_in_half[t] = !in_float[t];
    }
    std::vector<bool> known(num_tensors, false);  // value fixed at prepare time
    for (int t = 0; t < num_tensors; ++t) {
      const ir::Tensor& src = g.tensors[t];
      tensors[t].dtype = src.dtype;
      tensors[t].shape = src.shape;
      if (src.is_const()) {
        // Sparse constants hold only their stored values; DENSIFY reads the
        // sparsity description from the graph.
        tensors[t].data = const_cast<uint8_t*>(src.data->data());
        tensors[t].bytes = src.data->size();
        known[t] = true;
        // fp16-fused: a one-element constant is a shader uniform and stays
        // float (measured: x * 1.0001 - 1 gives 1.0001e-4 on WebGPU fp16).
        const bool uniform = options.precision == Precision::kFp16Fused && src.num_elements() == 1;
        if (options.precision != Precision::kFp32 && src.dtype == tfl::TensorType_FLOAT32 && !src.sparsity &&
            !uniform) {
          // Weights live in half precision on the GPU too.
          CheckMemory(src.data->size(), fmt::format("a half-precision copy of constant '{}'", src.name));
          uint8_t* copy = Own(src.data->size());
          std::memcpy(copy, src.data->data(), src.data->size());
          tensors[t].data = copy;
          RoundToHalf(tensors[t]);
        }
      }
    }
    // A dynamic dimension (-1 in shape_signature) runs at the stored shape,
    // as LiteRT does; exec::WithInputShapes picks another.
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const int32_t t = g.inputs[k];
      tensors[t].bytes = static_cast<size_t>(tensors[t].num_elements()) * ir::DTypeSize(tensors[t].dtype);
      CheckMemory(tensors[t].bytes,
                  fmt::format("input {} ('{}', {})", k, g.tensors[t].name, ir::FormatShape(tensors[t].shape)));
    }

    const std::vector<int> order = g.TopologicalOrder();
    kernels.assign(g.ops.size(), nullptr);
    skipped.assign(g.ops.size(), false);  // GroupConvolutions, AbsorbPads, FuseSilu, FuseLayerNorms, after folding
    replaced.assign(g.ops.size(), {});
    absorbed_pad.assign(g.ops.size(), -1);
    absorbed_amounts.assign(g.ops.size(), {});
    grouped_op.assign(g.ops.size(), -1);
    concat_of_split.assign(g.ops.size(), -1);
    for (int i : order) {
      const ir::Op& op = g.ops[i];
      const Kernel* kernel = FindKernel(op);
      if (!kernel)
        ThrowUnsupported(fmt::format("op {} ({}): no kernel for this op in gpuclean's interpreter", i, op.name()));
      // Quantized integers live only between a QUANTIZE and the DEQUANTIZEs
      // that read them (constant weights, fake-quant pairs); every other
      // kernel computes in float.
      for (const auto* list : {&op.inputs, &op.outputs})
        for (int32_t t : *list)
          if (t >= 0 && IsQuantizedInteger(g.tensors[t]) &&
              !(list == &op.inputs && op.code == tfl::BuiltinOperator_DEQUANTIZE) &&
              !(list == &op.outputs && op.code == tfl::BuiltinOperator_QUANTIZE))
            ThrowUnsupported(
                fmt::format("op {} ({}): dtype {} (quantized tensor '{}') is not supported; gpuclean "
                            "runs float graphs",
                            i, op.name(), ir::DTypeName(g.tensors[t].dtype), g.tensors[t].name));
      // A sparse constant holds only its stored values; every kernel but
      // DENSIFY's would read it as the dense tensor its shape describes.
      if (op.code != tfl::BuiltinOperator_DENSIFY)
        for (int32_t t : op.inputs)
          if (t >= 0 && g.tensors[t].sparsity)
            ThrowUnsupported(
                fmt::format("op {} ({}): reads sparse constant '{}' directly; gpuclean's interpreter "
                            "reads sparse tensors only through DENSIFY",
                            i, op.name(), g.tensors[t].name));
      if (kernel->check) kernel->check(g, op);
      kernels[i] = kernel;

      // Shapes follow from the input specs (and values known so far).
      std::vector<ir::InputInfo> infos(op.inputs.size());
      bool all_known = true;
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int32_t t = op.inputs[k];
        if (t < 0) continue;
        infos[k].present = true;
        infos[k].spec = {tensors[t].dtype, tensors[t].shape};
        if (!known[t])
          all_known = false;
        else if (!g.tensors[t].sparsity)
          infos[k].value = Bytes(nullptr, tensors[t].data, tensors[t].bytes);
      }
      std::vector<ir::DType> declared;
      for (int32_t t : op.outputs) declared.push_back(g.tensors[t].dtype);
      std::vector<ir::TensorSpec> specs;
      try {
        specs = ir::InferOutputs(op, infos, declared);
      } catch (const Error& e) {
        // Shape rules already name the op; keep one label.
        std::string why = e.what();
        if (why.starts_with(op.name() + ": ")) why.erase(0, op.name().size() + 2);
        throw Error(e.kind(), fmt::format("op {} ({}): {}", i, op.name(), why));
      }
      if (specs.size() != op.outputs.size())
        ThrowBadInput(fmt::format("op {} ({}): has {} outputs but shape inference gives {}", i, op.name(),
                                  op.outputs.size(), specs.size()));
      for (size_t k = 0; k < specs.size(); ++k) {
        Tensor& out = tensors[op.outputs[k]];
        out.dtype = specs[k].dtype;
        out.shape = specs[k].shape;
        out.bytes = static_cast<size_t>(out.num_elements()) * ir::DTypeSize(out.dtype);
        CheckMemory(out.bytes, fmt::format("op {} ({}): output {} {}", i, op.name(), k, ir::FormatShape(out.shape)));
      }
      const bool stateful = std::any_of(op.inputs.begin(), op.inputs.end(),
                                        [&](int32_t t) { return t >= 0 && g.tensors[t].is_variable; });
      if (all_known && !stateful) {
        Fold(i, op);
        for (int32_t t : op.outputs) known[t] = true;
      } else {
        run_order.push_back(i);
      }
    }
    GroupConvolutions(known);
    AbsorbPads(known);
    FuseSilu();
    FuseLayerNorms(known);
    PlanArena(known);
    fixed = std::move(known);
  }

  // A PAD or PADV2 that only pads H and W of a float NHWC tensor by
  // constant non-negative amounts {top, bottom, left, right}, with `value`
  // (PAD: +0).
  struct SpatialPad {
    std::array<int, 4> amounts{};
    float value = 0.0f;
  };
  std::optional<SpatialPad> SpatialConstantPad(const ir::Op& op, const std::vector<bool>& known) const {
    const bool v2 = op.code == tfl::BuiltinOperator_PADV2;
    if ((op.code != tfl::BuiltinOperator_PAD && !v2) || op.inputs.size() < 2 || op.outputs.size() != 1) return {};
    const int32_t x = op.inputs[0], paddings = op.inputs[1];
    if (x < 0 || paddings < 0 || !known[paddings] || tensors[x].dtype != tfl::TensorType_FLOAT32 ||
        tensors[x].rank() != 4 || tensors[paddings].num_elements() != 8)
      return {};
    SpatialPad pad;
    if (v2 && op.inputs.size() > 2 && op.inputs[2] >= 0) {
      const Tensor& value = tensors[op.inputs[2]];
      if (!known[op.inputs[2]] || value.dtype != tfl::TensorType_FLOAT32 || value.num_elements() != 1) return {};
      pad.value = value.as<float>()[0];
    }
    int64_t p[8];
    for (int i = 0; i < 8; ++i) {
      const Tensor& t = tensors[paddings];
      p[i] = t.dtype == tfl::TensorType_INT64   ? t.as<int64_t>()[i]
             : t.dtype == tfl::TensorType_INT32 ? t.as<int32_t>()[i]
                                                : -1;
      if (p[i] < 0 || p[i] > (1 << 20)) return {};
    }
    if (p[0] || p[1] || p[6] || p[7]) return {};  // batch or channels
    pad.amounts = {static_cast<int>(p[2]), static_cast<int>(p[3]), static_cast<int>(p[4]), static_cast<int>(p[5])};
    return pad;
  }

  // Whether `reader` gives the same values reading the PAD's input with the
  // padding as taps outside it: a convolution's outside taps are +0 (-0
  // would change the sign of an all-zero sum); a MAX_POOL_2D's are never
  // taken, as a tap of -FLT_MAX (ONNX MaxPool's lowering) or -inf never
  // wins over its running max, which starts at -FLT_MAX.
  static bool ReadsPadAsOutside(const ir::Op& reader, float value) {
    switch (reader.code) {
      case tfl::BuiltinOperator_CONV_2D:
      case tfl::BuiltinOperator_DEPTHWISE_CONV_2D: return __builtin_bit_cast(uint32_t, value) == 0u;
      case tfl::BuiltinOperator_MAX_POOL_2D: return value == std::numeric_limits<float>::lowest() || value == -INFINITY;
      default: return false;
    }
  }

  // SiLU as exporters write it, MUL(x, LOGISTIC(x)), whose LOGISTIC output
  // only that MUL reads: the LOGISTIC is skipped and the MUL computes
  // x * sigmoid(x) in one pass (FusedSiluKernel), the same fp32 operations.
  // fp32 only: the other modes round the sigmoid to half in between.
  void FuseSilu() {
    const ir::Subgraph& g = *graph;
    if (options.precision != Precision::kFp32) return;
    const std::vector<std::vector<int>> consumers = g.Consumers();
    for (int i : run_order) {
      const ir::Op& logistic = g.ops[i];
      if (logistic.code != tfl::BuiltinOperator_LOGISTIC || logistic.inputs.size() != 1 ||
          logistic.outputs.size() != 1 || skipped[i])
        continue;
      const int32_t x = logistic.inputs[0], s = logistic.outputs[0];
      if (x < 0 || tensors[x].dtype != tfl::TensorType_FLOAT32 || consumers[s].size() != 1 || g.IsGraphOutput(s))
        continue;
      const int m = consumers[s][0];
      const ir::Op& mul = g.ops[m];
      if (mul.code != tfl::BuiltinOperator_MUL || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
          !((mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x)) ||
          tensors[mul.outputs[0]].shape != tensors[x].shape || absorbed_pad[m] >= 0 || replaced[m].kernel)
        continue;
      skipped[i] = true;
      replaced[m] = {&fused_silu_kernel, {x}, "MUL (SiLU)"};
    }
  }

  // A LayerNorm (layer_norm_pattern.h) runs as one pass per row at its
  // normalizing MUL (FusedLayerNormKernel, the same fp32 operations): the
  // MEANs, SUB, square, ADD and RSQRT are skipped. fp32 only, as for SiLU;
  // not where an internal op clamps, or a tensor is not float32.
  void FuseLayerNorms(const std::vector<bool>& known) {
    const ir::Subgraph& g = *graph;
    if (options.precision != Precision::kFp32 || !options.fuse_layer_norms) return;
    const std::vector<std::vector<int>> consumers = g.Consumers();
    std::vector<bool> runs(g.ops.size(), false);
    for (int i : run_order) runs[i] = true;
    const auto activation_free = [&](int op) {
      const ir::Op& o = g.ops[op];
      tfl::ActivationFunctionType a = tfl::ActivationFunctionType_NONE;
      if (const auto* sub = o.options.AsSubOptions()) a = sub->fused_activation_function;
      if (const auto* mul = o.options.AsMulOptions()) a = mul->fused_activation_function;
      if (const auto* add = o.options.AsAddOptions()) a = add->fused_activation_function;
      return a == tfl::ActivationFunctionType_NONE;
    };
    for (int m : run_order) {
      if (g.ops[m].code != tfl::BuiltinOperator_MEAN || skipped[m]) continue;
      const std::optional<LayerNormPattern> p = MatchLayerNorm(g, consumers, m);
      if (!p || !known[p->epsilon] || tensors[p->epsilon].dtype != tfl::TensorType_FLOAT32 ||
          tensors[p->epsilon].num_elements() != 1 || tensors[p->x].dtype != tfl::TensorType_FLOAT32 ||
          tensors[p->x].rank() == 0 || tensors[p->y].shape != tensors[p->x].shape ||
          tensors[p->d].shape != tensors[p->x].shape || replaced[p->normalize].kernel || !runs[p->normalize])
        continue;
      const std::vector<int> internal = p->InternalOps();
      if (!std::all_of(internal.begin(), internal.end(),
                       [&](int op) { return runs[op] && !skipped[op] && !replaced[op].kernel && activation_free(op); }))
        continue;
      for (int op : internal) skipped[op] = true;
      replaced[p->normalize] = {&fused_layer_norm_kernel, {p->x, p->epsilon}, "MUL (LayerNorm)"};
    }
  }

  // Skips the PADs in front of convolutions and max pools (the explicit
  // padding ONNX exports need where TFLite's SAME differs) whose padding
  // reads as the op's own (ReadsPadAsOutside), so the padded copy is never
  // written.
  // Not when the PAD's output is rounded to half and its input is not
  // (fp16-fused), which would skip a rounding.
  void AbsorbPads(const std::vector<bool>& known) {
    const ir::Subgraph& g = *graph;
    const std::vector<std::vector<int>> consumers = g.Consumers();
    for (int i : run_order) {
      const ir::Op& pad = g.ops[i];
      if (pad.code != tfl::BuiltinOperator_PAD && pad.code != tfl::BuiltinOperator_PADV2) continue;
      const auto spatial = SpatialConstantPad(pad, known);
      if (!spatial) continue;
      const int32_t x = pad.inputs[0], t = pad.outputs[0];
      if (consumers[t].size() != 1 || g.IsGraphOutput(t) || stored_in_half[x] != stored_in_half[t]) continue;
      // A grouped convolution reads the PAD's output where its SPLIT did.
      int c = consumers[t][0];
      if (concat_of_split[c] >= 0) c = concat_of_split[c];
      const ir::Op& conv = grouped_op[c] >= 0 ? grouped_ops[grouped_op[c]] : g.ops[c];
      if (!ReadsPadAsOutside(conv, spatial->value) || conv.inputs.empty() || conv.inputs[0] != t ||
          std::count(conv.inputs.begin(), conv.inputs.end(), t) != 1 || absorbed_pad[c] >= 0)
        continue;
      skipped[i] = true;
      absorbed_pad[c] = i;
      absorbed_amounts[c] = spatial->amounts;
    }
  }

  // SPLIT -> one CONV_2D per part -> CONCATENATION runs as one grouped
  // CONV_2D at the CONCATENATION (FindGroupedConvolutions); the SPLIT and the
  // per-part convolutions are skipped. The grouped filter is the per-group
  // filters one after another ([G*Og, KH, KW, Cg], as CONV_2D reads groups),
  // copied from their values here (half-rounded where the mode rounds them).
  void GroupConvolutions(std::vector<bool>& known) {
    const ir::Subgraph& g = *graph;
    for (const GroupedConvolution& found : FindGroupedConvolutions(g, tensors, run_order, known, stored_in_half)) {
      ir::Op op = g.ops[found.convs[0]];
      const bool has_bias = op.inputs.size() > 2 && op.inputs[2] >= 0;
      const auto joined = [&](int input) {
        const Tensor& part = tensors[op.inputs[input]];
        Tensor all = part;
        all.shape[0] *= static_cast<int32_t>(found.convs.size());
        all.bytes = part.bytes * found.convs.size();
        CheckMemory(all.bytes,
                    fmt::format("a grouped filter for op {} ({})", found.concat, g.ops[found.concat].name()));
        all.data = Own(all.bytes);
        for (size_t k = 0; k < found.convs.size(); ++k)
          std::memcpy(all.data + k * part.bytes, tensors[g.ops[found.convs[k]].inputs[input]].data, part.bytes);
        tensors.push_back(all);
        known.push_back(true);
        stored_in_half.push_back(false);
        return static_cast<int32_t>(tensors.size() - 1);
      };
      const int32_t filter = joined(1);
      const int32_t bias = has_bias ? joined(2) : -1;
      op.inputs = {found.input, filter, bias};
      op.outputs = g.ops[found.concat].outputs;
      skipped[found.split] = true;
      for (int c : found.convs) skipped[c] = true;
      concat_of_split[found.split] = found.concat;
      grouped_op[found.concat] = static_cast<int>(grouped_ops.size());
      grouped_ops.push_back(std::move(op));
      grouped_input.push_back(found.input);
    }
  }

  // Ops whose inputs are all constant run once, here, into owned memory.
  void Fold(int index, const ir::Op& op) {
    size_t bytes = 0;
    for (int32_t t : op.outputs) bytes += tensors[t].bytes;
    CheckMemory(bytes, fmt::format("folding constants at op {} ({})", index, op.name()));
    for (int32_t t : op.outputs) {
      tensors[t].data = Own(tensors[t].bytes);
      folded_bytes += tensors[t].bytes;
    }
    Eval(index);
  }

  void Eval(int index) {
    const int grouped = grouped_op[index];
    const ir::Op& op = grouped >= 0 ? grouped_ops[grouped] : graph->ops[index];
    KernelContext ctx{*graph, op, index, {}, {}, *pool, options.precision};
    if (op_state.size() != graph->ops.size()) op_state.resize(graph->ops.size());
    ctx.state = &op_state[index];
    ctx.fixed = &fixed;
    ctx.in.reserve(op.inputs.size());
    for (int32_t t : op.inputs) ctx.in.push_back(t >= 0 ? &tensors[t] : nullptr);
    for (int32_t t : op.outputs) ctx.out.push_back(&tensors[t]);
    const Kernel* kernel = grouped >= 0 ? FindKernel(op) : kernels[index];
    if (const Replacement& r = replaced[index]; r.kernel) {
      ctx.in.clear();
      for (int32_t t : r.inputs) ctx.in.push_back(&tensors[t]);
      kernel = r.kernel;
    }
    if (const int pad = absorbed_pad[index]; pad >= 0) {
      ctx.in[0] = &tensors[graph->ops[pad].inputs[0]];
      ctx.input_pad = absorbed_amounts[index];
    }
    kernel->eval(ctx);
    for (int32_t t : op.outputs)
      if (stored_in_half[t]) RoundToHalf(tensors[t]);
  }

  // Greedy offset assignment over tensor lifetimes: largest first, each at
  // the lowest offset free of every overlapping-lifetime tensor placed so far.
  void PlanArena(const std::vector<bool>& known) {
    const ir::Subgraph& g = *graph;
    const int steps = static_cast<int>(run_order.size());
    const int n = static_cast<int>(tensors.size());
    std::vector<int> first(n, -2), last(n, -2);
    for (int32_t t : g.inputs) first[t] = last[t] = -1;
    for (int s = 0; s < steps; ++s) {
      const ir::Op& op = g.ops[run_order[s]];
      for (int32_t t : op.outputs) {
        if (first[t] == -2) first[t] = s;
        last[t] = std::max(last[t], s);
      }
      for (int32_t t : op.inputs)
        if (t >= 0 && !known[t] && first[t] != -2) last[t] = std::max(last[t], s);
      if (const int pad = absorbed_pad[run_order[s]]; pad >= 0) {
        const int32_t t = g.ops[pad].inputs[0];  // read here, in place of the PAD's output
        if (!known[t] && first[t] != -2) last[t] = std::max(last[t], s);
      }
      if (const int grouped = grouped_op[run_order[s]]; grouped >= 0) {
        const int32_t t = grouped_input[grouped];  // read here, in place of the convolutions' outputs
        if (!known[t] && first[t] != -2) last[t] = std::max(last[t], s);
      }
      for (int32_t t : replaced[run_order[s]].inputs)  // read here, in place of the skipped ops' outputs
        if (!known[t] && first[t] != -2) last[t] = std::max(last[t], s);
    }
    // Inputs are set once and must survive every Invoke; outputs are read after it.
    for (const auto* ends : {&g.inputs, &g.outputs})
      for (int32_t t : *ends)
        if (!known[t] && first[t] != -2) last[t] = steps;

    // A RESHAPE, SQUEEZE or EXPAND_DIMS whose input dies at it writes its
    // output over its input (same bytes, the copy skipped): the pair is
    // placed once, as the input's buffer living to the output's last use.
    // (RESHAPE copies were a tenth of a 1024x1024 SAM 2 encoder's time.)
    std::vector<int> shares(n, -1);  // the tensor whose buffer t uses
    for (int s = 0; s < steps; ++s) {
      const ir::Op& op = g.ops[run_order[s]];
      if (ir::TraitsOf(op.code).rank_rule != ir::RankRule::kReshape || op.inputs.empty() || op.outputs.size() != 1)
        continue;
      const int32_t in = op.inputs[0], out = op.outputs[0];
      if (in < 0 || known[in] || first[in] == -2 || last[in] != s || tensors[in].bytes != tensors[out].bytes) continue;
      const int root = shares[in] >= 0 ? shares[in] : in;
      shares[out] = root;
      last[root] = std::max(last[root], last[out]);
    }

    std::vector<int> live;
    for (int t = 0; t < n; ++t)
      if (!known[t] && first[t] != -2 && shares[t] < 0) live.push_back(t);
    std::sort(live.begin(), live.end(), [&](int a, int b) {
      return tensors[a].bytes != tensors[b].bytes ? tensors[a].bytes > tensors[b].bytes : a < b;
    });
    // A short-lived tensor meets only the placed tensors alive at its steps
    // (step s kept at s + 1: inputs live from -1) rather than every tensor
    // placed so far: a 100k-op chain plans in milliseconds, not seconds.
    constexpr int kShortLifetime = 64;
    std::vector<std::vector<int>> alive_at(steps + 2);  // short-lived placed tensors
    std::vector<int> placed, long_placed, seen(n, -1);
    std::vector<size_t> offset(n, 0), placed_size(n, 0);
    size_t total = 0;
    for (int t : live) {
      const size_t size = AlignUp(std::max<size_t>(tensors[t].bytes, 1));
      std::vector<std::pair<size_t, size_t>> busy;
      auto meet = [&](int other) {
        if (seen[other] == t || first[other] > last[t] || first[t] > last[other]) return;
        seen[other] = t;
        busy.emplace_back(offset[other], offset[other] + placed_size[other]);
      };
      const bool short_lived = last[t] - first[t] < kShortLifetime;
      if (short_lived) {
        for (int s = first[t]; s <= last[t]; ++s)
          for (int other : alive_at[s + 1]) meet(other);
        for (int other : long_placed) meet(other);
      } else {
        for (int other : placed) meet(other);
      }
      std::sort(busy.begin(), busy.end());
      size_t candidate = 0;
      for (const auto& [begin, end] : busy) {
        if (candidate + size <= begin) break;
        candidate = std::max(candidate, end);
      }
      offset[t] = candidate;
      placed_size[t] = size;
      placed.push_back(t);
      if (short_lived)
        for (int s = first[t]; s <= last[t]; ++s) alive_at[s + 1].push_back(t);
      else
        long_placed.push_back(t);
      total = std::max(total, candidate + size);
    }
    arena_size = total;
    // The caller holds the input values it feeds (read, decoded or generated)
    // beside the arena's copies.
    size_t input_bytes = 0;
    for (int32_t t : g.inputs) input_bytes += tensors[t].bytes;
    CheckMemory(total + kArenaAlignment + input_bytes,
                fmt::format("running the graph ({} of tensors and {} of input values, beside {} of folded constants)",
                            FormatBytes(total), FormatBytes(input_bytes), FormatBytes(folded_bytes)));
    arena_storage = ZeroedPages(total + kArenaAlignment);
    charge.Add(total + kArenaAlignment);
    arena = reinterpret_cast<uint8_t*>(AlignUp(reinterpret_cast<uintptr_t>(arena_storage.data())));
    for (int t : live) tensors[t].data = arena + offset[t];
    for (int t = 0; t < n; ++t)
      if (shares[t] >= 0) tensors[t].data = tensors[shares[t]].data;
  }
};

Interpreter::Interpreter(std::shared_ptr<const ir::Model> model, InterpreterOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->model = std::move(model);
  impl_->options = options;
  if (options.subgraph < 0 || options.subgraph >= static_cast<int>(impl_->model->subgraphs.size()))
    throw Error(ErrorKind::kUsage, fmt::format("subgraph {} does not exist", options.subgraph));
  impl_->graph = &impl_->model->subgraphs[options.subgraph];
  impl_->pool = std::make_unique<ThreadPool>(options.threads);
  impl_->Prepare();
}

Interpreter::~Interpreter() = default;

const ir::Subgraph& Interpreter::graph() const { return *impl_->graph; }
int Interpreter::num_inputs() const { return static_cast<int>(impl_->graph->inputs.size()); }
int Interpreter::num_outputs() const { return static_cast<int>(impl_->graph->outputs.size()); }
const Tensor& Interpreter::tensor(int tensor_index) const { return impl_->tensors.at(tensor_index); }
size_t Interpreter::arena_bytes() const { return impl_->arena_size; }
int Interpreter::ops_folded() const { return static_cast<int>(impl_->graph->ops.size() - impl_->run_order.size()); }
std::string Interpreter::RunsAs(int op_index) const {
  if (impl_->grouped_op.at(op_index) >= 0) return "CONV_2D (grouped)";
  if (const auto& r = impl_->replaced.at(op_index); r.kernel) return r.runs_as;
  return impl_->graph->ops.at(op_index).name();
}
int Interpreter::ops_skipped() const {
  return static_cast<int>(std::count(impl_->skipped.begin(), impl_->skipped.end(), true));
}
size_t Interpreter::folded_const_bytes() const { return impl_->folded_bytes; }

void Interpreter::SetInput(int index, const npy::Array& value) {
  if (index < 0 || index >= num_inputs())
    throw Error(ErrorKind::kUsage, fmt::format("input {} does not exist (the model has {})", index, num_inputs()));
  const int32_t t = impl_->graph->inputs[index];
  Tensor& dst = impl_->tensors[t];
  const std::string& name = impl_->graph->tensors[t].name;
  if (value.dtype != dst.dtype)
    ThrowBadInput(fmt::format("input {} ('{}') expects {} but got {}", index, name, ir::DTypeName(dst.dtype),
                              ir::DTypeName(value.dtype)));
  const std::vector<int32_t> shape(value.shape.begin(), value.shape.end());
  if (shape != dst.shape)
    ThrowBadInput(fmt::format("input {} ('{}') expects shape {} but got {}", index, name, ir::FormatShape(dst.shape),
                              ir::FormatShape(shape)));
  if (dst.bytes > 0) std::memcpy(dst.data, value.data.data(), dst.bytes);  // an empty input may have no buffer
  if (impl_->options.precision != Precision::kFp32) RoundToHalf(dst);
}

void Interpreter::Invoke(const TapFn& tap, Tapping tapping) {
  const bool compute_skipped = tap && tapping == Tapping::kEveryTensor;
  for (int i : impl_->run_order) {
    if (impl_->skipped[i] && !compute_skipped) continue;
    impl_->Eval(i);
    if (tap)
      for (int32_t t : impl_->graph->ops[i].outputs) tap(i, t, impl_->tensors[t]);
  }
}

npy::Array Interpreter::Output(int index) const {
  if (index < 0 || index >= num_outputs())
    throw Error(ErrorKind::kUsage, fmt::format("output {} does not exist (the model has {})", index, num_outputs()));
  const Tensor& t = impl_->tensors[impl_->graph->outputs[index]];
  npy::Array a;
  a.dtype = t.dtype;
  a.shape.assign(t.shape.begin(), t.shape.end());
  a.data.assign(t.data, t.data + t.bytes);
  return a;
}

namespace {
uint32_t Mulberry32Next(uint32_t& state) {
  state += 0x6d2b79f5u;
  uint32_t t = state;
  t = (t ^ (t >> 15)) * (t | 1u);
  t ^= t + (t ^ (t >> 7)) * (t | 61u);
  return t ^ (t >> 14);
}
}  // namespace

npy::Array GenerateInput(const ir::Tensor& tensor, uint32_t seed, int input_index) {
  npy::Array a;
  a.dtype = tensor.dtype;
  a.shape.assign(tensor.shape.begin(), tensor.shape.end());
  const int64_t n = a.num_elements();
  CheckMemory(static_cast<uint64_t>(n) * ir::DTypeSize(tensor.dtype),
              fmt::format("a generated value for input {} ('{}', {})", input_index, tensor.name,
                          ir::FormatShape(tensor.shape)));
  a.data.assign(static_cast<size_t>(n) * ir::DTypeSize(tensor.dtype), 0);
  uint32_t state = seed + static_cast<uint32_t>(input_index) * 0x9e3779b9u;
  if (tensor.dtype == tfl::TensorType_FLOAT32) {
    for (int64_t i = 0; i < n; ++i) a.as<float>()[i] = static_cast<float>(Mulberry32Next(state) >> 8) / 16777216.0f;
  } else if (tensor.dtype == tfl::TensorType_UINT8) {
    for (int64_t i = 0; i < n; ++i) a.as<uint8_t>()[i] = static_cast<uint8_t>(Mulberry32Next(state) >> 24);
  }
  return a;
}

}  // namespace gpuclean::exec
