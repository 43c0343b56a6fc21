// ctest-labels: litert slow
// Read -> write must give a model that LiteRT runs to bit-identical outputs,
// with sparse tensors, custom ops and everything else the reader understood.
#include <gtest/gtest.h>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

void ExpectSameStructure(const ir::Model& a, const ir::Model& b) {
  ASSERT_EQ(a.subgraphs.size(), b.subgraphs.size());
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.metadata.size(), b.metadata.size());
  EXPECT_EQ(a.signatures.size(), b.signatures.size());
  for (size_t s = 0; s < a.subgraphs.size(); ++s) {
    const ir::Subgraph& x = a.subgraphs[s];
    const ir::Subgraph& y = b.subgraphs[s];
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    ASSERT_EQ(x.tensors.size(), y.tensors.size());
    for (size_t t = 0; t < x.tensors.size(); ++t) {
      const ir::Tensor& p = x.tensors[t];
      const ir::Tensor& q = y.tensors[t];
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.dtype, q.dtype);
      EXPECT_EQ(p.shape, q.shape);
      EXPECT_EQ(p.shape_signature, q.shape_signature);
      EXPECT_EQ(p.sparsity.has_value(), q.sparsity.has_value()) << p.name;
      if (p.sparsity && q.sparsity) {
        EXPECT_EQ(p.sparsity->traversal_order, q.sparsity->traversal_order);
        EXPECT_EQ(p.sparsity->dim_metadata.size(), q.sparsity->dim_metadata.size());
      }
      ASSERT_EQ(p.is_const(), q.is_const()) << p.name;
      if (p.is_const()) {
        ASSERT_EQ(p.data->size(), q.data->size());
        EXPECT_TRUE(std::equal(p.data->data(), p.data->data() + p.data->size(), q.data->data())) << p.name;
      }
      EXPECT_EQ(p.quant.scale, q.quant.scale);
      EXPECT_EQ(p.quant.zero_point, q.quant.zero_point);
    }
    ASSERT_EQ(x.ops.size(), y.ops.size());
    for (size_t i = 0; i < x.ops.size(); ++i) {
      const ir::Op& p = x.ops[i];
      const ir::Op& q = y.ops[i];
      EXPECT_EQ(p.code, q.code);
      EXPECT_EQ(p.version, q.version);
      EXPECT_EQ(p.custom_code, q.custom_code);
      EXPECT_EQ(p.custom_options, q.custom_options);
      EXPECT_EQ(p.inputs, q.inputs);
      EXPECT_EQ(p.outputs, q.outputs);
      EXPECT_EQ(p.options.type, q.options.type);
    }
  }
}

void ExpectBitIdentical(const std::vector<npy::Array>& a, const std::vector<npy::Array>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].shape, b[i].shape) << what << " output " << i;
    EXPECT_EQ(a[i].data, b[i].data) << what << " output " << i << " differs";
  }
}

TEST(RoundTrip, EveryFixtureRunsBitIdenticalInLiteRt) {
  for (const std::string& path : testing::FixtureModels()) {
    SCOPED_TRACE(path);
    testing::TempDir dir;
    ir::Model model = format::ReadModel(path);
    const std::string written = dir.file("written.tflite");
    format::WriteModel(model, written);
    ExpectSameStructure(model, format::ReadModel(written));

    const std::vector<npy::Array> inputs = testing::MakeInputs(path);
    ExpectBitIdentical(testing::RunLiteRt(path, inputs), testing::RunLiteRt(written, inputs), "inline buffers");
  }
}

