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
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
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

inline int64_t CountOf(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

template <typename T>
npy::Array MakeArray(ir::DType dtype, const Shape& shape, const std::vector<T>& values) {
  npy::Array a;
  a.dtype = dtype;
  a.shape.assign(shape.begin(), shape.end());
  EXPECT_EQ(static_cast<int64_t>(values.size()), CountOf(shape)) << "test data does not fit its shape";
  a.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}
inline npy::Array F32(const Shape& shape, const std::vector<float>& values) { return MakeArray(kF32, shape, values); }
inline npy::Array I32(const Shape& shape, const std::vector<int32_t>& values) { return MakeArray(kI32, shape, values); }
inline npy::Array U8(const Shape& shape, const std::vector<uint8_t>& values) { return MakeArray(kU8, shape, values); }

// Uniform floats in [lo, hi), deterministic per seed.
inline npy::Array RandomF32(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) x = lo + (hi - lo) * static_cast<float>(rng() >> 8) / 16777216.0f;
  return F32(shape, v);
}
// Floats with |x| uniform in [lo, hi) and a random sign (divisors away from 0).
inline npy::Array RandomSignedF32(const Shape& shape, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) {
    x = lo + (hi - lo) * static_cast<float>(rng() >> 8) / 16777216.0f;
    if (rng() & 1) x = -x;
  }
  return F32(shape, v);
}
// Uniform integers in [lo, hi], deterministic per seed.
inline npy::Array RandomI32(const Shape& shape, uint32_t seed, int32_t lo, int32_t hi) {
  std::mt19937 rng(seed);
  std::vector<int32_t> v(static_cast<size_t>(CountOf(shape)));
  for (int32_t& x : v) x = lo + static_cast<int32_t>(rng() % static_cast<uint32_t>(hi - lo + 1));
  return I32(shape, v);
}
// Integer-valued floats in [lo, hi]: exact ties for comparisons and selects.
inline npy::Array TiedF32(const Shape& shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::vector<float> v(static_cast<size_t>(CountOf(shape)));
  for (float& x : v) x = static_cast<float>(lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)));
  return F32(shape, v);
}

template <typename T>
std::vector<T> ValuesOf(const npy::Array& a) {
  std::vector<T> v(static_cast<size_t>(a.num_elements()));
  if (!v.empty()) std::memcpy(v.data(), a.data.data(), v.size() * sizeof(T));
  return v;
}

// ------------------------------------------------------------------ shapes

struct ShapePair {
  Shape a, b;
};

// Same shapes, scalars on either side, size-1 dims, mutual broadcasting up
// to rank 4, odd and larger sizes (the larger ones cross the parallel grain).
inline std::vector<ShapePair> BroadcastPairs() {
  return {
      {{2, 3, 4}, {2, 3, 4}},          // same shape
      {{7, 13}, {}},                   // scalar b
      {{}, {5, 3}},                    // scalar a
      {{1}, {9}},                      // size-1 vector against a vector
      {{2, 1, 3}, {4, 1}},             // mutual broadcast -> [2,4,3]
      {{3, 1, 5, 1}, {1, 4, 1, 6}},    // 4-D, alternating
      {{1, 1, 1}, {1, 1, 1}},          // all ones
      {{33, 257}, {257}},              // row vector
      {{64, 1}, {64, 301}},            // column vector
      {{1, 5, 5, 3}, {1, 1, 1, 3}},    // per-channel constant-like
      {{2, 40000}, {2, 40000}},        // large: several parallel chunks
      {{3, 70000}, {3, 1}},            // large with a broadcast inner dim
  };
}
// Ranks 5 and 6 (ADD/SUB/MUL/DIV/MAXIMUM/MINIMUM/SQUARED_DIFFERENCE broadcast
// that far in LiteRT; comparisons and the TFLite-only binary ops do not).
inline std::vector<ShapePair> HighRankPairs() {
  return {
      {{2, 1, 3, 1, 2}, {1, 3, 1, 4, 1}},
      {{1, 2, 1, 3, 1, 2}, {2, 1, 3, 1, 2, 1}},
  };
}

// ------------------------------------------------------------------ graphs

// Adds one op per pair of inputs; returns its output.
using BinaryMaker = std::function<int(GraphBuilder&, int, int)>;
using InputMaker = std::function<npy::Array(const Shape&, uint32_t)>;

