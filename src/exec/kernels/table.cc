// The one kernel table: builtin ops from the op table's KERNEL column
// (src/ir/ops.def), custom ops from custom.inc. Each <Stem>Kernel() lives
// in a file of its own or of its family under kernels/.
#include <map>
#include <string>

#include <fmt/format.h>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"

#include "exec/kernel.h"

namespace gpuclean::exec {
namespace kernels {
#define GPUCLEAN_OP(code, family, rank_rule, stem, flags, options, version) Kernel stem##Kernel();
#include "ir/ops.def"
#undef GPUCLEAN_OP
#define GPUCLEAN_CUSTOM(code, stem) Kernel stem##Kernel();
#include "exec/kernels/custom.inc"
#undef GPUCLEAN_CUSTOM
}  // namespace kernels

namespace {

struct Table {
  std::map<int, Kernel> builtin;
  std::map<std::string, Kernel> custom;
  Table() {
#define GPUCLEAN_OP(code, family, rank_rule, stem, flags, options, version) \
  builtin[tfl::BuiltinOperator_##code] = kernels::stem##Kernel();
#include "ir/ops.def"
#undef GPUCLEAN_OP
#define GPUCLEAN_CUSTOM(code, stem) custom[code] = kernels::stem##Kernel();
#include "exec/kernels/custom.inc"
#undef GPUCLEAN_CUSTOM
  }
};

}  // namespace

const Kernel* FindKernel(const ir::Op& op) {
  static const Table table;
  if (op.code == tfl::BuiltinOperator_CUSTOM) {
    auto it = table.custom.find(op.custom_code);
    return it == table.custom.end() ? nullptr : &it->second;
  }
  auto it = table.builtin.find(static_cast<int>(op.code));
  return it == table.builtin.end() ? nullptr : &it->second;
}

bool RunsAsCpuGraphOp(const ir::Subgraph& graph, int op_index, std::string* why_not) {
  const ir::Op& op = graph.ops.at(op_index);
  auto no = [&](std::string why) {
    if (why_not) *why_not = std::move(why);
    return false;
  };
  if (op.code == tfl::BuiltinOperator_CUSTOM) return no("it is a custom op, which LiteRT's CPU path does not know");
  const Kernel* kernel = FindKernel(op);
  if (!kernel) return no("gpuclean's interpreter has no kernel for " + op.name());
  if (kernel->check) {
    try {
      kernel->check(graph, op);
    } catch (const Error& e) {
      return no(e.what());
    }
  }
  return true;
}

}  // namespace gpuclean::exec
