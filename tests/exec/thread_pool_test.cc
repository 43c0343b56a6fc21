// The thread pool and the kernels that split work over it. These also run
// under ThreadSanitizer (tools/run_sanitizers.sh): a data race in a parallel
// kernel shows there even when the numbers happen to agree.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "exec/kernel.h"
#include "gpuclean/builder.h"
#include "gpuclean/exec.h"

namespace gpuclean::exec {
namespace {

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  for (int threads : {1, 2, 4, 7}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 5, 63, 1000, 4097}) {
      for (int64_t grain : {1, 3, 64, 100000}) {
        std::vector<std::atomic<int>> hits(n);
        pool.ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
          ASSERT_LE(0, begin);
          ASSERT_LE(begin, end);
          ASSERT_LE(end, n);
          for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[i].load(), 1) << "threads " << threads << " n " << n << " i " << i;
      }
    }
  }
}

TEST(ThreadPool, NestedLoopsRunInlineAndFinish) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(16, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  });
  EXPECT_EQ(sum.load(), 1600);
}

TEST(ThreadPool, ManyShortJobsInARow) {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int job = 0; job < 2000; ++job) {
    std::vector<int64_t> part(3, 0);
    std::atomic<int> slot{0};
    pool.ParallelFor(9, 3, [&](int64_t begin, int64_t end) { part[slot.fetch_add(1)] = end - begin; });
    for (int64_t p : part) total += p;
  }
  EXPECT_EQ(total, 2000 * 9);
}

TEST(ThreadPool, EmptyRangeDoesNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.ParallelFor(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// A graph of the kernels that split their work over the pool, big enough to
// be split: the bytes must not depend on the thread count.
ir::Model ParallelKernelsGraph() {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 24, 24, 16});
  std::vector<float> w(32 * 3 * 3 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 40.0f;
  const int conv = b.Conv2D(x, b.ConstF32("w", {32, 3, 3, 16}, w), builder::kNoInput, tfl::Padding_SAME, 1, 1);
  std::vector<float> dw(3 * 3 * 32);
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 10.0f;
  const int depthwise =
      b.DepthwiseConv2D(conv, b.ConstF32("dw", {1, 3, 3, 32}, dw), builder::kNoInput, tfl::Padding_SAME, 2, 2);
  const int pooled = b.MaxPool2D(depthwise, tfl::Padding_SAME, 2, 2, 3, 3);
  const int averaged = b.AveragePool2D(depthwise, tfl::Padding_VALID, 1, 1, 2, 2);
  const int resized = b.ResizeBilinear(pooled, 11, 11);
  const int summed = b.Add(averaged, resized);
  const int rows = b.Reshape(summed, {121, 32});
  const int matmul = b.BatchMatMul(rows, b.Transpose(rows, {1, 0}));
  const int soft = b.Softmax(matmul);
  const int mean = b.Mean(soft, {1}, true);
  const int gathered = b.Gather(soft, b.ConstI32("ids", {4}, {0, 7, 120, 7}), 0);
  b.Output(mean);
  b.Output(gathered);
  b.Output(b.Transpose(summed, {0, 3, 1, 2}));
  return b.Finish();
}

TEST(ParallelKernels, OutputsDoNotDependOnTheThreadCount) {
  auto model = std::make_shared<const ir::Model>(ParallelKernelsGraph());
  const ir::Subgraph& g = model->main();
  const npy::Array input = GenerateInput(g.tensors[g.inputs[0]], 3, 0);
  std::vector<std::vector<npy::Array>> outputs;
  for (int threads : {1, 2, 4}) {
    InterpreterOptions options;
    options.threads = threads;
    Interpreter interpreter(model, options);
    interpreter.SetInput(0, input);
    interpreter.Invoke();
    outputs.emplace_back();
    for (int i = 0; i < interpreter.num_outputs(); ++i) outputs.back().push_back(interpreter.Output(i));
  }
  for (size_t run = 1; run < outputs.size(); ++run)
    for (size_t i = 0; i < outputs[0].size(); ++i)
      EXPECT_EQ(outputs[run][i].data, outputs[0][i].data) << "output " << i << " differs at run " << run;
}

}  // namespace
}  // namespace gpuclean::exec
