// ctest-labels: litert webgpu slow
// Every exported ONNX fixture (tools/fetch_onnx_fixtures.sh: torchvision
// classifiers, DeepLabV3, ViT, Swin-T, a DETR-style model, mha_parity)
// converts, passes the proof against onnxruntime, and its written .tflite
// runs in LiteRT.js (wasm) with eager PyTorch's numbers for the fixture's
// own input. mha_parity also runs the field reports' parity protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gpuclean/convert.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/npy.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {
namespace fs = std::filesystem;

using testing::OnnxCache;

nlohmann::json Summary(const std::string& name) {
  const fs::path path = OnnxCache() / (name + ".json");
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << path << " missing: run tools/fetch_onnx_fixtures.sh";
    return {};
  }
  return nlohmann::json::parse(in);
}

std::vector<double> Values(const npy::Array& a) {
  std::vector<double> v(a.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = a.as<float>()[i];
  return v;
}

// numpy.allclose(got, ref, rtol, atol), with the worst element for messages.
bool AllClose(const npy::Array& got, const npy::Array& ref, double rtol, double atol, std::string* why) {
  if (got.num_elements() != ref.num_elements()) {
    *why = "element counts differ";
    return false;
  }
  const auto g = Values(got), r = Values(ref);
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double excess = std::abs(g[i] - r[i]) - (atol + rtol * std::abs(r[i]));
    if (excess > worst || !std::isfinite(g[i])) {
      worst = std::isfinite(g[i]) ? excess : INFINITY;
      at = i;
    }
  }
  if (worst > 0) *why = "element " + std::to_string(at) + ": " + std::to_string(g[at]) + " vs " + std::to_string(r[at]);
  return worst <= 0;
}

int64_t ArgMax(const npy::Array& a) {
  const auto v = Values(a);
  return std::max_element(v.begin(), v.end()) - v.begin();
}

class OnnxFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxFixture, ConvertsProvesAndRunsInLiteRt) {
  const std::string name = GetParam();
  const nlohmann::json summary = Summary(name);
  ASSERT_FALSE(summary.is_null());
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = (OnnxCache() / (name + ".onnx")).string();
  o.output_path = dir.file(name + ".tflite");
  // The monolith as the ONNX model has it, GPU-clean or not (the two-stage
  // rfdetr_seg_small keeps its TopK and gathers; its recipe test cuts them).
  o.allow_remaining = true;
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  ASSERT_TRUE(fs::exists(o.output_path));

  // The written file on LiteRT.js with the fixture's own input, against
  // eager PyTorch; outputs come in ONNX order and layout.
  const npy::Array input = npy::Read((OnnxCache() / summary["reference"]["input"].get<std::string>()).string());
  // Constants the target mishandles come as inputs fed from the host.
  std::vector<npy::Array> inputs = {input};
  for (const auto& [name, value] : r.host_inputs) inputs.push_back(value);
  const auto litert = testing::RunLiteRt(o.output_path, inputs);
  const auto& expected = summary["reference"]["expected"];
  ASSERT_EQ(litert.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    const npy::Array ref = npy::Read((OnnxCache() / expected[k].get<std::string>()).string());
    std::string why;
    EXPECT_TRUE(AllClose(litert[k], ref, 1e-3, 1e-4, &why)) << name << " output " << k << ": " << why;
  }
}

std::vector<std::string> FixtureNames() {
  std::vector<std::string> names;
  if (fs::is_directory(OnnxCache()))
    for (const auto& e : fs::directory_iterator(OnnxCache()))
      if (e.path().extension() == ".onnx") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  // An empty cache must fail, not skip: the test below checks the list.
  return names;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxFixture, ::testing::ValuesIn(FixtureNames()),
                         [](const auto& info) { return info.param; });

