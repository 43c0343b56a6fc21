// ctest-labels: litert webgpu
// The onnxruntime oracle: probe/onnx_run.mjs on its own and through
// gpuclean::probe (Runtime::kOnnxRuntime, RunProbes' batch, `gpuclean probe
// --runtime onnxruntime`). onnxruntime-node comes from tools/fetch_models.sh;
// these tests never skip.
//
// The ONNX models are written byte by byte here (a tiny protobuf encoder),
// so no Python, no onnx package and no checked-in model files are needed.
#include <fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <variant>

#include "gpuclean/exec.h"
#include "gpuclean/probe.h"
#include "support/test_support.h"

namespace gpuclean::probe {
namespace {
namespace fs = std::filesystem;
using testing::ShellQuote;

// ------------------------------------------------------- protobuf / ONNX ---

// Protocol buffer wire format: varints (wire type 0) and length-delimited
// fields (wire type 2) are all an ONNX model needs.
class Pb {
 public:
  Pb& Varint(int field, uint64_t v) {
    Key(field, 0);
    Raw(v);
    return *this;
  }
  Pb& Bytes(int field, std::string_view bytes) {
    Key(field, 2);
    Raw(bytes.size());
    out_.append(bytes);
    return *this;
  }
  Pb& Message(int field, const Pb& m) { return Bytes(field, m.out_); }
  const std::string& str() const { return out_; }

 private:
  void Key(int field, int wire) { Raw((static_cast<uint64_t>(field) << 3) | wire); }
  void Raw(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      if (v) b |= 0x80;
      out_.push_back(static_cast<char>(b));
    } while (v);
  }
  std::string out_;
};

// onnx.TensorProto.DataType
enum OnnxType { kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10 };

// A dimension: a size, or a symbolic name (dim_param).
using Dim = std::variant<int64_t, std::string>;

Pb ValueInfo(const std::string& name, OnnxType type, const std::vector<Dim>& dims) {
  Pb shape;  // TensorShapeProto
  for (const Dim& d : dims) {
    Pb dim;  // TensorShapeProto.Dimension: dim_value = 1, dim_param = 2
    if (std::holds_alternative<int64_t>(d))
      dim.Varint(1, static_cast<uint64_t>(std::get<int64_t>(d)));
    else
      dim.Bytes(2, std::get<std::string>(d));
    shape.Message(1, dim);
  }
  Pb tensor_type;  // TypeProto.Tensor: elem_type = 1, shape = 2
  tensor_type.Varint(1, type).Message(2, shape);
  Pb type_proto;  // TypeProto: tensor_type = 1
  type_proto.Message(1, tensor_type);
  Pb vi;  // ValueInfoProto: name = 1, type = 2
  vi.Bytes(1, name).Message(2, type_proto);
  return vi;
}

Pb Node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  Pb n;  // NodeProto: input = 1, output = 2, name = 3, op_type = 4
  for (const auto& i : inputs) n.Bytes(1, i);
  for (const auto& o : outputs) n.Bytes(2, o);
  n.Bytes(3, op + "_" + outputs.at(0)).Bytes(4, op);
  return n;
}

template <typename T>
Pb Initializer(const std::string& name, OnnxType type, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  Pb t;  // TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9
  for (int64_t d : dims) t.Varint(1, static_cast<uint64_t>(d));
  t.Varint(2, type).Bytes(8, name);
  t.Bytes(9, std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  return t;
}

std::string Model(const std::vector<Pb>& nodes, const std::vector<Pb>& inputs, const std::vector<Pb>& outputs,
                  const std::vector<Pb>& initializers = {}) {
  Pb graph;  // GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12
  for (const Pb& n : nodes) graph.Message(1, n);
  graph.Bytes(2, "g");
  for (const Pb& t : initializers) graph.Message(5, t);
  for (const Pb& i : inputs) graph.Message(11, i);
  for (const Pb& o : outputs) graph.Message(12, o);
  Pb opset;  // OperatorSetIdProto: domain = 1, version = 2
  opset.Bytes(1, "").Varint(2, 13);
  Pb model;  // ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8
  model.Varint(1, 8).Bytes(2, "gpuclean-test").Message(7, graph).Message(8, opset);
  return model.str();
}

std::string Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

const std::vector<float> kWeights = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};  // W [3,2]

