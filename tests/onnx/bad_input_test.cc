// ctest-labels: litert
// Malformed and hostile .onnx files: each is refused by onnx::Import with
// Error(kBadInput) or Error(kUnsupported) and one line naming the file, and
// `gpuclean convert` exits 2 with exactly one line on stderr. The models are
// built as bytes here (the ONNX protobuf classes), never committed.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpuclean/error.h"
#include "onnx/lowering.h"
#include "onnx/onnx_model.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
namespace pb = ::onnx;
using testing::OnnxTestModel;
using testing::ShellQuote;

pb::ModelProto Proto(const OnnxTestModel& m) {
  pb::ModelProto p;
  EXPECT_TRUE(p.ParseFromString(m.Serialize()));
  return p;
}

// x[1,4] + w[1,4] -> y[1,4]: valid on its own.
pb::ModelProto Small(int opset = 17) {
  OnnxTestModel m(opset);
  m.Input("x", {1, 4});
  m.InitF32("w", {1, 4}, {1, 2, 3, 4});
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  pb::ModelProto p = Proto(m);
  auto* shape = p.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_value(1);
  shape->add_dim()->set_dim_value(4);
  return p;
}

std::string WriteBytes(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string WriteProto(const fs::path& path, const pb::ModelProto& p) {
  return WriteBytes(path, p.SerializeAsString());
}

// Initializer `w` of Small() moved to external data at `location`.
pb::ModelProto External(const std::string& location, int64_t offset = -1, int64_t length = -1) {
  pb::ModelProto p = Small();
  pb::TensorProto* w = p.mutable_graph()->mutable_initializer(0);
  EXPECT_EQ(w->name(), "w");
  w->clear_float_data();
  w->clear_raw_data();
  w->set_data_location(pb::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return p;
}

std::string Floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * sizeof(float));
}

