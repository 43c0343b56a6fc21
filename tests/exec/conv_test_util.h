#pragma once
// Helpers of the conv-family kernel tests: deterministic inputs and weights,
// and the LiteRT.js comparison run once per graph but checked against our
// interpreter on every SIMD path the machine has (generic, AVX2, AVX-512)
// and with several threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exec/kernels/conv_util.h"
#include "gpuclean/builder.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "support/arrays.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean::testing::convt {

namespace tfl = ::gpuclean::tfl;
namespace conv = ::gpuclean::exec::kernels::conv;
using builder::GraphBuilder;
using builder::kNoInput;
using Shape = std::vector<int32_t>;

// A constant with random values in [-1, 1).
inline int RandomConst(GraphBuilder& b, const std::string& name, const Shape& shape, uint32_t seed) {
  return b.ConstF32(name, shape, RandomValues(CountOf(shape), seed));
}

// Restores the instruction set that was active when a test ends.
class IsaGuard {
 public:
  IsaGuard() : saved_(conv::ActiveIsa()) {}
  ~IsaGuard() { conv::SetIsaForTesting(saved_); }
  IsaGuard(const IsaGuard&) = delete;
  IsaGuard& operator=(const IsaGuard&) = delete;

 private:
  conv::Isa saved_;
};

// Every SIMD path this machine can run, best last.
inline std::vector<conv::Isa> AvailableIsas() {
  std::vector<conv::Isa> isas = {conv::Isa::kGeneric};
  if (conv::DetectedIsa() >= conv::Isa::kAvx2) isas.push_back(conv::Isa::kAvx2);
  if (conv::DetectedIsa() >= conv::Isa::kAvx512) isas.push_back(conv::Isa::kAvx512);
  return isas;
}

// Runs `model` once on LiteRT.js and checks our outputs against it on every
// available instruction set with one thread, and on the best one with three.
inline void ExpectMatchesLiteRtAllIsas(const ir::Model& model, const std::vector<npy::Array>& inputs,
                                       double rel_tol = 1e-4) {
  TempDir dir;
  const std::string path = dir.file("model.tflite");
  format::WriteModel(model, path);
  std::vector<npy::Array> theirs;
  try {
    theirs = RunLiteRt(path, inputs);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    return;
  }
  IsaGuard guard;
  for (conv::Isa isa : AvailableIsas()) {
    SCOPED_TRACE(std::string("isa ") + conv::IsaName(conv::SetIsaForTesting(isa)));
    const std::vector<npy::Array> ours = RunOurs(model, inputs);
    ASSERT_EQ(ours.size(), theirs.size());
    for (size_t i = 0; i < ours.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      ExpectAgrees(theirs[i], ours[i], rel_tol);
    }
  }
  SCOPED_TRACE("3 threads");
  const std::vector<npy::Array> ours = RunOurs(model, inputs, {.threads = 3});
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    ExpectAgrees(theirs[i], ours[i], rel_tol);
  }
}

// Our outputs on every instruction set agree with `expected` (hand-computed).
inline void ExpectOursAllIsas(const ir::Model& model, const std::vector<npy::Array>& inputs, int output,
                              const std::vector<float>& expected, float tol = 1e-5f) {
  IsaGuard guard;
  for (conv::Isa isa : AvailableIsas()) {
    SCOPED_TRACE(std::string("isa ") + conv::IsaName(conv::SetIsaForTesting(isa)));
    const std::vector<float> got = ValuesOf<float>(RunOurs(model, inputs).at(output));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
  }
}

// Our outputs on every instruction set are bit-identical to the generic
// path's (kernels whose SIMD paths compute the same operations in the same
// order).
inline void ExpectEveryIsaGivesTheGenericBits(const ir::Model& model, const std::vector<npy::Array>& inputs) {
  IsaGuard guard;
  conv::SetIsaForTesting(conv::Isa::kGeneric);
  const std::vector<npy::Array> generic = RunOurs(model, inputs);
  for (conv::Isa isa : AvailableIsas()) {
    SCOPED_TRACE(std::string("isa ") + conv::IsaName(conv::SetIsaForTesting(isa)));
    const std::vector<npy::Array> ours = RunOurs(model, inputs);
    ASSERT_EQ(ours.size(), generic.size());
    for (size_t i = 0; i < ours.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      ExpectArrayNear(ours[i], generic[i]);
    }
  }
}

}  // namespace gpuclean::testing::convt
