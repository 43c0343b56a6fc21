// ctest-labels: slow
// Bad input: every malformed model is refused with Error(kBadInput) and one
// line naming the file and the problem, and `gpuclean inspect` on it exits 2
// with exactly that line on stderr. Never a crash, a hang or a runaway
// allocation.
//
// The bad files are made here, from a valid model: either the bytes of a
// serialised model are corrupted (truncated, flipped, wrong identifier,
// offsets pointed outside the file), or a flatbuffer that verifies
// structurally is built with the generated tfl::Create* functions so that
// only its meaning is wrong (an index out of range, a negative dimension, a
// cycle, ...).
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/inspect.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
namespace fb = flatbuffers;
using testing::ShellQuote;

// ------------------------------------------------------------ valid models

std::vector<uint8_t> FloatBytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// x [1,4] (input) + c [1,4] (constant) -> ADD -> y [1,4] (output).
ir::Model TinyModel() {
  ir::Model model;
  ir::Subgraph sg;
  sg.name = "main";
  ir::Tensor x;
  x.name = "x";
  x.shape = {1, 4};
  const int xi = sg.AddTensor(x);
  const int ci = sg.AddConst("c", tfl::TensorType_FLOAT32, {1, 4}, Bytes::Own(FloatBytes({1, 2, 3, 4})));
  ir::Tensor y;
  y.name = "y";
  y.shape = {1, 4};
  const int yi = sg.AddTensor(y);
  sg.inputs = {xi};
  sg.outputs = {yi};
  ir::Op add;
  add.code = tfl::BuiltinOperator_ADD;
  add.inputs = {xi, ci};
  add.outputs = {yi};
  tfl::AddOptionsT options;
  options.fused_activation_function = tfl::ActivationFunctionType_RELU;
  add.options.Set(std::move(options));
  sg.AddOp(std::move(add));
  model.subgraphs.push_back(std::move(sg));
  return model;
}

std::vector<uint8_t> TinyBytes() { return format::Serialize(TinyModel()); }

// A model spelled out field by field and built with the generated
// tfl::Create* functions, so a test can put any value in any field and still
// get a flatbuffer that verifies.
struct RawTensor {
  std::vector<int32_t> shape;
  tfl::TensorType type = tfl::TensorType_FLOAT32;
  uint32_t buffer = 0;
  std::string name;
  uint32_t external_buffer = 0;
};
struct RawOp {
  uint32_t opcode_index = 0;
  std::vector<int32_t> inputs, outputs;
  tfl::BuiltinOptions options_type = tfl::BuiltinOptions_AddOptions;
  bool options_table = true;                                       // false: the union's type without its table
  tfl::BuiltinOptions2 options2_type = tfl::BuiltinOptions2_NONE;  // never with a table
};
struct RawBuffer {
  std::vector<uint8_t> data;
  uint64_t offset = 0, size = 0;
};
struct RawSignature {
  uint32_t subgraph = 0;
  uint32_t input_tensor = 0;
};
struct RawModel {
  std::vector<tfl::BuiltinOperator> opcodes = {tfl::BuiltinOperator_ADD};
  std::vector<RawTensor> tensors;
  std::vector<RawOp> ops;
  std::vector<int32_t> inputs, outputs;
  std::vector<RawBuffer> buffers;
  std::vector<RawSignature> signatures;
  bool with_subgraph = true;
};

// The same graph as TinyModel(), as a RawModel.
RawModel TinyRaw() {
  RawModel m;
  m.tensors = {{{1, 4}, tfl::TensorType_FLOAT32, 0, "x"},
               {{1, 4}, tfl::TensorType_FLOAT32, 1, "c"},
               {{1, 4}, tfl::TensorType_FLOAT32, 0, "y"}};
  m.ops = {{0, {0, 1}, {2}}};
  m.inputs = {0};
  m.outputs = {2};
  m.buffers = {{}, {FloatBytes({1, 2, 3, 4})}};
  return m;
}

std::vector<uint8_t> Finish(fb::FlatBufferBuilder& fbb, fb::Offset<tfl::Model> root) {
  fbb.Finish(root, tfl::ModelIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> Build(const RawModel& m) {
  fb::FlatBufferBuilder fbb;
  std::vector<fb::Offset<tfl::Tensor>> tensors;
  for (const RawTensor& t : m.tensors)
    tensors.push_back(tfl::CreateTensor(fbb, fbb.CreateVector(t.shape), t.type, t.buffer, fbb.CreateString(t.name), 0,
                                        false, 0, 0, false, 0, t.external_buffer));
  std::vector<fb::Offset<tfl::Operator>> ops;
  for (const RawOp& op : m.ops)
    ops.push_back(tfl::CreateOperator(fbb, op.opcode_index, fbb.CreateVector(op.inputs), fbb.CreateVector(op.outputs),
                                      op.options_type, op.options_table ? tfl::CreateAddOptions(fbb).Union() : 0, 0,
                                      tfl::CustomOptionsFormat_FLEXBUFFERS, 0, 0, 0, 0, op.options2_type, 0));
  std::vector<fb::Offset<tfl::SubGraph>> subgraphs;
  if (m.with_subgraph)
    subgraphs.push_back(tfl::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(m.inputs),
                                            fbb.CreateVector(m.outputs), fbb.CreateVector(ops),
                                            fbb.CreateString("main")));
  std::vector<fb::Offset<tfl::OperatorCode>> codes;
  for (tfl::BuiltinOperator code : m.opcodes)
    codes.push_back(tfl::CreateOperatorCode(fbb, static_cast<int8_t>(std::min<int32_t>(code, 127)), 0, 1, code));
  std::vector<fb::Offset<tfl::Buffer>> buffers;
  for (const RawBuffer& b : m.buffers)
    buffers.push_back(tfl::CreateBuffer(fbb, b.data.empty() ? 0 : fbb.CreateVector(b.data), b.offset, b.size));
  std::vector<fb::Offset<tfl::SignatureDef>> signatures;
  for (const RawSignature& s : m.signatures) {
    std::vector<fb::Offset<tfl::TensorMap>> in = {tfl::CreateTensorMap(fbb, fbb.CreateString("x"), s.input_tensor)};
    signatures.push_back(
        tfl::CreateSignatureDef(fbb, fbb.CreateVector(in), 0, fbb.CreateString("serving_default"), s.subgraph));
  }
  return Finish(
      fbb, tfl::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs), 0, fbb.CreateVector(buffers),
                            0, 0, signatures.empty() ? 0 : fbb.CreateVector(signatures)));
}