// x[2,3], y[2,3] -> s = x + y, p = s * y, m = x @ W (W a [3,2] initializer).
std::string ArithModel(const std::string& path) {
  return Write(
      path, Model({Node("Add", {"x", "y"}, {"s"}), Node("Mul", {"s", "y"}, {"p"}), Node("MatMul", {"x", "W"}, {"m"})},
                  {ValueInfo("x", kFloat, {2, 3}), ValueInfo("y", kFloat, {2, 3})},
                  {ValueInfo("s", kFloat, {2, 3}), ValueInfo("p", kFloat, {2, 3}), ValueInfo("m", kFloat, {2, 2})},
                  {Initializer("W", kFloat, {3, 2}, kWeights)}));
}

const std::vector<int64_t> kOffsets = {1, -2, 3000000000000};

// One input per dtype the harness must carry: o64 = i64 + [1,-2,3e12],
// nb = Not(b), and Identity for float16, uint8, int8 and int32 [N,2] (N
// symbolic).
std::string TypesModel(const std::string& path) {
  return Write(
      path,
      Model({Node("Add", {"i64", "c64"}, {"o64"}), Node("Not", {"b"}, {"nb"}), Node("Identity", {"h"}, {"oh"}),
             Node("Identity", {"u"}, {"ou"}), Node("Identity", {"i8"}, {"oi8"}), Node("Identity", {"i32"}, {"oi32"})},
            {ValueInfo("i64", kInt64, {3}), ValueInfo("b", kBool, {2, 2}), ValueInfo("h", kFloat16, {4}),
             ValueInfo("u", kUint8, {5}), ValueInfo("i8", kInt8, {2}), ValueInfo("i32", kInt32, {std::string("N"), 2})},
            {ValueInfo("o64", kInt64, {3}), ValueInfo("nb", kBool, {2, 2}), ValueInfo("oh", kFloat16, {4}),
             ValueInfo("ou", kUint8, {5}), ValueInfo("oi8", kInt8, {2}),
             ValueInfo("oi32", kInt32, {std::string("N"), 2})},
            {Initializer("c64", kInt64, {3}, kOffsets)}));
}

std::string GarbageModel(const std::string& path) { return Write(path, "this is not an ONNX model\n"); }

// ------------------------------------------------------------- helpers ---

size_t Lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

std::vector<float> FloatsOnnxRun(const npy::Array& a) {
  EXPECT_EQ(a.dtype, tfl::TensorType_FLOAT32);
  return std::vector<float>(a.as<float>(), a.as<float>() + a.num_elements());
}

// What gpuclean's own generator (exec::GenerateInput, the same as
// litert_run.mjs) makes for input `index` of this dtype and shape.
npy::Array Generated(ir::DType dtype, std::vector<int32_t> shape, uint32_t seed, int index) {
  ir::Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return exec::GenerateInput(t, seed, index);
}

ProbeRequest Request(const std::string& model, const std::string& out, uint32_t seed = 7) {
  ProbeRequest q;
  q.model_path = model;
  q.runtime = Runtime::kOnnxRuntime;
  q.seed = seed;
  q.out_dir = out;
  return q;
}

std::string Harness() { return ShellQuote(testing::SourceDir() + "/probe/onnx_run.mjs"); }

// ---------------------------------------------------------------- tests ---

