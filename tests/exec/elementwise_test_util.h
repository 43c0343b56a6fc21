#pragma once
// Helpers of the elementwise-family kernel tests: deterministic inputs, the
// standard broadcasting shape pairs, multi-case graphs (one LiteRT.js call
// checks many shapes), and expectations for what LiteRT.js cannot check
// (bool and int64 tensors at the graph boundary, NaN edge cases, errors).
//
// LiteRT.js feeds and returns only float32, int32 and uint8, so bool and
// int64 tensors are made inside the graph (a comparison, a CAST) and turned
// back into int32/float32 before the outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "support/arrays.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean::testing::ewt {

namespace tfl = ::gpuclean::tfl;
using builder::GraphBuilder;
using Shape = std::vector<int32_t>;

inline constexpr ir::DType kF32 = tfl::TensorType_FLOAT32;
inline constexpr ir::DType kI32 = tfl::TensorType_INT32;
inline constexpr ir::DType kI64 = tfl::TensorType_INT64;
inline constexpr ir::DType kU8 = tfl::TensorType_UINT8;
inline constexpr ir::DType kBool = tfl::TensorType_BOOL;

// ------------------------------------------------------------------ shapes

struct ShapePair {
  Shape a, b;
};

// Same shapes, scalars on either side, size-1 dims, mutual broadcasting up
// to rank 4, odd and larger sizes (the larger ones cross the parallel grain).
inline std::vector<ShapePair> BroadcastPairs4D() {
  return {
      {{2, 3, 4}, {2, 3, 4}},        // same shape
      {{7, 13}, {}},                 // scalar b
      {{}, {5, 3}},                  // scalar a
      {{1}, {9}},                    // size-1 vector against a vector
      {{2, 1, 3}, {4, 1}},           // mutual broadcast -> [2,4,3]
      {{3, 1, 5, 1}, {1, 4, 1, 6}},  // 4-D, alternating
      {{1, 1, 1}, {1, 1, 1}},        // all ones
      {{33, 257}, {257}},            // row vector
      {{64, 1}, {64, 301}},          // column vector
      {{1, 5, 5, 3}, {1, 1, 1, 3}},  // per-channel constant-like
      {{2, 40000}, {2, 40000}},      // large: several parallel chunks
      {{3, 70000}, {3, 1}},          // large with a broadcast inner dim
  };
}
// Ranks 5 and 6 (LiteRT.js 2.5.3 broadcasts every binary op of the family
// that far, float32 and int32).
inline std::vector<ShapePair> HighRankPairs() {
  return {
      {{2, 1, 3, 1, 2}, {1, 3, 1, 4, 1}},
      {{1, 2, 1, 3, 1, 2}, {2, 1, 3, 1, 2, 1}},
  };
}

// All of the above.
inline std::vector<ShapePair> BroadcastPairs() {
  std::vector<ShapePair> pairs = BroadcastPairs4D();
  for (const ShapePair& p : HighRankPairs()) pairs.push_back(p);
  return pairs;
}

// ------------------------------------------------------------------ graphs

// Adds one op on two inputs; returns its output.
using BinaryMaker = std::function<int(GraphBuilder&, int, int)>;
// Makes an input's values for a shape and a seed.
using InputMaker = std::function<npy::Array(const Shape&, uint32_t)>;

// Many cases in one graph, so that one LiteRT.js run (~0.3 s of node start-up
// each) checks them all: inputs are added with their values, outputs as the
// cases go, and ExpectMatches() compares every output and reruns ours with
// several threads.
class CaseGraph {
 public:
  GraphBuilder& b() { return b_; }
  const std::vector<npy::Array>& inputs() const { return inputs_; }

  // A graph input holding `value` (its dtype and shape).
  int Input(npy::Array value) {
    const Shape shape(value.shape.begin(), value.shape.end());
    const int t = b_.Input("in" + std::to_string(inputs_.size()), value.dtype, shape);
    inputs_.push_back(std::move(value));
    return t;
  }
  void Output(int tensor) { b_.Output(tensor); }

