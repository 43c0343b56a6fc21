#pragma once
// Task gates per graph output: what a deployer accepts as "the same answer"
// (a mask's IoU after its threshold, landmark error in the output's units,
// an argmax), chosen by the user or inferred from the output's shape, name
// and reference values. `check` judges fp16 drift with them instead of raw
// correlation, so drift that the task does not see is reported as drift,
// not as a reason to move work off the GPU.
#include <optional>
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

// ---------------------------------------------------------------- detections
// A detector's outputs judged together, as a deployment reports them: every
// reference detection whose score passes the threshold must be found again
// in the other run - a detection there whose box overlaps it at least
// min_box_iou, with the same class and, per mask output, a mask IoU of at
// least min_mask_iou. Order and the detections below the threshold do not
// matter: a near-tie that swaps a weak proposal is no loss.
struct DetectionLayout {
  int scores = -1;         // [1, N, C] class logits or probabilities
  int boxes = -1;          // [1, N, 4]
  std::vector<int> masks;  // [1, N, H, W]
  // A detector after its NMS: boxes [N, 4] (xyxy), scores [N] and the class
  // of each row here ([N] integers); N may differ between the two runs.
  int labels = -1;
  BoxFormat format = BoxFormat::kCxcywh;
  double mask_threshold = 0;  // 0 for logits, 0.5 for probabilities
};
// The layout of `reference` (a model's outputs in fp32) when it is a
// detector's: one [1,N,4] output, one float [1,N,C] output beside it, masks
// [1,N,H,W] - or, after a detector's NMS, boxes [N,4], scores [N] and
// integer labels [N]. Box format: xyxy when every box has x2 >= x1 and y2 >= y1 and
// some box's first corner is not its centre's image, else cxcywh; `given`
// options win. std::nullopt when the outputs are not shaped so.
std::optional<DetectionLayout> InferDetectionLayout(const std::vector<npy::Array>& reference,
                                                    const GateOptions& given = {});

struct DetectionGateOptions {
  double score_threshold = 0.5;  // sigmoid of the max logit, or the max probability
  double min_box_iou = 0.95;
  double min_mask_iou = 0.95;
};
// One result for the whole detector: "12/12 reference detections above 0.5
// found again (box IoU min 0.98, same class, mask IoU min 0.97)".
GateResult DetectionsFoundAgain(const DetectionLayout& layout, const std::vector<npy::Array>& reference,
                                const std::vector<npy::Array>& got, const DetectionGateOptions& options = {});

// Outputs that hold one row per selected item (a detector's boxes, scores
// and labels after its NMS): whether `got` holds the rows of `reference` in
// another order - each reference row paired with its own row of `got` where
// every output agrees within |diff| <= atol * max(1, |ref|). A selection
// orders rows by score, and fp32 noise swaps rows whose scores tie within it.
// Every array's first dimension counts the rows. The pairing's summary
// ("300/300 rows paired, 2 in another order"), or nullopt when a row has no
// partner.
std::optional<std::string> RowsInAnotherOrder(const std::vector<npy::Array>& reference,
                                              const std::vector<npy::Array>& got, double atol);

// A postprocessed detector's rows (DetectionLayout::labels >= 0) paired one
// to one where each pair has the same class, scores within |diff| <= atol *
// max(1, |ref|) and boxes of the same object (IoU >= 0.5): NMS keeps one of
// two overlapping boxes whose scores tie within fp32 noise, and either is
// its result. The pairing's summary ("300/300 rows paired, 3 another box of
// the same object at a tied score"), or nullopt when a row has no partner.
std::optional<std::string> DetectionsTiedWithinNoise(const DetectionLayout& layout,
                                                     const std::vector<npy::Array>& reference,
                                                     const std::vector<npy::Array>& got, double atol);

}  // namespace gpuclean::analyze
