// ctest-labels: slow
#include <gtest/gtest.h>

#include "gpuclean/format.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

TEST(ReadFixtures, EveryFixtureLoadsAndValidates) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    ir::Model model = format::ReadModel(path);
    EXPECT_FALSE(model.subgraphs.empty());
    EXPECT_FALSE(model.main().ops.empty());
    EXPECT_TRUE(model.unpreservable.empty()) << model.unpreservable.front();
    model.Validate();
  }
}

}  // namespace
}  // namespace gpuclean
