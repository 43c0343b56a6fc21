// Shape inference entry points, the shared helpers of shapes.h and the
// checked input accessors the per-family rules use.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ir/shapes_internal.h"

namespace gpuclean::ir {
namespace shapes {

void OpView::ExpectInputCount(int min, int max) const {
  if (num_inputs() < min || num_inputs() > max) {
    if (min == max) Fail("expects {} inputs, got {}", min, num_inputs());
    Fail("expects {} to {} inputs, got {}", min, max, num_inputs());
  }
}

const InputInfo& OpView::input(int i) const {
  if (!has(i)) Fail("input {} is missing", i);
  return inputs_[i];
}

int64_t OpView::num_elements(int i) const { return Product(shape(i)); }

void OpView::ExpectRank(int i, int rank, std::string_view role) const {
  if (this->rank(i) != rank) Fail("{} (input {}) must have rank {}, got {}", role, i, rank, FormatShape(shape(i)));
}

void OpView::ExpectRankBetween(int i, int min, int max, std::string_view role) const {
  if (rank(i) < min || rank(i) > max)
    Fail("{} (input {}) must have rank {} to {}, got {}", role, i, min, max, FormatShape(shape(i)));
}

void OpView::ExpectDType(int i, std::initializer_list<DType> allowed, std::string_view role) const {
  if (std::find(allowed.begin(), allowed.end(), dtype(i)) != allowed.end()) return;
  std::vector<std::string_view> names;
  for (DType d : allowed) names.push_back(DTypeName(d));
  Fail("{} (input {}) must be {}, got {}", role, i, fmt::join(names, " or "), DTypeName(dtype(i)));
}

void OpView::ExpectSameDType(int a, int b) const {
  if (dtype(a) != dtype(b))
    Fail("inputs {} and {} must have the same dtype, got {} and {}", a, b, DTypeName(dtype(a)), DTypeName(dtype(b)));
}

std::vector<int64_t> OpView::Ints(int i, std::string_view role) const {
  const InputInfo& in = input(i);
  if (!in.value)
    ThrowUnsupported(fmt::format("{}: output shape depends on the value of {} (input {}), which is not a constant",
                                 op_.name(), role, i));
  const int64_t count = Product(in.spec.shape);
  const size_t element_size = DTypeSize(in.spec.dtype);
  if (element_size == 0 || in.value->size() != static_cast<size_t>(count) * element_size)
    Fail("{} (input {}) holds {} bytes, which does not fit its {} shape {}", role, i, in.value->size(),
         DTypeName(in.spec.dtype), FormatShape(in.spec.shape));
  std::vector<int64_t> values;
  values.reserve(count);
  auto widen = [&]<typename T>() {
    for (int64_t k = 0; k < count; ++k) {
      T element;
      std::memcpy(&element, in.value->data() + k * sizeof(T), sizeof(T));
      values.push_back(static_cast<int64_t>(element));
    }
  };
  switch (in.spec.dtype) {
    case tfl::TensorType_INT32: widen.operator()<int32_t>(); break;
    case tfl::TensorType_INT64: widen.operator()<int64_t>(); break;
    case tfl::TensorType_INT16: widen.operator()<int16_t>(); break;
    case tfl::TensorType_UINT8: widen.operator()<uint8_t>(); break;
    default: Fail("{} (input {}) must be an integer tensor, got {}", role, i, DTypeName(in.spec.dtype));
  }
  return values;
}

int64_t OpView::ScalarInt(int i, std::string_view role) const {
  std::vector<int64_t> values = Ints(i, role);
  if (values.size() != 1 || rank(i) > 1)
    Fail("{} (input {}) must be a single value, got shape {}", role, i, FormatShape(shape(i)));
  return values[0];
}

int64_t Product(std::span<const int32_t> shape) {
  int64_t n = 1;
  for (int32_t d : shape)
    if (__builtin_mul_overflow(n, static_cast<int64_t>(d), &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

int64_t CheckedMul(const OpView& v, int64_t a, int64_t b, std::string_view what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) v.Fail("{} {} x {} overflows", what, a, b);
  return product;
}

int32_t ToDim(const OpView& v, int64_t value, std::string_view what) {
  if (value < 0 || value > std::numeric_limits<int32_t>::max()) v.Fail("{} {} is not a valid dimension", what, value);
  return static_cast<int32_t>(value);
}

Shape CheckedWindowOutput(const OpView& v, tfl::Padding padding, const Shape& input_nhwc, int32_t filter_h,
                          int32_t filter_w, int32_t stride_h, int32_t stride_w, int32_t dilation_h, int32_t dilation_w,
                          int32_t out_channels) {
  if (padding != tfl::Padding_SAME && padding != tfl::Padding_VALID)
    v.Fail("unknown padding {}", static_cast<int>(padding));
  if (stride_h < 1 || stride_w < 1) v.Fail("strides must be >= 1, got h={} w={}", stride_h, stride_w);
  if (dilation_h < 1 || dilation_w < 1) v.Fail("dilations must be >= 1, got h={} w={}", dilation_h, dilation_w);
  if (filter_h < 1 || filter_w < 1) v.Fail("window must be at least 1x1, got {}x{}", filter_h, filter_w);
  const int32_t out_h = WindowOutputSize(padding, input_nhwc[1], filter_h, stride_h, dilation_h);
  const int32_t out_w = WindowOutputSize(padding, input_nhwc[2], filter_w, stride_w, dilation_w);
  if (out_h <= 0 || out_w <= 0)
    v.Fail("VALID window {}x{} (dilation {}x{}) does not fit the {}x{} input", filter_h, filter_w, dilation_h,
           dilation_w, input_nhwc[1], input_nhwc[2]);
  // Kernels index with int32 offsets: the padded extent must fit one.
  const int64_t extent_h = (int64_t{out_h} - 1) * stride_h + (int64_t{filter_h} - 1) * dilation_h + 1;
  const int64_t extent_w = (int64_t{out_w} - 1) * stride_w + (int64_t{filter_w} - 1) * dilation_w + 1;
  if (extent_h > std::numeric_limits<int32_t>::max() || extent_w > std::numeric_limits<int32_t>::max())
    v.Fail("window {}x{} with stride {}x{} and dilation {}x{} spans more than 2^31 positions", filter_h, filter_w,
           stride_h, stride_w, dilation_h, dilation_w);
  return {input_nhwc[0], out_h, out_w, out_channels};
}

namespace {

const RuleTable& Rules() {
  static const RuleTable table = [] {
    RuleTable t;
    AddElementwiseRules(t);
    AddConvRules(t);
    AddLayoutRules(t);
    AddReduceRules(t);
    return t;
  }();
  return table;
}

const Rule* FindRule(const Op& op) {
  const RuleTable& table = Rules();
  if (op.code == tfl::BuiltinOperator_CUSTOM) {
    auto it = table.custom.find(op.custom_code);
    return it == table.custom.end() ? nullptr : &it->second;
  }
  auto it = table.builtin.find(static_cast<int32_t>(op.code));
  return it == table.builtin.end() ? nullptr : &it->second;
}

// TfLitePadding: 0 unknown, 1 same, 2 valid.
int32_t ToTfLitePadding(tfl::Padding padding) { return padding == tfl::Padding_VALID ? 2 : 1; }

tfl::Padding FromTfLitePadding(int32_t value, const char* op) {
  if (value == 1) return tfl::Padding_SAME;
  if (value == 2) return tfl::Padding_VALID;
  ThrowBadInput(fmt::format("{}: custom options hold unknown padding {}", op, value));
}

std::vector<uint8_t> PackInts(std::initializer_list<int32_t> fields) {
  std::vector<uint8_t> bytes(fields.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), std::data(fields), bytes.size());
  return bytes;
}

std::vector<int32_t> UnpackInts(std::span<const uint8_t> bytes, size_t count, const char* op) {
  if (bytes.size() < count * sizeof(int32_t))
    ThrowBadInput(
        fmt::format("{}: custom options hold {} bytes, need at least {}", op, bytes.size(), count * sizeof(int32_t)));
  std::vector<int32_t> fields(count);
  std::memcpy(fields.data(), bytes.data(), count * sizeof(int32_t));
  return fields;
}

}  // namespace
}  // namespace shapes

// ---------------------------------------------------------------- public API

std::vector<TensorSpec> InferOutputs(const Op& op, std::span<const InputInfo> inputs,
                                     std::span<const DType> declared_outputs) {
  const shapes::Rule* rule = shapes::FindRule(op);
  if (!rule) ThrowUnsupported(fmt::format("{}: no shape rule for this operator", op.name()));
  const shapes::OpView view(op, inputs, declared_outputs);
  std::vector<TensorSpec> outputs = (*rule)(view);
  for (size_t k = 0; k < outputs.size(); ++k)
    if (shapes::Product(outputs[k].shape) > kMaxTensorElements)
      view.Fail("output {} would have shape {}, more than 2^40 elements", k, FormatShape(outputs[k].shape));
  return outputs;
}

std::vector<TensorSpec> InferTensorSpecs(const Subgraph& g) {
  std::vector<TensorSpec> specs;
  specs.reserve(g.tensors.size());
  for (const Tensor& t : g.tensors) specs.push_back({t.dtype, t.shape});
  for (int index : g.TopologicalOrder()) {
    const Op& op = g.ops[index];
    if (!HasShapeRule(op)) continue;
    std::vector<InputInfo> inputs(op.inputs.size());
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int32_t t = op.inputs[k];
      if (t < 0) continue;
      inputs[k].present = true;
      inputs[k].spec = specs[t];
      const Tensor& tensor = g.tensors[t];
      if (tensor.data && !tensor.sparsity) inputs[k].value = tensor.data;
    }
    std::vector<DType> declared;
    for (int32_t t : op.outputs) declared.push_back(g.tensors[t].dtype);
    std::vector<TensorSpec> outputs;
    try {
      outputs = InferOutputs(op, inputs, declared);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kUnsupported) continue;  // shapes follow runtime values: keep the declared ones
      std::string why = e.what();
      if (why.starts_with(op.name() + ": ")) why.erase(0, op.name().size() + 2);
      throw Error(e.kind(), fmt::format("op {} ({}): {}", index, op.name(), why));
    }
    if (outputs.size() != op.outputs.size())
      ThrowBadInput(fmt::format("op {} ({}): has {} outputs but the op makes {}", index, op.name(), op.outputs.size(),
                                outputs.size()));
    for (size_t k = 0; k < outputs.size(); ++k) specs[op.outputs[k]] = std::move(outputs[k]);
  }
  return specs;
}

