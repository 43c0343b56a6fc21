#pragma once
// The reference interpreter. It is the instrument the rest of gpuclean
// measures with: lint's numeric checks, the fp16 emulation and the proof that
// a rewrite is exact all run models through it.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/npy.h"
#include "gpuclean/precision.h"

namespace gpuclean::exec {

// The numeric modes are named in precision.h, below the interpreter, so that
// the matrix (lint) can name a target's mode without linking the interpreter.
using gpuclean::ParsePrecision;
using gpuclean::Precision;
using gpuclean::PrecisionName;
using gpuclean::PrecisionNames;

// kFp16Fused's rule, per tensor of `graph`: true for a tensor that never
// reaches memory - the input an elementwise op is linked on (the op runs in
// the kernel that computes it) and the statistics inside a LayerNorm the
// backend computes as one kernel. docs/numerics.md states the rule and the
// measurements behind it.
std::vector<bool> KeptInFloat(const ir::Subgraph& graph);

// A runtime tensor: shape plus a pointer into the arena, the mapped model
// file (constants) or memory computed once at prepare time.
struct Tensor {
  ir::DType dtype = tfl::TensorType_FLOAT32;
  std::vector<int32_t> shape;
  uint8_t* data = nullptr;
  size_t bytes = 0;

  int rank() const { return static_cast<int>(shape.size()); }
  int32_t dim(int i) const { return shape[i < 0 ? i + rank() : i]; }
  int64_t num_elements() const {
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    return n;
  }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
};

struct InterpreterOptions {
  int threads = 1;
  Precision precision = Precision::kFp32;
  int subgraph = 0;
  // fp32: a LayerNorm runs as one pass per row and its square, variance and
  // reciprocal root are never written, so no tap sees them. Off where a tap
  // must (convert's fp16 range check: a square past half's 65504 is what the
  // fp16-safe norm rewrites fix). The outputs are the same bits either way.
  bool fuse_layer_norms = true;
};

// Called after each op with each of its outputs (tensor index, values).
using TapFn = std::function<void(int op_index, int tensor_index, const Tensor& value)>;

// What a tapped Invoke computes. Untapped runs skip work whose result only
// a tap would see (a zero PAD whose convolution pads as it reads, the
// LOGISTIC of a SiLU the MUL computes whole):
// kEveryTensor computes it so every tensor is tapped; kAsUntapped taps only
// the ops an untapped run computes (per-op timing).
enum class Tapping { kEveryTensor, kAsUntapped };

// A float32 tensor's largest finite magnitude and how many of its values
// are inf or NaN (zero for other dtypes). Large tensors are read on every
// core: a tap over a 1024x1024 model's run reads gigabytes.
struct FloatRange {
  float largest_finite = 0;
  int64_t non_finite = 0;
};
FloatRange RangeOf(const Tensor& value);

class Interpreter {
 public:
  // Prepares: checks every op has a kernel for its dtypes (Error kUnsupported
  // naming op, node index and dtype otherwise), infers shapes, evaluates
  // constant-only ops once, and plans the activation arena.
  Interpreter(std::shared_ptr<const ir::Model> model, InterpreterOptions options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  const ir::Subgraph& graph() const;
  int num_inputs() const;
  int num_outputs() const;
  // Copies `value` into input `index`; dtype and shape must match.
  void SetInput(int index, const npy::Array& value);
  void Invoke(const TapFn& tap = nullptr, Tapping tapping = Tapping::kEveryTensor);
  npy::Array Output(int index) const;
  const Tensor& tensor(int tensor_index) const;

  size_t arena_bytes() const;
  // Ops computed once at prepare (constants only), and ops an untapped run
  // skips (a PAD its reader pads through, a LOGISTIC its SiLU MUL computes,
  // the SPLIT and CONV_2Ds of a grouped convolution run at its CONCATENATION).
  int ops_folded() const;
  // What an untapped run computes at the op: its type, or what the
  // interpreter runs in its place ("CONV_2D (grouped)" at a grouped
  // convolution's CONCATENATION, "MUL (SiLU)").
  std::string RunsAs(int op_index) const;
  int ops_skipped() const;
  size_t folded_const_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Refuses, in the interpreter's words, a model whose inputs or op outputs
// (as declared) are each larger than the memory limit, or whose run cannot
// fit: any op's inputs and outputs are in the arena at once, beside the
// input values the caller holds. What `run` refuses, `lint` and `fix` refuse
// too, before any work.
void CheckTensorsFitMemory(const ir::Model& model);

// Whether a CPU graph can hold op `op_index` of `graph`: a TFLite builtin
// (what LiteRT's CPU path and LiteRT.js wasm run) that gpuclean's interpreter
// has a kernel for, dtypes and attributes included, so the island can be
// proven before it is written. `why_not` says which part fails.
bool RunsAsCpuGraphOp(const ir::Subgraph& graph, int op_index, std::string* why_not = nullptr);

// The documented input generator of `gpuclean run`: float inputs uniform in
// [0,1), integer inputs 0, bool false. mulberry32 seeded per input with
// (seed + i * 0x9E3779B9) mod 2^32 - the same as probe/litert_run.mjs.
npy::Array GenerateInput(const ir::Tensor& tensor, uint32_t seed, int input_index);

}  // namespace gpuclean::exec
