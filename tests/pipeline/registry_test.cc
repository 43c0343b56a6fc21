// Host steps by name: what a pipeline spec's host stage calls.
#include "gpuclean/host_steps.h"

#include "support/arrays.h"
#include "support/conformance.h"

namespace gpuclean::pipeline {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HostStepRegistry, RunsStepsByNameWithTheirParameters) {
  const npy::Array x = testing::F32({1, 5}, {0.1f, 0.9f, 0.3f, 0.9f, 0.5f});
  const auto r = RunHostStep("topk", {{"k", 2}}, {x});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(std::vector<int32_t>(r[1].as<int32_t>(), r[1].as<int32_t>() + 2), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(HostStepOutputCount("topk", {{"k", 2}}), 2);
  EXPECT_EQ(HostStepOutputCount("affine", nullptr), 1);
  const auto half = RunHostStep("affine", {{"scale", 0.5}}, {x});
  EXPECT_FLOAT_EQ(half[0].as<float>()[1], 0.45f);
  const auto up = RunHostStep("resize_bilinear", {{"size", {2, 10}}}, {x});
  EXPECT_EQ(up[0].shape, (std::vector<int64_t>{2, 10}));
}

TEST(HostStepRegistry, EveryStepIsListedOnceWithWhatItReplaces) {
  std::set<std::string> names;
  for (const HostStepInfo& s : HostSteps()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_FALSE(s.replaces.empty()) << s.name;
    EXPECT_NO_THROW(HostStepOutputCount(s.name, nlohmann::json{{"k", 1}})) << s.name;
  }
  for (const char* required :
       {"topk", "gather", "gather_elements", "concat", "reshape", "box_convert", "box_decode", "box_reparam", "sigmoid",
        "threshold", "nms", "gather_nd", "resize_bilinear", "add", "mul"})
    EXPECT_TRUE(names.count(required)) << required;
}

TEST(HostStepRegistry, BadNamesParametersAndInputCountsAreOneLine) {
  const npy::Array x = testing::F32({3}, {1, 2, 3});
  EXPECT_EQ(ErrorOf([&] { RunHostStep("sortof", {}, {x}); }).rfind("unknown host step 'sortof' (known: add,", 0), 0u);
  EXPECT_EQ(ErrorOf([&] { RunHostStep("topk", {}, {x}); }), "host step topk: parameter 'k' is missing");
  EXPECT_EQ(ErrorOf([&] {
              RunHostStep("topk", {{"k", "two"}}, {x});
            }),
            "host step topk: parameter 'k' must be an integer, got \"two\"");
  EXPECT_EQ(ErrorOf([&] { RunHostStep("add", {}, {x}); }), "host step add: takes 2 input(s) (a, b), got 1");
  EXPECT_EQ(ErrorOf([&] {
              RunHostStep("box_convert", {{"from", "xywh"}}, {x});
            }),
            "host step box_convert: parameter 'from' must be \"xyxy\" or \"cxcywh\", got \"xywh\"");
  EXPECT_EQ(ErrorOf([&] {
              RunHostStep("reshape", {{"shape", {2, -1}}}, {x});
            }),
            "host step reshape: cannot reshape [3] (3 elements) to [2,-1]");
}

}  // namespace
}  // namespace gpuclean::pipeline
