// ctest-labels: unit
// (Declared rather than implied: the sanitizer lane builds every file without
// a labels line, and an ASan binary reserves terabytes of address space, so
// it cannot start under the `ulimit -v` this test sets.)
//
// The default memory limit follows what the process is granted, not only
// what the machine has: under `ulimit -v`, a model too big for the grant is
// refused in one line before anything is allocated, not killed or failed by
// the allocator.
#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

TEST(MemoryGrant, AnAddressSpaceLimitLowersTheDefaultMemoryLimit) {
  testing::TempDir dir;
  builder::GraphBuilder b;
  b.Output(b.Relu(b.Input("x", tfl::TensorType_FLOAT32, {1, 1000000000})));  // 4 GB in, 4 GB out
  const std::string path = dir.file("four_gb.tflite");
  format::WriteModel(b.Finish(), path);
  for (const char* command : {"lint", "run --out ", "bisect", "fix --dry-run"}) {
    std::string line = std::string(command);
    if (line.ends_with("--out ")) line += testing::ShellQuote(dir.file("outs"));
    const auto r =
        testing::RunCommand("bash -c " +
                            testing::ShellQuote("ulimit -v 3000000 && exec " + testing::ShellQuote(GPUCLEAN_BINARY) +
                                                " " + line + " " + testing::ShellQuote(path)) +
                            " >/dev/null");
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    // 3/4 of the 3.07 GB granted, whatever the machine has.
    EXPECT_NE(r.err.find("more than the memory limit of 2.3 GB"), std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(r.err.find("out of memory"), std::string::npos) << command << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
