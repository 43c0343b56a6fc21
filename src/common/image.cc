#include "gpuclean/image.h"

#include <fmt/format.h>
#include <stb/stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"

namespace gpuclean::image {
namespace fs = std::filesystem;

Layout ParseLayout(const std::string& text) {
  if (text == "auto") return Layout::kAuto;
  if (text == "nhwc") return Layout::kNhwc;
  if (text == "nchw") return Layout::kNchw;
  throw Error(ErrorKind::kUsage, "--layout takes auto, nhwc or nchw, not '" + text + "'");
}

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kAuto: return "auto";
    case Layout::kNhwc: return "nhwc";
    case Layout::kNchw: return "nchw";
  }
  return "auto";
}

namespace {

[[noreturn]] void BadNormalization(const std::string& spec, const std::string& why) {
  throw Error(ErrorKind::kUsage,
              fmt::format("--normalize '{}': {}; use 0,1 | -1,1 | imagenet | mean=M:std=S (M, S one number or R,G,B "
                          "in pixel units 0..255)",
                          spec, why));
}

// "127.5" or "123.7,116.3,103.5" -> three values.
std::array<double, 3> ParseTriple(const std::string& spec, const std::string& text) {
  std::vector<double> values;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v))
      BadNormalization(spec, "'" + item + "' is not a number");
    values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (values.size() == 1) return {values[0], values[0], values[0]};
  if (values.size() == 3) return {values[0], values[1], values[2]};
  BadNormalization(spec, fmt::format("{} values given, need 1 or 3", values.size()));
}

}  // namespace

Normalization ParseNormalization(const std::string& spec) {
  Normalization n;
  n.spec = spec;
  if (spec == "0,1") {
    n.mean = {0, 0, 0};
    n.std = {255, 255, 255};
  } else if (spec == "-1,1") {
    n.mean = {127.5, 127.5, 127.5};
    n.std = {127.5, 127.5, 127.5};
  } else if (spec == "imagenet") {
    // The torchvision / Keras statistics of the ImageNet training set, given
    // for pixels in 0..1; scaled here to 0..255.
    n.mean = {0.485 * 255, 0.456 * 255, 0.406 * 255};
    n.std = {0.229 * 255, 0.224 * 255, 0.225 * 255};
  } else if (spec.rfind("mean=", 0) == 0) {
    const size_t colon = spec.find(":std=");
    if (colon == std::string::npos) BadNormalization(spec, "missing ':std='");
    n.mean = ParseTriple(spec, spec.substr(5, colon - 5));
    n.std = ParseTriple(spec, spec.substr(colon + 5));
    for (double s : n.std)
      if (!(s > 0)) BadNormalization(spec, "std must be positive");
  } else {
    BadNormalization(spec, "unknown preset");
  }
  return n;
}

namespace {

struct StbFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

bool IsPng(const uint8_t* b, size_t n) { return n >= 8 && std::memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0; }
bool IsJpeg(const uint8_t* b, size_t n) { return n >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF; }

// stb_image refuses a JPEG cut short with a terse "expected marker"; this
// check lets the message say what happened. A complete JPEG has an
// end-of-image marker (FF D9) after its first scan; entropy-coded data
// cannot contain one (a data byte FF is written FF 00).
bool JpegHasEndAfterScan(const uint8_t* b, size_t n) {
  size_t i = 2;
  // Walk the marker segments up to the first start-of-scan (FF DA), so that
  // an EXIF thumbnail's own end marker does not count.
  while (i + 4 <= n) {
    if (b[i] != 0xFF) return false;
    const uint8_t marker = b[i + 1];
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    const size_t length = (static_cast<size_t>(b[i + 2]) << 8) | b[i + 3];
    if (marker == 0xDA) {
      i += 2 + length;
      break;
    }
    i += 2 + length;
  }
  for (; i + 1 < n; ++i)
    if (b[i] == 0xFF && b[i + 1] == 0xD9) return true;
  return false;
}

}  // namespace

