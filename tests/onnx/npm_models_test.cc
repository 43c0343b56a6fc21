// Real-weight ONNX models shipped inside npm packages, trained and exported
// by other people (tools/fetch_npm_onnx.sh pins them): each converts and is
// proven against onnxruntime. Between them they need what import had to
// learn: opset 9 Softmax whose input shape inference cannot follow
// (PaddleOCR), IR 6 and tf2onnx NHWC graphs, If on a pinned sample rate with
// the weights inside the branches (silero VAD), an opset-18 IR-10 export,
// reflect padding through a reversed Slice, run-time Clip bounds (log-mel).
// BlazeFace is also fed a photograph and must find the face in it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gpuclean/convert.h"
#include "gpuclean/exec.h"
#include "gpuclean/image.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {
namespace fs = std::filesystem;

using testing::OnnxCache;

struct NpmModel {
  std::string name;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, std::vector<double>> values;
  int opset;
};

std::ostream& operator<<(std::ostream& os, const NpmModel& m) { return os << m.name; }

class NpmModels : public ::testing::TestWithParam<NpmModel> {};

TEST_P(NpmModels, ConvertsAndProves) {
  const NpmModel& m = GetParam();
  const fs::path path = OnnxCache() / "npm" / (m.name + ".onnx");
  ASSERT_TRUE(fs::exists(path)) << path << " missing: run tools/fetch_npm_onnx.sh";
  convert::Options o;
  o.onnx_path = path.string();
  o.input_shapes = m.shapes;
  o.input_values = m.values;
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_EQ(r.report.original_opset, m.opset);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  for (const auto& [name, _] : m.values)
    for (int t : r.model.main().inputs) EXPECT_NE(r.model.main().tensors[t].name, name) << "pinned input kept";
}

INSTANTIATE_TEST_SUITE_P(
    Real, NpmModels,
    ::testing::Values(
        NpmModel{"silero_vad_v5", {{"input", {1, 512}}, {"state", {2, 1, 128}}}, {{"sr", {16000}}}, 16},
        NpmModel{"silero_vad_v4", {{"input", {1, 512}}, {"h", {2, 1, 64}}, {"c", {2, 1, 64}}}, {{"sr", {8000}}}, 16},
        NpmModel{"silero_vad_op18", {{"input", {1, 512}}, {"state", {2, 1, 128}}}, {{"sr", {16000}}}, 18},
        NpmModel{"ppocrv4_det", {{"x", {1, 3, 320, 320}}}, {}, 11},
        NpmModel{"ppocrv4_rec", {{"x", {1, 3, 48, 320}}}, {}, 9},
        NpmModel{"ppocr_cls", {{"x", {1, 3, 48, 192}}}, {}, 9},
        NpmModel{"mlsd_tiny_320", {}, {}, 11},
        NpmModel{"oww_melspectrogram", {{"input", {1, 1280}}}, {}, 13},
        NpmModel{"oww_embedding", {{"input_1", {1, 76, 32, 1}}}, {}, 13},
        NpmModel{"oww_hey_jarvis", {}, {}, 13}),
    [](const ::testing::TestParamInfo<NpmModel>& info) { return info.param.name; });

// The photograph (Grace Hopper's portrait) through BlazeFace (tf2onnx,
// NHWC input in [-1, 1]): proven on it, and the converted graph scores a
// face (some anchor's logit above 0, sigmoid above 0.5); on seeded noise it
// does not.
TEST(NpmModelsOnPhotos, BlazeFaceFindsTheFace) {
  const fs::path path = OnnxCache() / "npm" / "blazeface_128.onnx";
  ASSERT_TRUE(fs::exists(path)) << path << " missing: run tools/fetch_npm_onnx.sh";
  const std::string photo = image::DefaultImagePath();
  ASSERT_TRUE(fs::exists(photo)) << photo << " missing: run tools/fetch_images.sh";
  ir::Tensor input;
  input.dtype = tfl::TensorType_FLOAT32;
  input.shape = {1, 128, 128, 3};
  image::ImageOptions io;
  io.normalization = image::ParseNormalization("-1,1");
  io.layout = image::Layout::kNhwc;
  convert::Options o;
  o.onnx_path = path.string();
  o.target = "none";
  o.proof_inputs["input:0"] = image::LoadImageInput(photo, input, io);
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();

  const auto best_logit = [&](const npy::Array& in) {
    exec::Interpreter interp(std::make_shared<const ir::Model>(r.model));
    interp.SetInput(0, in);
    interp.Invoke();
    float best = -INFINITY;
    for (int k = 0; k < interp.num_outputs(); ++k) {
      const npy::Array out = interp.Output(k);
      if (out.shape.back() != 1) continue;  // box regressors
      for (int64_t i = 0; i < out.num_elements(); ++i) best = std::max(best, out.as<float>()[i]);
    }
    return best;
  };
  EXPECT_GT(best_logit(o.proof_inputs.at("input:0")), 0.0f) << "no face found in the photograph";
  npy::Array gray = o.proof_inputs.at("input:0");
  std::fill(gray.as<float>(), gray.as<float>() + gray.num_elements(), 0.0f);
  EXPECT_LT(best_logit(gray), 0.0f) << "a face found in a flat gray picture";
}

}  // namespace
}  // namespace gpuclean
