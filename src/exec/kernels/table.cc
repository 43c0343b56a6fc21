// The one kernel table. Each family list (*.inc) names its ops as
//   GPUCLEAN_BUILTIN(OP_NAME, FunctionStem)   -> kernels::FunctionStemKernel()
//   GPUCLEAN_CUSTOM("custom code", FunctionStem)
// and each FunctionStemKernel() lives in its own file under kernels/.
#include <map>
#include <string>

#include "exec/kernel.h"

namespace gpuclean::exec {
namespace kernels {
#define GPUCLEAN_BUILTIN(op, stem) Kernel stem##Kernel();
#define GPUCLEAN_CUSTOM(code, stem) Kernel stem##Kernel();
#include "exec/kernels/elementwise.inc"
#include "exec/kernels/conv.inc"
#include "exec/kernels/shape.inc"
#undef GPUCLEAN_BUILTIN
#undef GPUCLEAN_CUSTOM
}  // namespace kernels

namespace {

struct Table {
  std::map<int, Kernel> builtin;
  std::map<std::string, Kernel> custom;
  Table() {
#define GPUCLEAN_BUILTIN(op, stem) builtin[tfl::BuiltinOperator_##op] = kernels::stem##Kernel();
#define GPUCLEAN_CUSTOM(code, stem) custom[code] = kernels::stem##Kernel();
#include "exec/kernels/elementwise.inc"
#include "exec/kernels/conv.inc"
#include "exec/kernels/shape.inc"
#undef GPUCLEAN_BUILTIN
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