TEST(OnnxRuntimeProbe, OutputsAreTheArithmeticOfTheGeneratedInputs) {
  testing::TempDir dir;
  ProbeRequest q = Request(ArithModel(dir.file("arith.onnx")), dir.file("out"));
  q.repeat = 3;
  const ProbeResult r = RunProbe(q);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.runtime, Runtime::kOnnxRuntime);
  EXPECT_EQ(r.meta["runtime"], "onnxruntime");
  EXPECT_EQ(r.meta["version"], "1.22.0");
  EXPECT_EQ(r.meta["runtime_id"], "onnxruntime");
  EXPECT_EQ(r.meta["threads"], 1);
  EXPECT_EQ(r.meta["graph_optimization"], "all");
  EXPECT_FALSE(r.meta.contains("residency"));  // no delegate, nothing to parse
  EXPECT_FALSE(r.residency.fully_delegated.has_value());
  EXPECT_FALSE(r.is_fully_accelerated.has_value());
  EXPECT_GT(r.compile_ms, 0);
  EXPECT_GT(r.run_ms, 0);
  EXPECT_GT(r.run_ms_first, 0);
  EXPECT_EQ(r.meta["run_ms_all"].size(), 3u);
  ASSERT_EQ(r.meta["inputs"].size(), 2u);
  EXPECT_EQ(r.meta["inputs"][1]["name"], "y");
  EXPECT_EQ(r.meta["inputs"][1]["dtype"], "float32");
  EXPECT_EQ(r.meta["inputs"][1]["shape"], nlohmann::json({2, 3}));
  ASSERT_EQ(r.meta["outputs"].size(), 3u);
  EXPECT_EQ(r.meta["outputs"][2]["name"], "m");
  EXPECT_EQ(r.meta["outputs"][2]["shape"], nlohmann::json({2, 2}));

  // Generated inputs: the bytes of gpuclean's (and litert_run.mjs's) generator.
  const npy::Array x = npy::Read(dir.file("out/in0.npy")), y = npy::Read(dir.file("out/in1.npy"));
  EXPECT_EQ(x.data, Generated(tfl::TensorType_FLOAT32, {2, 3}, 7, 0).data);
  EXPECT_EQ(y.data, Generated(tfl::TensorType_FLOAT32, {2, 3}, 7, 1).data);
  EXPECT_NE(x.data, y.data);

  ASSERT_EQ(r.outputs.size(), 3u);
  const auto xs = FloatsOnnxRun(x), ys = FloatsOnnxRun(y), s = FloatsOnnxRun(r.outputs[0]),
             p = FloatsOnnxRun(r.outputs[1]), m = FloatsOnnxRun(r.outputs[2]);
  EXPECT_EQ(r.outputs[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.outputs[2].shape, (std::vector<int64_t>{2, 2}));
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s[i], xs[i] + ys[i]) << i;
    EXPECT_EQ(p[i], (xs[i] + ys[i]) * ys[i]) << i;
  }
  for (int row = 0; row < 2; ++row)
    for (int col = 0; col < 2; ++col) {
      double want = 0;
      for (int k = 0; k < 3; ++k) want += double(xs[row * 3 + k]) * kWeights[k * 2 + col];
      EXPECT_NEAR(m[row * 2 + col], want, 1e-6) << row << "," << col;
    }
  // out<i>.npy on disk are what came back.
  EXPECT_EQ(npy::Read(dir.file("out/out1.npy")).data, r.outputs[1].data);
}