struct BinaryGraph {
  ir::Model model;
  std::vector<npy::Array> inputs;
};

// One graph holding `op` once per shape pair, inputs of `dtype` from the makers.
inline BinaryGraph MakeBinaryGraph(const std::vector<ShapePair>& pairs, ir::DType dtype, const BinaryMaker& op,
                                   const InputMaker& make_a, const InputMaker& make_b, uint32_t seed) {
  GraphBuilder b;
  BinaryGraph g;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const int x = b.Input("a" + std::to_string(i), dtype, pairs[i].a);
    const int y = b.Input("b" + std::to_string(i), dtype, pairs[i].b);
    b.Output(op(b, x, y));
    g.inputs.push_back(make_a(pairs[i].a, seed + 2 * static_cast<uint32_t>(i)));
    g.inputs.push_back(make_b(pairs[i].b, seed + 2 * static_cast<uint32_t>(i) + 1));
  }
  g.model = b.Finish();
  return g;
}

// Our outputs with several threads are bit-identical to one thread.
inline void ExpectThreadsAgree(const ir::Model& model, const std::vector<npy::Array>& inputs, int threads = 3) {
  const std::vector<npy::Array> one = RunOurs(model, inputs, {.threads = 1});
  const std::vector<npy::Array> many = RunOurs(model, inputs, {.threads = threads});
  ASSERT_EQ(one.size(), many.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].shape, many[i].shape) << "output " << i;
    EXPECT_TRUE(one[i].data == many[i].data) << "output " << i << " differs with " << threads << " threads";
  }
}

// The binary op over every pair against LiteRT.js, and thread-independence.
inline void ExpectBinaryMatches(const std::vector<ShapePair>& pairs, ir::DType dtype, const BinaryMaker& op,
                                const InputMaker& make_a, const InputMaker& make_b, uint32_t seed = 1) {
  const BinaryGraph g = MakeBinaryGraph(pairs, dtype, op, make_a, make_b, seed);
  ExpectMatchesLiteRt(g.model, g.inputs);
  ExpectThreadsAgree(g.model, g.inputs);
}

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

// A unary float op over several shapes (scalar, size-1, odd, large) in one
// graph, inputs uniform in [lo, hi), against LiteRT.js.
inline void ExpectUnaryMatches(const std::function<int(GraphBuilder&, int)>& op, float lo, float hi,
                               uint32_t seed = 1) {
  const std::vector<Shape> shapes = {{}, {1}, {7}, {3, 5, 11}, {1, 1, 4, 1}, {2, 3, 4, 5, 6}, {4, 65537}};
  GraphBuilder b;
  std::vector<npy::Array> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int x = b.Input("x" + std::to_string(i), kF32, shapes[i]);
    b.Output(op(b, x));
    inputs.push_back(RandomF32(shapes[i], seed + static_cast<uint32_t>(i), lo, hi));
  }
  const ir::Model model = b.Finish();
  ExpectMatchesLiteRt(model, inputs);
  ExpectThreadsAgree(model, inputs);
}

// Runs a single float32 unary op on our interpreter only.
inline std::vector<float> RunUnaryOurs(const std::function<int(GraphBuilder&, int)>& op,
                                       const std::vector<float>& values) {
  GraphBuilder b;
  const int x = b.Input("x", kF32, {static_cast<int32_t>(values.size())});
  b.Output(op(b, x));
  const auto out = RunOurs(b.Finish(), {F32({static_cast<int32_t>(values.size())}, values)});
  EXPECT_EQ(out.size(), 1u);
  return ValuesOf<float>(out.at(0));
}

// Element-wise equality where NaN equals NaN.
inline void ExpectSameFloats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": got " << got[i] << ", want NaN";
    } else {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

// The interpreter refuses the model at prepare with Error(`kind`).
inline void ExpectRejected(const ir::Model& model, ErrorKind kind = ErrorKind::kUnsupported) {
  try {
    exec::Interpreter interpreter(std::make_shared<const ir::Model>(model));
    ADD_FAILURE() << "the interpreter accepted the model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
  }
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
  const int zero = is_int ? b.ConstI32("zero_" + std::to_string(x), {}, {0})
                          : b.ConstF32("zero_" + std::to_string(x), {}, {0.0f});
  return b.Greater(x, zero);
}

}  // namespace gpuclean::testing::ewt
