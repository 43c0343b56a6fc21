// ctest-labels: litert slow
// Real-weight ONNX models shipped inside npm packages, trained and exported
// by other people (tools/fetch_npm_onnx.sh pins them): each converts and is
// proven against onnxruntime. Between them they need what import had to
// learn: opset 9 Softmax whose input shape inference cannot follow
// (PaddleOCR), IR 6 and tf2onnx NHWC graphs, If on a pinned sample rate with
// the weights inside the branches (silero VAD), an opset-18 IR-10 export,
// reflect padding through a reversed Slice, run-time Clip bounds (log-mel).
// BlazeFace is also fed a photograph and must find the face in it, and
// PaddleOCR's recogniser a line of rendered text it must read back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#define STB_TRUETYPE_IMPLEMENTATION
#include <stb/stb_truetype.h>

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
        NpmModel{"ppocr_cls", {{"x", {1, 3, 48, 192}}}, {}, 9}, NpmModel{"mlsd_tiny_320", {}, {}, 11},
        NpmModel{"oww_melspectrogram", {{"input", {1, 1280}}}, {}, 13},
        NpmModel{"oww_embedding", {{"input_1", {1, 76, 32, 1}}}, {}, 13}, NpmModel{"oww_hey_jarvis", {}, {}, 13}),
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

// `text` in DejaVu Sans (Debian's python-matplotlib-data, which setup
// installs), black on white, 32 px high, left-aligned in a height x width
// gray image with values 0..255.
std::vector<uint8_t> RenderText(const std::string& text, int height, int width) {
  const fs::path font_path = "/usr/share/matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf";
  std::ifstream in(font_path, std::ios::binary);
  const std::vector<unsigned char> font((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(font.empty()) << font_path << " missing: Debian's python-matplotlib-data";
  std::vector<uint8_t> gray(static_cast<size_t>(height) * width, 255);
  stbtt_fontinfo info;
  if (font.empty() || !stbtt_InitFont(&info, font.data(), 0)) return gray;
  const float scale = stbtt_ScaleForPixelHeight(&info, 32.0f);
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
  const int baseline = (height - static_cast<int>((ascent - descent) * scale)) / 2 + static_cast<int>(ascent * scale);
  float x = 8.0f;
  for (char c : text) {
    int advance = 0, bearing = 0, x0, y0, x1, y1;
    stbtt_GetCodepointHMetrics(&info, c, &advance, &bearing);
    stbtt_GetCodepointBitmapBox(&info, c, scale, scale, &x0, &y0, &x1, &y1);
    const int w = x1 - x0, h = y1 - y0;
    std::vector<unsigned char> glyph(static_cast<size_t>(std::max(w, 0)) * std::max(h, 0));
    if (w > 0 && h > 0) stbtt_MakeCodepointBitmap(&info, glyph.data(), w, h, w, scale, scale, c);
    for (int gy = 0; gy < h; ++gy)
      for (int gx = 0; gx < w; ++gx) {
        const int px = static_cast<int>(x) + x0 + gx, py = baseline + y0 + gy;
        if (px < 0 || px >= width || py < 0 || py >= height) continue;
        uint8_t& p = gray[static_cast<size_t>(py) * width + px];
        p = static_cast<uint8_t>(std::min<int>(p, 255 - glyph[static_cast<size_t>(gy) * w + gx]));
      }
    x += advance * scale;
  }
  return gray;
}

// A line of rendered text through PP-OCRv4's recogniser (paddle2onnx, opset
// 9): proven on it, and its CTC output, decoded greedily with the package's
// own dictionary, reads the text back.
TEST(NpmModelsOnText, PaddleOcrReadsARenderedLine) {
  const fs::path path = OnnxCache() / "npm" / "ppocrv4_rec.onnx";
  const fs::path keys_path = OnnxCache() / "npm" / "ppocr_keys_v1.txt";
  ASSERT_TRUE(fs::exists(path) && fs::exists(keys_path)) << "run tools/fetch_npm_onnx.sh";
  std::vector<std::string> keys = {""};  // class 0 is CTC's blank
  std::ifstream keys_in(keys_path);
  for (std::string line; std::getline(keys_in, line);) keys.push_back(line);
  keys.push_back(" ");  // the last class: the space PaddleOCR appends

  const std::string text = "Gpuclean2026";
  const int height = 48, width = 320;
  const std::vector<uint8_t> gray = RenderText(text, height, width);
  npy::Array x;
  x.dtype = tfl::TensorType_FLOAT32;
  x.shape = {1, 3, height, width};
  x.data.resize(static_cast<size_t>(3) * height * width * 4);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < height * width; ++i) x.as<float>()[c * height * width + i] = gray[i] / 127.5f - 1.0f;

  convert::Options o;
  o.onnx_path = path.string();
  o.input_shapes = {{"x", {1, 3, height, width}}};
  o.target = "none";
  o.proof_inputs["x"] = x;
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();

  exec::Interpreter interp(std::make_shared<const ir::Model>(r.model));
  interp.SetInput(0, x);
  interp.Invoke();
  const npy::Array probs = interp.Output(0);  // [1, T, classes]
  ASSERT_EQ(probs.shape.size(), 3u);
  ASSERT_EQ(probs.shape[2], static_cast<int64_t>(keys.size()));
  std::string read;
  int64_t previous = -1;
  for (int64_t t = 0; t < probs.shape[1]; ++t) {
    const float* row = probs.as<float>() + t * probs.shape[2];
    const int64_t best = std::max_element(row, row + probs.shape[2]) - row;
    if (best != previous && best != 0) read += keys[best];
    previous = best;
  }
  EXPECT_EQ(read, text);
}

// Mono 16-bit PCM samples of a WAV file as floats in [-1, 1], resampled
// (linearly) to `rate`.
std::vector<float> ReadWavAt(const fs::path& path, int rate) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto u32 = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3])) << 24;
  };
  if (bytes.size() < 44 || bytes.compare(0, 4, "RIFF") != 0) return {};
  const uint32_t source_rate = u32(24);
  std::vector<float> source;
  for (size_t at = 12; at + 8 <= bytes.size();) {
    const uint32_t size = u32(at + 4);
    if (bytes.compare(at, 4, "data") == 0) {
      for (size_t i = at + 8; i + 1 < at + 8 + size && i + 1 < bytes.size(); i += 2)
        source.push_back(
            static_cast<int16_t>(static_cast<uint8_t>(bytes[i]) | static_cast<uint8_t>(bytes[i + 1]) << 8) / 32768.0f);
      break;
    }
    at += 8 + size + (size & 1);
  }
  std::vector<float> out;
  for (double t = 0; source.size() > 1 && t < source.size() - 1; t += static_cast<double>(source_rate) / rate) {
    const size_t i = static_cast<size_t>(t);
    out.push_back(static_cast<float>(source[i] + (t - i) * (source[i + 1] - source[i])));
  }
  return out;
}

