// ctest-labels: litert slow
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuclean/format.h"
#include "gpuclean/inspect.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using nlohmann::json;

// Names, dtypes and shapes of inputs/outputs must be what the real runtime
// reports for the same file.
TEST(Inspect, InputsAndOutputsMatchLiteRt) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    const json ours = inspect::Summarize(format::ReadModel(path));
    const json theirs = json::parse(testing::DescribeLiteRt(path));
    for (const char* kind : {"inputs", "outputs"}) {
      ASSERT_EQ(ours[kind].size(), theirs[kind].size()) << kind;
      for (size_t i = 0; i < ours[kind].size(); ++i) {
        EXPECT_EQ(ours[kind][i]["name"], theirs[kind][i]["name"]) << kind << " " << i;
        EXPECT_EQ(ours[kind][i]["dtype"], theirs[kind][i]["dtype"]) << kind << " " << i;
        EXPECT_EQ(ours[kind][i]["shape"], theirs[kind][i]["shape"]) << kind << " " << i;
      }
    }
  }
}

TEST(Inspect, ReportsSparseTensorsCustomOpsAndWeights) {
  const json sparse =
      inspect::Summarize(format::ReadModel(testing::FixtureModel("face_detection_full_range_sparse.tflite")));
  EXPECT_EQ(sparse["sparse_tensors"].size(), 46u);
  EXPECT_EQ(sparse["op_histogram"]["DENSIFY"], 46);
  EXPECT_TRUE(sparse["weights"].contains("float16"));

  const json selfie = inspect::Summarize(format::ReadModel(testing::FixtureModel("selfie_segmentation.tflite")));
  EXPECT_EQ(selfie["custom_ops"], json::array({"Convolution2DTransposeBias"}));
  EXPECT_EQ(selfie["max_rank"], 4);
  int ops = 0;
  for (const auto& [name, count] : selfie["op_histogram"].items()) ops += count.get<int>();
  EXPECT_EQ(ops, selfie["op_count"].get<int>());
  EXPECT_EQ(selfie["ops"].size(), selfie["op_count"].get<size_t>());
  int64_t bytes = 0;
  for (const auto& [dtype, w] : selfie["weights"].items()) bytes += w["bytes"].get<int64_t>();
  EXPECT_EQ(bytes, selfie["weight_bytes"].get<int64_t>());
}

TEST(Inspect, PerOpListMarksConstantInputs) {
  const json s = inspect::Summarize(format::ReadModel(testing::FixtureModel("hand_landmark_lite.tflite")));
  bool saw_conv = false;
  for (const auto& op : s["ops"]) {
    if (op["op"] != "CONV_2D") continue;
    saw_conv = true;
    EXPECT_FALSE(op["inputs"][0].value("const", false));
    ASSERT_GE(op["outputs"].size(), 1u);
    EXPECT_EQ(op["outputs"][0]["shape"].size(), 4u);
  }
  EXPECT_TRUE(saw_conv);
}

}  // namespace
}  // namespace gpuclean