// Import refuses `path` with `kind` (kInternal: kBadInput or kUnsupported)
// and one line naming it (and containing `fragment`); `gpuclean convert`
// exits 2 with exactly one stderr line.
constexpr ErrorKind kBadOrUnsupported = ErrorKind::kInternal;
void ExpectRefused(const std::string& path, ErrorKind kind, const std::string& fragment) {
  SCOPED_TRACE(path);
  try {
    onnx::Graph g = onnx::Import(path);
    onnx::Lower(g, {});
    ADD_FAILURE() << "imported and lowered";
  } catch (const Error& e) {
    const std::string message = e.what();
    if (kind == kBadOrUnsupported)
      EXPECT_TRUE(e.kind() == ErrorKind::kBadInput || e.kind() == ErrorKind::kUnsupported) << message;
    else
      EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
  const auto r = testing::RunGpuclean("convert " + ShellQuote(path) + " -q -o " + ShellQuote(path + ".tflite"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path + ".tflite"));
}

// The ONNX import fuzzer's find: at opset 6 a Gemm of a rank-1 A crashed
// libonnx's 6 -> 7 adapter (a null read); it is refused in one line first.
TEST(OnnxBadInput, Opset6GemmOfAVectorIsRefusedBeforeLibonnxAdaptsIt) {
  testing::TempDir dir;
  OnnxTestModel m(6);
  m.Input("a", {4});
  m.InitF32("b", {4, 3}, std::vector<float>(12, 0.5f));
  m.InitF32("c", {3}, std::vector<float>(3, 0.0f));
  m.Node("Gemm", {"a", "b", "c"}, {"y"});
  m.Output("y");
  ExpectRefused(m.Write(dir.file("gemm6.onnx")), ErrorKind::kUnsupported, "needs a known rank-2 shape");
}

// The ONNX import fuzzer's find: a graph declaring input 'x' twice (ranks 4
// and 2) crashed libonnx's Conv shape inference (a null read). Every value is
// defined once, as onnxruntime requires; a second definition is one line.
TEST(OnnxBadInput, ValueDefinedTwiceIsRefusedBeforeShapeInference) {
  testing::TempDir dir;
  {
    OnnxTestModel m(11);
    m.Input("x", {1, 1, 7, 5});
    m.Input("x", {7, 5});
    m.InitF32("w", {1, 1, 3, 3}, std::vector<float>(9, 0.5f));
    m.Node("Conv", {"x", "w"}, {"y"});
    m.Output("y");
    ExpectRefused(m.Write(dir.file("input_twice.onnx")), ErrorKind::kBadInput, "graph input 'x' is declared twice");
  }
  {
    OnnxTestModel m(11);
    m.Input("x", {1, 1, 7, 5});
    m.InitF32("w", {1, 1, 3, 3}, std::vector<float>(9, 0.5f));
    m.Node("Conv", {"x", "w"}, {"y"});
    m.Node("Relu", {"x"}, {"y"});
    m.Output("y");
    ExpectRefused(m.Write(dir.file("output_twice.onnx")), ErrorKind::kBadInput,
                  "defines 'y', which is already defined");
  }
  {
    OnnxTestModel m(11);
    m.Input("x", {1, 1, 7, 5});
    m.InitF32("w", {1, 1, 3, 3}, std::vector<float>(9, 0.5f));
    m.InitF32("w", {1, 1, 3, 3}, std::vector<float>(9, 0.25f));
    m.Node("Conv", {"x", "w"}, {"y"});
    m.Output("y");
    ExpectRefused(m.Write(dir.file("init_twice.onnx")), ErrorKind::kBadInput, "initializer 'w' is declared twice");
  }
}

// A Conv over a rank-2 input (no batch or channel axis) is one line, not a
// crash inside libonnx's inference.
TEST(OnnxBadInput, ConvOfARank2InputIsOneLine) {
  testing::TempDir dir;
  OnnxTestModel m(11);
  m.Input("x", {7, 5});
  m.Input("w", {1, 1, 3, 3});
  m.Node("Conv", {"x", "w"}, {"y"});
  m.Output("y");
  const std::string path = m.Write(dir.file("conv_rank2.onnx"));
  try {
    onnx::Lower(onnx::Import(path), {});
    ADD_FAILURE() << "a Conv of a rank-2 input was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

// 3-D convolutions whose weights do not fit the clip: channels that are
// not a multiple of the weights', and a kernel longer than the padded clip.
TEST(OnnxBadInput, Conv3dWeightsThatDoNotFitTheClipAreOneLine) {
  testing::TempDir dir;
  struct Case {
    const char* name;
    std::vector<int64_t> weights;
  };
  for (const Case& c : {Case{"channels", {4, 2, 3, 3, 3}}, Case{"kernel", {4, 3, 9, 3, 3}}}) {
    OnnxTestModel m;
    m.Input("video", {1, 3, 4, 8, 8});
    int64_t count = 1;
    for (int64_t d : c.weights) count *= d;
    m.InitF32("w", c.weights, testing::RandomValues(static_cast<size_t>(count), 3));
    m.Node("Conv", {"video", "w"}, {"y"});
    m.Output("y");
    ExpectRefused(m.Write(dir.file(std::string("conv3d_") + c.name + ".onnx")), kBadOrUnsupported, "Conv");
  }
}

// The ONNX import fuzzer's find (UBSan): the Shape of a scalar made an empty
// int64 constant through a memcpy from a null vector. It is the empty shape.
TEST(OnnxBadInput, ShapeOfAScalarIsAnEmptyShape) {
  testing::TempDir dir;
  OnnxTestModel m(15);
  m.Input("x", {});
  m.Node("Shape", {"x"}, {"s"});
  m.Node("Reshape", {"x", "s"}, {"r"});
  m.Node("Relu", {"r"}, {"y"});
  m.Output("y");
  const onnx::LoweredGraph lowered = onnx::Lower(onnx::Import(m.Write(dir.file("shape_scalar.onnx"))), {});
  const ir::Subgraph& g = lowered.model.main();
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_TRUE(g.tensors[g.outputs[0]].shape.empty());
}

// The ONNX import fuzzer's find: at opset 6 a Gemm whose B the file declares
// as a scalar crashed libonnx's own shape inference (a null read) before the
// rank check ran; declared ranks are checked first now.
TEST(OnnxBadInput, Opset6GemmOfADeclaredScalarIsRefusedBeforeInference) {
  testing::TempDir dir;
  OnnxTestModel m(6);
  m.Input("a", {2, 7});
  m.Input("b", {});
  m.Input("c", {1, 91});
  m.Node("Gemm", {"a", "b", "c"}, {"y"});
  m.Output("y");
  ExpectRefused(m.Write(dir.file("gemm6_scalar.onnx")), ErrorKind::kUnsupported, "needs a known rank-2 shape");
}

TEST(OnnxBadInput, SmallModelIsFine) {
  testing::TempDir dir;
  const std::string path = WriteProto(dir.path() / "ok.onnx", Small());
  EXPECT_NO_THROW(onnx::Lower(onnx::Import(path), {}));
}

TEST(OnnxBadInput, TruncatedProtobuf) {
  testing::TempDir dir;
  const std::string bytes = Small().SerializeAsString();
  ExpectRefused(WriteBytes(dir.path() / "truncated.onnx", bytes.substr(0, bytes.size() / 2)), ErrorKind::kBadInput,
                "not an ONNX model");
}

TEST(OnnxBadInput, GarbageBytes) {
  testing::TempDir dir;
  ExpectRefused(WriteBytes(dir.path() / "garbage.onnx", std::string("\xff\xfe garbage \x00\x01\x02 not onnx\n", 24)),
                ErrorKind::kBadInput, "not an ONNX model");
}

TEST(OnnxBadInput, EmptyFile) {
  testing::TempDir dir;
  ExpectRefused(WriteBytes(dir.path() / "empty.onnx", ""), ErrorKind::kBadInput, "not an ONNX model");
}

TEST(OnnxBadInput, ExternalDataEscapingWithDotDot) {
  testing::TempDir dir;
  WriteBytes(dir.path() / "w.bin", Floats({1, 2, 3, 4}));
  ExpectRefused(WriteProto(dir.path() / "model" / "m.onnx", External("../w.bin")), ErrorKind::kBadInput,
                "leaves the model's folder");
}

TEST(OnnxBadInput, ExternalDataAtAbsolutePath) {
  testing::TempDir dir;
  const std::string abs = WriteBytes(dir.path() / "w.bin", Floats({1, 2, 3, 4}));
  ExpectRefused(WriteProto(dir.path() / "model" / "m.onnx", External(abs)), ErrorKind::kBadInput,
                "absolute external data location");
}

TEST(OnnxBadInput, ExternalDataThroughSymlinkOutOfTheFolder) {
  testing::TempDir dir;
  WriteBytes(dir.path() / "secret.bin", Floats({1, 2, 3, 4}));
  const std::string path = WriteProto(dir.path() / "model" / "m.onnx", External("w.bin"));
  fs::create_symlink(dir.path() / "secret.bin", dir.path() / "model" / "w.bin");
  ExpectRefused(path, ErrorKind::kBadInput, "resolves outside the model's folder");
}

TEST(OnnxBadInput, ExternalDataFileMissing) {
  testing::TempDir dir;
  ExpectRefused(WriteProto(dir.path() / "m.onnx", External("w.bin")), ErrorKind::kBadInput, "is missing");
}

TEST(OnnxBadInput, ExternalDataFileShort) {
  testing::TempDir dir;
  WriteBytes(dir.path() / "w.bin", Floats({1, 2}));
  ExpectRefused(WriteProto(dir.path() / "m.onnx", External("w.bin", 0, 16)), ErrorKind::kBadInput, "is short");
}

TEST(OnnxBadInput, ExternalDataOffsetPastTheEnd) {
  testing::TempDir dir;
  WriteBytes(dir.path() / "w.bin", Floats({1, 2, 3, 4}));
  ExpectRefused(WriteProto(dir.path() / "m.onnx", External("w.bin", 1000)), ErrorKind::kBadInput, "outside");
}

TEST(OnnxBadInput, ExternalDataHasTheWrongSize) {
  testing::TempDir dir;
  WriteBytes(dir.path() / "w.bin", Floats({1, 2, 3}));
  ExpectRefused(WriteProto(dir.path() / "m.onnx", External("w.bin")), ErrorKind::kBadInput, "'w'");
}

TEST(OnnxBadInput, ExternalDataGivenAsBytes) {
  // ImportBytes reads nothing from disk.
  try {
    onnx::ImportBytes(External("w.bin").SerializeAsString(), "bytes.onnx");
    ADD_FAILURE() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("bytes.onnx: "), std::string::npos) << e.what();
  }
}

TEST(OnnxBadInput, DimsThatOverflow) {
  testing::TempDir dir;
  pb::ModelProto p = Small();
  pb::TensorProto* w = p.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);
  ExpectRefused(WriteProto(dir.path() / "overflow.onnx", p), ErrorKind::kBadInput, "'w'");
}

TEST(OnnxBadInput, HugeDimsWithFewValuesAllocateNothing) {
  // 2^33 floats declared, one given: refused before 32 GiB are allocated.
  testing::TempDir dir;
  pb::ModelProto p = Small();
  pb::TensorProto* w = p.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  w->add_dims(int64_t{1} << 33);
  w->clear_raw_data();
  w->clear_float_data();
  w->add_float_data(1.0f);
  ExpectRefused(WriteProto(dir.path() / "huge.onnx", p), ErrorKind::kBadInput, "'w'");
}

TEST(OnnxBadInput, NegativeDim) {
  testing::TempDir dir;
  pb::ModelProto p = Small();
  p.mutable_graph()->mutable_initializer(0)->set_dims(0, -3);
  ExpectRefused(WriteProto(dir.path() / "negative.onnx", p), ErrorKind::kBadInput, "'w'");
}

TEST(OnnxBadInput, CyclicGraph) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 4});
  m.Node("Add", {"x", "b"}, {"a"});
  m.Node("Relu", {"a"}, {"b"});
  m.Output("b");
  ExpectRefused(m.Write(dir.file("cycle.onnx")), ErrorKind::kBadInput, "");
}

