// ctest-labels: litert
// Einsum: matmul-like equations (batched, transposed operands, attention
// scores, outer products, ellipses, implicit outputs) and one-operand
// transposes/sums, proven against onnxruntime; the rest refused by name.
#include <gtest/gtest.h>

#include "onnx/op_test_util.h"

namespace gpuclean {
namespace {

using testing::ConvertModel;
using testing::OnnxTestModel;
using testing::RefusalOf;

struct CaseEinsum {
  std::string eq;
  std::vector<int64_t> a, b;  // b empty: one operand
};

TEST(Einsum, MatmulLikeEquations) {
  const std::vector<CaseEinsum> cases = {
      {"bij,bjk->bik", {2, 3, 4}, {2, 4, 5}},
      {"bhid,bhjd->bhij", {1, 2, 3, 4}, {1, 2, 5, 4}},
      {"bhij,bhjd->bhid", {1, 2, 3, 5}, {1, 2, 5, 4}},
      {"ij,kj->ik", {3, 4}, {5, 4}},
      {"ji,jk->ik", {4, 3}, {4, 5}},
      {"ij,jk", {3, 4}, {4, 5}},
      {"i,j->ij", {3}, {4}},
      {"i,i->", {6}, {6}},
      {"bi,bi->b", {3, 6}, {3, 6}},
      {"bnd,dk->bnk", {2, 3, 4}, {4, 5}},
      {"...ij,...jk->...ik", {2, 3, 4, 5}, {2, 3, 5, 2}},
      {"bij,bkj->bki", {2, 3, 4}, {2, 5, 4}},
      {"abc,cd->abd", {2, 3, 4}, {4, 2}},
      {"nqhd,nkhd->nhqk", {1, 3, 2, 4}, {1, 5, 2, 4}},
      {"ij,jk->", {3, 4}, {4, 5}},
      {"ij->ji", {3, 4}, {}},
      // "ijk->ki" (a sum and a transpose of one operand) is left out:
      // onnxruntime 1.22 fails it ("the candidate output does not match").
      {"ijk->ik", {2, 3, 4}, {}},
      {"ij->i", {3, 4}, {}},
      {"ij->", {3, 4}, {}},
      {"ij", {3, 4}, {}},
      {"ba", {3, 4}, {}},
      {"...ij->...ji", {2, 3, 4}, {}},
  };
  OnnxTestModel m;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string n = std::to_string(i);
    m.Input("a" + n, cases[i].a);
    std::vector<std::string> ins = {"a" + n};
    if (!cases[i].b.empty()) {
      m.Input("b" + n, cases[i].b);
      ins.push_back("b" + n);
    }
    m.Node("Einsum", ins, {"y" + n}).Str("equation", cases[i].eq);
    m.Output("y" + n);
  }
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(Einsum, ConstantWeights) {
  OnnxTestModel m;
  m.Input("x", {2, 3, 4});
  m.InitF32("w", {4, 6}, testing::RandomValues(24, 3));
  m.Node("Einsum", {"x", "w"}, {"y"}).Str("equation", "bnd,de->bne");
  m.Output("y");
  const auto r = ConvertModel(m);
  EXPECT_TRUE(r.proven) << r.RenderText();
}

TEST(Einsum, DiagonalsAndThreeOperandsAreRefused) {
  {
    OnnxTestModel m;
    m.Input("x", {3, 3});
    m.Node("Einsum", {"x"}, {"y"}).Str("equation", "ii->i");
    m.Output("y");
    EXPECT_NE(RefusalOf(m).find("diagonal"), std::string::npos) << RefusalOf(m);
  }
  {
    OnnxTestModel m;
    m.Input("x", {3, 4});
    m.Input("y", {4, 5});
    m.Input("z", {5, 2});
    m.Node("Einsum", {"x", "y", "z"}, {"o"}).Str("equation", "ij,jk,kl->il");
    m.Output("o");
    EXPECT_NE(RefusalOf(m).find("more than two operands"), std::string::npos) << RefusalOf(m);
  }
}

}  // namespace
}  // namespace gpuclean