std::vector<TensorSpec> InferOutputs(const Subgraph& g, const Op& op) {
  std::vector<InputInfo> inputs;
  inputs.reserve(op.inputs.size());
  for (int32_t t : op.inputs) {
    InputInfo info;
    if (t >= 0) {
      if (t >= static_cast<int32_t>(g.tensors.size()))
        ThrowBadInput(fmt::format("{}: input tensor {} does not exist", op.name(), t));
      const Tensor& tensor = g.tensors[t];
      info.present = true;
      info.spec = {tensor.dtype, tensor.shape};
      // Sparse constants hold compressed values, which no rule may read as dense.
      if (tensor.data && !tensor.sparsity) info.value = tensor.data;
    }
    inputs.push_back(std::move(info));
  }
  std::vector<DType> declared;
  for (int32_t t : op.outputs)
    if (t >= 0 && t < static_cast<int32_t>(g.tensors.size())) declared.push_back(g.tensors[t].dtype);

  try {
    return InferOutputs(op, inputs, declared);
  } catch (const Error& e) {
    // Name the op by its position when it is one of the graph's ops.
    if (!g.ops.empty() && &op >= g.ops.data() && &op < g.ops.data() + g.ops.size())
      throw Error(e.kind(), fmt::format("subgraph '{}' op {}: {}", g.name, &op - g.ops.data(), e.what()));
    throw;
  }
}