TEST(OnnxBadInput, NodeFromComMicrosoft) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 4});
  m.Node("FusedGelu", {"x"}, {"y"}, "com.microsoft");
  m.Output("y");
  ExpectRefused(m.Write(dir.file("ms.onnx")), ErrorKind::kUnsupported, "com.microsoft");
}

TEST(OnnxBadInput, OpsetPast21) {
  testing::TempDir dir;
  ExpectRefused(WriteProto(dir.path() / "opset22.onnx", Small(22)), ErrorKind::kUnsupported, "opset 22");
}

TEST(OnnxBadInput, OpsetsUpTo21AreAdaptedNotRefused) {
  // Opsets below 7 go through libonnx's converter to 7, 7 to 21 through our
  // own adaptation; only opsets past 21 are refused.
  testing::TempDir dir;
  EXPECT_NO_THROW(onnx::Lower(onnx::Import(WriteProto(dir.path() / "opset6.onnx", Small(6))), {}));
  EXPECT_NO_THROW(onnx::Lower(onnx::Import(WriteProto(dir.path() / "opset18.onnx", Small(18))), {}));
  EXPECT_NO_THROW(onnx::Lower(onnx::Import(WriteProto(dir.path() / "opset21.onnx", Small(21))), {}));
}

TEST(OnnxBadInput, NoDefaultOpset) {
  testing::TempDir dir;
  pb::ModelProto p = Small();
  p.clear_opset_import();
  ExpectRefused(WriteProto(dir.path() / "noopset.onnx", p), ErrorKind::kBadInput, "operator set");
}

