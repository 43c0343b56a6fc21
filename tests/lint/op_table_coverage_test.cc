// Every op in the op table (src/ir/ops.def) is known to each layer: a shape
// rule, the interpreter's kernel exactly where its KERNEL column names one,
// and an entry naming it in every target's matrix.
#include <map>
#include <set>

#include "exec/kernel.h"
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

TEST(OpTableCoverage, KernelColumnMatchesTheInterpreter) {
  for (tfl::BuiltinOperator code : ir::TableOps()) {
    ir::Op op;
    op.code = code;
    EXPECT_EQ(exec::FindKernel(op) != nullptr, ir::TraitsOf(code).has_kernel) << ir::BuiltinName(code);
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

}  // namespace
}  // namespace gpuclean::lint