TEST(RoundTrip, ExternalBufferLayoutRunsBitIdenticalInLiteRt) {
  // The >2 GB layout (Buffer.offset/size after the flatbuffer), forced on a
  // small model so the test stays fast; sparse weights make it the hard case.
  const std::string path = testing::FixtureModel("face_detection_full_range_sparse.tflite");
  testing::TempDir dir;
  ir::Model model = format::ReadModel(path);
  const std::string written = dir.file("external.tflite");
  format::WriteModel(model, written, {.external_buffers = true});
  ir::Model reread = format::ReadModel(written);
  ExpectSameStructure(model, reread);
  const std::vector<npy::Array> inputs = testing::MakeInputs(path);
  ExpectBitIdentical(testing::RunLiteRt(path, inputs), testing::RunLiteRt(written, inputs), "external buffers");
}

TEST(RoundTrip, ExternalLayoutOffsetsAreAlignedAndPastTheFlatbuffer) {
  const std::string path = testing::FixtureModel("hand_landmark_lite.tflite");
  ir::Model model = format::ReadModel(path);
  std::vector<uint8_t> bytes = format::Serialize(model, {.external_buffers = true});
  const tfl::Model* root = tfl::GetModel(bytes.data());
  int external = 0;
  for (const tfl::Buffer* b : *root->buffers()) {
    if (b->offset() <= 1) continue;
    ++external;
    EXPECT_EQ(b->offset() % 16, 0u);
    EXPECT_LE(b->offset() + b->size(), bytes.size());
    EXPECT_TRUE(b->data() == nullptr || b->data()->size() == 0);
  }
  EXPECT_GT(external, 50);
}

TEST(RoundTrip, RefusesToOverwriteItsInput) {
  testing::TempDir dir;
  const std::string copy = dir.file("model.tflite");
  format::WriteModel(format::ReadModel(testing::FixtureModel("hand_landmark_lite.tflite")), copy);
  ir::Model model = format::ReadModel(copy);
  try {
    format::WriteModel(model, copy);
    FAIL() << "overwrote its input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refusing to overwrite"), std::string::npos) << e.what();
  }
}

TEST(RoundTrip, RefusesModelsWithFieldsItWouldDrop) {
  ir::Model model = format::ReadModel(testing::FixtureModel("hand_landmark_lite.tflite"));
  model.unpreservable.push_back("Tensor has a field this reader does not know (field #12)");
  EXPECT_THROW(format::Serialize(model), Error);
}

TEST(RoundTrip, UnknownFieldInAFileIsDetected) {
  // A Tensor table with one more vtable slot than our schema declares.
  namespace fb = flatbuffers;
  fb::FlatBufferBuilder fbb;
  auto name = fbb.CreateString("x");
  auto shape = fbb.CreateVector(std::vector<int32_t>{1, 4});
  auto start = fbb.StartTable();
  fbb.AddOffset(tfl::Tensor::VT_SHAPE, shape);
  fbb.AddOffset(tfl::Tensor::VT_NAME, name);
  fbb.AddElement<int32_t>(static_cast<fb::voffset_t>(4 + 2 * 40), 7, 0);  // slot 40: unknown
  auto tensor = fb::Offset<tfl::Tensor>(fbb.EndTable(start));
  std::vector<int32_t> io{0};
  auto sg = tfl::CreateSubGraph(fbb, fbb.CreateVector(std::vector<fb::Offset<tfl::Tensor>>{tensor}),
                                fbb.CreateVector(io), fbb.CreateVector(io));
  auto buffers = fbb.CreateVector(std::vector<fb::Offset<tfl::Buffer>>{tfl::CreateBuffer(fbb)});
  auto root = tfl::CreateModel(fbb, 3, 0, fbb.CreateVector(std::vector<fb::Offset<tfl::SubGraph>>{sg}), 0, buffers);
  fbb.Finish(root, tfl::ModelIdentifier());
  ir::Model model = format::ReadModelBytes(Bytes::Copy({fbb.GetBufferPointer(), fbb.GetSize()}), "crafted");
  ASSERT_EQ(model.unpreservable.size(), 1u);
  EXPECT_NE(model.unpreservable[0].find("Tensor"), std::string::npos) << model.unpreservable[0];
  EXPECT_THROW(format::Serialize(model), Error);
}

}  // namespace
}  // namespace gpuclean