  // `op` once per shape pair, on fresh inputs from the makers.
  void AddBinary(const std::vector<ShapePair>& pairs, const BinaryMaker& op, const InputMaker& make_a,
                 const InputMaker& make_b, uint32_t seed) {
    for (const auto& p : pairs) {
      const int x = Input(make_a(p.a, seed++));
      const int y = Input(make_b(p.b, seed++));
      Output(op(b_, x, y));
    }
  }
  // `op` once per shape (scalar, size-1, odd, rank 5, large), inputs in [lo, hi).
  void AddUnary(const std::function<int(GraphBuilder&, int)>& op, float lo, float hi, uint32_t seed) {
    for (const Shape& s : UnaryShapes()) Output(op(b_, Input(RandomF32(s, seed++, lo, hi))));
  }
  // `op` on a vector of chosen values.
  void AddValues(const std::function<int(GraphBuilder&, int)>& op, const std::vector<float>& values) {
    Output(op(b_, Input(F32({static_cast<int32_t>(values.size())}, values))));
  }

  static std::vector<Shape> UnaryShapes() {
    return {{}, {1}, {7}, {3, 5, 11}, {1, 1, 4, 1}, {2, 3, 4, 5, 6}, {4, 65537}};
  }

  // Against LiteRT.js, and one thread against three.
  void ExpectMatches(double rel_tol = 1e-4) {
    const ir::Model model = b_.Finish();
    ExpectMatchesLiteRt(model, inputs_, rel_tol);
    ExpectThreadsAgree(model, inputs_);
  }

 private:
  GraphBuilder b_;
  std::vector<npy::Array> inputs_;
};

inline InputMaker Uniform(float lo, float hi) {
  return [lo, hi](const Shape& s, uint32_t seed) { return RandomF32(s, seed, lo, hi); };
}
inline InputMaker SignedAway(float lo, float hi) {
  return [lo, hi](const Shape& s, uint32_t seed) { return RandomSignedF32(s, seed, lo, hi); };
}
inline InputMaker Ints(int32_t lo, int32_t hi) {
  return [lo, hi](const Shape& s, uint32_t seed) { return RandomI32(s, seed, lo, hi); };
}
inline InputMaker Tied(int lo, int hi) {
  return [lo, hi](const Shape& s, uint32_t seed) { return TiedF32(s, seed, lo, hi); };
}

// Runs a single float32 unary op on our interpreter only.
inline std::vector<float> RunUnaryOurs(const std::function<int(GraphBuilder&, int)>& op,
                                       const std::vector<float>& values) {
  const auto out = RunGraphOp({F32({static_cast<int32_t>(values.size())}, values)},
                              [&](GraphBuilder& b, const std::vector<int>& in) { b.Output(op(b, in[0])); });
  EXPECT_EQ(out.size(), 1u);
  return ValuesOf<float>(out.at(0));
}

// Invoking the model with `inputs` throws Error(`kind`) whose message has `text`.
inline void ExpectInvokeFails(const ir::Model& model, const std::vector<npy::Array>& inputs, const std::string& text,
                              ErrorKind kind = ErrorKind::kBadInput) {
  try {
    RunOurs(model, inputs);
    ADD_FAILURE() << "the model ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

// LiteRT.js refuses to run the model with `inputs` (fails to invoke).
inline void ExpectLiteRtFails(const ir::Model& model, const std::vector<npy::Array>& inputs) {
  TempDir dir;
  format::WriteModel(model, dir.file("model.tflite"));
  EXPECT_THROW(RunLiteRt(dir.file("model.tflite"), inputs), std::exception);
}

// A bool tensor as int32 0/1 for an output (LiteRT.js cannot return bools).
inline int BoolOut(GraphBuilder& b, int x) { return b.Cast(x, kI32); }

// A bool tensor made in the graph: x > 0 (x float32) or x > 0 (x int32).
inline int PositiveMask(GraphBuilder& b, int x) {
  const bool is_int = b.tensor(x).dtype == kI32;
  const int zero =
      is_int ? b.ConstI32("zero_" + std::to_string(x), {}, {0}) : b.ConstF32("zero_" + std::to_string(x), {}, {0.0f});
  return b.Greater(x, zero);
}

}  // namespace gpuclean::testing::ewt