TEST(OnnxFixtures, AllFourteenAreThere) {
  const auto names = FixtureNames();
  for (const char* want : {"resnet18", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "regnet_y_400mf",
                           "deeplabv3_mobilenet_v3_large", "vit_small6", "swin_t", "detr_small", "mha_parity",
                           "rfdetr_seg_small", "maxvit_t", "sam2_hiera_t_256", "rfdetr_seg_nano"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end())
        << want << " missing from " << OnnxCache() << ": run tools/fetch_onnx_fixtures.sh";
}

// The windowed and grid-attention fixtures (Swin-T's shifted windows,
// MaxViT's block and grid partitions, both written by torchvision's
// authors) convert for WebGPU into files with no tensor above rank 4 and no
// lint error for the WebGPU nor the OpenCL delegate.
TEST(OnnxFixtures, WindowedModelsConvertGpuCleanForBothTargets) {
  // OpenCL as LiteRT 2.2.0's source has it (2.1.6's field reports reject the
  // SPLIT_V that WebGPU was measured to take and compute right).
  const lint::Matrix opencl = lint::LoadMatrix(testing::SourceDir() + "/data/compat", "mldrift-cl@2.2.0");
  for (const char* name : {"swin_t", "maxvit_t"}) {
    convert::Options o;
    o.onnx_path = (OnnxCache() / (std::string(name) + ".onnx")).string();
    o.target = "mldrift-webgpu@2.5.3";
    const convert::Result r = convert::Convert(o);
    EXPECT_TRUE(r.report.proven) << name;
    EXPECT_TRUE(r.report.target.clean) << name << ": " << r.report.RenderText();
    EXPECT_EQ(r.report.target.errors_after, 0) << name;
    EXPECT_EQ(lint::Lint(r.model, opencl).count(lint::Severity::kError), 0) << name << " for mldrift-cl@2.1.6";
    int above = 0;
    for (const ir::Tensor& t : r.model.main().tensors) above += t.rank() > 4;
    EXPECT_EQ(above, 0) << name;
  }
}

// SAM 2.1 Hiera-T's image encoder, architecture-faithful (unbind of the
// fused qkv, q-pooling, padded windows, the windowed position embedding,
// the FPN neck), at 256x256: converted for WebGPU it has no tensor above
// rank 4, no lint error for WebGPU or OpenCL, its position embedding fed
// from the host, and it runs wholly on the real WebGPU delegate (fp16) with
// every FPN level at correlation >= 0.9999 against onnxruntime fp32.
TEST(OnnxFixtures, Sam2HieraEncoderRunsWhollyOnWebGpu) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = (OnnxCache() / "sam2_hiera_t_256.onnx").string();
  o.output_path = dir.file("sam2.tflite");
  o.target = "mldrift-webgpu@2.5.3";
  o.probe = true;
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(r.report.target.errors_after, 0) << r.report.RenderText();
  EXPECT_EQ(r.report.target.host_fed.size(), 1u) << r.report.RenderText();
  // OpenCL as LiteRT 2.2.0's source has it (2.1.6's field reports reject the
  // SPLIT_V that WebGPU was measured to take and compute right).
  const lint::Matrix opencl = lint::LoadMatrix(testing::SourceDir() + "/data/compat", "mldrift-cl@2.2.0");
  EXPECT_EQ(lint::Lint(r.model, opencl).count(lint::Severity::kError), 0);
  for (const ir::Tensor& t : r.model.main().tensors) EXPECT_LE(t.rank(), 4) << t.name;
  ASSERT_TRUE(r.report.probe.ran) << r.report.probe.skipped_because;
  EXPECT_TRUE(r.report.probe.fully_delegated) << r.report.probe.residency;
  ASSERT_EQ(r.report.probe.outputs.size(), 3u);
  for (const auto& out : r.report.probe.outputs) EXPECT_GE(out.correlation, 0.9999) << out.name;
}

// The field reports' protocol: conv stem + nn.MultiheadAttention + head at
// 1x3x224x224, a golden input and 8 random ones, atol 1e-4 / rtol 1e-3 and
// equal argmax against eager PyTorch, on our interpreter and on LiteRT.js.
TEST(OnnxFixtures, MultiheadAttentionParityProtocol) {
  testing::TempDir dir;
  convert::Options o;
  o.onnx_path = (OnnxCache() / "mha_parity.onnx").string();
  o.output_path = dir.file("mha.tflite");
  const convert::Result r = convert::Convert(o);
  ASSERT_TRUE(r.report.proven) << r.report.RenderText();
  exec::Interpreter interp(std::make_shared<const ir::Model>(format::ReadModel(o.output_path)));
  for (int k = 0; k <= 8; ++k) {
    const npy::Array input = npy::Read((OnnxCache() / ("mha_parity.input_" + std::to_string(k) + ".npy")).string());
    const npy::Array ref = npy::Read((OnnxCache() / ("mha_parity.expected_" + std::to_string(k) + ".npy")).string());
    interp.SetInput(0, input);
    interp.Invoke();
    const npy::Array ours = interp.Output(0);
    const npy::Array litert = testing::RunLiteRt(o.output_path, {input}).at(0);
    std::string why;
    EXPECT_TRUE(AllClose(ours, ref, 1e-3, 1e-4, &why)) << "input " << k << " (ours): " << why;
    EXPECT_TRUE(AllClose(litert, ref, 1e-3, 1e-4, &why)) << "input " << k << " (LiteRT.js): " << why;
    EXPECT_EQ(ArgMax(ours), ArgMax(ref)) << "input " << k;
    EXPECT_EQ(ArgMax(litert), ArgMax(ref)) << "input " << k;
  }
}

}  // namespace
}  // namespace gpuclean
