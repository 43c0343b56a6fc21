// resize-flags: RESIZE_BILINEAR with align_corners and half_pixel_centers
// both set -> the same resize with align_corners only. ML Drift rejects the
// pair (mldrift-cl@2.2.0's model_builder.cc:4609) and TFLite's builtin
// kernel refuses to prepare it, but the XNNPACK delegate that runs it on the
// CPU aligns the corners and ignores half_pixel_centers
// (tflite/delegates/xnnpack/xnnpack_delegate.cc:5796 @ v2.2.0), as LiteRT.js
// does (measured, tests/exec/resize_bilinear_test.cc): the rewrite keeps what
// the model computes where it runs today (exact). RESIZE_NEAREST_NEIGHBOR
// uses both flags in its coordinate map, so it has no one-flag equivalent.
#include <fmt/format.h>

#include "rewrite/passes/passes.h"
#include "rewrite/pattern_pass.h"

namespace gpuclean::rewrite::passes {
namespace {

class ResizeFlagsPass final : public OpPass {
 public:
  ResizeFlagsPass()
      : OpPass({"resize-flags", Exactness::kExact,
                "RESIZE_BILINEAR with both align_corners and half_pixel_centers; the CPU kernels that run it align "
                "the corners and ignore half_pixel_centers"},
               {tfl::BuiltinOperator_RESIZE_BILINEAR}) {}

 private:
  std::optional<std::string> Visit(OpSite& site) const override {
    const auto* o = site.op.options.AsResizeBilinearOptions();
    if (!o || !o->align_corners || !o->half_pixel_centers || site.op.inputs.size() < 2 || site.op.outputs.size() != 1)
      return std::nullopt;
    const ir::Tensor out = site.tensor(site.op.outputs[0]);  // a copy: the edit appends tensors
    if (out.is_dynamic() || out.rank() != 4 || !site.tensor(site.op.inputs[1]).is_const()) {
      site.Skip({out.name}, "a runtime output size: the rewrite copies the op at its static size");
      return std::nullopt;
    }
    const int y = site.b().ResizeBilinear(site.op.inputs[0], out.shape[1], out.shape[2], /*align_corners=*/true,
                                          /*half_pixel_centers=*/false);
    site.edit.Replace(site.node, {y});
    return fmt::format("align_corners only, {}x{}", out.shape[1], out.shape[2]);
  }
};

}  // namespace

const Pass& ResizeFlags() {
  static const ResizeFlagsPass pass;
  return pass;
}

}  // namespace gpuclean::rewrite::passes