TEST(OnnxBadInput, GraphInputWithoutShape) {
  testing::TempDir dir;
  pb::ModelProto p = Small();
  p.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  // The ONNX checker refuses it (kBadInput) where it runs first; otherwise
  // the input pins name it (kUnsupported).
  ExpectRefused(WriteProto(dir.path() / "noshape.onnx", p), kBadOrUnsupported, "shape");
}

TEST(OnnxBadInput, GraphInputThatIsNotATensor) {
  testing::TempDir dir;
  pb::ModelProto p = Small();
  p.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  ExpectRefused(WriteProto(dir.path() / "seq.onnx", p), ErrorKind::kBadInput, "'x'");
}

TEST(OnnxBadInput, OutputProducedByNoNode) {
  testing::TempDir dir;
  pb::ModelProto p = Small();
  p.mutable_graph()->mutable_output(0)->set_name("nowhere");
  ExpectRefused(WriteProto(dir.path() / "dangling.onnx", p), ErrorKind::kBadInput, "nowhere");
}

TEST(OnnxBadInput, OutputProducedByNoNodeBeforeOpsetConversion) {
  // Found by onnx_import_fuzzer: libonnx's opset converter (13 -> 17)
  // dereferenced the missing producer and crashed.
  testing::TempDir dir;
  pb::ModelProto p = Small(13);
  p.mutable_graph()->mutable_output(0)->set_name("nowhere");
  ExpectRefused(WriteProto(dir.path() / "dangling13.onnx", p), ErrorKind::kBadInput, "nowhere");
}

