#pragma once
// Conformance with the real runtime: run a model on gpuclean's interpreter and
// on LiteRT.js (wasm CPU) with the same inputs and compare. Also the one set
// of tolerance assertions and the one single-op harness every test folder
// uses.
#include <functional>
#include <string>
#include <vector>

#include "gpuclean/builder.h"
#include "gpuclean/error.h"

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
// That rule for one output: `ref` from a runtime, `got` ours.
void ExpectAgrees(const npy::Array& ref, const npy::Array& got, double rel_tol);

// Element by element, for hand-computed or oracle values: floats within
// tolerance * max(1, |want|) (NaN matches NaN, equal infinities match);
// tolerance 0: equal values. One failure names the first elements that
// differ and how many do.
void ExpectFloatsNear(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 0);
// Same dtype and shape; floats as ExpectFloatsNear, and with tolerance 0
// bit-identical, as are other dtypes.
void ExpectArrayNear(const npy::Array& got, const npy::Array& want, float tolerance = 0);

// Our outputs with several threads are bit-identical to one thread.
void ExpectThreadsAgree(const ir::Model& model, const std::vector<npy::Array>& inputs, int threads = 3);
// The interpreter refuses the model at prepare with Error(`kind`).
void ExpectInterpreterRefuses(const ir::Model& model, ErrorKind kind = ErrorKind::kUnsupported);

// The single-op harness: a graph with one input per array of `inputs` (its
// dtype and shape), the ops `body` adds and the outputs it marks, run on
// our interpreter: the oracle of the host-step tests (the graph op a step
// replaces, whose kernel is itself checked against LiteRT.js).
using GraphBody = std::function<void(builder::GraphBuilder&, const std::vector<int>& inputs)>;
std::vector<npy::Array> RunGraphOp(const std::vector<npy::Array>& inputs, const GraphBody& body);

}  // namespace gpuclean::testing