Image DecodeBytes(const uint8_t* bytes, size_t size, const std::string& source) {
  const bool png = IsPng(bytes, size), jpeg = IsJpeg(bytes, size);
  if (!png && !jpeg) ThrowBadInput(fmt::format("{}: not a PNG or JPEG image", source));
  const char* kind = png ? "PNG" : "JPEG";
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    ThrowBadInput(fmt::format("{}: {} file of {} bytes is too large", source, kind, size));
  const int length = static_cast<int>(size);
  int width = 0, height = 0, channels = 0;
  // stb reports a 0-pixel PNG as a corrupt one; say what it is.
  if (png && size >= 24 && std::memcmp(bytes + 12, "IHDR", 4) == 0) {
    const auto be32 = [&](size_t at) {
      return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) | (uint32_t{bytes[at + 2]} << 8) |
             bytes[at + 3];
    };
    if (be32(16) == 0 || be32(20) == 0)
      ThrowBadInput(fmt::format("{}: PNG image is {}x{}, empty", source, be32(16), be32(20)));
  }
  if (!stbi_info_from_memory(bytes, length, &width, &height, &channels))
    ThrowBadInput(fmt::format("{}: corrupt {} header ({})", source, kind, stbi_failure_reason()));
  if (width <= 0 || height <= 0)
    ThrowBadInput(fmt::format("{}: {} image is {}x{}, empty", source, kind, width, height));
  if (int64_t{width} * height > kMaxPixels)
    ThrowBadInput(fmt::format("{}: {} image is {}x{}, more than the {} pixels gpuclean decodes", source, kind, width,
                              height, kMaxPixels));
  if (jpeg && !JpegHasEndAfterScan(bytes, size))
    ThrowBadInput(fmt::format("{}: truncated JPEG (no end-of-image marker after the scan data)", source));
  int decoded_channels = 0;
  std::unique_ptr<unsigned char, StbFree> pixels(
      stbi_load_from_memory(bytes, length, &width, &height, &decoded_channels, 3));
  if (!pixels) ThrowBadInput(fmt::format("{}: cannot decode {} ({})", source, kind, stbi_failure_reason()));
  Image image;
  image.width = width;
  image.height = height;
  image.rgb.assign(pixels.get(), pixels.get() + static_cast<size_t>(width) * height * 3);
  return image;
}

Image Decode(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) ThrowBadInput(fmt::format("{}: is a folder, not an image", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, fmt::format("{}: cannot open image ({})", path, std::strerror(errno)));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return DecodeBytes(bytes.data(), bytes.size(), path);
}

std::vector<float> ResizeBilinear(const Image& image, int out_height, int out_width) {
  if (out_height <= 0 || out_width <= 0 || image.width <= 0 || image.height <= 0)
    ThrowInternal(fmt::format("ResizeBilinear {}x{} -> {}x{}", image.width, image.height, out_width, out_height));
  // Per output coordinate: the two source indices and the weight of the second.
  struct Tap {
    int lo, hi;
    float frac;
  };
  auto taps = [](int in_size, int out_size) {
    std::vector<Tap> t(out_size);
    const double scale = static_cast<double>(in_size) / out_size;
    for (int o = 0; o < out_size; ++o) {
      const double src = std::clamp((o + 0.5) * scale - 0.5, 0.0, static_cast<double>(in_size - 1));
      const int lo = static_cast<int>(src);
      t[o] = {lo, std::min(lo + 1, in_size - 1), static_cast<float>(src - lo)};
    }
    return t;
  };
  const std::vector<Tap> ys = taps(image.height, out_height), xs = taps(image.width, out_width);
  std::vector<float> out(static_cast<size_t>(out_height) * out_width * 3);
  const size_t stride = static_cast<size_t>(image.width) * 3;
  for (int y = 0; y < out_height; ++y) {
    const uint8_t* top = image.rgb.data() + ys[y].lo * stride;
    const uint8_t* bottom = image.rgb.data() + ys[y].hi * stride;
    const float fy = ys[y].frac;
    for (int x = 0; x < out_width; ++x) {
      const size_t l = static_cast<size_t>(xs[x].lo) * 3, r = static_cast<size_t>(xs[x].hi) * 3;
      const float fx = xs[x].frac;
      for (int c = 0; c < 3; ++c) {
        const float upper = top[l + c] + (top[r + c] - top[l + c]) * fx;
        const float lower = bottom[l + c] + (bottom[r + c] - bottom[l + c]) * fx;
        out[(static_cast<size_t>(y) * out_width + x) * 3 + c] = upper + (lower - upper) * fy;
      }
    }
  }
  return out;
}