// Found by onnx_import_fuzzer: libonnx's conv/pool shape inference divides by
// the stride, so a stride of 0 raised SIGFPE; window and block attributes are
// checked before libonnx sees them, in nested graphs too.
TEST(OnnxBadInput, ZeroStrideIsRefusedBeforeShapeInference) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", {1, 1, 7, 5});
  m.InitF32("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  m.Node("Conv", {"x", "w"}, {"y"}).Ints("strides", {2, 0}).Ints("pads", {1, 1, 1, 1});
  m.Output("y");
  ExpectRefused(m.Write(dir.file("stride0.onnx")), ErrorKind::kBadInput, "strides");
}

TEST(OnnxBadInput, ZeroKernelAndBlockSizesAreRefused) {
  testing::TempDir dir;
  {
    OnnxTestModel m;
    m.Input("x", {1, 1, 4, 4});
    m.Node("MaxPool", {"x"}, {"y"}).Ints("kernel_shape", {0, 2});
    m.Output("y");
    ExpectRefused(m.Write(dir.file("kernel0.onnx")), ErrorKind::kBadInput, "kernel_shape");
  }
  {
    OnnxTestModel m;
    m.Input("x", {1, 4, 2, 2});
    m.Node("DepthToSpace", {"x"}, {"y"}).Int("blocksize", 0);
    m.Output("y");
    ExpectRefused(m.Write(dir.file("block0.onnx")), ErrorKind::kBadInput, "blocksize");
  }
}

// Found by onnx_import_fuzzer: Gather on a scalar (libonnx's inference does
// not refuse it) read the shape at axis 0 of a rank-0 tensor.
TEST(OnnxBadInput, AxisOfAScalarIsRefused) {
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("data", {});
  m.InitI64("indices", {3}, {0, 0, 0});
  m.Node("Gather", {"data", "indices"}, {"y"}).Int("axis", 0);
  m.Output("y");
  pb::ModelProto p = Proto(m);
  p.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0
  p.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(3);
  ExpectRefused(WriteProto(dir.path() / "gather_scalar.onnx", p), kBadOrUnsupported, "axis 0");
}

}  // namespace
}  // namespace gpuclean
