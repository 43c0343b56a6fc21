// ctest-labels: litert slow
// Whole-model conformance: every fixture model on our interpreter against
// LiteRT.js wasm on the same inputs.
#include <gtest/gtest.h>

#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

TEST(FixtureModels, MatchLiteRtWithinBounds) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    ir::Model model = format::ReadModel(path);
    std::vector<npy::Array> inputs;
    for (size_t i = 0; i < model.main().inputs.size(); ++i)
      inputs.push_back(exec::GenerateInput(model.main().tensors[model.main().inputs[i]], 0, static_cast<int>(i)));
    const std::vector<npy::Array> theirs = testing::RunLiteRt(path, inputs);
    const std::vector<npy::Array> one_thread = testing::RunOurs(model, inputs, {.threads = 1});
    for (int threads : {1, 2}) {
      const std::vector<npy::Array> ours = testing::RunOurs(model, inputs, {.threads = threads});
      ASSERT_EQ(ours.size(), theirs.size());
      for (size_t i = 0; i < ours.size(); ++i) {
        EXPECT_EQ(ours[i].data, one_thread[i].data) << "output " << i << " depends on the thread count";
        const testing::Agreement a = testing::Compare(theirs[i], ours[i]);
        EXPECT_EQ(ours[i].shape, theirs[i].shape);
        EXPECT_LE(a.max_abs_diff, 1e-4 * std::max(1.0, a.max_abs_ref))
            << "output " << i << " threads " << threads << " max|ref| " << a.max_abs_ref;
        EXPECT_GE(a.correlation, 0.99999) << "output " << i << " threads " << threads;
      }
    }
  }
}

TEST(FixtureModels, EveryInvokeGivesTheSameOutputs) {
  // Inputs are set once; the arena must not reuse their memory within a run.
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    auto model = std::make_shared<const ir::Model>(format::ReadModel(path));
    exec::Interpreter interpreter(model, {.threads = 2});
    const ir::Subgraph& g = interpreter.graph();
    for (size_t i = 0; i < g.inputs.size(); ++i)
      interpreter.SetInput(static_cast<int>(i), exec::GenerateInput(g.tensors[g.inputs[i]], 3, static_cast<int>(i)));
    std::vector<npy::Array> first;
    interpreter.Invoke();
    for (int i = 0; i < interpreter.num_outputs(); ++i) first.push_back(interpreter.Output(i));
    for (int run = 0; run < 2; ++run) {
      interpreter.Invoke();
      for (int i = 0; i < interpreter.num_outputs(); ++i)
        EXPECT_EQ(interpreter.Output(i).data, first[i].data) << "output " << i << " changed in run " << run + 2;
    }
  }
}

TEST(FixtureModels, GeneratedInputsMatchTheHarnessGenerator) {
  // `gpuclean run` and probe/litert_run.mjs generate the same bytes for the same seed.
  const std::string path = testing::FixtureModel("face_detection_short_range.tflite");
  testing::TempDir dir;
  auto r = testing::RunCommand("node " + testing::ShellQuote(testing::SourceDir() + "/probe/litert_run.mjs") + " " +
                               testing::ShellQuote(path) + " --seed 7 --out " + testing::ShellQuote(dir.file("o")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ir::Model model = format::ReadModel(path);
  npy::Array ours = exec::GenerateInput(model.main().tensors[model.main().inputs[0]], 7, 0);
  npy::Array theirs = npy::Read(dir.file("o/in0.npy"));
  EXPECT_EQ(ours.shape, theirs.shape);
  EXPECT_EQ(ours.data, theirs.data);
}

}  // namespace
}  // namespace gpuclean