TEST(OnnxRuntimeProbe, GivenInputsAndEveryTensorType) {
  testing::TempDir dir;
  const std::string model = TypesModel(dir.file("types.onnx"));
  ProbeRequest q = Request(model, dir.file("gen"), 11);
  q.dims = {{"N", 3}};
  const ProbeResult r = RunProbe(q);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.outputs.size(), 6u);
  // int64: generated 0, so the output is the constant (3e12 needs 64 bits).
  EXPECT_EQ(r.outputs[0].dtype, tfl::TensorType_INT64);
  EXPECT_EQ(std::vector<int64_t>(r.outputs[0].as<int64_t>(), r.outputs[0].as<int64_t>() + 3), kOffsets);
  // bool: generated false, Not -> true.
  EXPECT_EQ(r.outputs[1].dtype, tfl::TensorType_BOOL);
  EXPECT_EQ(r.outputs[1].data, std::vector<uint8_t>(4, 1));
  EXPECT_EQ(npy::Read(dir.file("gen/in1.npy")).data, std::vector<uint8_t>(4, 0));
  // float16: the float32 draw rounded to nearest half, carried bit-exactly.
  EXPECT_EQ(r.outputs[2].dtype, tfl::TensorType_FLOAT16);
  const npy::Array f = Generated(tfl::TensorType_FLOAT32, {4}, 11, 2);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(r.outputs[2].as<uint16_t>()[i], fp16_ieee_from_fp32_value(f.as<float>()[i])) << i;
  EXPECT_EQ(npy::Read(dir.file("gen/in2.npy")).data, r.outputs[2].data);
  // uint8: r >>> 24, as gpuclean's generator.
  EXPECT_EQ(r.outputs[3].dtype, tfl::TensorType_UINT8);
  EXPECT_EQ(r.outputs[3].data, Generated(tfl::TensorType_UINT8, {5}, 11, 3).data);
  // int8 and int32 zeros; N sized by dims.
  EXPECT_EQ(r.outputs[4].dtype, tfl::TensorType_INT8);
  EXPECT_EQ(r.outputs[4].data, std::vector<uint8_t>(2, 0));
  EXPECT_EQ(r.outputs[5].dtype, tfl::TensorType_INT32);
  EXPECT_EQ(r.outputs[5].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r.meta["inputs"][5]["shape"], nlohmann::json({3, 2}));
  EXPECT_EQ(r.meta["outputs"][5]["model_shape"], nlohmann::json({-1, 2}));

  // Given inputs, by name and by index; the others are still generated.
  npy::Array i64;
  i64.dtype = tfl::TensorType_INT64;
  i64.shape = {3};
  i64.data.resize(3 * 8);
  const int64_t given[3] = {5, 6, 7};
  std::memcpy(i64.data.data(), given, sizeof given);
  npy::Write(dir.file("i64.npy"), i64);
  npy::Array i32;
  i32.dtype = tfl::TensorType_INT32;
  i32.shape = {4, 2};
  i32.data.resize(8 * 4);
  for (int i = 0; i < 8; ++i) reinterpret_cast<int32_t*>(i32.data.data())[i] = i * 10 - 3;
  npy::Write(dir.file("i32.npy"), i32);
  ProbeRequest g = Request(model, dir.file("given"), 11);
  g.inputs = {{"i64", dir.file("i64.npy")}, {"5", dir.file("i32.npy")}};
  const ProbeResult rg = RunProbe(g);
  ASSERT_TRUE(rg.ok) << rg.error;
  EXPECT_EQ(rg.outputs[0].as<int64_t>()[0], 6);
  EXPECT_EQ(rg.outputs[0].as<int64_t>()[1], 4);
  EXPECT_EQ(rg.outputs[0].as<int64_t>()[2], 3000000000007);
  EXPECT_EQ(rg.outputs[5].shape, (std::vector<int64_t>{4, 2}));  // the file's N
  EXPECT_EQ(rg.outputs[5].data, i32.data);
  EXPECT_FALSE(fs::exists(dir.file("given/in0.npy")));  // given, not generated
  EXPECT_TRUE(fs::exists(dir.file("given/in1.npy")));
  EXPECT_EQ(rg.outputs[2].data, r.outputs[2].data);  // same seed, same generated half input
}

TEST(OnnxRuntimeProbe, OutputNamesFetchASubsetInTheirOrder) {
  testing::TempDir dir;
  const std::string model = ArithModel(dir.file("arith.onnx"));
  const ProbeResult all = RunProbe(Request(model, dir.file("all")));
  ASSERT_TRUE(all.ok) << all.error;
  // {"m"} and {"m","s"} are not a prefix of the model's outputs:
  // onnxruntime-node 1.22 would hand them back under the wrong names
  // (microsoft/onnxruntime#26865); the harness maps them back.
  const std::vector<std::vector<std::string>> selections = {{"m"}, {"p", "s"}, {"m", "s"}, {"s", "p", "m"}};
  std::vector<ProbeRequest> requests;
  for (size_t i = 0; i < selections.size(); ++i) {
    ProbeRequest q = Request(model, dir.file("sel" + std::to_string(i)));
    q.output_names = selections[i];
    requests.push_back(q);
  }
  const std::vector<ProbeResult> got = RunProbes(requests);
  const std::map<std::string, size_t> index = {{"s", 0}, {"p", 1}, {"m", 2}};
  for (size_t i = 0; i < selections.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(got[i].ok) << got[i].error;
    ASSERT_EQ(got[i].outputs.size(), selections[i].size());
    ASSERT_EQ(got[i].meta["outputs"].size(), selections[i].size());
    for (size_t k = 0; k < selections[i].size(); ++k) {
      const size_t want = index.at(selections[i][k]);
      EXPECT_EQ(got[i].meta["outputs"][k]["name"], selections[i][k]);
      EXPECT_EQ(got[i].meta["outputs"][k]["index"], want);
      EXPECT_EQ(got[i].outputs[k].shape, all.outputs[want].shape);
      EXPECT_EQ(got[i].outputs[k].data, all.outputs[want].data);
    }
    EXPECT_FALSE(fs::exists(requests[i].out_dir + "/out" + std::to_string(selections[i].size()) + ".npy"));
  }
  // An unknown name is a failed request with the model's output names.
  ProbeRequest bad = Request(model, dir.file("bad"));
  bad.output_names = {"nope"};
  const ProbeResult rb = RunProbes({bad}).at(0);
  EXPECT_FALSE(rb.ok);
  EXPECT_NE(rb.error.find("nope"), std::string::npos) << rb.error;
  EXPECT_NE(rb.error.find("s, p, m"), std::string::npos) << rb.error;
}

