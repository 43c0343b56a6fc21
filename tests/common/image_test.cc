// Photographs as inputs (include/gpuclean/image.h): decoding PNG and JPEG,
// the bilinear convention, each normalisation, both layouts, which inputs
// count as images, and one-line errors for files that are not usable
// pictures. Test pictures are written here through stb_image_write, the
// writer of the library that decodes them.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuclean/error.h"
#include "gpuclean/image.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A width x height RGB picture whose every byte is a function of its place,
// so that a transposed or shifted pixel shows.
std::vector<uint8_t> Pattern(int width, int height) {
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) rgb[(y * width + x) * 3 + c] = static_cast<uint8_t>((x * 7 + y * 31 + c * 80) % 256);
  return rgb;
}

std::string WritePng(const TempDir& dir, const std::string& name, int width, int height, int channels,
                     const std::vector<uint8_t>& pixels) {
  const std::string path = dir.file(name);
  EXPECT_NE(stbi_write_png(path.c_str(), width, height, channels, pixels.data(), width * channels), 0);
  return path;
}

std::vector<uint8_t> ReadBytesImage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

ir::Tensor Input(std::vector<int32_t> shape, ir::DType dtype = tfl::TensorType_FLOAT32) {
  ir::Tensor t;
  t.name = "image";
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

// The one-line message of the Error `fn` throws; fails when it throws none.
template <typename Fn>
std::string ErrorOfImage(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(ImageDecode, PngRoundTripsExactlyAndGrayAndAlphaBecomeRgb) {
  TempDir dir;
  const std::vector<uint8_t> rgb = Pattern(21, 13);
  const image::Image decoded = image::Decode(WritePng(dir, "rgb.png", 21, 13, 3, rgb));
  EXPECT_EQ(decoded.width, 21);
  EXPECT_EQ(decoded.height, 13);
  EXPECT_EQ(decoded.rgb, rgb);

  std::vector<uint8_t> gray(21 * 13);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<uint8_t>(i * 3);
  const image::Image from_gray = image::Decode(WritePng(dir, "gray.png", 21, 13, 1, gray));
  for (size_t i = 0; i < gray.size(); ++i)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(from_gray.rgb[i * 3 + c], gray[i]) << i;

  std::vector<uint8_t> rgba;
  for (size_t i = 0; i < rgb.size(); i += 3) rgba.insert(rgba.end(), {rgb[i], rgb[i + 1], rgb[i + 2], 17});
  EXPECT_EQ(image::Decode(WritePng(dir, "rgba.png", 21, 13, 4, rgba)).rgb, rgb) << "alpha is dropped";
}

TEST(ImageDecode, JpegDecodesCloseToWhatWasWritten) {
  TempDir dir;
  // A smooth picture: JPEG at quality 100 keeps it within a few levels.
  std::vector<uint8_t> rgb(40 * 24 * 3);
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 40; ++x)
      for (int c = 0; c < 3; ++c) rgb[(y * 40 + x) * 3 + c] = static_cast<uint8_t>(40 + x * 3 + y * 2 + c * 20);
  const std::string path = dir.file("smooth.jpg");
  ASSERT_NE(stbi_write_jpg(path.c_str(), 40, 24, 3, rgb.data(), 100), 0);
  const image::Image decoded = image::Decode(path);
  ASSERT_EQ(decoded.width, 40);
  ASSERT_EQ(decoded.height, 24);
  int worst = 0;
  for (size_t i = 0; i < rgb.size(); ++i) worst = std::max(worst, std::abs(decoded.rgb[i] - rgb[i]));
  EXPECT_LE(worst, 6);
}

TEST(ImageResize, SameSizeIsExactAndHalfPixelCentresHoldUpAndDown) {
  image::Image img{.width = 21, .height = 13, .rgb = Pattern(21, 13)};
  const std::vector<float> same = image::ResizeBilinear(img, 13, 21);
  for (size_t i = 0; i < same.size(); ++i) ASSERT_EQ(same[i], img.rgb[i]) << i;

  // One row 0, 100 (all channels): 2 -> 4 samples at source x = -0.25
  // (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  image::Image row{.width = 2, .height = 1, .rgb = {0, 0, 0, 100, 100, 100}};
  const std::vector<float> up = image::ResizeBilinear(row, 1, 4);
  const float expected_up[] = {0, 25, 75, 100};
  for (int x = 0; x < 4; ++x)
    for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(up[x * 3 + c], expected_up[x]) << x;

  // 4 -> 2 samples at source x = 0.5 and 2.5: the mean of each pair, no
  // antialiasing beyond that.
  image::Image four{.width = 4, .height = 1, .rgb = {}};
  for (int v : {0, 10, 50, 250}) four.rgb.insert(four.rgb.end(), 3, static_cast<uint8_t>(v));
  const std::vector<float> down = image::ResizeBilinear(four, 1, 2);
  EXPECT_FLOAT_EQ(down[0], 5);
  EXPECT_FLOAT_EQ(down[3], 150);

  // Vertical too: a 1-wide column 0, 200 -> 3 rows at y = -1/6 (0), 0.5, 7/6 (1).
  image::Image column{.width = 1, .height = 2, .rgb = {0, 0, 0, 200, 200, 200}};
  const std::vector<float> tall = image::ResizeBilinear(column, 3, 1);
  EXPECT_FLOAT_EQ(tall[0], 0);
  EXPECT_FLOAT_EQ(tall[3], 100);
  EXPECT_FLOAT_EQ(tall[6], 200);
}

TEST(ImageNormalization, PresetsAndExplicitMeanStd) {
  const auto value = [](const std::string& spec, int channel, double pixel) {
    const image::Normalization n = image::ParseNormalization(spec);
    return (pixel - n.mean[channel]) / n.std[channel];
  };
  EXPECT_DOUBLE_EQ(value("0,1", 0, 0), 0);
  EXPECT_DOUBLE_EQ(value("0,1", 2, 255), 1);
  EXPECT_DOUBLE_EQ(value("-1,1", 1, 0), -1);
  EXPECT_DOUBLE_EQ(value("-1,1", 1, 255), 1);
  EXPECT_DOUBLE_EQ(value("-1,1", 0, 127.5), 0);
  EXPECT_NEAR(value("imagenet", 0, 255 * 0.485), 0, 1e-12);
  EXPECT_NEAR(value("imagenet", 1, 255), (1 - 0.456) / 0.224, 1e-12);
  EXPECT_NEAR(value("imagenet", 2, 0), -0.406 / 0.225, 1e-12);

  const image::Normalization explicit_one = image::ParseNormalization("mean=127.5:std=127.5");
  EXPECT_EQ(explicit_one.mean, image::ParseNormalization("-1,1").mean);
  EXPECT_EQ(explicit_one.std, image::ParseNormalization("-1,1").std);
  const image::Normalization explicit_three = image::ParseNormalization("mean=1,2.5,-3:std=4,5,6e1");
  EXPECT_EQ(explicit_three.mean, (std::array<double, 3>{1, 2.5, -3}));
  EXPECT_EQ(explicit_three.std, (std::array<double, 3>{4, 5, 60}));
  EXPECT_EQ(explicit_three.spec, "mean=1,2.5,-3:std=4,5,6e1");

  for (const char* bad : {"", "0-1", "mean=1", "mean=1,2:std=1", "mean=a:std=1", "mean=0:std=0", "mean=0:std=-2",
                          "mean=0:std=1,", "mean=0:std=nan"}) {
    const std::string message = ErrorOfImage([&] { image::ParseNormalization(bad); });
    EXPECT_NE(message.find("--normalize"), std::string::npos) << bad << ": " << message;
  }
  EXPECT_NE(ErrorOfImage([] { image::ParseLayout("hwc"); }).find("--layout"), std::string::npos);
}

TEST(ImageLayout, WhatLooksLikeAnImage) {
  EXPECT_TRUE(image::LooksLikeImage(Input({1, 256, 256, 3})));
  EXPECT_TRUE(image::LooksLikeImage(Input({1, 3, 224, 160})));
  EXPECT_TRUE(image::LooksLikeImage(Input({1, 16, 16, 3})));
  EXPECT_FALSE(image::LooksLikeImage(Input({1, 15, 16, 3}))) << "too small to be a picture";
  EXPECT_FALSE(image::LooksLikeImage(Input({1, 256, 256, 1}))) << "one channel";
  EXPECT_FALSE(image::LooksLikeImage(Input({2, 256, 256, 3}))) << "batch 2";
  EXPECT_FALSE(image::LooksLikeImage(Input({256, 256, 3}))) << "rank 3";
  EXPECT_FALSE(image::LooksLikeImage(Input({1, 256, 256, 3}, tfl::TensorType_UINT8))) << "uint8";
  EXPECT_FALSE(image::LooksLikeImage(Input({1, 195})));

  EXPECT_EQ(image::ResolveLayout(Input({1, 8, 8, 3}), image::Layout::kAuto), image::Layout::kNhwc)
      << "a named input may be small";
  EXPECT_EQ(image::ResolveLayout(Input({1, 3, 8, 8}), image::Layout::kAuto), image::Layout::kNchw);
  EXPECT_EQ(image::ResolveLayout(Input({1, 3, 8, 3}), image::Layout::kAuto), image::Layout::kNhwc)
      << "a tie goes to TFLite's own layout";
  EXPECT_EQ(image::ResolveLayout(Input({1, 3, 8, 3}), image::Layout::kNchw), image::Layout::kNchw);
  const std::string forced = ErrorOfImage([] { image::ResolveLayout(Input({1, 64, 64, 3}), image::Layout::kNchw); });
  EXPECT_NE(forced.find("'image'"), std::string::npos) << forced;
  EXPECT_NE(forced.find("[1,64,64,3]"), std::string::npos) << forced;
  EXPECT_NE(forced.find("nchw"), std::string::npos) << forced;
}

TEST(ImageLayout, NhwcAndNchwHoldTheSameNormalisedPixels) {
  TempDir dir;
  const std::vector<uint8_t> rgb = Pattern(20, 18);
  const std::string path = WritePng(dir, "p.png", 20, 18, 3, rgb);
  image::ImageOptions options;
  options.normalization = image::ParseNormalization("-1,1");
  const npy::Array nhwc = image::LoadImageInput(path, Input({1, 18, 20, 3}), options);
  const npy::Array nchw = image::LoadImageInput(path, Input({1, 3, 18, 20}), options);
  EXPECT_EQ(nhwc.dtype, tfl::TensorType_FLOAT32);
  EXPECT_EQ(nhwc.shape, (std::vector<int64_t>{1, 18, 20, 3}));
  EXPECT_EQ(nchw.shape, (std::vector<int64_t>{1, 3, 18, 20}));
  for (int y = 0; y < 18; ++y)
    for (int x = 0; x < 20; ++x)
      for (int c = 0; c < 3; ++c) {
        const float expected = static_cast<float>(rgb[(y * 20 + x) * 3 + c] / 127.5 - 1);
        ASSERT_FLOAT_EQ(nhwc.as<float>()[(y * 20 + x) * 3 + c], expected) << y << "," << x << "," << c;
        ASSERT_FLOAT_EQ(nchw.as<float>()[(c * 18 + y) * 20 + x], expected) << y << "," << x << "," << c;
      }
}

TEST(ImageLayout, WrongInputsAreRefusedNamingTheInput) {
  TempDir dir;
  const std::string path = WritePng(dir, "p.png", 20, 18, 3, Pattern(20, 18));
  for (const ir::Tensor& input : {Input({1, 32, 32, 3}, tfl::TensorType_INT32), Input({1, 32, 32}),
                                  Input({1, 32, 32, 4}), Input({2, 32, 32, 3}), Input({1, 195})}) {
    const std::string message = ErrorOfImage([&] { image::LoadImageInput(path, input); });
    EXPECT_NE(message.find("input 'image'"), std::string::npos) << message;
    EXPECT_NE(message.find("an image needs float32"), std::string::npos) << message;
  }
}

// A PNG whose header claims width x height and whose data is one empty
// IDAT: what a corrupt or hostile file looks like to the decoder.
std::vector<uint8_t> PngHeaderOnly(uint32_t width, uint32_t height) {
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  auto chunk = [&](const char* type, std::vector<uint8_t> data) {
    const uint32_t n = static_cast<uint32_t>(data.size());
    out.insert(out.end(), {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)});
    std::vector<uint8_t> body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    uint32_t crc = 0xFFFFFFFFu;  // PNG's CRC-32 over type and data
    for (uint8_t b : body) {
      crc ^= b;
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    crc ^= 0xFFFFFFFFu;
    out.insert(out.end(), body.begin(), body.end());
    out.insert(out.end(), {uint8_t(crc >> 24), uint8_t(crc >> 16), uint8_t(crc >> 8), uint8_t(crc)});
  };
  chunk("IHDR", {uint8_t(width >> 24), uint8_t(width >> 16), uint8_t(width >> 8), uint8_t(width), uint8_t(height >> 24),
                 uint8_t(height >> 16), uint8_t(height >> 8), uint8_t(height), 8, 2, 0, 0, 0});
  chunk("IDAT", {});
  chunk("IEND", {});
  return out;
}

TEST(ImageDecode, BadFilesFailWithOneLineNamingTheFile) {
  TempDir dir;
  const std::string png = WritePng(dir, "good.png", 64, 48, 3, Pattern(64, 48));
  const std::string jpg = dir.file("good.jpg");
  ASSERT_NE(stbi_write_jpg(jpg.c_str(), 64, 48, 3, Pattern(64, 48).data(), 90), 0);
  const std::vector<uint8_t> png_bytes = ReadBytesImage(png), jpg_bytes = ReadBytesImage(jpg);

  const std::string text = dir.file("notes.png");
  WriteBytes(text, {'h', 'e', 'l', 'l', 'o', '\n'});
  const std::string empty = dir.file("empty.jpg");
  WriteBytes(empty, {});
  const std::string short_png = dir.file("short.png");
  WriteBytes(short_png, std::vector<uint8_t>(png_bytes.begin(), png_bytes.begin() + png_bytes.size() / 2));
  const std::string short_jpg = dir.file("short.jpg");
  WriteBytes(short_jpg, std::vector<uint8_t>(jpg_bytes.begin(), jpg_bytes.begin() + jpg_bytes.size() * 2 / 3));
  const std::string zero = dir.file("zero.png");
  WriteBytes(zero, PngHeaderOnly(0, 0));
  const std::string huge = dir.file("huge.png");
  WriteBytes(huge, PngHeaderOnly(10000, 10000));  // 10^8 pixels: 300 MB decoded
  const std::string gif = dir.file("anim.gif");
  WriteBytes(gif, {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0, ';'});

  const struct {
    std::string path, says;
  } cases[] = {
      {dir.file("missing.png"), "cannot open image"},
      {dir.path().string(), "is a folder"},
      {text, "not a PNG or JPEG image"},
      {empty, "not a PNG or JPEG image"},
      {gif, "not a PNG or JPEG image"},
      {short_png, "PNG"},
      {short_jpg, "truncated JPEG"},
      {zero, "PNG image is 0x0, empty"},
      {huge, "10000x10000, more than the"},
  };
  for (const auto& c : cases) {
    const std::string message = ErrorOfImage([&] { image::Decode(c.path); });
    EXPECT_EQ(message.rfind(c.path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.path << ": " << message;
  }
}

TEST(ImageDefault, TheShippedPhotographIsInstalledAndDecodes) {
  const std::string path = image::DefaultImagePath();
  EXPECT_TRUE(path.ends_with(".cache/images/grace_hopper.jpg")) << path;
  ASSERT_TRUE(fs::exists(path)) << path << " missing: run tools/fetch_images.sh (tools/setup.sh does)";
  const image::Image photo = image::Decode(path);
  EXPECT_EQ(photo.width, 512);
  EXPECT_EQ(photo.height, 600);
  // A colour photograph: channels differ and the values spread.
  int64_t red_minus_blue = 0;
  uint8_t lo = 255, hi = 0;
  for (size_t i = 0; i < photo.rgb.size(); i += 3) {
    red_minus_blue += photo.rgb[i] - photo.rgb[i + 2];
    lo = std::min(lo, photo.rgb[i]);
    hi = std::max(hi, photo.rgb[i]);
  }
  EXPECT_NE(red_minus_blue, 0);
  EXPECT_GT(hi - lo, 200);
}

}  // namespace
}  // namespace gpuclean
