#pragma once
// A corpus of valid flatbuffers with hostile contents: options, shapes and
// wiring that no runtime can execute, shapes that ask for more memory than
// any machine has, and runtime values that index outside their tables. Each
// starts as a valid builder graph and is then broken the way a foreign
// converter or a hand-edited file breaks it. The CLI test runs every
// command on each; the post-loader fuzzer seeds from them.
#include <string>
#include <vector>

#include "gpuclean/ir.h"
#include "gpuclean/npy.h"

namespace gpuclean::testing {

enum class Hostility {
  kInvalid,        // every command refuses it: exit 2, one line naming the problem
  kTooBig,         // valid, but running it needs more memory than the limit
  kRuntimeValues,  // valid; the given input values are out of range
  kOdd,            // valid and runnable, only unusual (a stride of INT32_MAX)
};

struct HostileModel {
  std::string name;
  Hostility hostility = Hostility::kInvalid;
  std::string expect;  // a part of the one-line refusal
  ir::Model model;
  std::vector<npy::Array> inputs;  // kRuntimeValues: the values to feed, in input order
};

std::vector<HostileModel> HostileCorpus();

}  // namespace gpuclean::testing
