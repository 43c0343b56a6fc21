// Every op in the op table (src/ir/ops.def) is known to each layer: a shape
// rule, the interpreter's kernel,
// and an entry naming it in every target's matrix; its OPTIONS and VERSION
// columns agree with what TFLite's converter wrote into real models.
#include <map>
#include <set>

#include "exec/kernel.h"
#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "gpuclean/op_table.h"
#include "gpuclean/shapes.h"
#include "lint/lint_test_util.h"

namespace gpuclean::lint {
namespace {

TEST(OpTableCoverage, EveryRowHasAShapeRule) {
  for (tfl::BuiltinOperator code : ir::TableOps()) {
    ir::Op op;
    op.code = code;
    EXPECT_TRUE(ir::HasShapeRule(op)) << ir::BuiltinName(code);
  }
}

TEST(OpTableCoverage, EveryRowHasAKernel) {
  for (tfl::BuiltinOperator code : ir::TableOps()) {
    ir::Op op;
    op.code = code;
    EXPECT_NE(exec::FindKernel(op), nullptr) << ir::BuiltinName(code);
  }
}

// The current ML Drift targets (the default, the IR path, WebGPU) name every
// row. The older targets were written from documents and field reports
// before the table grew; an op they do not name is reported as no-entry
// (unknown, counted off the GPU), and their gaps may only shrink.
TEST(OpTableCoverage, EveryTargetHasAnEntryForEveryRow) {
  const std::map<std::string, size_t> allowed_gaps = {
      {"mldrift-cl@2.1.3", 21}, {"mldrift-cl@2.1.5", 21}, {"mldrift-cl@2.1.6", 21}, {"tflite-gpu", 22}, {"xnnpack", 34},
  };
  for (const std::string& target : ListTargets(testing::CompatDir())) {
    std::set<std::string> named;
    for (const Entry& e : testing::Target(target).entries) named.insert(e.op);
    std::vector<std::string> gaps;
    for (tfl::BuiltinOperator code : ir::TableOps())
      if (!named.count(ir::BuiltinName(code))) gaps.push_back(ir::BuiltinName(code));
    const auto allowed = allowed_gaps.find(target);
    EXPECT_LE(gaps.size(), allowed == allowed_gaps.end() ? 0 : allowed->second)
        << target << " has no entry for " << ::testing::PrintToString(gaps);
  }
}

// Every op of the fixture models (MediaPipe's, converted by TFLite's own
// converter) that has a row: its options table is the row's OPTIONS, and the
// version the builder would write is never below the one the converter
// wrote. (It may be above: these converters predate some versions, e.g.
// float16 DEQUANTIZE at 3 and half-pixel RESIZE_BILINEAR at 3, which today's
// converter writes: tflite/converter/tools/versioning/op_version.cc.)
TEST(OpTableCoverage, OptionsAndVersionColumnsMatchConvertedModels) {
  std::set<std::string> options_checked;
  std::set<std::string> versions_checked;
  for (const std::string& path : gpuclean::testing::FixtureModels()) {
    const ir::Model model = format::ReadModel(path);
    const ir::Subgraph& g = model.main();
    for (const ir::Op& op : g.ops) {
      const ir::OpTraits& row = ir::TraitsOf(op.code);
      if (!row.in_table) continue;
      const std::string name = ir::BuiltinName(op.code);
      if (op.options.type != tfl::BuiltinOptions_NONE) {
        EXPECT_EQ(tfl::EnumNameBuiltinOptions(op.options.type), tfl::EnumNameBuiltinOptions(row.options))
            << name << " in " << path;
        options_checked.insert(name);
      }
      EXPECT_GE(builder::DefaultOpVersion(g, op), op.version) << name << " in " << path;
      versions_checked.insert(name);
    }
  }
  EXPECT_GE(options_checked.size(), 8u) << ::testing::PrintToString(options_checked);
  EXPECT_GE(versions_checked.size(), 12u) << ::testing::PrintToString(versions_checked);
}

// An op whose options table has no fields gets it, as converters write it;
// one without a table gets none.
TEST(OpTableCoverage, BuilderWritesTheRowsFieldlessOptions) {
  builder::GraphBuilder b;
  const int x = b.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  auto options_of = [&](int tensor) { return b.graph().ops[b.graph().Producer(tensor)].options.type; };
  EXPECT_EQ(options_of(b.Unary(tfl::BuiltinOperator_SIGN, x)), tfl::BuiltinOptions_SignOptions);
  EXPECT_EQ(options_of(b.Binary(tfl::BuiltinOperator_FLOOR_MOD, x, x)), tfl::BuiltinOptions_FloorModOptions);
  EXPECT_EQ(options_of(b.Unary(tfl::BuiltinOperator_RSQRT, x)), tfl::BuiltinOptions_NONE);
}

}  // namespace
}  // namespace gpuclean::lint