TEST(OnnxRuntimeProbe, BatchRunsEveryJobInOneProcessAndSurvivesAFailingOne) {
  testing::TempDir dir;
  const std::string arith = ArithModel(dir.file("arith.onnx"));
  std::vector<ProbeRequest> requests = {
      Request(arith, dir.file("a"), 1), Request(GarbageModel(dir.file("garbage.onnx")), dir.file("b")),
      Request(arith, dir.file("c"), 2), Request(TypesModel(dir.file("t.onnx")), dir.file("d"))};
  requests[2].output_names = {"p"};
  requests[3].dims = {{"N", 1}};
  const std::vector<ProbeResult> r = RunProbes(requests);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].ok) << r[0].error;
  EXPECT_TRUE(r[2].ok) << r[2].error;
  EXPECT_TRUE(r[3].ok) << r[3].error;
  ASSERT_FALSE(r[1].ok);
  EXPECT_EQ(r[1].error.find('\n'), std::string::npos) << r[1].error;
  EXPECT_NE(r[1].error.find("onnxruntime: "), std::string::npos) << r[1].error;
  EXPECT_NE(r[1].error.find("garbage.onnx"), std::string::npos) << r[1].error;
  EXPECT_NE(r[1].error.find("Protobuf parsing failed"), std::string::npos) << r[1].error;
  EXPECT_TRUE(r[1].outputs.empty());
  const auto meta_b = nlohmann::json::parse(std::ifstream(dir.file("b/meta.json")));
  EXPECT_EQ(meta_b["ok"], false);
  EXPECT_EQ(meta_b["error"].get<std::string>().find('\n'), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("b/out0.npy")));
  // One harness call for all four, one session for both arith jobs.
  EXPECT_EQ(r[0].harness_ms, r[2].harness_ms);
  EXPECT_EQ(r[0].harness_ms, r[3].harness_ms);
  EXPECT_EQ(r[0].meta["session_reused"], false);
  EXPECT_EQ(r[2].meta["session_reused"], true);
  // Each job got its own seed and output selection.
  EXPECT_EQ(r[0].outputs.size(), 3u);
  ASSERT_EQ(r[2].outputs.size(), 1u);
  const auto x = FloatsOnnxRun(npy::Read(dir.file("c/in0.npy"))), y = FloatsOnnxRun(npy::Read(dir.file("c/in1.npy")));
  const auto p = FloatsOnnxRun(r[2].outputs[0]);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(p[i], (x[i] + y[i]) * y[i]);
  EXPECT_NE(npy::Read(dir.file("a/in0.npy")).data, npy::Read(dir.file("c/in0.npy")).data);
  EXPECT_EQ(npy::Read(dir.file("a/in0.npy")).data, Generated(tfl::TensorType_FLOAT32, {2, 3}, 1, 0).data);
  // Different session options are a separate harness call, still correct.
  ProbeRequest threads = Request(arith, dir.file("e"), 1);
  threads.threads = 2;
  threads.optimize = false;
  const ProbeResult e = RunProbe(threads);
  EXPECT_EQ(e.meta["threads"], 2);
  EXPECT_EQ(e.meta["graph_optimization"], "disabled");
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(e.outputs[i].data, r[0].outputs[i].data) << i;
}