// ------------------------------------------------------------ expectations

int CountLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// The message is one line that starts with `source: ` and mentions `what`.
void ExpectOneLineAbout(const std::string& message, const std::string& source, const std::string& what) {
  EXPECT_EQ(message.rfind(source + ": ", 0), 0u) << "message does not start with the source: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
  EXPECT_EQ(message.find('\r'), std::string::npos) << "message is not one line: " << message;
  EXPECT_NE(message.find(what), std::string::npos) << "message does not mention '" << what << "': " << message;
}

// ReadModelBytes must throw Error(kBadInput) naming `source` and `what`.
void ExpectReadBytesRejects(const std::vector<uint8_t>& bytes, const std::string& what) {
  const std::string source = "bad-input/model.tflite";
  try {
    ir::Model model = format::ReadModelBytes(Bytes::Copy(bytes), source);
    ADD_FAILURE() << "model was accepted; expected an error mentioning '" << what << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    ExpectOneLineAbout(e.what(), source, what);
  }
}

// `gpuclean inspect PATH` exits 2, prints nothing on stdout and exactly one
// line on stderr: "gpuclean: error: PATH: ...".
void ExpectCliRejects(const std::string& path, const std::string& what) {
  const testing::CommandResult r = testing::RunGpuclean("inspect " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpuclean: error: " + path + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << "stderr does not mention '" << what << "': " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

// Both the library (bytes and file) and the CLI refuse `bytes` with one line
// that mentions `what`.
void ExpectRejected(const std::vector<uint8_t>& bytes, const std::string& what) {
  SCOPED_TRACE("expecting rejection: " + what);
  ExpectReadBytesRejects(bytes, what);
  testing::TempDir dir;
  const std::string path = dir.file("bad.tflite");
  WriteFile(path, bytes);
  try {
    format::ReadModel(path);
    ADD_FAILURE() << "ReadModel accepted " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    ExpectOneLineAbout(e.what(), path, what);
  }
  ExpectCliRejects(path, what);
}

// A loaded model must survive what the tools do next.
void ExerciseLoaded(const ir::Model& model) {
  inspect::RenderText(inspect::Summarize(model));
  try {
    std::vector<uint8_t> again = format::Serialize(model);
    format::ReadModelBytes(Bytes::Own(std::move(again)), "round-trip");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
  }
}

// Any outcome but a crash is fine; an error must be kBadInput and one line
// naming the source.
void ExpectNoCrash(const std::vector<uint8_t>& bytes, const std::string& source) {
  try {
    ir::Model model = format::ReadModelBytes(Bytes::Copy(bytes), source);
    ExerciseLoaded(model);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(source + ": ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

std::vector<uint8_t> ReadBytesBadInput(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Little-endian scalars at a byte position.
uint32_t Get32(const std::vector<uint8_t>& b, size_t at) { return fb::ReadScalar<uint32_t>(b.data() + at); }
void Put32(std::vector<uint8_t>& b, size_t at, uint32_t v) { fb::WriteScalar<uint32_t>(b.data() + at, v); }
void Put16(std::vector<uint8_t>& b, size_t at, uint16_t v) { fb::WriteScalar<uint16_t>(b.data() + at, v); }

// Position of the root table, its vtable, and of a field of the root table.
size_t RootTable(const std::vector<uint8_t>& b) { return Get32(b, 0); }
size_t RootVTable(const std::vector<uint8_t>& b) { return RootTable(b) - static_cast<int32_t>(Get32(b, RootTable(b))); }
size_t RootField(const std::vector<uint8_t>& b, fb::voffset_t field) {
  const auto offset = fb::ReadScalar<fb::voffset_t>(b.data() + RootVTable(b) + field);
  EXPECT_NE(offset, 0) << "field " << field << " not present";
  return RootTable(b) + offset;
}

// ------------------------------------------------------------ sanity

TEST(BadInput, TinyModelsAreValid) {
  // The corruptions below start from these; they must load cleanly, so that
  // each rejection is for the reason the test names.
  ir::Model a = format::ReadModelBytes(Bytes::Own(TinyBytes()), "tiny");
  EXPECT_EQ(a.main().ops.size(), 1u);
  ir::Model b = format::ReadModelBytes(Bytes::Own(Build(TinyRaw())), "tiny-raw");
  EXPECT_EQ(b.main().ops.size(), 1u);
  EXPECT_TRUE(b.unpreservable.empty());
  ExerciseLoaded(a);
  ExerciseLoaded(b);

  testing::TempDir dir;
  const std::string path = dir.file("tiny.tflite");
  WriteFile(path, TinyBytes());
  const testing::CommandResult r = testing::RunGpuclean("inspect " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// ------------------------------------------------------------ file-level

TEST(BadInput, EmptyFile) { ExpectRejected({}, "empty"); }

TEST(BadInput, FourByteFile) {
  std::vector<uint8_t> bytes = TinyBytes();
  bytes.resize(4);
  ExpectRejected(bytes, "too small");
}

TEST(BadInput, TruncatedAtEveryLength) {
  const std::vector<uint8_t> bytes = TinyBytes();
  ASSERT_GT(bytes.size(), 64u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    if (n + 8 > bytes.size()) {
      // The last bytes may be alignment padding that nothing points into:
      // losing them may be accepted, but only if nothing else is lost.
      try {
        ir::Model model = format::ReadModelBytes(Bytes::Copy(cut), "cut");
        EXPECT_EQ(format::Serialize(model), bytes);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
      }
      continue;
    }
    ExpectReadBytesRejects(cut, "");
  }
  // One through every path, with the message the user sees.
  ExpectRejected({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2)}, "verification failed");
}

TEST(BadInput, TruncatedFixture) {
  const std::vector<uint8_t> bytes = ReadBytesBadInput(testing::FixtureModel("face_detection_short_range.tflite"));
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t n : {size_t{8}, size_t{100}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
    ExpectReadBytesRejects({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)}, "");
  }
  ExpectRejected({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2)}, "verification failed");
}

TEST(BadInput, WrongFileIdentifier) {
  std::vector<uint8_t> bytes = TinyBytes();
  std::memcpy(bytes.data() + 4, "PK\x03\x04", 4);
  ExpectRejected(bytes, "file identifier");
  std::memcpy(bytes.data() + 4, "TFL2", 4);
  ExpectRejected(bytes, "'TFL2', expected 'TFL3'");
}

TEST(BadInput, NotAModelAtAll) {
  const std::string text = "this is a text file, not a model\n";
  ExpectRejected({text.begin(), text.end()}, "not a .tflite model");
}

TEST(BadInput, FlippedBytesNeverCrash) {
  const std::vector<uint8_t> tiny = TinyBytes();
  for (uint32_t seed = 0; seed < 3000; ++seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> bytes = tiny;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) {
      // Half the time flip one bit, else overwrite the byte.
      const size_t at = rng() % bytes.size();
      if (rng() & 1)
        bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      else
        bytes[at] = static_cast<uint8_t>(rng());
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    ExpectNoCrash(bytes, "flipped-" + std::to_string(seed));
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(BadInput, FlippedBytesInFixtureNeverCrash) {
  const std::vector<uint8_t> original = ReadBytesBadInput(testing::FixtureModel("face_detection_short_range.tflite"));
  ASSERT_GT(original.size(), 1000u);
  // Flips in the first part hit the graph; the rest is mostly weights.
  const size_t graph_part = std::min<size_t>(original.size(), 64 * 1024);
  std::vector<uint8_t> bytes = original;
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    std::vector<size_t> touched;
    for (int i = 0; i < 4; ++i) {
      const size_t at = (rng() & 1) ? rng() % graph_part : rng() % bytes.size();
      bytes[at] ^= static_cast<uint8_t>(1u + rng() % 255);
      touched.push_back(at);
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    ExpectNoCrash(bytes, "fixture-flipped-" + std::to_string(seed));
    for (size_t at : touched) bytes[at] = original[at];
    if (::testing::Test::HasFailure()) break;
  }
}

// ------------------------------------------------------------ structure

TEST(BadInput, RootOffsetOutOfRange) {
  std::vector<uint8_t> bytes = TinyBytes();
  Put32(bytes, 0, 0x7ffffff0u);
  ExpectRejected(bytes, "verification failed");
}

TEST(BadInput, VTableOutOfRange) {
  std::vector<uint8_t> bytes = TinyBytes();
  const size_t root = RootTable(bytes);
  // soffset to the vtable pointing far past the end, then before the start.
  Put32(bytes, root, static_cast<uint32_t>(-static_cast<int32_t>(bytes.size() * 4)));
  ExpectRejected(bytes, "verification failed");
  Put32(bytes, root, static_cast<uint32_t>(root + 1000));
  ExpectRejected(bytes, "verification failed");
}

TEST(BadInput, VTableSizeOutOfRange) {
  std::vector<uint8_t> bytes = TinyBytes();
  Put16(bytes, RootVTable(bytes), 0xfffc);
  ExpectRejected(bytes, "verification failed");
}

TEST(BadInput, FieldOffsetOutOfRange) {
  std::vector<uint8_t> bytes = TinyBytes();
  const size_t field = RootField(bytes, tfl::Model::VT_SUBGRAPHS);
  Put32(bytes, field, 0x7fffff00u);
  ExpectRejected(bytes, "verification failed");
}

TEST(BadInput, VectorLengthOutOfRange) {
  std::vector<uint8_t> bytes = TinyBytes();
  const size_t field = RootField(bytes, tfl::Model::VT_BUFFERS);
  const size_t vector = field + Get32(bytes, field);
  Put32(bytes, vector, 0x3fffffffu);
  ExpectRejected(bytes, "verification failed");
}

// A model whose tensor 0 has a zero_point vector (int64) placed `shift` bytes
// after a uint32 vector's length: the verifier checks 4-byte alignment only.
std::vector<uint8_t> ModelWithShiftedZeroPoint(int shift) {
  fb::FlatBufferBuilder fbb;
  // [1, 1, 0, 0, 0]: read from element k (k = 0 or 1) this is an int64
  // vector of length 1 (holding 1 or 0).
  const auto words = fbb.CreateVector(std::vector<uint32_t>{1, 1, 0, 0, 0});
  const fb::Offset<fb::Vector<int64_t>> zero_point(words.o - 4 * (1 + shift));
  auto quant = tfl::CreateQuantizationParameters(fbb, 0, 0, fbb.CreateVector(std::vector<float>{0.5f}), zero_point);
  std::vector<fb::Offset<tfl::Tensor>> tensors = {tfl::CreateTensor(
      fbb, fbb.CreateVector(std::vector<int32_t>{1}), tfl::TensorType_INT8, 0, fbb.CreateString("q"), quant)};
  std::vector<fb::Offset<tfl::SubGraph>> subgraphs = {tfl::CreateSubGraph(fbb, fbb.CreateVector(tensors),
                                                                          fbb.CreateVector(std::vector<int32_t>{0}),
                                                                          fbb.CreateVector(std::vector<int32_t>{0}))};
  std::vector<fb::Offset<tfl::Buffer>> buffers = {tfl::CreateBuffer(fbb)};
  return Finish(fbb, tfl::CreateModel(fbb, 3, 0, fbb.CreateVector(subgraphs), 0, fbb.CreateVector(buffers)));
}

TEST(BadInput, MisalignedEightByteVector) {
  // Found by the fuzzer (UBSan: misaligned load of 'long'). One of the two
  // shifts puts the int64 on a 4-but-not-8-aligned address.
  int rejected = 0;
  for (int shift : {0, 1}) {
    const std::vector<uint8_t> bytes = ModelWithShiftedZeroPoint(shift);
    const auto* zp = tfl::GetModel(bytes.data())->subgraphs()->Get(0)->tensors()->Get(0)->quantization()->zero_point();
    ASSERT_NE(zp, nullptr);
    ASSERT_EQ(zp->size(), 1u);
    if ((reinterpret_cast<const uint8_t*>(zp->Data()) - bytes.data()) % 8 == 0) {
      ir::Model model = format::ReadModelBytes(Bytes::Copy(bytes), "aligned");
      EXPECT_EQ(model.main().tensors[0].quant.zero_point, std::vector<int64_t>{shift == 0 ? 1 : 0});
    } else {
      ++rejected;
      ExpectRejected(bytes, "misaligned");
    }
  }
  EXPECT_EQ(rejected, 1);
}

TEST(BadInput, UnalignedInputBytesAreFine) {
  // A caller's bytes need not be aligned: the reader realigns them rather
  // than read misaligned scalars.
  const std::vector<uint8_t> tiny = TinyBytes();
  auto storage = std::make_shared<std::vector<uint8_t>>(tiny.size() + 1);
  std::memcpy(storage->data() + 1, tiny.data(), tiny.size());
  ir::Model model = format::ReadModelBytes(Bytes(storage, storage->data() + 1, tiny.size()), "unaligned");
  EXPECT_EQ(model.main().ops.size(), 1u);
}

TEST(BadInput, NoSubgraphs) {
  RawModel m = TinyRaw();
  m.with_subgraph = false;
  ExpectRejected(Build(m), "no subgraphs");
}

// ------------------------------------------------------------ indices

TEST(BadInput, ExternalBufferOutsideTheFile) {
  RawModel m = TinyRaw();
  m.buffers[1] = {{}, uint64_t{1} << 40, 16};
  ExpectRejected(Build(m), "buffer 1 lies outside the file");
  m.buffers[1] = {{}, 64, std::numeric_limits<uint64_t>::max() - 8};  // offset + size wraps
  ExpectRejected(Build(m), "buffer 1 lies outside the file");
}

TEST(BadInput, BufferIndexOutOfRange) {
  RawModel m = TinyRaw();
  m.tensors[1].buffer = 7;
  ExpectRejected(Build(m), "refers to buffer 7 but the model has 2 buffers");
  m.tensors[1].buffer = 0xffffffffu;
  ExpectRejected(Build(m), "refers to buffer 4294967295");
}

TEST(BadInput, OpInputTensorIndexOutOfRange) {
  RawModel m = TinyRaw();
  m.ops[0].inputs = {0, 3};
  ExpectRejected(Build(m), "refers to tensor 3 but there are 3 tensors");
  m.ops[0].inputs = {0, -7};
  ExpectRejected(Build(m), "refers to tensor -7");
}

TEST(BadInput, OpOutputTensorIndexOutOfRange) {
  RawModel m = TinyRaw();
  m.ops[0].outputs = {std::numeric_limits<int32_t>::max()};
  ExpectRejected(Build(m), "refers to tensor 2147483647");
  m.ops[0].outputs = {-1};  // -1 means "omitted" only for inputs
  ExpectRejected(Build(m), "refers to tensor -1");
}

TEST(BadInput, GraphInputOutputIndexOutOfRange) {
  RawModel m = TinyRaw();
  m.inputs = {42};
  ExpectRejected(Build(m), "graph input 0 refers to tensor 42");
  m = TinyRaw();
  m.outputs = {2, -3};
  ExpectRejected(Build(m), "graph output 1 refers to tensor -3");
}

TEST(BadInput, OpcodeIndexOutOfRange) {
  RawModel m = TinyRaw();
  m.ops[0].opcode_index = 5;
  ExpectRejected(Build(m), "uses operator code 5 but the model has 1");
}

TEST(BadInput, NegativeBuiltinCode) {
  RawModel m = TinyRaw();
  m.opcodes = {static_cast<tfl::BuiltinOperator>(-5)};
  ExpectRejected(Build(m), "negative builtin code");
}

TEST(BadInput, SignatureIndicesOutOfRange) {
  RawModel m = TinyRaw();
  m.signatures = {{3, 0}};
  ExpectRejected(Build(m), "refers to subgraph 3");
  m.signatures = {{0, 9}};
  ExpectRejected(Build(m), "refers to tensor 9");
  m.signatures = {{0, 0x80000000u}};  // negative once read as int32
  ExpectRejected(Build(m), "refers to tensor -2147483648");
}

TEST(BadInput, OptionsTypeWithoutOptionsTable) {
  // Found by the fuzzer: a union type with no table verifies, and unpacking
  // it dereferenced null (SIGSEGV).
  RawModel m = TinyRaw();
  m.ops[0].options_type = tfl::BuiltinOptions_SoftmaxOptions;
  m.ops[0].options_table = false;
  ExpectRejected(Build(m), "has builtin options of type SoftmaxOptions but no options table");
  m = TinyRaw();
  m.ops[0].options2_type = tfl::BuiltinOptions2_StablehloConcatenateOptions;
  ExpectRejected(Build(m), "has builtin options (2) of type StablehloConcatenateOptions but no options table");
}

// A model whose constant tensor 0 is sparse, with dim_metadata[1] holding
// array_segments of `type`, with or without its table.
std::vector<uint8_t> SparseModel(tfl::SparseIndexVector type, bool with_table) {
  fb::FlatBufferBuilder fbb;
  fb::Offset<void> segments = 0;
  if (with_table) segments = tfl::CreateInt32Vector(fbb, fbb.CreateVector(std::vector<int32_t>{0, 1, 2})).Union();
  auto indices = tfl::CreateInt32Vector(fbb, fbb.CreateVector(std::vector<int32_t>{0, 1})).Union();
  std::vector<fb::Offset<tfl::DimensionMetadata>> dims = {
      tfl::CreateDimensionMetadata(fbb, tfl::DimensionType_DENSE, 2),
      tfl::CreateDimensionMetadata(fbb, tfl::DimensionType_SPARSE_CSR, 0, type, segments,
                                   tfl::SparseIndexVector_Int32Vector, indices)};
  auto sparsity =
      tfl::CreateSparsityParameters(fbb, fbb.CreateVector(std::vector<int32_t>{0, 1}), 0, fbb.CreateVector(dims));
  std::vector<fb::Offset<tfl::Tensor>> tensors = {tfl::CreateTensor(fbb, fbb.CreateVector(std::vector<int32_t>{2, 2}),
                                                                    tfl::TensorType_FLOAT32, 1, fbb.CreateString("w"),
                                                                    0, false, sparsity)};
  std::vector<fb::Offset<tfl::SubGraph>> subgraphs = {
      tfl::CreateSubGraph(fbb, fbb.CreateVector(tensors), 0, fbb.CreateVector(std::vector<int32_t>{0}))};
  std::vector<fb::Offset<tfl::Buffer>> buffers = {tfl::CreateBuffer(fbb),
                                                  tfl::CreateBuffer(fbb, fbb.CreateVector(FloatBytes({1, 2})))};
  return Finish(fbb, tfl::CreateModel(fbb, 3, 0, fbb.CreateVector(subgraphs), 0, fbb.CreateVector(buffers)));
}

TEST(BadInput, SparseIndexTypeWithoutTable) {
  // Found by the fuzzer: the unpacked copy kept the type with no value, and
  // writing it back dereferenced null.
  ir::Model ok = format::ReadModelBytes(Bytes::Own(SparseModel(tfl::SparseIndexVector_Int32Vector, true)), "sparse");
  ASSERT_TRUE(ok.main().tensors[0].sparsity.has_value());
  ExerciseLoaded(ok);
  ExpectRejected(SparseModel(tfl::SparseIndexVector_Int32Vector, false),
                 "sparsity dim_metadata 1 has array_segments of type 1 but no table");
  ExpectRejected(SparseModel(static_cast<tfl::SparseIndexVector>(9), true),
                 "array_segments of type 9 but that type is unknown");
}

TEST(BadInput, UnknownTensorType) {
  RawModel m = TinyRaw();
  m.tensors[0].type = static_cast<tfl::TensorType>(99);
  ExpectRejected(Build(m), "unknown type 99");
}

// ------------------------------------------------------------ shapes

TEST(BadInput, NegativeDimension) {
  RawModel m = TinyRaw();
  m.tensors[0].shape = {1, -4};
  ExpectRejected(Build(m), "negative dimension -4");
}

TEST(BadInput, AbsurdShape) {
  RawModel m = TinyRaw();
  m.tensors[2].shape = {1 << 30, 1 << 30, 1 << 30};
  ExpectRejected(Build(m), "absurd shape");
}

TEST(BadInput, ShapeProductOverflowsInt64) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  RawModel m = TinyRaw();
  m.tensors[0].shape = {big, big, big, big, big};  // ~2^155
  ExpectRejected(Build(m), "absurd shape");
  // A zero after the overflow must not hide it.
  m.tensors[0].shape = {big, big, big, 0};
  ExpectRejected(Build(m), "absurd shape");
}

TEST(BadInput, AbsurdConstantShape) {
  // A constant whose shape would need 2^60 elements: rejected on the shape,
  // never by trying to compare or allocate that many bytes.
  RawModel m = TinyRaw();
  m.tensors[1].shape = {1 << 30, 1 << 30};
  ExpectRejected(Build(m), "absurd shape");
}

TEST(BadInput, ConstantSizeDisagreesWithShape) {
  RawModel m = TinyRaw();
  m.tensors[1].shape = {2, 4};  // needs 32 bytes, buffer holds 16
  ExpectRejected(Build(m), "holds 16 bytes but its float32 shape needs 32");
}

TEST(BadInput, NegativeShapeSignatureBelowMinusOne) {
  // Built through the object API: RawTensor has no shape_signature.
  fb::FlatBufferBuilder fbb;
  std::vector<uint8_t> tiny = TinyBytes();
  std::unique_ptr<tfl::ModelT> model(tfl::GetModel(tiny.data())->UnPack());
  model->subgraphs[0]->tensors[0]->shape_signature = {-1, -9};
  fbb.Finish(tfl::Model::Pack(fbb, model.get()), tfl::ModelIdentifier());
  ExpectRejected({fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()}, "shape_signature dimension -9");
}

// ------------------------------------------------------------ graph

TEST(BadInput, TwoOpsWriteOneTensor) {
  RawModel m = TinyRaw();
  m.ops = {{0, {0, 1}, {2}}, {0, {0, 1}, {2}}};
  ExpectRejected(Build(m), "tensor 2 ('y') is written by both op 0 and op 1");
}

TEST(BadInput, OpWritesConstant) {
  RawModel m = TinyRaw();
  m.ops[0].outputs = {1};
  m.outputs = {1};
  ExpectRejected(Build(m), "writes constant tensor 1 ('c')");
}

TEST(BadInput, OpWritesGraphInput) {
  RawModel m = TinyRaw();
  m.ops[0].inputs = {2, 1};
  m.ops[0].outputs = {0};
  ExpectRejected(Build(m), "writes graph input tensor 0 ('x')");
}

TEST(BadInput, CyclicGraph) {
  // op0: a = x + b; op1: b = x + a.
  RawModel m = TinyRaw();
  m.tensors = {{{1, 4}, tfl::TensorType_FLOAT32, 0, "x"},
               {{1, 4}, tfl::TensorType_FLOAT32, 0, "a"},
               {{1, 4}, tfl::TensorType_FLOAT32, 0, "b"}};
  m.ops = {{0, {0, 2}, {1}}, {0, {0, 1}, {2}}};
  m.inputs = {0};
  m.outputs = {1};
  ExpectRejected(Build(m), "cycle");
}

TEST(BadInput, SelfLoop) {
  RawModel m = TinyRaw();
  m.ops[0].inputs = {0, 2};  // y = x + y
  ExpectRejected(Build(m), "cycle through op 0");
}

// ------------------------------------------------------------ messages

TEST(BadInput, NamesInMessagesCannotBreakTheLine) {
  // Tensor names come from the file; a newline or escape sequence in one
  // must not turn the error into two lines (or move the user's cursor).
  RawModel m = TinyRaw();
  m.tensors[0].name = "x\nfake: second line\r\x1b[2J";
  m.tensors[0].shape = {-1};
  ExpectRejected(Build(m), "negative dimension -1");
  m = TinyRaw();
  m.tensors[2].name = "y\n";
  m.ops = {{0, {0, 1}, {2}}, {0, {0, 1}, {2}}};
  ExpectRejected(Build(m), "is written by both op 0 and op 1");
}

// ------------------------------------------------------------ paths

TEST(BadInput, NonexistentPath) {
  testing::TempDir dir;
  const std::string path = dir.file("no-such-model.tflite");
  try {
    format::ReadModel(path);
    ADD_FAILURE() << "ReadModel accepted a missing file";
  } catch (const Error& e) {
    ExpectOneLineAbout(e.what(), path, "No such file");
  }
  const testing::CommandResult r = testing::RunGpuclean("inspect " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpuclean: error: " + path + ": ", 0), 0u) << r.err;
}

TEST(BadInput, DirectoryPath) {
  testing::TempDir dir;
  const std::string path = dir.path().string();
  try {
    format::ReadModel(path);
    ADD_FAILURE() << "ReadModel accepted a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    ExpectOneLineAbout(e.what(), path, "not a regular file");
  }
  ExpectCliRejects(path, "not a regular file");
}

TEST(BadInput, EmptyFileOnDisk) {
  testing::TempDir dir;
  const std::string path = dir.file("empty.tflite");
  WriteFile(path, {});
  ExpectCliRejects(path, "file is empty");
}

// ------------------------------------------------------------ resources

// A vector of `count` offsets that all point at one table: legal flatbuffers,
// and the cheapest way to make a small file describe a huge graph.
template <typename T>
fb::Offset<fb::Vector<fb::Offset<T>>> Repeated(fb::FlatBufferBuilder& fbb, fb::Offset<T> one, size_t count) {
  std::vector<fb::Offset<T>> offsets(count, one);
  return fbb.CreateVector(offsets);
}

std::vector<uint8_t> ModelWithTensors(fb::FlatBufferBuilder& fbb,
                                      fb::Offset<fb::Vector<fb::Offset<tfl::Tensor>>> tensors,
                                      fb::Offset<fb::Vector<int32_t>> inputs,
                                      fb::Offset<fb::Vector<fb::Offset<tfl::Operator>>> ops) {
  std::vector<fb::Offset<tfl::SubGraph>> subgraphs = {
      tfl::CreateSubGraph(fbb, tensors, inputs, fbb.CreateVector(std::vector<int32_t>{}), ops)};
  std::vector<fb::Offset<tfl::OperatorCode>> codes = {tfl::CreateOperatorCode(fbb, 0, 0, 1)};
  std::vector<fb::Offset<tfl::Buffer>> buffers = {tfl::CreateBuffer(fbb)};
  return Finish(fbb, tfl::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs), 0,
                                      fbb.CreateVector(buffers)));
}

TEST(BadInput, SharedTablesCannotAmplifyIntoRunawayAllocation) {
  // 300k references to one tensor whose name is 64 KiB: a ~1.3 MB file that
  // would decode to ~20 GB of tensor names.
  fb::FlatBufferBuilder fbb;
  const std::string name(64 * 1024, 'n');
  auto tensor = tfl::CreateTensor(fbb, fbb.CreateVector(std::vector<int32_t>{1}), tfl::TensorType_FLOAT32, 0,
                                  fbb.CreateString(name));
  std::vector<uint8_t> bytes = ModelWithTensors(fbb, Repeated(fbb, tensor, 300'000), 0, 0);
  ASSERT_LT(bytes.size(), 2u << 20);
  const auto start = std::chrono::steady_clock::now();
  ExpectRejected(bytes, "too large");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(BadInput, SharedOperatorCannotAmplifyIntoRunawayAllocation) {
  // 20k references to one op that reads one tensor 500k times: a 2 MB file
  // that would decode to 40 GB of input lists.
  fb::FlatBufferBuilder fbb;
  auto tensor = tfl::CreateTensor(fbb, fbb.CreateVector(std::vector<int32_t>{1}));
  auto op = tfl::CreateOperator(fbb, 0, fbb.CreateVector(std::vector<int32_t>(500'000, 0)),
                                fbb.CreateVector(std::vector<int32_t>{}));
  std::vector<uint8_t> bytes = ModelWithTensors(fbb, Repeated(fbb, tensor, 1),
                                                fbb.CreateVector(std::vector<int32_t>{0}), Repeated(fbb, op, 20'000));
  ASSERT_LT(bytes.size(), 4u << 20);
  const auto start = std::chrono::steady_clock::now();
  ExpectRejected(bytes, "too large");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(BadInput, LargeGraphIsCheckedInLinearTime) {
  // 150k graph inputs and one op writing 150k other tensors: checking "no op
  // writes a graph input" must not take inputs x outputs steps (2e10).
  constexpr int kHalf = 150'000;
  fb::FlatBufferBuilder fbb;
  auto tensor = tfl::CreateTensor(fbb, fbb.CreateVector(std::vector<int32_t>{1}));
  std::vector<int32_t> inputs(kHalf), outputs(kHalf);
  for (int i = 0; i < kHalf; ++i) {
    inputs[i] = i;
    outputs[i] = kHalf + i;
  }
  auto op = tfl::CreateOperator(fbb, 0, fbb.CreateVector(std::vector<int32_t>{0}), fbb.CreateVector(outputs));
  std::vector<fb::Offset<tfl::Operator>> ops = {op};
  std::vector<uint8_t> bytes =
      ModelWithTensors(fbb, Repeated(fbb, tensor, 2 * kHalf), fbb.CreateVector(inputs), fbb.CreateVector(ops));
  // The structural checks pass (in linear time); then the semantic ones
  // refuse the one-input ADD with its 150k outputs, naming it.
  const auto start = std::chrono::steady_clock::now();
  try {
    format::ReadModelBytes(Bytes::Own(std::move(bytes)), "wide");
    ADD_FAILURE() << "a one-input ADD with 150k outputs loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("op 0 (ADD): expects 2 inputs, got 1"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(BadInput, ManyUnpreservableNotesStayLinear) {
  // 200k tensors, each with a field this reader does not know and an
  // external buffer: the reader notes both for each tensor, and looking up
  // earlier notes must not take quadratic time.
  constexpr size_t kTensors = 200'000;
  fb::FlatBufferBuilder fbb;
  auto shape = fbb.CreateVector(std::vector<int32_t>{1});
  const auto start_table = fbb.StartTable();
  fbb.AddOffset(tfl::Tensor::VT_SHAPE, shape);
  fbb.AddElement<uint32_t>(tfl::Tensor::VT_EXTERNAL_BUFFER, 1, 0);
  fbb.AddElement<int32_t>(4 + 2 * 40, 7, 0);  // field #40: not in the schema
  const fb::Offset<tfl::Tensor> tensor(fbb.EndTable(start_table));
  std::vector<uint8_t> bytes = ModelWithTensors(fbb, Repeated(fbb, tensor, kTensors), 0, 0);
  const auto start = std::chrono::steady_clock::now();
  ir::Model model = format::ReadModelBytes(Bytes::Own(std::move(bytes)), "notes");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_FALSE(model.unpreservable.empty());
  EXPECT_NE(model.unpreservable.front().find("field #40"), std::string::npos) << model.unpreservable.front();
}

// ------------------------------------------------------------ writer

TEST(BadInput, WriterRefusesToOverwriteItsInput) {
  testing::TempDir dir;
  const std::string path = dir.file("model.tflite");
  const std::vector<uint8_t> original = TinyBytes();
  WriteFile(path, original);
  const ir::Model model = format::ReadModel(path);
  for (const std::string& target : {path, dir.file("./model.tflite"), dir.file("link.tflite")}) {
    if (target == dir.file("link.tflite")) fs::create_symlink(path, target);
    SCOPED_TRACE(target);
    try {
      format::WriteModel(model, target);
      ADD_FAILURE() << "WriteModel overwrote its input through " << target;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
      EXPECT_NE(std::string(e.what()).find("refusing to overwrite the input"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(ReadBytesBadInput(path), original);
  // Another path is fine.
  format::WriteModel(model, dir.file("out.tflite"));
  EXPECT_EQ(format::ReadModel(dir.file("out.tflite")).main().ops.size(), 1u);
}

void ExpectWriterRefuses(const std::vector<uint8_t>& bytes, const std::string& what) {
  SCOPED_TRACE(what);
  ir::Model model = format::ReadModelBytes(Bytes::Copy(bytes), "odd.tflite");
  ASSERT_FALSE(model.unpreservable.empty());
  EXPECT_NE(model.unpreservable.front().find(what), std::string::npos) << model.unpreservable.front();
  try {
    format::Serialize(model);
    ADD_FAILURE() << "Serialize dropped: " << model.unpreservable.front();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
    ExpectOneLineAbout(e.what(), "odd.tflite", "refusing to write");
  }
}

TEST(BadInput, WriterRefusesUnpreservableContent) {
  RawModel m = TinyRaw();
  m.opcodes = {static_cast<tfl::BuiltinOperator>(40000)};
  ExpectWriterRefuses(Build(m), "builtin 40000 which this reader does not know");

  m = TinyRaw();
  m.tensors[0].external_buffer = 3;
  ExpectWriterRefuses(Build(m), "external buffer 3");

  // A field the schema does not declare, on the tensor table.
  std::vector<uint8_t> tiny = TinyBytes();
  std::unique_ptr<tfl::ModelT> model(tfl::GetModel(tiny.data())->UnPack());
  fb::FlatBufferBuilder fbb;
  std::vector<fb::Offset<tfl::Tensor>> tensors;
  for (const auto& t : model->subgraphs[0]->tensors) {
    auto shape = fbb.CreateVector(t->shape);
    auto name = fbb.CreateString(t->name);
    const auto start = fbb.StartTable();
    fbb.AddOffset(tfl::Tensor::VT_SHAPE, shape);
    fbb.AddOffset(tfl::Tensor::VT_NAME, name);
    fbb.AddElement<uint32_t>(tfl::Tensor::VT_BUFFER, t->buffer, 0);
    fbb.AddElement<int32_t>(4 + 2 * 33, 1, 0);  // field #33
    tensors.push_back(fb::Offset<tfl::Tensor>(fbb.EndTable(start)));
  }
  std::vector<fb::Offset<tfl::Operator>> ops;
  for (const auto& op : model->subgraphs[0]->operators) ops.push_back(tfl::Operator::Pack(fbb, op.get()));
  std::vector<fb::Offset<tfl::SubGraph>> subgraphs = {
      tfl::CreateSubGraph(fbb, fbb.CreateVector(tensors), fbb.CreateVector(model->subgraphs[0]->inputs),
                          fbb.CreateVector(model->subgraphs[0]->outputs), fbb.CreateVector(ops))};
  std::vector<fb::Offset<tfl::OperatorCode>> codes;
  for (const auto& c : model->operator_codes) codes.push_back(tfl::OperatorCode::Pack(fbb, c.get()));
  std::vector<fb::Offset<tfl::Buffer>> buffers;
  for (const auto& b : model->buffers) buffers.push_back(tfl::Buffer::Pack(fbb, b.get()));
  ExpectWriterRefuses(Finish(fbb, tfl::CreateModel(fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs), 0,
                                                   fbb.CreateVector(buffers))),
                      "Tensor has a field this reader does not know (field #33)");
}

}  // namespace
}  // namespace gpuclean
