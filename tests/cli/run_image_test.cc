// ctest-labels: litert slow
// `run --image` and `bisect --image`: the shipped photograph of a person
// through the selfie segmenter gives a real mask (uniform noise gives
// nothing), the same floats give the same mask on LiteRT.js, the input is
// written as in0.npy with where it came from, NCHW inputs are filled, and
// bad photographs or flags fail with one line (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/image.h"
#include "gpuclean/npy.h"
#include "support/conformance.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::RunGpuclean;
using testing::ShellQuote;
using testing::TempDir;

const std::string& Selfie() {
  static const std::string path = testing::FixtureModel("selfie_segmentation.tflite");
  return path;
}

const std::string& Photo() {
  static const std::string path = [] {
    const std::string p = image::DefaultImagePath();
    if (!fs::exists(p)) ADD_FAILURE() << p << " missing: run tools/fetch_images.sh (tools/setup.sh does)";
    return p;
  }();
  return path;
}

double FractionAbove(const npy::Array& a, float threshold) {
  const float* v = a.as<float>();
  return static_cast<double>(std::count_if(v, v + a.num_elements(), [&](float x) { return x > threshold; })) /
         a.num_elements();
}

TEST(RunImage, PhotographOfAPersonGivesAMaskThatLiteRtAgreesWith) {
  TempDir dir;
  const std::string photo_out = dir.file("photo"), noise_out = dir.file("noise");
  auto r = RunGpuclean("run " + ShellQuote(Selfie()) + " --image " + ShellQuote(Photo()) + " --out " +
                       ShellQuote(photo_out));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const nlohmann::json meta = testing::ReadJsonFile(photo_out + "/meta.json");
  const nlohmann::json& input = meta["inputs"][0];
  EXPECT_EQ(input["source"], "image");
  EXPECT_EQ(input["image"], Photo());
  EXPECT_EQ(input["normalize"], "0,1");
  EXPECT_EQ(input["layout"], "nhwc");
  EXPECT_EQ(input["file"], "in0.npy");
  const npy::Array in = npy::Read(photo_out + "/in0.npy");
  ASSERT_EQ(in.shape, (std::vector<int64_t>{1, 256, 256, 3}));
  const auto [lo, hi] = std::minmax_element(in.as<float>(), in.as<float>() + in.num_elements());
  EXPECT_GE(*lo, 0.0f);
  EXPECT_LE(*hi, 1.0f);

  // The portrait fills the middle of the frame: a sizeable part of the mask,
  // its centre included, is the person; the top corners are background.
  const npy::Array mask = npy::Read(photo_out + "/out0.npy");
  ASSERT_EQ(mask.shape, (std::vector<int64_t>{1, 256, 256, 1}));
  const double person = FractionAbove(mask, 0.5f);
  EXPECT_GT(person, 0.2) << "the photograph should segment as a person";
  EXPECT_LT(person, 0.9);
  EXPECT_GT(mask.as<float>()[128 * 256 + 128], 0.5f);
  EXPECT_LT(mask.as<float>()[2 * 256 + 2], 0.5f);
  EXPECT_LT(mask.as<float>()[2 * 256 + 253], 0.5f);

  // Uniform noise, the default input, finds no one: why the photograph exists.
  r = RunGpuclean("run " + ShellQuote(Selfie()) + " --out " + ShellQuote(noise_out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(FractionAbove(npy::Read(noise_out + "/out0.npy"), 0.5f), 0.0);

  // The real runtime, fed the written in0.npy, gives the same mask.
  const std::vector<npy::Array> litert = testing::RunLiteRt(Selfie(), {in});
  ASSERT_EQ(litert.size(), 1u);
  const testing::Agreement agreement = testing::Compare(litert[0], mask);
  EXPECT_LE(agreement.max_abs_diff, 1e-4 * std::max(1.0, agreement.max_abs_ref));
  EXPECT_GT(agreement.correlation, 0.99999);
  EXPECT_NEAR(FractionAbove(litert[0], 0.5f), person, 1e-3);
}

TEST(RunImage, BisectWithAnImageEqualsBisectWithTheSameFloatsAsNpy) {
  TempDir dir;
  auto r = RunGpuclean("run " + ShellQuote(Selfie()) + " --image " + ShellQuote(Photo()) + " --normalize -1,1 --out " +
                       ShellQuote(dir.file("run")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const npy::Array in = npy::Read(dir.file("run") + "/in0.npy");
  EXPECT_LT(*std::min_element(in.as<float>(), in.as<float>() + in.num_elements()), -0.5f) << "-1,1 was applied";

  const auto from_image =
      RunGpuclean("bisect " + ShellQuote(Selfie()) + " --json --image 0=" + ShellQuote(Photo()) + " --normalize -1,1");
  ASSERT_NE(from_image.exit_code, 2) << from_image.err;
  const auto from_npy =
      RunGpuclean("bisect " + ShellQuote(Selfie()) + " --json --input 0=" + ShellQuote(dir.file("run") + "/in0.npy"));
  ASSERT_NE(from_npy.exit_code, 2) << from_npy.err;
  EXPECT_EQ(from_image.exit_code, from_npy.exit_code);
  EXPECT_EQ(from_image.out, from_npy.out);
}

TEST(RunImage, NchwInputIsFilledChannelPlaneByPlane) {
  TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("pixels", tfl::TensorType_FLOAT32, {1, 3, 40, 30});
  b.Output(b.Abs(x));
  const std::string model = dir.file("nchw.tflite");
  format::WriteModel(b.Finish(), model);

  auto r = RunGpuclean("run " + ShellQuote(model) + " --image pixels=" + ShellQuote(Photo()) +
                       " --normalize imagenet --out " + ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json meta = testing::ReadJsonFile(dir.file("out") + "/meta.json");
  EXPECT_EQ(meta["inputs"][0]["layout"], "nchw");
  EXPECT_EQ(meta["inputs"][0]["normalize"], "imagenet");

  image::ImageOptions options;
  options.normalization = image::ParseNormalization("imagenet");
  const ir::Model parsed = format::ReadModel(model);
  const npy::Array expected = image::LoadImageInput(Photo(), parsed.main().tensors[parsed.main().inputs[0]], options);
  EXPECT_EQ(expected.shape, (std::vector<int64_t>{1, 3, 40, 30}));
  EXPECT_TRUE(npy::Read(dir.file("out") + "/in0.npy").data == expected.data);

  // Forcing the other layout on the same photograph is refused, not guessed.
  r = RunGpuclean("run " + ShellQuote(model) + " --image " + ShellQuote(Photo()) + " --layout nhwc --out " +
                  ShellQuote(dir.file("forced")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(testing::CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--layout nhwc"), std::string::npos) << r.err;
}

TEST(RunImage, BadImagesAndFlagsFailWithOneLine) {
  TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "not a picture\n";
  builder::GraphBuilder b;
  b.Output(b.Relu(b.Input("features", tfl::TensorType_FLOAT32, {1, 4})));
  const std::string vector_model = ShellQuote(dir.file("vector.tflite"));
  format::WriteModel(b.Finish(), dir.file("vector.tflite"));

  const std::string selfie = ShellQuote(Selfie()), photo = ShellQuote(Photo());
  const std::string out = " --out " + ShellQuote(dir.file("out"));
  npy::Array zeros;
  zeros.shape = {1, 256, 256, 3};
  zeros.data.resize(256 * 256 * 3 * 4);
  npy::Write(dir.file("zeros.npy"), zeros);

  const struct {
    std::string args, says;
  } cases[] = {
      {"run " + selfie + " --image " + ShellQuote(dir.file("missing.jpg")) + out, "missing.jpg: cannot open image"},
      {"run " + selfie + " --image " + ShellQuote(dir.file("notes.txt")) + out, "notes.txt: not a PNG or JPEG"},
      {"run " + selfie + " --image 5=" + photo + out, "the model has 1 inputs"},
      {"run " + selfie + " --image " + photo + " --normalize 0..1" + out, "--normalize '0..1'"},
      {"run " + selfie + " --image " + photo + " --layout nchw" + out, "[1,256,256,3]"},
      {"run " + selfie + " --image " + photo + " --image " + photo + out, "no other model input looks like an image"},
      {"run " + selfie + " --input 0=" + ShellQuote(dir.file("zeros.npy")) + " --image 0=" + photo + out,
       "already given"},
      {"run " + vector_model + " --image " + photo + out, "no model input looks like an image"},
      {"run " + vector_model + " --image features=" + photo + out, "input 'features' is float32 [1,4]"},
      {"bisect " + selfie + " --image " + ShellQuote(dir.file("notes.txt")), "notes.txt: not a PNG or JPEG"},
  };
  for (const auto& c : cases) {
    const auto r = RunGpuclean(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(testing::CountLines(r.err), 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
