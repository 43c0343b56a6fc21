// libFuzzer target for everything after the loader. The input is a recipe:
// which valid base graph to start from (the tests' hostile corpus and the
// synth catalogue) and a few structure-aware mutations of it (a dimension, an
// option field, an int constant, an op's input wiring, a dtype, custom
// option bytes, a runtime int input value). The mutated graph then goes
// through what every command does with a loaded model: validation, lint,
// the interpreter (prepare + invoke, under a small memory limit, in a
// fuzz-chosen precision), fix and split. Refusals must be gpuclean::Error of
// a non-internal kind with a message; anything else (a crash, a sanitizer
// report, another exception, an internal error) is a finding.
//
// Built with -DGPUCLEAN_BUILD_FUZZERS=ON and clang; see tools/run_fuzz.sh.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/limits.h"
#include "gpuclean/lint.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/split.h"
#include "gpuclean/synth.h"
#include "support/hostile_models.h"

namespace {

using namespace gpuclean;

[[noreturn]] void Finding(const std::string& what) {
  std::fprintf(stderr, "graph_fuzzer: %s\n", what.c_str());
  std::abort();
}

// Messages may quote tensor names with any bytes; the CLI and the reader
// print them escaped, so one line is their property, not this layer's.
void CheckRefusal(const Error& e, const char* stage) {
  const std::string message = e.what();
  if (e.kind() == ErrorKind::kInternal) Finding(std::string(stage) + ": internal error: " + message);
  if (message.empty()) Finding(std::string(stage) + ": empty message");
}

struct Base {
  std::string name;
  ir::Model model;
};

const std::vector<Base>& Bases() {
  static const std::vector<Base> bases = [] {
    std::vector<Base> out;
    for (testing::HostileModel& m : testing::HostileCorpus()) out.push_back({m.name, std::move(m.model)});
    for (const synth::SynthGraph& g : synth::Catalog()) {
      try {
        out.push_back({g.name, g.build()});
      } catch (const Error&) {}
    }
    return out;
  }();
  return bases;
}

const lint::Matrix& Matrix() {
  static const lint::Matrix matrix = lint::LoadMatrix(lint::DefaultDataDir() + "/compat", lint::kDefaultTarget);
  return matrix;
}

int32_t InterestingInt(FuzzedDataProvider& in) {
  static constexpr int32_t kValues[] = {0,          1,
                                        2,          3,
                                        4,          7,
                                        -1,         -2,
                                        64,         255,
                                        1 << 16,    1 << 20,
                                        1 << 30,    std::numeric_limits<int32_t>::max(),
                                        -7,         100,
                                        1000,       65535,
                                        -(1 << 30), std::numeric_limits<int32_t>::min()};
  if (in.ConsumeBool()) return kValues[in.ConsumeIntegralInRange<size_t>(0, std::size(kValues) - 1)];
  return in.ConsumeIntegral<int32_t>();
}

// Sets one int field of the op's options (the fields shape rules and
// kernels read).
void MutateOptions(ir::Op& op, FuzzedDataProvider& in) {
  const int32_t v = InterestingInt(in);
  const int field = in.ConsumeIntegralInRange(0, 5);
  auto& o = op.options;
  if (auto* c = o.AsConv2DOptions()) {
    int32_t* fields[] = {&c->stride_w, &c->stride_h, &c->dilation_w_factor, &c->dilation_h_factor};
    if (field == 4)
      c->padding = static_cast<tfl::Padding>(v & 3);
    else if (field == 5)
      c->fused_activation_function = static_cast<tfl::ActivationFunctionType>(v & 7);
    else
      *fields[field] = v;
  } else if (auto* d = o.AsDepthwiseConv2DOptions()) {
    int32_t* fields[] = {&d->stride_w,          &d->stride_h,         &d->dilation_w_factor,
                         &d->dilation_h_factor, &d->depth_multiplier, &d->stride_w};
    *fields[field] = v;
  } else if (auto* p = o.AsPool2DOptions()) {
    int32_t* fields[] = {&p->stride_w,      &p->stride_h, &p->filter_width,
                         &p->filter_height, &p->stride_w, &p->filter_width};
    if (field == 5)
      p->padding = static_cast<tfl::Padding>(v & 3);
    else
      *fields[field] = v;
  } else if (auto* t = o.AsTransposeConvOptions()) {
    if (field % 3 == 0)
      t->stride_w = v;
    else if (field % 3 == 1)
      t->stride_h = v;
    else
      t->padding = static_cast<tfl::Padding>(v & 3);
  } else if (auto* c2 = o.AsConcatenationOptions()) {
    c2->axis = v;
  } else if (auto* r = o.AsReshapeOptions()) {
    if (!r->new_shape.empty()) r->new_shape[static_cast<size_t>(field) % r->new_shape.size()] = v;
  } else if (auto* g = o.AsGatherOptions()) {
    (field % 2 ? g->axis : g->batch_dims) = v;
  } else if (auto* s = o.AsSplitOptions()) {
    s->num_splits = v;
  } else if (auto* sv = o.AsSplitVOptions()) {
    sv->num_splits = v;
  } else if (auto* pk = o.AsPackOptions()) {
    (field % 2 ? pk->axis : pk->values_count) = v;
  } else if (auto* up = o.AsUnpackOptions()) {
    (field % 2 ? up->axis : up->num) = v;
  } else if (auto* s2d = o.AsSpaceToDepthOptions()) {
    s2d->block_size = v;
  } else if (auto* d2s = o.AsDepthToSpaceOptions()) {
    d2s->block_size = v;
  } else if (auto* ss = o.AsStridedSliceOptions()) {
    int32_t* fields[] = {&ss->begin_mask,    &ss->end_mask,         &ss->ellipsis_mask,
                         &ss->new_axis_mask, &ss->shrink_axis_mask, &ss->begin_mask};
    *fields[field] = v;
  } else if (auto* sq = o.AsSqueezeOptions()) {
    sq->squeeze_dims.push_back(v);
  } else if (auto* fc = o.AsFullyConnectedOptions()) {
    fc->keep_num_dims = v & 1;
  } else if (auto* bm = o.AsBatchMatMulOptions()) {
    (field % 2 ? bm->adj_x : bm->adj_y) = v & 1;
  } else if (auto* a = o.AsArgMaxOptions()) {
    a->output_type = static_cast<tfl::TensorType>(v & 15);
  } else if (auto* sm = o.AsSoftmaxOptions()) {
    sm->beta = static_cast<float>(v);
  } else if (auto* rs = o.AsResizeBilinearOptions()) {
    (field % 2 ? rs->align_corners : rs->half_pixel_centers) = v & 1;
  } else if (!op.custom_options.empty()) {
    const size_t at = static_cast<size_t>(field) * 4 % op.custom_options.size();
    std::memcpy(op.custom_options.data() + at, &v, std::min<size_t>(4, op.custom_options.size() - at));
  }
}

void Mutate(ir::Subgraph& g, FuzzedDataProvider& in) {
  if (g.tensors.empty()) return;
  const size_t t = in.ConsumeIntegralInRange<size_t>(0, g.tensors.size() - 1);
  ir::Tensor& tensor = g.tensors[t];
  switch (in.ConsumeIntegralInRange(0, 6)) {
    case 0:  // a dimension
      if (!tensor.shape.empty())
        tensor.shape[in.ConsumeIntegralInRange<size_t>(0, tensor.shape.size() - 1)] = InterestingInt(in);
      break;
    case 1:  // the rank (runtime tensors only: constants keep their byte count)
      if (tensor.is_const()) break;
      if (in.ConsumeBool() && !tensor.shape.empty())
        tensor.shape.pop_back();
      else
        tensor.shape.push_back(in.ConsumeIntegralInRange(0, 4));
      break;
    case 2:  // an option field
      if (!g.ops.empty()) MutateOptions(g.ops[in.ConsumeIntegralInRange<size_t>(0, g.ops.size() - 1)], in);
      break;
    case 3:  // one element of an int32 constant (axes, shapes, paddings, indices, perms)
      if (tensor.is_const() && tensor.dtype == tfl::TensorType_INT32 && tensor.data->size() >= 4) {
        std::vector<uint8_t> bytes(tensor.data->span().begin(), tensor.data->span().end());
        const int32_t v = InterestingInt(in);
        std::memcpy(bytes.data() + 4 * in.ConsumeIntegralInRange<size_t>(0, bytes.size() / 4 - 1), &v, 4);
        tensor.data = Bytes::Own(std::move(bytes));
      }
      break;
    case 4:  // an op's wiring
      if (!g.ops.empty()) {
        ir::Op& op = g.ops[in.ConsumeIntegralInRange<size_t>(0, g.ops.size() - 1)];
        if (!op.inputs.empty())
          op.inputs[in.ConsumeIntegralInRange<size_t>(0, op.inputs.size() - 1)] =
              in.ConsumeIntegralInRange<int32_t>(-1, static_cast<int32_t>(g.tensors.size()) - 1);
      }
      break;
    case 5:  // a dtype (runtime tensors)
      if (!tensor.is_const())
        tensor.dtype =
            in.ConsumeBool() ? tfl::TensorType_INT32 : static_cast<tfl::TensorType>(in.ConsumeIntegralInRange(0, 17));
      break;
    case 6:  // drop or repeat an op input
      if (!g.ops.empty()) {
        ir::Op& op = g.ops[in.ConsumeIntegralInRange<size_t>(0, g.ops.size() - 1)];
        if (in.ConsumeBool() && !op.inputs.empty())
          op.inputs.pop_back();
        else if (!op.inputs.empty())
          op.inputs.push_back(op.inputs.front());
      }
      break;
  }
}

// Prepare + invoke with generated inputs; int inputs get fuzz-chosen values.
void Execute(const ir::Model& model, FuzzedDataProvider& in) {
  const exec::Precision precisions[] = {exec::Precision::kFp32, exec::Precision::kFp16Storage,
                                        exec::Precision::kFp16Compute, exec::Precision::kFp16Fused,
                                        exec::Precision::kFp16F32Accum};
  exec::InterpreterOptions options;
  options.precision = precisions[in.ConsumeIntegralInRange(0, 4)];
  options.threads = in.ConsumeIntegralInRange(1, 2);
  exec::Interpreter interpreter(std::make_shared<const ir::Model>(model), options);
  const ir::Subgraph& g = interpreter.graph();
  for (int i = 0; i < interpreter.num_inputs(); ++i) {
    const ir::Tensor& spec = g.tensors[g.inputs[i]];
    npy::Array value = exec::GenerateInput(spec, 1, i);
    if (spec.dtype == tfl::TensorType_INT32)
      for (int64_t k = 0; k < value.num_elements(); ++k) value.as<int32_t>()[k] = InterestingInt(in) % 4096;
    interpreter.SetInput(i, value);
  }
  interpreter.Invoke();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A recipe, not bytes to read: small inputs are whole recipes.
  if (size > 256) return 0;
  FuzzedDataProvider in(data, size);
  // Shapes that ask for more are refused, not allocated (rss limit: 2 GB).
  SetMemoryLimit(uint64_t{256} << 20);
  const std::vector<Base>& bases = Bases();
  ir::Model model = bases[in.ConsumeIntegralInRange<size_t>(0, bases.size() - 1)].model;
  const int mutations = in.ConsumeIntegralInRange(0, 3);
  for (int m = 0; m < mutations; ++m) Mutate(model.main(), in);

  try {
    model.Validate();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kBadInput) Finding(std::string("validate: not kBadInput: ") + e.what());
    CheckRefusal(e, "validate");
    return 0;
  }
  const auto stage = [&](const char* name, const auto& fn) {
    try {
      fn();
    } catch (const Error& e) {
      CheckRefusal(e, name);
    } catch (const std::bad_alloc&) {
      Finding(std::string(name) + ": an allocation escaped the memory limit");
    } catch (const std::exception& e) {
      Finding(std::string(name) + ": unexpected exception: " + e.what());
    }
  };
  stage("lint", [&] { lint::Lint(model, Matrix()); });
  stage("run", [&] { Execute(model, in); });
  if (in.ConsumeBool()) {
    stage("fix", [&] {
      rewrite::FixOptions options;
      rewrite::Fix(model, options);
    });
  } else {
    stage("split", [&] {
      const ir::Subgraph& g = model.main();
      if (g.ops.empty() || g.ops[0].outputs.empty()) return;
      const std::vector<split::Part> parts = split::Cut(model, {g.tensors[g.ops[0].outputs[0]].name});
      split::ProveChain(model, parts, 0);
    });
  }
  return 0;
}