bool HasShapeRule(const Op& op) { return shapes::FindRule(op) != nullptr; }

std::string FormatShape(std::span<const int32_t> shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::vector<int32_t> BroadcastShapes(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int32_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the innermost dimension; missing leading dimensions are 1.
    const int32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      ThrowBadInput(fmt::format("shapes {} and {} do not broadcast", FormatShape(a), FormatShape(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int NormalizeAxis(int64_t axis, int rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    ThrowBadInput(fmt::format("{}: axis {} is out of range for rank {}", what, axis, rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int> NormalizeAxes(std::span<const int64_t> axes, int rank, const std::string& what) {
  std::vector<int> out;
  for (int64_t a : axes) out.push_back(NormalizeAxis(a, rank, what));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int32_t WindowOutputSize(tfl::Padding padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation) {
  if (stride <= 0) return 0;
  // 64-bit: hostile strides and dilations (2^30, INT32_MAX) must not wrap.
  const int64_t dilated_filter = (int64_t{filter} - 1) * dilation + 1;
  const int64_t out = padding == tfl::Padding_SAME ? (int64_t{in} + stride - 1) / stride
                                                   : (int64_t{in} + stride - dilated_filter) / stride;
  return static_cast<int32_t>(std::clamp<int64_t>(out, 0, std::numeric_limits<int32_t>::max()));
}

WindowPadding ComputeWindowPadding(tfl::Padding padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation,
                                   int32_t out) {
  if (padding == tfl::Padding_VALID) return {};
  const int64_t dilated_filter = (int64_t{filter} - 1) * dilation + 1;
  const int64_t total =
      std::clamp<int64_t>((int64_t{out} - 1) * stride + dilated_filter - in, 0, std::numeric_limits<int32_t>::max());
  return {static_cast<int32_t>(total / 2), static_cast<int32_t>(total - total / 2)};
}

std::vector<uint8_t> EncodeMediaPipeOptions(const MediaPipeTransposeConvOptions& o) {
  // TfLiteTransposeConvParams {padding, stride_width, stride_height}.
  return shapes::PackInts({shapes::ToTfLitePadding(o.padding), o.stride_w, o.stride_h});
}

std::vector<uint8_t> EncodeMediaPipeOptions(const MediaPipePoolOptions& o) {
  // TfLitePoolParams {padding, stride_width, stride_height, filter_width,
  // filter_height, activation, computed.padding {width, height, width_offset,
  // height_offset}}; the kernels fill `computed` themselves.
  return shapes::PackInts({shapes::ToTfLitePadding(o.padding), o.stride_w, o.stride_h, o.filter_w, o.filter_h,
                           static_cast<int32_t>(o.activation), 0, 0, 0, 0});
}

MediaPipeTransposeConvOptions DecodeMediaPipeTransposeConvOptions(std::span<const uint8_t> bytes) {
  constexpr const char* kOp = "Convolution2DTransposeBias";
  std::vector<int32_t> f = shapes::UnpackInts(bytes, 3, kOp);
  return {shapes::FromTfLitePadding(f[0], kOp), f[1], f[2]};
}

MediaPipePoolOptions DecodeMediaPipePoolOptions(std::span<const uint8_t> bytes) {
  constexpr const char* kOp = "MediaPipe pooling op";
  std::vector<int32_t> f = shapes::UnpackInts(bytes, 6, kOp);
  return {shapes::FromTfLitePadding(f[0], kOp), f[1], f[2], f[3], f[4], static_cast<tfl::ActivationFunctionType>(f[5])};
}

}  // namespace gpuclean::ir
