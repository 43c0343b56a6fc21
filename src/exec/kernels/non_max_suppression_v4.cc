// NON_MAX_SUPPRESSION_V4: greedy hard NMS over one class, as LiteRT's
// reference kernel (tflite/kernels/internal/reference/non_max_suppression.h)
// computes it. Candidates are the boxes scoring above score_threshold; the
// best remaining one is kept unless its IoU with a box kept before reaches
// iou_threshold. Boxes are two diagonal corners in either order, and a box of
// no area overlaps nothing. The indices are padded with 0 to max_output_size
// (LiteRT zeroes the unused tail). Equal scores keep the lower index first;
// LiteRT's heap leaves that order unspecified.
#include <algorithm>
#include <numeric>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckNonMaxSuppressionV4(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 5, 5);
  RequireInputDtype(graph, op, 0, {tfl::TensorType_FLOAT32});
  RequireInputDtype(graph, op, 1, {tfl::TensorType_FLOAT32});
  RequireInputDtype(graph, op, 2, {tfl::TensorType_INT32});
  RequireInputDtype(graph, op, 3, {tfl::TensorType_FLOAT32});
  RequireInputDtype(graph, op, 4, {tfl::TensorType_FLOAT32});
  RequireOutputDtype(graph, op, 0, {tfl::TensorType_INT32});
  RequireOutputDtype(graph, op, 1, {tfl::TensorType_INT32});
}

struct Corners {
  float y_min, x_min, y_max, x_max;
  float area() const { return (y_max - y_min) * (x_max - x_min); }
};

Corners ReadBox(const float* box) {
  return {std::min(box[0], box[2]), std::min(box[1], box[3]), std::max(box[0], box[2]), std::max(box[1], box[3])};
}

float Iou(const Corners& a, const Corners& b) {
  const float area_a = a.area();
  const float area_b = b.area();
  if (area_a <= 0.0f || area_b <= 0.0f) return 0.0f;
  const float overlap = std::max(std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min), 0.0f) *
                        std::max(std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min), 0.0f);
  const float united = area_a + area_b - overlap;
  return united == 0.0f ? 0.0f : overlap / united;
}

void EvalNonMaxSuppressionV4(KernelContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.rank() != 2 || boxes.dim(1) != 4) ThrowOpBadInput(ctx, "boxes must be [N, 4]");
  const int64_t n = boxes.dim(0);
  if (scores.num_elements() != n) ThrowOpBadInput(ctx, "{} scores for {} boxes", scores.num_elements(), n);
  const int64_t max_output = ReadScalarInt(ctx, 2);
  if (max_output < 0 || ctx.output(0).num_elements() != max_output)
    ThrowOpBadInput(ctx, "max_output_size {} does not match the output's {} elements", max_output,
                    ctx.output(0).num_elements());
  const float iou_threshold = ctx.input(3).as<const float>()[0];
  const float score_threshold = ctx.input(4).as<const float>()[0];
  const float* box = boxes.as<const float>();
  const float* score = scores.as<const float>();

  std::vector<int32_t> candidates;
  for (int64_t i = 0; i < n; ++i)
    if (score[i] > score_threshold) candidates.push_back(static_cast<int32_t>(i));
  std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) { return score[a] > score[b]; });

  int32_t* selected = ctx.output(0).as<int32_t>();
  std::fill(selected, selected + max_output, 0);
  std::vector<Corners> kept;
  int64_t count = 0;
  for (int32_t i : candidates) {
    if (count >= max_output) break;
    const Corners c = ReadBox(box + 4 * static_cast<int64_t>(i));
    bool suppressed = false;
    for (auto k = kept.rbegin(); k != kept.rend() && !suppressed; ++k) suppressed = Iou(c, *k) >= iou_threshold;
    if (suppressed) continue;
    kept.push_back(c);
    selected[count++] = i;
  }
  ctx.output(1).as<int32_t>()[0] = static_cast<int32_t>(count);
}

}  // namespace

Kernel NonMaxSuppressionV4Kernel() { return {CheckNonMaxSuppressionV4, EvalNonMaxSuppressionV4}; }

}  // namespace gpuclean::exec::kernels
