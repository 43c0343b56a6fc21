#pragma once
// Conformance with the real runtime: run a model on gpuclean's interpreter and
// on LiteRT.js (wasm CPU) with the same inputs and compare.
#include <string>
#include <vector>

#include "gpuclean/exec.h"
#include "gpuclean/ir.h"
#include "gpuclean/npy.h"

namespace gpuclean::testing {

std::vector<npy::Array> RunOurs(const ir::Model& model, const std::vector<npy::Array>& inputs,
                                exec::InterpreterOptions options = {});

struct Agreement {
  double max_abs_diff = 0;
  double max_abs_ref = 0;
  double correlation = 1;
};
Agreement Compare(const npy::Array& ref, const npy::Array& got);

// Writes `model` to a temp file, runs both, and expects per output: same
// dtype and shape; floats within max abs diff <= rel_tol * max(1, max|ref|)
// (NaN where the reference has NaN); integers and bools exactly equal.
void ExpectMatchesLiteRt(const ir::Model& model, const std::vector<npy::Array>& inputs, double rel_tol = 1e-4);

}  // namespace gpuclean::testing
