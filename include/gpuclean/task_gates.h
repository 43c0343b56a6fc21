#pragma once
// Task gates per graph output: what a deployer accepts as "the same answer"
// (a mask's IoU after its threshold, landmark error in the output's units,
// an argmax), chosen by the user or inferred from the output's shape, name
// and reference values. `check` judges fp16 drift with them instead of raw
// correlation, so drift that the task does not see is reported as drift,
// not as a reason to move work off the GPU.
#include <string>
#include <vector>

#include "gpuclean/gates.h"
#include "gpuclean/ir.h"
#include "gpuclean/npy.h"

namespace gpuclean::analyze {

struct OutputGate {
  int output = 0;  // graph output index
  GateSpec spec;
  GateOptions options;
  bool inferred = false;
  std::string why;  // for inferred gates: what the output looks like and why this gate
};

// The default gate of every graph output of `graph`, from its shape and name
// and its reference values (`reference[i]` is output i in fp32):
//  - one-channel map of at least 16x16 ([1,H,W,1] or [1,1,H,W]) -> mask
//    IoU >= 0.95 after the threshold (0.5 when the reference lies in [0,1],
//    else 0: logits);
//  - multi-channel spatial map (rank 4, two dims >= 8) -> correlation >= 0.99;
//  - a score vector whose name says so (logits, class, prob, softmax, score)
//    with >= 2 entries in its last axis -> argmax;
//  - anything else (landmarks, boxes, embeddings, flags) -> two gates in the
//    output's own units (pixels for landmarks), at scale max(1, range,
//    max|ref|): mean abs diff within 1% of it, max abs diff within 5%; a
//    flag or score of at most 4 values gets the 5% gate alone.
std::vector<OutputGate> InferTaskGates(const ir::Subgraph& graph, const std::vector<npy::Array>& reference);

// Gates the user gave (`--gate [OUT:]GATE`, OUT an output index, `out<i>` or
// the output tensor's name; no OUT: every output), with the shared
// --boxes / --mask-threshold options. Outputs no given gate names keep their
// inferred gate (from `inferred`). Error(kUsage) for an OUT that names no output.
std::vector<OutputGate> ResolveTaskGates(const ir::Subgraph& graph, const std::vector<GateSpec>& given,
                                         const GateOptions& options, const std::vector<OutputGate>& inferred);

struct OutputGateResult {
  OutputGate gate;
  GateResult result;
  bool new_nonfinite = false;  // got has inf/NaN where the reference is finite
};

// Applies each gate to (reference[output], got[output]). A gate whose tensor
// cannot take it (e.g. boxes without a last axis of 4) fails with the reason.
std::vector<OutputGateResult> ApplyTaskGates(const std::vector<OutputGate>& gates,
                                             const std::vector<npy::Array>& reference,
                                             const std::vector<npy::Array>& got);

}  // namespace gpuclean::analyze
