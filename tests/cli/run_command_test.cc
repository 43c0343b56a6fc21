// ctest-labels: slow
// `gpuclean run` as a user calls it: generated inputs written beside the
// outputs and reproducible from them, meta.json, --dump-tensors with its
// index, and one-line errors (exit 2) for models and inputs it cannot run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/npy.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::RunGpuclean;
using testing::ShellQuote;
using testing::TempDir;

const std::string& SmallModel() {
  static const std::string path = testing::FixtureModel("selfie_segmentation.tflite");
  return path;
}

TEST(RunCommand, GeneratedInputsAreWrittenAndReproduceTheOutputs) {
  TempDir dir;
  const std::string first = dir.file("first"), again = dir.file("again"), other = dir.file("other");
  auto r = RunGpuclean("run " + ShellQuote(SmallModel()) + " --out " + ShellQuote(first) + " --repeat 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(first + "/in0.npy"));
  ASSERT_TRUE(fs::exists(first + "/out0.npy"));

  const nlohmann::json meta = testing::ReadJsonFile(first + "/meta.json");
  EXPECT_EQ(meta["precision"], "fp32");
  EXPECT_EQ(meta["runs"], 3);
  ASSERT_EQ(meta["inputs"].size(), 1u);
  EXPECT_EQ(meta["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(meta["inputs"][0]["shape"], nlohmann::json({1, 256, 256, 3}));
  EXPECT_EQ(meta["inputs"][0]["file"], "in0.npy");
  EXPECT_EQ(meta["outputs"][0]["file"], "out0.npy");
  EXPECT_FALSE(meta["outputs"][0]["name"].get<std::string>().empty());
  for (const char* key : {"run_ms", "run_ms_first", "run_ms_min", "peak_rss_bytes", "arena_bytes"})
    EXPECT_GT(meta[key].get<double>(), 0) << key;

  // Generated floats are uniform [0,1).
  const npy::Array in = npy::Read(first + "/in0.npy");
  const float* v = in.as<float>();
  const auto [lo, hi] = std::minmax_element(v, v + in.num_elements());
  EXPECT_GE(*lo, 0.0f);
  EXPECT_LT(*hi, 1.0f);
  EXPECT_GT(*hi - *lo, 0.9f);

  // Feeding the written input back, by index and by name, gives the same bytes.
  const std::string name = meta["inputs"][0]["name"];
  r = RunGpuclean("run " + ShellQuote(SmallModel()) + " --input " + ShellQuote(name + "=" + first + "/in0.npy") +
                  " --out " + ShellQuote(again) + " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(again + "/in0.npy")) << "a given input is not written again";
  EXPECT_EQ(testing::ReadJsonFile(again + "/meta.json")["inputs"][0]["source"], "given");
  EXPECT_TRUE(npy::Read(again + "/out0.npy").data == npy::Read(first + "/out0.npy").data);

  // Another seed, other inputs.
  r = RunGpuclean("run " + ShellQuote(SmallModel()) + " --seed 7 --out " + ShellQuote(other));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(npy::Read(other + "/in0.npy").data == in.data);
}

// What convert writes for a constant the target mishandles: the model, and
// the constant's value beside it as OUT.<input>.npy. `run` feeds it.
TEST(RunCommand, FeedsTheHostFedConstantsBesideTheModel) {
  TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  const int c = b.Input("host-fed-constants/table", tfl::TensorType_FLOAT32, {1, 4});
  b.Output(b.Add(x, c));
  const std::string model = dir.file("m.tflite");
  format::WriteModel(b.Finish(), model);
  npy::Write(dir.file("m.host-fed-constants_table.npy"), testing::F32({1, 4}, {100, 200, 300, 400}));

  auto r = RunGpuclean("run " + ShellQuote(model) + " --out " + ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json meta = testing::ReadJsonFile(dir.file("out") + "/meta.json");
  EXPECT_EQ(meta["inputs"][1]["source"], "beside the model");
  const npy::Array in = npy::Read(dir.file("out") + "/in0.npy"), out = npy::Read(dir.file("out") + "/out0.npy");
  for (int k = 0; k < 4; ++k) EXPECT_EQ(out.as<float>()[k], in.as<float>()[k] + 100.0f * (k + 1));

  // A file of another shape is one line, not a silent garbage run.
  npy::Write(dir.file("m.host-fed-constants_table.npy"), testing::F32({4}, {100, 200, 300, 400}));
  r = RunGpuclean("run " + ShellQuote(model) + " --out " + ShellQuote(dir.file("bad")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("beside the model"), std::string::npos) << r.err;
}

TEST(RunCommand, PrecisionFp16IsTheTargetsNumericModel) {
  TempDir dir;
  builder::GraphBuilder b;
  int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  b.Output(b.Mul(b.Square(x), b.ConstF32("k", {}, {1e-3f})));
  format::WriteModel(b.Finish(), dir.file("sq.tflite"));
  npy::Array in;
  in.dtype = tfl::TensorType_FLOAT32;
  in.shape = {1, 8};
  in.data.resize(32);
  for (int i = 0; i < 8; ++i) in.as<float>()[i] = 440.0f;  // x^2 = 193600
  npy::Write(dir.file("x.npy"), in);
  const std::string base = "run " + ShellQuote(dir.file("sq.tflite")) + " --input 0=" + ShellQuote(dir.file("x.npy"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --precision fp16", "fp16-compute"},
      {" --precision fp16 --target mldrift-webgpu@2.5.3", "fp16-fused"},
      {" --precision fp16 --target xnnpack", "fp32"},
      {" --precision fp16-fused", "fp16-fused"},
      {" --precision fp16-f32acc", "fp16-f32acc"}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string out = dir.file("out" + std::to_string(i));
    auto r = RunGpuclean(base + cases[i].first + " --out " + ShellQuote(out));
    ASSERT_EQ(r.exit_code, 0) << cases[i].first << ": " << r.err;
    EXPECT_EQ(testing::ReadJsonFile(out + "/meta.json")["precision"], cases[i].second) << cases[i].first;
    // x^2 is stored in half between kernels under fp16-compute and
    // fp16-f32acc: inf there, 193.6 otherwise.
    const float y = npy::Read(out + "/out0.npy").as<float>()[0];
    if (cases[i].second == "fp16-compute" || cases[i].second == "fp16-f32acc")
      EXPECT_TRUE(std::isinf(y)) << y;
    else
      EXPECT_NEAR(y, 193.6f, 0.1f) << cases[i].first;
  }
  EXPECT_EQ(RunGpuclean(base + " --precision fp16 --target no-such --out " + ShellQuote(dir.file("bad"))).exit_code, 2);
}

TEST(RunCommand, DumpTensorsWritesEveryOpOutputWithAnIndex) {
  TempDir dir;
  const std::string taps = dir.file("taps");
  auto r = RunGpuclean("run " + ShellQuote(SmallModel()) + " --out " + ShellQuote(dir.file("out")) +
                       " --dump-tensors " + ShellQuote(taps));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json index = testing::ReadJsonFile(taps + "/index.json");
  const ir::Model model = format::ReadModel(SmallModel());
  size_t produced = 0;
  for (const ir::Op& op : model.subgraphs[0].ops) produced += op.outputs.size();
  // Ops folded at prepare (constant weights) are not taps; everything else is.
  ASSERT_GT(index["tensors"].size(), produced / 2);
  ASSERT_LE(index["tensors"].size(), produced);
  for (const auto& entry : index["tensors"]) {
    const std::string file = entry["file"];
    EXPECT_EQ(file.rfind(std::to_string(entry["tensor"].get<int>()) + "_", 0), 0u) << file;
    EXPECT_EQ(file.find('/'), std::string::npos) << file;
    const npy::Array a = npy::Read(taps + "/" + file);
    EXPECT_EQ(nlohmann::json(a.shape), entry["shape"]) << file;
  }
  // The last tap of a graph output equals the written output.
  const int output_tensor = model.subgraphs[0].outputs[0];
  for (const auto& entry : index["tensors"])
    if (entry["tensor"] == output_tensor)
      EXPECT_TRUE(npy::Read(taps + "/" + entry["file"].get<std::string>()).data ==
                  npy::Read(dir.file("out") + "/out0.npy").data);
}

// A graph written to `dir`; returns its path.
std::string Write(const TempDir& dir, const ir::Model& model, const std::string& name) {
  const std::string path = dir.file(name);
  format::WriteModel(model, path);
  return path;
}

TEST(RunCommand, UnsupportedOpFailsBeforeRunningWithOneLine) {
  TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  const int y = b.Relu(x);
  b.Output(b.Custom("MyVendorOp", {y}, {}, {{tfl::TensorType_FLOAT32, {1, 4}}})[0]);
  const std::string model = Write(dir, b.Finish(), "custom.tflite");
  auto r = RunGpuclean("run " + ShellQuote(model) + " --out " + ShellQuote(dir.file("out")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(testing::CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("op 1 (MyVendorOp)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no kernel"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("out") + "/out0.npy"));
}

TEST(RunCommand, QuantizedActivationsFailNamingOpIndexAndDtype) {
  TempDir dir;
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_INT8, {1, 8});
  const int y = b.Input("y", tfl::TensorType_INT8, {1, 8});
  b.Output(b.Add(x, y));
  ir::Model model = b.Finish();
  for (ir::Tensor& t : model.subgraphs[0].tensors) t.quant = {.scale = {0.05f}, .zero_point = {3}};
  const std::string path = Write(dir, model, "int8.tflite");
  auto r = RunGpuclean("run " + ShellQuote(path) + " --out " + ShellQuote(dir.file("out")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(testing::CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("op 0 (ADD)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("int8"), std::string::npos) << r.err;
}

TEST(RunCommand, BadInputsFailWithOneLine) {
  TempDir dir;
  npy::Array wrong;
  wrong.dtype = tfl::TensorType_FLOAT32;
  wrong.shape = {1, 3};
  wrong.data.resize(12);
  npy::Write(dir.file("wrong.npy"), wrong);
  std::ofstream(dir.file("garbage.npy")) << "not an npy file";
  const std::string model = ShellQuote(SmallModel());
  const std::string out = " --out " + ShellQuote(dir.file("out"));
  for (const std::string& args : {"run " + model + " --input 0=" + ShellQuote(dir.file("wrong.npy")) + out,
                                  "run " + model + " --input 0=" + ShellQuote(dir.file("garbage.npy")) + out,
                                  "run " + model + " --input 0=" + ShellQuote(dir.file("missing.npy")) + out,
                                  // Not regular files: read as empty, not read forever (/dev/zero
                                  // grew a buffer without end when the reader iterated bytes).
                                  "run " + model + " --input 0=/dev/zero" + out,
                                  "run " + model + " --input 0=" + ShellQuote(dir.path().string()) + out,
                                  "run " + model + " --input 5=" + ShellQuote(dir.file("wrong.npy")) + out,
                                  "run " + model + " --input nosuchname=" + ShellQuote(dir.file("wrong.npy")) + out,
                                  "run " + model + " --input novalue" + out, "run " + model + " --threads 0" + out,
                                  "run " + ShellQuote(dir.file("missing.tflite")) + out, "run " + model}) {
    auto r = RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(testing::CountLines(r.err), 1) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
