// ONNX's backend node tests (Debian's libonnx-testdata) through convert and
// our interpreter, compared with the suite's expected outputs. Set
// GPCLEAN_SUITE_REPORT=path to get the per-test table.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gpuclean/node_suite.h"

namespace gpuclean {
namespace {

TEST(NodeSuite, SupportedOpsPass) {
  if (!std::filesystem::exists(convert::kDefaultNodeSuiteDir)) GTEST_SKIP() << "libonnx-testdata is not installed";
  convert::SuiteOptions o;
  const convert::SuiteReport r = convert::RunNodeSuite(o);
  if (const char* path = std::getenv("GPCLEAN_SUITE_REPORT")) {
    std::ofstream out(path);
    out << r.RenderTable();
  }
  const int pass = r.Count(convert::TestStatus::kPass);
  std::string not_passing;
  for (const auto& t : r.tests)
    if (t.status == convert::TestStatus::kFail || t.status == convert::TestStatus::kError ||
        t.status == convert::TestStatus::kUnsupportedFeature)
      not_passing += "  " + t.name + " [" + convert::TestStatusName(t.status) + "] " + t.detail + "\n";
  std::printf("node suite: %zu tests, %d run, %d pass (%.1f%%), float32 op types supported %zu/%zu, %.1f s\n",
              r.tests.size(), r.Runnable(), pass, 100 * r.PassRate(), r.float32_ops_supported.size(),
              r.float32_ops.size(), r.ms / 1000);
  EXPECT_GE(r.float32_ops_supported.size(), 90u);
  EXPECT_GE(r.PassRate(), 0.95) << not_passing;
  EXPECT_EQ(r.Count(convert::TestStatus::kError), 0) << not_passing;
  EXPECT_LT(r.ms, 60000);
}

}  // namespace
}  // namespace gpuclean
