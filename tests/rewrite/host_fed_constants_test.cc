// ctest-labels: litert
#include <cstring>

#include "gpuclean/builder.h"
#include "gpuclean/synth.h"
#include "rewrite/pass_proof.h"
#include "support/arrays.h"
#include "support/tflite_names.h"

namespace gpuclean::rewrite {
namespace {

using builder::GraphBuilder;
using ::gpuclean::testing::tflite_names::F32;

std::vector<float> Table(size_t n) {
  const npy::Array a = synth::HashUniform({static_cast<int64_t>(n)}, -3, 3, 31);
  return std::vector<float>(a.as<float>(), a.as<float>() + n);
}

bool HasConstNamed(const ir::Model& m, const std::string& name) {
  for (const ir::Tensor& t : m.main().tensors)
    if (t.name == name && t.is_const()) return true;
  return false;
}

TEST(HostFedConstants, IsOptIn) { EXPECT_TRUE(FindPass("host-fed-constants")->opt_in()); }

TEST(HostFedConstants, FeedsTheProbesPositionTableFromTheHost) {
  const ir::Model model = synth::Build("baked-pos-embed");
  const npy::Array x = synth::HashUniform({1, 1024, 256}, -4, 4, 32);
  const testing::PassProof proof = testing::ExpectPassProven("host-fed-constants", model, {x});
  const ir::Subgraph& g = proof.rewritten.main();
  ASSERT_EQ(proof.result.host_inputs.size(), 1u);
  const HostInput& host = proof.result.host_inputs[0];
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.tensors[g.inputs[1]].name, host.name);
  EXPECT_EQ(host.value.shape, (std::vector<int64_t>{1, 1024, 256}));
  // The host file holds exactly the baked values, and the file no longer does.
  const ir::Tensor& baked = model.main().tensors[model.main().ops[0].inputs[1]];
  ASSERT_EQ(host.value.data.size(), baked.data->size());
  EXPECT_EQ(std::memcmp(host.value.data.data(), baked.data->data(), baked.data->size()), 0);
  EXPECT_FALSE(HasConstNamed(proof.rewritten, "pos_embed"));
  testing::ExpectFindingGone(model, proof.rewritten, "large-constant");
}

// Conv / FC weights are the delegate's normal case and stay baked even when
// large; the same table feeding two compute ops becomes one input.
TEST(HostFedConstants, KeepsWeightsAndSharesOneInputPerConstant) {
  GraphBuilder b;
  int x = b.Input("x", F32, {1, 256, 256});
  int table = b.ConstF32("table", {1, 256, 256}, Table(65536));
  int w = b.ConstF32("w", {256, 256}, Table(65536));
  int y = b.FullyConnected(b.Add(x, table), w, builder::kNoInput, builder::kNoActivation, true);
  b.Output(b.Mul(y, table));
  const ir::Model model = b.Finish();
  const testing::PassProof proof =
      testing::ExpectPassProven("host-fed-constants", model, {synth::HashUniform({1, 256, 256}, -1, 1, 33)}, 2);
  EXPECT_EQ(proof.result.sites.size(), 2u);
  EXPECT_EQ(proof.result.host_inputs.size(), 1u);
  EXPECT_EQ(proof.rewritten.main().inputs.size(), 2u);
  EXPECT_TRUE(HasConstNamed(proof.rewritten, "w"));
  EXPECT_FALSE(HasConstNamed(proof.rewritten, "table"));
}

TEST(HostFedConstants, HonoursTheThreshold) {
  ir::Model small = synth::Build("baked-pos-embed.ok");  // 16384 elements
  EXPECT_TRUE(FindPass("host-fed-constants")->Apply(small, {}).sites.empty());
  EXPECT_EQ(small.main().inputs.size(), 1u);

  PassOptions low;
  low.host_fed_min_elements = 16384;
  const testing::PassProof proof = testing::ExpectPassProven("host-fed-constants", synth::Build("baked-pos-embed.ok"),
                                                             {synth::HashUniform({1, 64, 256}, -4, 4, 34)}, 1, low);
  EXPECT_EQ(proof.result.host_inputs.size(), 1u);
}

}  // namespace
}  // namespace gpuclean::rewrite
