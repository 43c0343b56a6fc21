#pragma once
// Photographs as model inputs: decode a PNG or JPEG (Debian's libstb),
// resize it to the input's height and width, normalise it and lay it out as
// the input tensor wants. Models fed uniform noise often answer with noise
// (a segmentation mask of 1e-10 everywhere); a real picture shows what the
// model does on the data it was trained for.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/npy.h"

namespace gpuclean::image {

// Where the channel axis is: [1,H,W,3] or [1,3,H,W].
enum class Layout { kAuto, kNhwc, kNchw };

// "auto", "nhwc" or "nchw"; Error(kUsage) otherwise.
Layout ParseLayout(const std::string& text);
const char* LayoutName(Layout layout);

// value = (pixel - mean[c]) / std[c] for channel c (R, G, B), with pixel in
// 0..255 as decoded: the convention of TFLite metadata's NormalizationOptions,
// so the numbers a model card gives can be typed in as they are.
struct Normalization {
  std::string spec;  // as the user wrote it, for meta.json and messages
  std::array<double, 3> mean{0, 0, 0};
  std::array<double, 3> std{255, 255, 255};
};

// Presets: "0,1" (pixel / 255), "-1,1" (pixel / 127.5 - 1), "imagenet"
// ((pixel / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]); or
// explicit "mean=M:std=S" where M and S are one number or three (R,G,B),
// in pixel units: "mean=127.5:std=127.5" is the same as "-1,1".
// Error(kUsage) for anything else, or a std that is not positive.
Normalization ParseNormalization(const std::string& spec);

struct ImageOptions {
  Normalization normalization = ParseNormalization("0,1");
  Layout layout = Layout::kAuto;
};

// --image [KEY=]FILE: a photograph for one model input.
struct ImageInput {
  std::string key;  // input index or name; empty: the first input that LooksLikeImage
  std::string path;
};

// Photographs for a model's inputs, with one normalisation and layout for
// all of them (exec::PrepareInputs and `gpuclean run` take this).
struct ImageInputs {
  std::vector<ImageInput> images;
  ImageOptions options;
};

// 8-bit RGB pixels, row-major, interleaved (R,G,B per pixel).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;
};

// Pictures with more pixels than this are refused before decoding: a
// corrupt or hostile header must not make us allocate gigabytes.
constexpr int64_t kMaxPixels = int64_t{1} << 26;  // 8192 x 8192

// Decodes a PNG or JPEG (gray and alpha are converted to RGB, alpha dropped;
// 16-bit PNGs reduced to 8 bits). Throws Error naming `path` for a missing
// or unreadable file, a format that is neither, truncated or corrupt data,
// an empty image or one over kMaxPixels.
Image Decode(const std::string& path);
Image DecodeBytes(const uint8_t* bytes, size_t size, const std::string& source);

// Bilinear resize to out_height x out_width with half-pixel centres (the
// source coordinate of output pixel x is (x + 0.5) * in_width / out_width -
// 0.5, clamped to the edge) and no antialiasing: the convention of
// TensorFlow's resize_bilinear(half_pixel_centers=True), OpenCV's
// INTER_LINEAR and GPU texture sampling, which MediaPipe's image-to-tensor
// step uses. The aspect ratio is not kept (the picture is stretched).
// Returns float RGB interleaved in 0..255, not rounded back to bytes.
std::vector<float> ResizeBilinear(const Image& image, int out_height, int out_width);

// True when `input` can take a photograph: float32, rank 4, batch 1, three
// channels last ([1,H,W,3]) or second ([1,3,H,W]), H and W at least 16.
bool LooksLikeImage(const ir::Tensor& input);

// The layout `options.layout` resolves to for `input` (kAuto: from the
// shape). Throws Error(kBadInput) naming `input` when it cannot take an
// image in that layout (dtype, rank, batch, channels or size).
Layout ResolveLayout(const ir::Tensor& input, Layout requested);

// Decode, resize to the input's H x W, normalise and lay out: a float32
// array of exactly the input's shape. Errors name `path` (the file) or the
// input tensor (a shape that cannot take an image).
npy::Array LoadImageInput(const std::string& path, const ir::Tensor& input, const ImageOptions& options = {});

// The photograph tools/setup.sh installs for the default demo (Grace Hopper,
// from Debian's python-matplotlib-data): <source folder>/.cache/images/
// grace_hopper.jpg, the source folder being $GPUCLEAN_SOURCE_DIR when set,
// else the folder this library was built from (as lint::DefaultDataDir
// finds data/). The file may be absent when setup has not run; callers check.
std::string DefaultImagePath();

}  // namespace gpuclean::image