namespace {

bool FitsNhwc(const std::vector<int32_t>& s, int min_side) {
  return s.size() == 4 && s[0] == 1 && s[3] == 3 && s[1] >= min_side && s[2] >= min_side;
}
bool FitsNchw(const std::vector<int32_t>& s, int min_side) {
  return s.size() == 4 && s[0] == 1 && s[1] == 3 && s[2] >= min_side && s[3] >= min_side;
}

// Below this a float [1,H,W,3] input is more likely a small feature map or
// a table than a picture; auto-detection (check's default input) skips it.
constexpr int kMinImageSide = 16;

}  // namespace

bool LooksLikeImage(const ir::Tensor& input) {
  return input.dtype == tfl::TensorType_FLOAT32 &&
         (FitsNhwc(input.shape, kMinImageSide) || FitsNchw(input.shape, kMinImageSide));
}

Layout ResolveLayout(const ir::Tensor& input, Layout requested) {
  const auto refuse = [&](const std::string& needed) -> void {
    ThrowBadInput(fmt::format("input '{}' is {} {}: an image needs float32 {}", input.name, ir::DTypeName(input.dtype),
                              ir::FormatShape(input.shape), needed));
  };
  if (input.dtype != tfl::TensorType_FLOAT32) refuse("[1,H,W,3] or [1,3,H,W]");
  // An explicitly named input may be small; only auto-detection asks for 16.
  switch (requested) {
    case Layout::kNhwc:
      if (!FitsNhwc(input.shape, 1)) refuse("[1,H,W,3] for --layout nhwc");
      return Layout::kNhwc;
    case Layout::kNchw:
      if (!FitsNchw(input.shape, 1)) refuse("[1,3,H,W] for --layout nchw");
      return Layout::kNchw;
    case Layout::kAuto:
      // TFLite's native layout wins a tie such as [1,3,W,3].
      if (FitsNhwc(input.shape, 1)) return Layout::kNhwc;
      if (FitsNchw(input.shape, 1)) return Layout::kNchw;
      refuse("[1,H,W,3] or [1,3,H,W]");
  }
  ThrowInternal("unreachable layout");
}

npy::Array LoadImageInput(const std::string& path, const ir::Tensor& input, const ImageOptions& options) {
  // The tensor is checked first: a wrong input is a usage mistake whatever
  // the file holds, and decoding a large photograph for nothing is slow.
  const Layout layout = ResolveLayout(input, options.layout);
  const int height = layout == Layout::kNhwc ? input.shape[1] : input.shape[2];
  const int width = layout == Layout::kNhwc ? input.shape[2] : input.shape[3];
  const std::vector<float> rgb = ResizeBilinear(Decode(path), height, width);

  npy::Array array;
  array.dtype = tfl::TensorType_FLOAT32;
  array.shape.assign(input.shape.begin(), input.shape.end());
  array.data.resize(rgb.size() * sizeof(float));
  float* out = array.as<float>();
  const Normalization& n = options.normalization;
  const size_t plane = static_cast<size_t>(height) * width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < 3; ++c) {
      const float value = static_cast<float>((rgb[p * 3 + c] - n.mean[c]) / n.std[c]);
      out[layout == Layout::kNhwc ? p * 3 + c : c * plane + p] = value;
    }
  return array;
}

std::string DefaultImagePath() {
  fs::path root;
  if (const char* env = std::getenv("GPUCLEAN_SOURCE_DIR"); env && *env)
    root = env;
  else
    root = GPUCLEAN_SOURCE_ROOT;
  return (root / ".cache" / "images" / "grace_hopper.jpg").string();
}

}  // namespace gpuclean::image
