#pragma once
// Shared machinery of the shape rules (src/ir/shapes_*.cc): a read-only view
// of one op and its inputs with checked accessors, and the rule tables each
// op family fills.
#include <fmt/format.h>

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"

namespace gpuclean::ir::shapes {

using Shape = std::vector<int32_t>;

class OpView {
 public:
  OpView(const Op& op, std::span<const InputInfo> inputs, std::span<const DType> declared_outputs)
      : op_(op), inputs_(inputs), declared_outputs_(declared_outputs) {}

  const Op& op() const { return op_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Declared dtype of output `i`, when the model gives one.
  std::optional<DType> declared_output(int i) const {
    if (i < static_cast<int>(declared_outputs_.size())) return declared_outputs_[i];
    return std::nullopt;
  }

  // Throws unless the op has between `min` and `max` inputs (trailing omitted
  // optional inputs count as given).
  void ExpectInputCount(int min, int max) const;
  void ExpectInputCount(int count) const { ExpectInputCount(count, count); }

  bool has(int i) const { return i < num_inputs() && inputs_[i].present; }
  const InputInfo& input(int i) const;  // throws when absent
  const Shape& shape(int i) const { return input(i).spec.shape; }
  DType dtype(int i) const { return input(i).spec.dtype; }
  int rank(int i) const { return static_cast<int>(shape(i).size()); }
  int64_t num_elements(int i) const;

  void ExpectRank(int i, int rank, std::string_view role) const;
  void ExpectRankBetween(int i, int min, int max, std::string_view role) const;
  void ExpectDType(int i, std::initializer_list<DType> allowed, std::string_view role) const;
  void ExpectSameDType(int a, int b) const;

  // Integer contents of input `i` (int32, int64, int16 or uint8), widened.
  // Throws kUnsupported when the value is not known.
  std::vector<int64_t> Ints(int i, std::string_view role) const;
  // A single integer: a scalar or a one-element tensor.
  int64_t ScalarInt(int i, std::string_view role) const;

  // The op's options table, or the defaults LiteRT uses when it has none.
  template <typename T>
  T Options() const {
    if (op_.options.type == tfl::BuiltinOptionsUnionTraits<T>::enum_value && op_.options.value)
      return *static_cast<const T*>(op_.options.value);
    return T{};
  }

  // Throws Error(kBadInput) "<OP>: <message>".
  template <typename... Args>
  [[noreturn]] void Fail(fmt::format_string<Args...> format, Args&&... args) const {
    ThrowBadInput(fmt::format("{}: {}", op_.name(), fmt::format(format, std::forward<Args>(args)...)));
  }

 private:
  const Op& op_;
  std::span<const InputInfo> inputs_;
  std::span<const DType> declared_outputs_;
};

using Rule = std::function<std::vector<TensorSpec>(const OpView&)>;

struct RuleTable {
  std::map<int32_t, Rule> builtin;     // by BuiltinOperator
  std::map<std::string, Rule> custom;  // by custom code
};

// Each family registers its ops.
void AddElementwiseRules(RuleTable& table);
void AddConvRules(RuleTable& table);
void AddLayoutRules(RuleTable& table);
void AddReduceRules(RuleTable& table);

// Small shared helpers.
Shape CheckedWindowOutput(const OpView& v, tfl::Padding padding, const Shape& input_nhwc, int32_t filter_h,
                          int32_t filter_w, int32_t stride_h, int32_t stride_w, int32_t dilation_h, int32_t dilation_w,
                          int32_t out_channels);
// Saturates at INT64_MAX instead of wrapping.
int64_t Product(std::span<const int32_t> shape);
// a * b, or Fail("<what> a x b overflows").
int64_t CheckedMul(const OpView& v, int64_t a, int64_t b, std::string_view what);
int32_t ToDim(const OpView& v, int64_t value, std::string_view what);

}  // namespace gpuclean::ir::shapes
