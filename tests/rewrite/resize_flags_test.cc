// ctest-labels: litert
#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

// A decoder's upsampling exported with both flags (a TF1 graph converted
// as is): the CPU runs it with corners aligned, the GPU rejects it.
ir::Model BothFlags() {
  GraphBuilder b;
  const int x = b.Input("x", F32, {1, 6, 5, 4});
  const int up = b.ResizeBilinear(x, 12, 10, /*align_corners=*/true, /*half_pixel_centers=*/true);
  b.Output(b.Relu(b.ResizeBilinear(up, 23, 19, true, false)));
  return b.Finish();
}

TEST(ResizeFlags, KeepsWhatTheCpuComputesAndLintIsClean) {
  const ir::Model model = BothFlags();
  const testing::PassProof proof =
      testing::ExpectPassProven("resize-flags", model, {synth::HashUniform({1, 6, 5, 4}, -2, 2, 3)}, 1);
  EXPECT_EQ(proof.result.sites.size(), 1u);  // the second resize is already one-flag
  for (const ir::Op& op : proof.rewritten.main().ops)
    if (const auto* o = op.options.AsResizeBilinearOptions()) EXPECT_FALSE(o->align_corners && o->half_pixel_centers);
  for (const char* target : {"mldrift-webgpu@2.5.3", "mldrift-cl@2.2.0"})
    testing::ExpectFindingGone(model, proof.rewritten, "resize-bilinear-align-half", target);
}

}  // namespace
}  // namespace gpuclean::rewrite