TEST(OnnxRuntimeProbe, CliRunsOnnxAndPrintsOutputsNotResidency) {
  testing::TempDir dir;
  const std::string model = ShellQuote(ArithModel(dir.file("arith.onnx")));
  auto r = testing::RunGpuclean("probe " + model + " --runtime onnxruntime --seed 3 --outputs m,s --out " +
                                ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("residency"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("delegate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on onnxruntime 1.22.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("out0.npy  m  float32 [2,2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("out1.npy  s  float32 [2,3]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compile "), std::string::npos) << r.out;
  auto json = testing::RunGpuclean("probe " + model + " --runtime onnxruntime --json --threads 2 --no-optimize --out " +
                                   ShellQuote(dir.file("json")));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto meta = nlohmann::json::parse(json.out);
  EXPECT_EQ(meta["ok"], true);
  EXPECT_EQ(meta["runtime_id"], "onnxruntime");
  EXPECT_EQ(meta["threads"], 2);
  EXPECT_EQ(meta["graph_optimization"], "disabled");
  EXPECT_TRUE(fs::exists(dir.file("json/out2.npy")));
}

TEST(OnnxRuntimeProbe, FailuresAreOneLineWithExitTwo) {
  testing::TempDir dir;
  const std::string garbage = ShellQuote(GarbageModel(dir.file("garbage.onnx")));
  const std::string arith = ShellQuote(ArithModel(dir.file("arith.onnx")));
  const std::string types = ShellQuote(TypesModel(dir.file("types.onnx")));
  npy::Array wrong;  // int32 where the model wants float32
  wrong.dtype = tfl::TensorType_INT32;
  wrong.shape = {2, 3};
  wrong.data.resize(6 * 4);
  npy::Write(dir.file("wrong.npy"), wrong);
  const std::string out = " --out " + ShellQuote(dir.file("o"));
  const std::vector<std::pair<std::string, std::string>> cli = {
      {"probe " + garbage + " --runtime onnxruntime" + out, "Protobuf parsing failed"},
      {"probe " + arith + " --runtime onnxruntime --input 0=" + ShellQuote(dir.file("wrong.npy")) + out,
       "does not match model dtype float32"},
      {"probe " + arith + " --runtime onnxruntime --outputs s,,p" + out, "--outputs expects"},
      {"probe " + arith + " --runtime onnxruntime --precision fp16" + out, "needs --runtime litert-webgpu"},
      {"probe " + arith + " --runtime litert-wasm --outputs s" + out, "need --runtime onnxruntime"},
      {"probe " + types + " --runtime onnxruntime" + out, "dynamic shape"},
      {"probe " + types + " --runtime onnxruntime --dim N" + out, "--dim expects NAME=SIZE"},
      {"probe " + arith + " --runtime onnx" + out, "--runtime expects"},
  };
  for (const auto& [args, needle] : cli) {
    SCOPED_TRACE(args);
    auto r = testing::RunGpuclean(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(Lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  // The harness itself: one "onnx_run: " line, and meta.json says why.
  auto h = testing::RunCommand("node " + Harness() + " " + garbage + out);
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_EQ(Lines(h.err), 1u) << h.err;
  EXPECT_EQ(h.err.rfind("onnx_run: ", 0), 0u) << h.err;
  EXPECT_NE(h.err.find("Protobuf parsing failed"), std::string::npos) << h.err;
  const auto meta = nlohmann::json::parse(std::ifstream(dir.file("o/meta.json")));
  EXPECT_EQ(meta["ok"], false);
  for (const std::string& args :
       {std::string(" --bogus"), std::string(""), std::string(" --seed -1 ") + arith,
        std::string(" --batch ") + ShellQuote(dir.file("missing.json")), " " + arith + " --outputs nope"}) {
    SCOPED_TRACE(args);
    auto e = testing::RunCommand("node " + Harness() + args);
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_EQ(Lines(e.err), 1u) << e.err;
    EXPECT_EQ(e.err.rfind("onnx_run: ", 0), 0u) << e.err;
  }
}

TEST(OnnxRuntimeProbe, HarnessDescribeHelpAndBatchFile) {
  testing::TempDir dir;
  const std::string types = TypesModel(dir.file("types.onnx"));
  auto d = testing::RunCommand("node " + Harness() + " " + ShellQuote(types) + " --describe");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_TRUE(d.err.empty()) << d.err;
  const auto desc = nlohmann::json::parse(d.out);
  ASSERT_EQ(desc["inputs"].size(), 6u);
  const std::vector<std::string> dtypes = {"int64", "bool", "float16", "uint8", "int8", "int32"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(desc["inputs"][i]["dtype"], dtypes[i]) << i;
    EXPECT_EQ(desc["outputs"][i]["dtype"], dtypes[i]) << i;
  }
  EXPECT_EQ(desc["inputs"][5]["shape"], nlohmann::json({-1, 2}));
  EXPECT_EQ(desc["inputs"][5]["dim_params"], nlohmann::json({"N", nullptr}));
  EXPECT_EQ(desc["outputs"][0]["name"], "o64");

  auto help = testing::RunCommand("node " + Harness() + " --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--input", "--out", "--outputs", "--seed", "--repeat", "--threads", "--no-optimize",
                           "--batch", "--describe", "--dim"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;

  // A jobs file written by hand, with inputs as {KEY: FILE}: one good job,
  // one failing one; the good one still runs, the exit is 2 with one line.
  const std::string arith = ArithModel(dir.file("arith.onnx"));
  auto first = testing::RunCommand("node " + Harness() + " " + ShellQuote(arith) + " --seed 4 --out " +
                                   ShellQuote(dir.file("first")));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json jobs = nlohmann::json::array(
      {{{"model", arith}, {"out", dir.file("j0")}, {"inputs", {{"y", dir.file("first/in1.npy")}}}, {"seed", 4}},
       {{"model", dir.file("no_such.onnx")}, {"out", dir.file("j1")}}});
  std::ofstream(dir.file("jobs.json")) << jobs.dump();
  auto b = testing::RunCommand("node " + Harness() + " --batch " + ShellQuote(dir.file("jobs.json")));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_EQ(Lines(b.err), 1u) << b.err;
  EXPECT_NE(b.err.find("1 of 2 job(s) failed"), std::string::npos) << b.err;
  const auto m0 = nlohmann::json::parse(std::ifstream(dir.file("j0/meta.json")));
  const auto m1 = nlohmann::json::parse(std::ifstream(dir.file("j1/meta.json")));
  EXPECT_EQ(m0["ok"], true);
  EXPECT_EQ(m1["ok"], false);
  EXPECT_NE(m1["error"].get<std::string>().find("ENOENT"), std::string::npos) << m1;
  EXPECT_FALSE(fs::exists(dir.file("j0/in1.npy")));  // given
  for (int i = 0; i < 3; ++i) {
    const std::string f = "/out" + std::to_string(i) + ".npy";
    EXPECT_EQ(npy::Read(dir.file("j0") + f).data, npy::Read(dir.file("first") + f).data) << f;
  }
}

TEST(OnnxRuntimeProbe, MissingOnnxRuntimeNodeIsOneClearLine) {
  // A source folder with the harnesses but no node_modules.
  testing::TempDir dir;
  fs::create_directories(dir.file("src/probe"));
  for (const auto& entry : fs::directory_iterator(testing::SourceDir() + "/probe"))
    if (entry.path().extension() == ".mjs")
      fs::copy_file(entry.path(), dir.file("src/probe") + "/" + entry.path().filename().string());
  const std::string model = ShellQuote(ArithModel(dir.file("arith.onnx")));
  auto r =
      testing::RunCommand("GPUCLEAN_SOURCE_DIR=" + ShellQuote(dir.file("src")) + " " + ShellQuote(GPUCLEAN_BINARY) +
                          " probe " + model + " --runtime onnxruntime --out " + ShellQuote(dir.file("o")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("onnxruntime-node is not installed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tools/fetch_models.sh"), std::string::npos) << r.err;
  // The harness says the same on its own.
  auto h = testing::RunCommand("node " + ShellQuote(dir.file("src/probe/onnx_run.mjs")) + " " + model);
  EXPECT_EQ(h.exit_code, 2);
  EXPECT_EQ(Lines(h.err), 1u) << h.err;
  EXPECT_NE(h.err.find("onnxruntime-node not installed"), std::string::npos) << h.err;
  EXPECT_NE(h.err.find("tools/fetch_models.sh"), std::string::npos) << h.err;
}

}  // namespace
}  // namespace gpuclean::probe
