// The one kernel table: builtin ops from the op table's KERNEL column
// (src/ir/ops.def), custom ops from custom.inc. Each <Stem>Kernel() lives
// in a file of its own or of its family under kernels/.
#include <map>
#include <string>

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

}  // namespace gpuclean::exec
