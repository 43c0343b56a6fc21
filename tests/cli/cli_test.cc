// ctest-labels: slow
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace gpuclean {
namespace {

TEST(Cli, InspectTextAndJsonOnEveryFixture) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    auto text = testing::RunGpuclean("inspect " + testing::ShellQuote(path));
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("op histogram:"), std::string::npos);
    EXPECT_TRUE(text.err.empty()) << text.err;
    auto json = testing::RunGpuclean("inspect --json " + testing::ShellQuote(path));
    ASSERT_EQ(json.exit_code, 0) << json.err;
    auto parsed = nlohmann::json::parse(json.out);
    EXPECT_GT(parsed["op_count"].get<int>(), 0);
  }
}

TEST(Cli, HelpEverywhereExitsZero) {
  for (const char* args : {"--help", "inspect --help"}) {
    auto r = testing::RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args << ": " << r.out;
  }
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
  for (const char* args : {"", "nosuchcommand", "inspect", "inspect --bogus x.tflite"}) {
    auto r = testing::RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