// Speech synthesised by espeak-ng (Debian; setup installs it with the test
// suite) through silero VAD v5 as its own wrapper feeds it at 16 kHz: 512
// new samples with the previous chunk's last 64 before them, the state
// carried from chunk to chunk. The converted graph is proven on a speech
// chunk, then scores the speech above 0.5 and the silence before it below 0.1.
TEST(NpmModelsOnSpeech, SileroVadHearsSynthesisedSpeech) {
  const fs::path path = OnnxCache() / "npm" / "silero_vad_v5.onnx";
  ASSERT_TRUE(fs::exists(path)) << path << " missing: run tools/fetch_npm_onnx.sh";
  testing::TempDir dir;
  const std::string wav = dir.file("speech.wav");
  ASSERT_EQ(std::system(("espeak-ng -v en -s 140 -w " + testing::ShellQuote(wav) +
                         " 'hello, this is a test of voice activity detection' 2>/dev/null")
                            .c_str()),
            0)
      << "espeak-ng failed (Debian package espeak-ng; tools/setup.sh installs it for the test suite)";
  constexpr int kRate = 16000, kChunk = 512, kContext = 64;
  std::vector<float> audio(kRate, 0.0f);  // a second of silence, then the speech
  const std::vector<float> speech = ReadWavAt(wav, kRate);
  ASSERT_GT(speech.size(), static_cast<size_t>(kRate)) << "no speech in " << wav;
  audio.insert(audio.end(), speech.begin(), speech.end());
  const auto window = [&](size_t chunk) {
    npy::Array a;
    a.dtype = tfl::TensorType_FLOAT32;
    a.shape = {1, kContext + kChunk};
    a.data.resize((kContext + kChunk) * 4);
    for (int i = 0; i < kContext + kChunk; ++i) {
      const int64_t at = static_cast<int64_t>(chunk * kChunk) - kContext + i;
      a.as<float>()[i] = at < 0 || at >= static_cast<int64_t>(audio.size()) ? 0.0f : audio[at];
    }
    return a;
  };
  convert::Options o;
  o.onnx_path = path.string();
  o.input_shapes = {{"input", {1, kContext + kChunk}}, {"state", {2, 1, 128}}};
  o.input_values = {{"sr", {kRate}}};
  o.target = "none";
  o.proof_inputs["input"] = window(kRate / kChunk + 20);  // inside the speech
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();

  exec::Interpreter interp(std::make_shared<const ir::Model>(r.model));
  npy::Array state;
  state.dtype = tfl::TensorType_FLOAT32;
  state.shape = {2, 1, 128};
  state.data.assign(2 * 128 * 4, 0);
  float silence_max = 0, speech_max = 0;
  for (size_t chunk = 0; (chunk + 1) * kChunk <= audio.size(); ++chunk) {
    interp.SetInput(0, window(chunk));
    interp.SetInput(1, state);
    interp.Invoke();
    const float p = interp.Output(0).as<float>()[0];
    state = interp.Output(1);
    (chunk * kChunk < kRate - kChunk ? silence_max : speech_max) =
        std::max(chunk * kChunk < kRate - kChunk ? silence_max : speech_max, p);
  }
  EXPECT_LT(silence_max, 0.1f) << "speech scored " << speech_max;
  EXPECT_GT(speech_max, 0.5f) << "silence scored " << silence_max;
}

}  // namespace
}  // namespace gpuclean
