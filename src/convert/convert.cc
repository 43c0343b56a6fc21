// convert: import -> lower -> prove against onnxruntime -> write.
#include "gpuclean/convert.h"
#include "gpuclean/gates.h"
#include "gpuclean/half.h"
#include "gpuclean/valid_rows.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/metrics.h"
#include "gpuclean/probe.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/run.h"
#include "gpuclean/stopwatch.h"
#include "gpuclean/task_gates.h"
#include "onnx/lowering.h"
#include "onnx/onnx_model.h"

namespace gpuclean::convert {
namespace fs = std::filesystem;

namespace {

// Cores onnxruntime's proof holds while it runs beside the target step; an
// interpreter made meanwhile takes the rest. Oversubscribed (every core for
// our interpreter, one of them also onnxruntime's), the quantized ISNet's
// fp32 range run took 5.5 s against 2.1 s on the one free core.
std::atomic<int> g_cores_lent{0};

int HardwareCores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }
int FreeCores() { return std::max(1, HardwareCores() - g_cores_lent.load()); }

void Progress(const Options& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

std::map<std::string, int> OpHistogram(const ir::Subgraph& g) {
  std::map<std::string, int> h;
  for (const ir::Op& op : g.ops) ++h[op.name()];
  return h;
}

// Why each TRANSPOSE is there: what reads its output.
std::vector<std::string> TransposeReasons(const ir::Subgraph& g) {
  std::vector<std::string> out;
  const auto consumers = g.Consumers();
  for (const ir::Op& op : g.ops) {
    if (op.code != tfl::BuiltinOperator_TRANSPOSE) continue;
    const int in = op.inputs.at(0), t = op.outputs.at(0);
    std::string readers;
    for (int c : consumers[t]) readers += (readers.empty() ? "" : ", ") + g.ops[c].name();
    if (g.IsGraphOutput(t)) readers += std::string(readers.empty() ? "" : ", ") + "the graph output";
    const int producer = g.Producer(in);
    out.push_back(
        fmt::format("{} -> {}: {} ({}) feeds {}", g.tensors[in].name, g.tensors[t].name,
                    producer >= 0 ? g.ops[producer].name() : (g.IsGraphInput(in) ? "graph input" : "constant"),
                    ir::FormatShape(g.tensors[in].shape), readers.empty() ? "nothing" : readers));
  }
  return out;
}

nlohmann::json OriginsJson(const onnx::LoweredGraph& lowered) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [tensor, origin] : lowered.origins) {
    j[tensor] = {{"onnx", origin.onnx_name}, {"perm", origin.perm}};
    if (!origin.fused_from.empty()) j[tensor]["fused_from"] = origin.fused_from;
    if (origin.rows_axis >= 0) j[tensor]["rows"] = {{"axis", origin.rows_axis}, {"count", origin.rows_count}};
  }
  return j;
}

struct Origin {
  std::string onnx_name;
  onnx::Perm perm;
  std::string fused_from;  // onnx::LoweredGraph::TensorOrigin::fused_from
  int rows_axis = -1;      // onnx::LoweredGraph::TensorOrigin::rows_axis
  std::string rows_count;
};

std::map<std::string, Origin> ReadOrigins(const ir::Model& model) {
  std::map<std::string, Origin> out;
  for (const ir::Metadata& m : model.metadata) {
    if (m.name != kOriginsMetadata) continue;
    try {
      const auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(m.data.data()), m.data.size()));
      for (const auto& [tensor, o] : j.items()) {
        Origin& origin = out[tensor];
        origin = {o.at("onnx").get<std::string>(),
                  o.at("perm").get<onnx::Perm>(),
                  o.value("fused_from", std::string()),
                  -1,
                  {}};
        if (o.contains("rows")) {
          origin.rows_axis = o["rows"].at("axis").get<int>();
          origin.rows_count = o["rows"].at("count").get<std::string>();
        }
      }
    } catch (const std::exception&) {
      ThrowBadInput(fmt::format("{}: metadata '{}' is not the JSON convert writes", model.source, kOriginsMetadata));
    }
  }
  return out;
}

// Seeded inputs in ONNX layout: floats uniform in [-1, 1) (both signs, so
// Relu and friends are exercised), integers 0, booleans false.
std::vector<npy::Array> ProofInputs(const onnx::Graph& g, uint32_t seed) {
  std::vector<npy::Array> out;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    ir::Tensor t;
    t.name = g.inputs[i].name;
    const ir::DType d = g.inputs[i].dtype;
    const bool half = d == tfl::TensorType_FLOAT16;
    t.dtype = half ? tfl::TensorType_FLOAT32 : d;
    for (int64_t dim : g.inputs[i].shape) t.shape.push_back(static_cast<int32_t>(dim));
    npy::Array a = exec::GenerateInput(t, seed, static_cast<int>(i));
    if (a.dtype == tfl::TensorType_FLOAT32)
      for (int64_t k = 0; k < a.num_elements(); ++k) a.as<float>()[k] = a.as<float>()[k] * 2.0f - 1.0f;
    if (half) {
      npy::Array h;
      h.dtype = tfl::TensorType_FLOAT16;
      h.shape = a.shape;
      h.data.resize(static_cast<size_t>(a.num_elements()) * 2);
      for (int64_t k = 0; k < a.num_elements(); ++k) h.as<uint16_t>()[k] = FloatToHalf(a.as<float>()[k]);
      a = std::move(h);
    }
    out.push_back(std::move(a));
  }
  return out;
}

// Options::proof_inputs in place of the seeded arrays of one set, checked
// against the inputs' dtypes and shapes.
void UseGivenInputs(const Options& o, const onnx::Graph& g, std::vector<npy::Array>& set) {
  for (const auto& [name, array] : o.proof_inputs) {
    size_t i = 0;
    while (i < g.inputs.size() && g.inputs[i].name != name) ++i;
    if (i == g.inputs.size())
      throw Error(
          ErrorKind::kUsage,
          fmt::format("--input names '{}', which is not an input of the converted graph of {}", name, o.onnx_path));
    if (array.shape != set[i].shape || array.dtype != set[i].dtype)
      throw Error(ErrorKind::kUsage, fmt::format("--input {}: a {} array of shape [{}], the input is {} [{}]", name,
                                                 ir::DTypeName(array.dtype), fmt::join(array.shape, ","),
                                                 ir::DTypeName(set[i].dtype), fmt::join(set[i].shape, ",")));
    set[i] = array;
  }
}

// An ONNX-layout array as the converted graph's input tensor wants it.
npy::Array ToGraphInput(const npy::Array& a, const ir::Tensor& t, const onnx::Perm& perm) {
  npy::Array b = onnx::TransposeHost(a, perm);
  // A clip's frames: the graph's input is the NDHWC clip less its batch of one.
  if (b.shape.size() == t.shape.size() + 1 && b.shape[0] == 1) b.shape.erase(b.shape.begin());
  if (a.dtype == tfl::TensorType_INT64 && t.dtype == tfl::TensorType_INT32) {
    npy::Array n;
    n.dtype = tfl::TensorType_INT32;
    n.shape = b.shape;
    n.data.resize(b.num_elements() * 4);
    for (int64_t k = 0; k < b.num_elements(); ++k) {
      const int64_t v = b.as<int64_t>()[k];
      if (v > INT32_MAX || v < INT32_MIN)
        ThrowUnsupported(fmt::format("input '{}' holds {}, which does not fit the converted graph's int32", t.name, v));
      n.as<int32_t>()[k] = static_cast<int32_t>(v);
    }
    return n;
  }
  return b;
}

struct Agreement {
  bool ok = true;
  double max_abs = 0, max_scaled = 0, correlation = 1;
  std::string why;
};

Agreement Agree(const npy::Array& ref, const npy::Array& got, double atol, double min_corr) {
  Agreement a;
  if (ref.num_elements() != got.num_elements()) {
    a.ok = false;
    a.why = fmt::format("{} elements vs {}", got.num_elements(), ref.num_elements());
    return a;
  }
  const bool integral = ref.dtype != tfl::TensorType_FLOAT32 && ref.dtype != tfl::TensorType_FLOAT16 &&
                        ref.dtype != tfl::TensorType_FLOAT64;
  const bool finite_mismatch = analyze::WithDoubles(ref, got, [&a, n = ref.num_elements()](auto r, auto g) {
    for (int64_t i = 0; i < n; ++i) {
      const double rv = r(i), gv = g(i);
      const bool rf = std::isfinite(rv), gf = std::isfinite(gv);
      if (rf != gf || (!rf && !(std::isnan(rv) && std::isnan(gv)) && rv != gv)) {
        a.ok = false;
        a.why = fmt::format("element {}: {} vs {}", i, gv, rv);
        a.max_abs = a.max_scaled = INFINITY;
        return true;
      }
      if (!rf) continue;
      const double d = std::abs(gv - rv);
      a.max_abs = std::max(a.max_abs, d);
      a.max_scaled = std::max(a.max_scaled, d / std::max(1.0, std::abs(rv)));
    }
    return false;
  });
  if (finite_mismatch) return a;
  if (integral) {
    if (a.max_abs != 0) {
      a.ok = false;
      a.why = fmt::format("integer outputs differ (max |diff| {})", a.max_abs);
    }
    return a;
  }
  const analyze::Metrics m = analyze::Compare(ref, got);
  a.correlation = m.correlation;
  if (a.max_scaled > atol) {
    a.ok = false;
    a.why = fmt::format("max |diff| / max(1,|ref|) = {:.3g} > {:.3g}", a.max_scaled, atol);
  } else if (std::isfinite(m.correlation) && m.correlation < min_corr && a.max_abs > 1e-6) {
    a.ok = false;
    a.why = fmt::format("correlation {:.7f} < {}", m.correlation, min_corr);
  }
  return a;
}

std::vector<std::vector<npy::Array>> NudgedByOneUlp(std::vector<std::vector<npy::Array>> sets);

// onnxruntime's outputs on the proof's input sets and, for a quantized
// model, on the first set nudged by one ulp: its outputs nearly always need
// its own noise (a code flips under any change of rounding), and in the same
// session it saves a process, an import and a warm-up.
struct OnnxRuntimeProof {
  std::vector<std::vector<npy::Array>> ref, nudged;
};

// Runs `onnx_path` on onnxruntime for each input set, fetching `names`
// (empty: the graph outputs).
std::vector<std::vector<npy::Array>> RunOnnxRuntime(const std::string& onnx_path, const onnx::Graph& g,
                                                    const std::vector<std::vector<npy::Array>>& input_sets,
                                                    const std::vector<std::string>& names, const ScratchDir& dir,
                                                    bool optimize = true, int threads = 0) {
  std::vector<probe::ProbeRequest> requests;
  for (size_t s = 0; s < input_sets.size(); ++s) {
    probe::ProbeRequest q;
    q.model_path = onnx_path;
    q.runtime = probe::Runtime::kOnnxRuntime;
    q.optimize = optimize;
    // Every core, as our interpreter uses, unless the caller shares them:
    // the reference's summation order may move, which the proof's bound and
    // noise floor already take.
    q.threads = threads > 0 ? threads : HardwareCores();
    q.out_dir = dir / fmt::format("ort{}{}", optimize ? "" : "noopt", s);
    q.output_names = names;
    fs::create_directories(q.out_dir);
    for (size_t i = 0; i < input_sets[s].size(); ++i) {
      const std::string file = dir / fmt::format("set{}_in{}.npy", s, i);
      npy::Write(file, input_sets[s][i]);
      q.inputs.emplace_back(g.inputs[i].name, file);
    }
    // onnxruntime runs the original model, which still has the pinned inputs.
    for (size_t i = 0; i < g.pinned_inputs.size(); ++i) {
      const std::string file = dir / fmt::format("pinned{}.npy", i);
      if (s == 0) npy::Write(file, g.pinned_inputs[i].second);
      q.inputs.emplace_back(g.pinned_inputs[i].first, file);
    }
    requests.push_back(std::move(q));
  }
  std::vector<std::vector<npy::Array>> out;
  for (probe::ProbeResult& r : probe::RunProbes(requests)) {
    if (!r.ok) ThrowBadInput("onnxruntime: " + r.error);
    out.push_back(std::move(r.outputs));
  }
  return out;
}

// What RunProofOnOnnxRuntime runs, for the progress line (printed by the
// caller: the run may be on another thread).
std::string OnnxRuntimeProofLine(const Options& o, const onnx::Graph& g, size_t sets) {
  const std::string what = o.proof_inputs.empty() || sets == 0
                               ? fmt::format("{} seeded input set(s)", sets)
                               : fmt::format("{} input set(s) (set 1 from --input, {} seeded)", sets, sets - 1);
  return fmt::format("proving: onnxruntime on {}{}", what,
                     g.quantized_nodes > 0 ? " and the first nudged by one ulp" : "");
}

// `threads`: 0 for every core.
OnnxRuntimeProof RunProofOnOnnxRuntime(const Options& o, const onnx::Graph& g,
                                       const std::vector<std::vector<npy::Array>>& sets, int threads = 0) {
  const ScratchDir dir("gpuclean-convert");
  OnnxRuntimeProof proof;
  if (g.quantized_nodes == 0) {
    proof.ref = RunOnnxRuntime(o.onnx_path, g, sets, {}, dir, true, threads);
    return proof;
  }
  std::vector<std::vector<npy::Array>> both = sets;
  both.push_back(NudgedByOneUlp({sets.at(0)}).at(0));
  proof.ref = RunOnnxRuntime(o.onnx_path, g, both, {}, dir, true, threads);
  proof.nudged.assign(std::make_move_iterator(proof.ref.begin() + static_cast<ptrdiff_t>(sets.size())),
                      std::make_move_iterator(proof.ref.end()));
  proof.ref.resize(sets.size());
  return proof;
}

// The input sets with every float element moved by one ulp of its own type
// (up or down by position): what rounding alone does to the inputs.
std::vector<std::vector<npy::Array>> NudgedByOneUlp(std::vector<std::vector<npy::Array>> sets) {
  for (auto& set : sets)
    for (npy::Array& a : set) {
      if (a.dtype == tfl::TensorType_FLOAT32) {
        float* v = a.as<float>();
        for (int64_t i = 0; i < a.num_elements(); ++i) v[i] = std::nextafter(v[i], i % 2 ? INFINITY : -INFINITY);
      } else if (a.dtype == tfl::TensorType_FLOAT16) {
        uint16_t* v = a.as<uint16_t>();
        for (int64_t i = 0; i < a.num_elements(); ++i) {
          if ((v[i] & 0x7c00) == 0x7c00) continue;  // inf and NaN stay
          const float x = HalfToFloat(v[i]);
          const bool up = (i % 2 != 0) == (x >= 0);  // toward +inf on odd positions, -inf on even
          v[i] =
              x == 0 ? static_cast<uint16_t>(i % 2 ? 0x0001 : 0x8001) : static_cast<uint16_t>(up ? v[i] + 1 : v[i] - 1);
        }
      }
    }
  return sets;
}

bool HasHalfValues(const onnx::Graph& g) {
  const auto half = [](const onnx::ValueInfo& v) { return v.dtype == tfl::TensorType_FLOAT16; };
  if (std::any_of(g.inputs.begin(), g.inputs.end(), half) || std::any_of(g.outputs.begin(), g.outputs.end(), half))
    return true;
  for (const auto& [_, v] : g.value_info)
    if (half(v)) return true;
  for (const onnx::Node& n : g.nodes) {
    const auto to = n.attributes.find("to");
    if (n.op_type == "Cast" && to != n.attributes.end() && (to->second.i == 10 || to->second.i == 16)) return true;
  }
  return false;
}

std::vector<std::vector<npy::Array>> RunHalfStorageVariant(const Options& o,
                                                           const std::vector<std::vector<npy::Array>>& sets);

// Outputs that fail only the fixed bound (correlation holds) are measured
// against the model's own fp32 noise, taken from onnxruntime two ways on the
// same input sets: an unoptimised session (no fusions: another accumulation
// order) and the inputs moved by one ulp (how much the network amplifies
// rounding: a log of a near-cancelled STFT bin amplifies it a thousandfold).
// Only when something failed; the unoptimised session only when the
// nudged inputs leave an output failing.
//
// A model with float16 values has a third source: whether a runtime stores
// each of them as a half. onnxruntime's CPU provider runs most float16 nodes
// in float32 and drops f32->f16->f32 Cast pairs, but rounds where it keeps a
// float16 kernel; the converted graph computes in float32. How far half
// storage moves each output is measured on our interpreter: the same model
// lowered with every float16 value rounded, against `ours`.
void HoldToNoiseFloor(const Options& o, const onnx::Graph& g, const std::vector<std::vector<npy::Array>>& sets,
                      const std::vector<std::vector<npy::Array>>& ref, const std::vector<std::vector<npy::Array>>& ours,
                      Report& r, std::vector<std::vector<npy::Array>> nudged_ref = {}) {
  // A quantized model's codes flip where a value lands on a rounding
  // boundary, and a flip moves everything after it: its correlation is
  // held to the model's own too.
  const bool quantized = g.quantized_nodes > 0;
  const auto only_bound_fails = [&](const OutputProof& p) {
    return !p.ok && std::isfinite(p.max_scaled_diff) &&
           (quantized || !std::isfinite(p.correlation) || p.correlation >= r.min_correlation);
  };
  if (std::none_of(r.proof.begin(), r.proof.end(), only_bound_fails)) return;
  // Per output, the noise over every input set: one set's floor can be 0 by luck.
  std::map<std::string, double> floor, half_floor, corr_floor;
  // corr_floor takes onnxruntime's own runs only (`with_correlation`).
  const auto widen = [&](std::map<std::string, double>& into, const std::vector<std::vector<npy::Array>>& a,
                         const std::vector<std::vector<npy::Array>>& b, bool with_correlation) {
    for (size_t s = 0; s < sets.size() && s < a.size() && s < b.size(); ++s)
      for (size_t k = 0; k < a[s].size() && k < b[s].size(); ++k) {
        const Agreement n = Agree(a[s][k], b[s][k], INFINITY, 0);
        const std::string& name = g.outputs.at(k).name;
        double& f = into[name];
        f = std::max(f, std::isfinite(n.max_scaled) ? n.max_scaled : 0.0);
        if (with_correlation && std::isfinite(n.correlation)) {
          const auto [it, fresh] = corr_floor.emplace(name, n.correlation);
          if (!fresh) it->second = std::min(it->second, n.correlation);
        }
      }
  };
  const bool half = HasHalfValues(g);
  // Holds every output that failed only the fixed bound to the floors
  // measured so far; true when none still fails.
  const auto hold = [&] {
    bool all_ok = true;
    for (OutputProof& p : r.proof) {
      if (half) p.half_storage_floor = half_floor[p.name];
      p.noise_floor = std::max(floor[p.name], half ? half_floor[p.name] : 0.0);
      if (!only_bound_fails(p)) {
        all_ok = all_ok && p.ok;
        continue;
      }
      p.bound = std::max(r.atol, kNoiseMultiple * p.noise_floor);
      if (quantized && corr_floor.count(p.name)) {
        p.correlation_floor = corr_floor[p.name];
        p.min_correlation = std::min(r.min_correlation, 1.0 - kNoiseMultiple * (1.0 - p.correlation_floor));
      }
      const double min_corr = p.min_correlation >= 0 ? p.min_correlation : r.min_correlation;
      if (std::isfinite(p.correlation) && p.correlation < min_corr && p.max_abs_diff > 1e-6) {
        p.why = fmt::format("correlation {:.7f} < {:.7f} (the model's own {:.7f} held {:g} x as far from 1)",
                            p.correlation, min_corr, p.correlation_floor, kNoiseMultiple);
      } else if (p.max_scaled_diff <= p.bound) {
        p.ok = true;
        p.why.clear();
        continue;
      } else {
        p.why =
            fmt::format("max |diff| / max(1,|ref|) = {:.3g} > {:.3g} ({:g} x the model's own noise {:.3g}, or {:.3g})",
                        p.max_scaled_diff, p.bound, kNoiseMultiple, p.noise_floor, r.atol);
      }
      all_ok = false;
    }
    return all_ok;
  };
  // Half storage first: our interpreter on the same sets, cheaper than two
  // more onnxruntime sessions, which a float16 model then often does not need.
  if (half && !quantized) {
    Progress(o, "proof: the model has float16 values; measuring what half storage does to its outputs");
    widen(half_floor, ours, RunHalfStorageVariant(o, sets), false);
    if (hold()) return;
  }
  Progress(o, "proof: an output exceeds the fixed bound; measuring the model's own fp32 noise on onnxruntime");
  // The nudged inputs first: on a quantized model their flipped codes are
  // most of the noise, and when they already hold every output the
  // unoptimised session (more inferences) is not needed. `nudged_ref` may
  // hold the first sets already (the proof's own session ran them); the
  // rest run only when those do not hold. Fewer runs give lower floors, so
  // a stricter proof, never a looser one.
  bool held = false;
  if (!nudged_ref.empty()) {
    widen(floor, ref, nudged_ref, true);
    held = hold();
  }
  if (!held && nudged_ref.size() < sets.size()) {
    const ScratchDir nudged_dir("gpuclean-noise");
    const std::vector<std::vector<npy::Array>> rest(sets.begin() + static_cast<ptrdiff_t>(nudged_ref.size()),
                                                    sets.end());
    for (auto& outputs : RunOnnxRuntime(o.onnx_path, g, NudgedByOneUlp(rest), {}, nudged_dir, true, 0))
      nudged_ref.push_back(std::move(outputs));
    widen(floor, ref, nudged_ref, true);
    held = hold();
  }
  if (!held) {
    Progress(o, "proof: measuring onnxruntime's unoptimised session too");
    const ScratchDir plain_dir("gpuclean-noise");
    widen(floor, ref, RunOnnxRuntime(o.onnx_path, g, sets, {}, plain_dir, /*optimize=*/false), true);
  }
  // A quantized model with float16 values: half storage last, and only when
  // onnxruntime's own noise does not already cover every output (on the
  // quantized 1024x1024 ISNet it does; the variant's import and two runs
  // were a tenth of the convert).
  if (hold() || !(half && quantized)) return;
  Progress(o, "proof: measuring what half storage does to the outputs");
  widen(half_floor, ours, RunHalfStorageVariant(o, sets), false);
  hold();
}

struct OurRun {
  std::vector<npy::Array> outputs;           // ONNX layout
  std::map<std::string, npy::Array> tapped;  // by graph tensor name (stored layout)
};

OurRun RunOurs(const std::shared_ptr<const ir::Model>& model, const std::vector<npy::Array>& onnx_inputs,
               const std::vector<onnx::Perm>& input_perms, const std::vector<onnx::Perm>& output_perms,
               const std::set<std::string>& tap = {}) {
  exec::InterpreterOptions io;
  io.threads = FreeCores();
  exec::Interpreter interp(model, io);
  const ir::Subgraph& g = model->main();
  for (size_t i = 0; i < onnx_inputs.size(); ++i)
    interp.SetInput(static_cast<int>(i), ToGraphInput(onnx_inputs[i], g.tensors[g.inputs[i]], input_perms[i]));
  OurRun run;
  exec::TapFn keep = nullptr;
  if (!tap.empty())
    keep = [&](int, int tensor, const exec::Tensor& value) {
      if (tap.count(g.tensors[tensor].name)) run.tapped[g.tensors[tensor].name] = exec::ToArray(value);
    };
  interp.Invoke(keep);
  for (int k = 0; k < interp.num_outputs(); ++k)
    run.outputs.push_back(onnx::TransposeHost(interp.Output(k), onnx::InversePerm(output_perms[k])));
  TrimToValidRows(g, ReadPaddedOutputs(*model), run.outputs);
  return run;
}

onnx::Perm IoPerm(const ir::Tensor& t, bool nhwc_io, size_t onnx_rank) {
  if (nhwc_io && onnx_rank == 4 && t.dtype == tfl::TensorType_FLOAT32) return onnx::kToNhwc;
  if (nhwc_io && onnx_rank == 5 && t.dtype == tfl::TensorType_FLOAT32 && t.rank() == 4) return onnx::kToNdhwc;
  return {};
}

Divergence FirstDivergence(const std::string& onnx_path, const onnx::Graph& g, const ir::Model& model,
                           const std::vector<npy::Array>& inputs, double atol,
                           int64_t chunk_bytes = kBisectChunkBytes) {
  Divergence d;
  std::map<std::string, Origin> origins = ReadOrigins(model);
  if (origins.empty())
    for (const ir::Tensor& t : model.main().tensors) origins[t.name] = {t.name, {}, {}, -1, {}};
  // ONNX name -> (graph tensor name, perm).
  std::map<std::string, std::pair<std::string, onnx::Perm>> by_onnx;
  // ONNX name -> the ONNX value its activation was folded into (any layout).
  std::map<std::string, std::string> fused_from;
  // ONNX name -> (axis, count tensor) of a padded value.
  std::map<std::string, std::pair<int, std::string>> rows_of;
  for (const auto& [tensor, o] : origins) {
    by_onnx.emplace(o.onnx_name, std::make_pair(tensor, o.perm));
    if (!o.fused_from.empty()) fused_from[o.onnx_name] = o.fused_from;
    if (o.rows_axis >= 0) rows_of[o.onnx_name] = {o.rows_axis, o.rows_count};
  }
  std::vector<std::string> names;
  for (const onnx::Node& n : g.nodes)
    for (const std::string& out : n.outputs)
      if (by_onnx.count(out) && g.file_values.count(out)) names.push_back(out);
  if (names.empty()) return d;
  auto shared = std::make_shared<const ir::Model>(model);
  std::vector<onnx::Perm> in_perms, out_perms;
  const ir::Subgraph& sg = model.main();
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    const auto it = origins.find(sg.tensors[sg.inputs[i]].name);
    in_perms.push_back(it == origins.end() ? onnx::Perm{} : it->second.perm);
  }
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    const auto it = origins.find(sg.tensors[sg.outputs[i]].name);
    out_perms.push_back(it == origins.end() ? onnx::Perm{} : it->second.perm);
  }
  std::map<std::string, int64_t> bytes_of;
  for (const ir::Tensor& t : sg.tensors)
    bytes_of[t.name] = t.num_elements() * static_cast<int64_t>(ir::DTypeSize(t.dtype));
  std::map<std::string, int> producer_of;
  for (const onnx::Node& n : g.nodes)
    for (const std::string& out : n.outputs) producer_of[out] = n.index;
  // In ONNX order, a chunk of intermediates at a time (chunk_bytes on each
  // side): onnxruntime asked for every intermediate of a 1024x1024
  // encoder at once held 23.5 GB. A chunk without a divergence is dropped
  // before the next is fetched; the first divergence ends the search.
  for (size_t begin = 0; begin < names.size();) {
    std::vector<std::string> chunk;
    std::set<std::string> tap;
    int64_t held = 0;
    for (; begin < names.size(); ++begin) {
      const std::string& tensor = by_onnx.at(names[begin]).first;
      const int64_t bytes = bytes_of.count(tensor) ? bytes_of.at(tensor) : 0;
      if (!chunk.empty() && held + bytes > chunk_bytes) break;
      chunk.push_back(names[begin]);
      tap.insert(tensor);
      if (rows_of.count(names[begin])) tap.insert(rows_of.at(names[begin]).second);
      held += bytes;
    }
    ScratchDir dir("gpuclean-bisect");
    const std::string exposed = dir / "exposed.onnx";
    onnx::WriteWithOutputs(onnx_path, chunk, exposed);
    const auto ref = RunOnnxRuntime(exposed, g, {inputs}, chunk, dir).at(0);
    const OurRun ours = RunOurs(shared, inputs, in_perms, out_perms, tap);
    for (size_t k = 0; k < chunk.size() && k < ref.size(); ++k) {
      const auto& [tensor, perm] = by_onnx.at(chunk[k]);
      auto it = ours.tapped.find(tensor);
      if (it == ours.tapped.end()) continue;
      npy::Array got = onnx::TransposeHost(it->second, onnx::InversePerm(perm));
      if (const auto rows = rows_of.find(chunk[k]); rows != rows_of.end()) {
        // A padded value: its valid rows are what onnxruntime computed.
        const auto count = ours.tapped.find(rows->second.second);
        if (count == ours.tapped.end() || count->second.num_elements() != 1) continue;
        got = FirstRows(got, rows->second.first, count->second.as<int32_t>()[0]);
      }
      ++d.compared;
      const Agreement a = Agree(ref[k], got, atol, 0.99999);
      if (a.ok) continue;
      d.found = true;
      d.tensor = chunk[k];
      d.node = g.nodes.at(producer_of.at(chunk[k])).Label();
      // An activation folded into its producer: one TFLite op computes both,
      // so the divergence may be in either; name the producer first.
      const auto fused = fused_from.find(chunk[k]);
      if (fused != fused_from.end() && producer_of.count(fused->second))
        d.node = g.nodes.at(producer_of.at(fused->second)).Label() + " + " + d.node + " (fused into one TFLite op)";
      d.max_abs_diff = a.max_abs;
      d.max_scaled_diff = a.max_scaled;
      d.correlation = a.correlation;
      return d;
    }
  }
  return d;
}

// The proof's half-storage variant: the ONNX model imported again and
// lowered with every float16 value rounded where it is computed (no target
// rewrites: they are proven separately), run on the same input sets.
std::vector<std::vector<npy::Array>> RunHalfStorageVariant(const Options& o,
                                                           const std::vector<std::vector<npy::Array>>& sets) {
  onnx::ImportOptions import_options;
  import_options.input_shapes = o.input_shapes;
  import_options.input_values = o.input_values;
  onnx::Graph g = onnx::Import(o.onnx_path, import_options);
  onnx::LowerOptions lo;
  lo.fp16_weights = o.fp16_weights;
  lo.int8_weights = o.int8_weights;
  lo.round_half_values = true;
  onnx::LoweredGraph lowered = onnx::Lower(g, lo);
  const ir::Subgraph& sg = lowered.model.main();
  const std::vector<onnx::Perm> in_perms(sg.inputs.size());
  std::vector<onnx::Perm> out_perms;
  for (const int t : sg.outputs) {
    const auto it = lowered.origins.find(sg.tensors[t].name);
    out_perms.push_back(it == lowered.origins.end() ? onnx::Perm{} : it->second.perm);
  }
  auto shared = std::make_shared<const ir::Model>(std::move(lowered.model));
  std::vector<std::vector<npy::Array>> out;
  for (const auto& set : sets) out.push_back(RunOurs(shared, set, in_perms, out_perms).outputs);
  return out;
}

}  // namespace

// The ONNX model a converted .tflite came from, its unknown dimensions
// pinned at the .tflite's input shapes (layouts from the origins metadata).
onnx::Graph ImportAtTfliteShapes(const std::string& onnx_path, const ir::Model& tflite) {
  onnx::ImportOptions io;
  const ir::Subgraph& sg = tflite.main();
  const std::map<std::string, Origin> origins = ReadOrigins(tflite);
  for (int t : sg.inputs) {
    const ir::Tensor& tensor = sg.tensors[t];
    auto it = origins.find(tensor.name);
    const onnx::Perm perm = it == origins.end() ? onnx::Perm{} : it->second.perm;
    std::vector<int64_t> stored(tensor.shape.begin(), tensor.shape.end());
    if (perm.size() == stored.size() + 1) stored.insert(stored.begin(), 1);  // a clip's frames
    if (!perm.empty() && perm.size() != stored.size()) continue;
    onnx::Dims dims(stored.size());
    for (size_t i = 0; i < dims.size(); ++i) dims[perm.empty() ? i : perm[i]] = stored[i];
    io.input_shapes[it == origins.end() ? tensor.name : it->second.onnx_name] = dims;
  }
  try {
    return onnx::Import(onnx_path, io);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage) throw;
    return onnx::Import(onnx_path);  // the names do not match: use the model's own shapes
  }
}

Divergence BisectAcrossFormats(const std::string& onnx_path, const ir::Model& tflite, std::vector<npy::Array> inputs,
                               uint32_t seed, double atol, int64_t chunk_bytes) {
  const onnx::Graph g = ImportAtTfliteShapes(onnx_path, tflite);
  if (inputs.empty()) inputs = ProofInputs(g, seed);
  if (inputs.size() != g.inputs.size())
    throw Error(ErrorKind::kUsage,
                fmt::format("{} has {} inputs, {} given", onnx_path, g.inputs.size(), inputs.size()));
  return FirstDivergence(onnx_path, g, tflite, inputs, atol, chunk_bytes);
}

// One run for the numeric check: the outputs and, where exactly one
// TOPK_V2 over a batch of 1 decides which rows the outputs hold
// ([1, K, ...]), the indices it selected.
struct NumericRun {
  std::vector<npy::Array> outputs;
  std::vector<int64_t> selected;
  // Over every float tensor the run computed: the largest finite magnitude
  // and where, and how many values were inf or NaN.
  double largest = 0;
  std::string largest_tensor;
  int64_t non_finite = 0;
};

NumericRun RunForNumerics(const ir::Model& model, exec::Precision precision, const std::vector<npy::Array>& inputs) {
  const ir::Subgraph& g = model.main();
  int selection = -1;  // the indices output of the one TOPK_V2, if there is exactly one
  for (const ir::Op& op : g.ops)
    if (op.code == tfl::BuiltinOperator_TOPK_V2 && op.outputs.size() == 2)
      selection = selection == -1 ? op.outputs[1] : -2;
  exec::InterpreterOptions io;
  io.precision = precision;
  // fp32: many short ops, each a barrier a descheduled thread stalls; the
  // fp16-compute run's long dot products were faster on every core even
  // beside onnxruntime (one thread: 25 s per quantized-ISNet convert, 23 s).
  io.threads = precision == exec::Precision::kFp32 ? FreeCores() : HardwareCores();
  io.fuse_layer_norms = false;  // the range check reads a LayerNorm's squares
  exec::Interpreter interp(std::make_shared<const ir::Model>(model), io);
  for (size_t i = 0; i < inputs.size(); ++i) interp.SetInput(static_cast<int>(i), inputs[i]);
  NumericRun run;
  // Untapped: the run computes what a plain run does (skipped PADs, fused
  // SiLUs), so its outputs are the fix's reference as they are.
  interp.Invoke(
      [&](int, int tensor, const exec::Tensor& value) {
        const exec::FloatRange range = exec::RangeOf(value);
        run.non_finite += range.non_finite;
        if (range.largest_finite > run.largest) {
          run.largest = range.largest_finite;
          run.largest_tensor = g.tensors[tensor].name;
        }
        if (tensor != selection || value.dtype != tfl::TensorType_INT32 || value.rank() != 2 || value.dim(0) != 1)
          return;
        run.selected.assign(value.as<int32_t>(), value.as<int32_t>() + value.num_elements());
      },
      exec::Tapping::kAsUntapped);
  for (int k = 0; k < interp.num_outputs(); ++k) run.outputs.push_back(interp.Output(k));
  TrimToValidRows(g, ReadPaddedOutputs(model), run.outputs);
  return run;
}

// A run in the target's numeric model against the fp32 run, judged as
// `check` judges it: by the task gates the outputs imply (argmax of a score
// vector, mask IoU of a one-channel map, a detector's detections found
// again, error in a regression output's own units), with the worst output
// correlation reported beside them.
struct Fp16Comparison {
  double correlation = 1;
  int swaps = 0;
  std::vector<analyze::GateResult> gates;
};

// Where a TOPK_V2 selected the rows, rows are paired by the indices each
// run selected before they are compared: near-equal scores that fp16 ranks
// the other way, or swaps in or out of the top K, are equally valid
// selections. `swaps` counts the slots selected by one run only; at most 2%
// of K are left out.
Fp16Comparison CompareInTargetArithmetic(const ir::Subgraph& graph, const NumericRun& fp32, const NumericRun& reduced) {
  // Slot pairs (fp32 slot, fp16 slot) holding the same selected index.
  std::vector<int64_t> ref_rows, got_rows;
  const int64_t k = static_cast<int64_t>(fp32.selected.size());
  if (k > 0 && reduced.selected.size() == fp32.selected.size()) {
    std::map<int64_t, int64_t> slot_of;
    for (int64_t j = 0; j < k; ++j) slot_of[reduced.selected[j]] = j;
    for (int64_t i = 0; i < k; ++i)
      if (auto it = slot_of.find(fp32.selected[i]); it != slot_of.end()) {
        ref_rows.push_back(i);
        got_rows.push_back(it->second);
      }
  }
  const int64_t unpaired = k - static_cast<int64_t>(ref_rows.size());
  const bool pair = k > 0 && unpaired <= std::max<int64_t>(1, k / 50);
  Fp16Comparison c;
  c.swaps = static_cast<int>(pair ? unpaired : 0);
  std::vector<npy::Array> want_rows, got_rows_out;
  for (size_t o = 0; o < fp32.outputs.size() && o < reduced.outputs.size(); ++o) {
    const npy::Array& want = fp32.outputs[o];
    const npy::Array& got = reduced.outputs[o];
    const bool rows_selected = pair && want.shape.size() >= 2 && want.shape[0] == 1 && want.shape[1] == k;
    want_rows.push_back(rows_selected ? analyze::TakeRows(want, 1, ref_rows) : want);
    got_rows_out.push_back(rows_selected ? analyze::TakeRows(got, 1, got_rows) : got);
    // Padded outputs cut to their valid rows may differ in length.
    if (want.dtype != tfl::TensorType_FLOAT32 || want_rows.back().shape != got_rows_out.back().shape) continue;
    const double r = analyze::Compare(want_rows.back(), got_rows_out.back()).correlation;
    c.correlation = std::isfinite(r) ? std::min(c.correlation, r) : -1;
  }
  // A detector's outputs are judged together, whatever order fp16 put the
  // detections in; other outputs each by their own gate.
  if (const auto layout = analyze::InferDetectionLayout(fp32.outputs)) {
    c.gates.push_back(analyze::DetectionsFoundAgain(*layout, fp32.outputs, reduced.outputs));
  } else {
    for (const analyze::OutputGateResult& g :
         analyze::ApplyTaskGates(analyze::InferTaskGates(graph, want_rows), want_rows, got_rows_out)) {
      analyze::GateResult result = g.result;
      result.gate = fmt::format("{}: {}", graph.tensors[graph.outputs[g.gate.output]].name, result.gate);
      if (g.new_nonfinite) {
        result.passed = false;
        result.detail += " (inf or NaN where fp32 is finite)";
      }
      c.gates.push_back(std::move(result));
    }
  }
  return c;
}

// "NAME: GATE - DETAIL" for each gate that failed, "; "-joined.
std::string FailedGates(const std::vector<analyze::GateResult>& gates) {
  std::string s;
  for (const analyze::GateResult& g : gates)
    if (!g.passed) s += fmt::format("{}{} - {}", s.empty() ? "" : "; ", g.gate, g.detail);
  return s;
}

nlohmann::json GatesJson(const std::vector<analyze::GateResult>& gates) {
  nlohmann::json j = nlohmann::json::array();
  for (const analyze::GateResult& g : gates) j.push_back(analyze::ToJson(g));
  return j;
}

void RecordFp16(TargetReport& t, const Fp16Comparison& c) {
  t.fp16_correlation = c.correlation;
  t.fp16_selection_swaps = c.swaps;
  t.fp16_gates = c.gates;
}

// The arrays for `graph`'s inputs: a proof set of the lowered graph's
// inputs (in their order) and the host inputs the rewrites added, by name.
std::vector<npy::Array> InputsWithHostFed(const ir::Subgraph& lowered, const std::vector<npy::Array>& set,
                                          const ir::Subgraph& graph,
                                          const std::vector<rewrite::HostInput>& host_inputs) {
  std::map<std::string, const npy::Array*> by_name;
  for (size_t i = 0; i < set.size(); ++i) by_name[lowered.tensors[lowered.inputs[i]].name] = &set[i];
  for (const rewrite::HostInput& h : host_inputs) by_name[h.name] = &h.value;
  std::vector<npy::Array> out;
  for (int t : graph.inputs) {
    auto it = by_name.find(graph.tensors[t].name);
    if (it == by_name.end()) ThrowInternal(fmt::format("graph input '{}' has no proof value", graph.tensors[t].name));
    out.push_back(*it->second);
  }
  return out;
}

// The proof's input sets in the lowered graph's layout: the target step's
// fix proves its rewrites on them, and its outputs of the final model on
// them spare the proof a run of its own.
struct ProofRuns {
  std::vector<std::vector<npy::Array>> inputs;  // per set, one array per lowered graph input
  // Per set, the final model's outputs in graph layout; empty: the proof runs it.
  std::vector<std::vector<npy::Array>> final_outputs;
};

// Rewrites that keep values in half's range where the target's arithmetic
// overflows: norms scaled before squaring, dot products of quantized codes
// scaled before summing, long reductions in two short steps. Tried when the
// fp16 check fails.
const std::vector<std::string> kFp16SafePasses = {"safe-layernorm-v2", "rmsnorm-scale-first", "dot-scale-first",
                                                  "mean-split-axes"};

// The outputs in the target's arithmetic are wrong: the model is not
// GPU-clean whatever lint says, and the report says so in a `left:` line.
// The task gates decide (a classifier whose top class holds at correlation
// 0.998 is usable); the correlation bar only where no gate applies.
// A quantized model's codes flip under any change of rounding, fp16's
// included, so its bar is onnxruntime's own correlation as its proof's is
// (1 - kNoiseMultiple * (1 - floor), the worst output's floor).
void CheckFp16Outputs(const Report& r, TargetReport& t) {
  if (t.numeric_model.empty()) return;
  double floor = 1;
  for (const OutputProof& p : r.proof)
    if (p.correlation_floor >= 0) floor = std::min(floor, p.correlation_floor);
  const double needed = std::min(kFp16MinCorrelation, 1.0 - kNoiseMultiple * (1.0 - floor));
  t.fp16_min_correlation = needed;
  const bool by_task = !t.fp16_gates.empty();
  if (by_task ? FailedGates(t.fp16_gates).empty() : t.fp16_correlation >= needed) return;
  t.fp16_broken = true;
  t.clean = false;
  if (by_task) {
    t.remaining.push_back(fmt::format(
        "outputs in the target's arithmetic ({}) fail their task gate: {} (correlation {:.6f} with fp32): the GPU "
        "would return wrong answers; `gpuclean bisect` on the .tflite names the first op that breaks",
        t.numeric_model, FailedGates(t.fp16_gates), t.fp16_correlation));
    return;
  }
  t.remaining.push_back(fmt::format(
      "outputs in the target's arithmetic ({}) correlate {:.6f} with fp32 (< {:.6g}): the GPU would return wrong "
      "numbers; `gpuclean bisect` on the .tflite names the first op that breaks",
      t.numeric_model, t.fp16_correlation, needed));
}

// The target gives wrong numbers for large baked constants (the matrix's
// large-constant rule, FACTS: RF-DETR-Seg's were right fed at run time):
// when lint still flags some after the automatic rewrites, the fix is
// redone with host-fed-constants for exactly the constants the rule flags,
// and the report names each one. True when `fo` became those options.
bool FeedLargeConstants(const Options& o, const lint::Matrix& matrix, const rewrite::FixResult& planned,
                        rewrite::FixOptions& fo) {
  bool flagged = false;
  for (const rewrite::Remaining& left : planned.remaining)
    flagged = flagged || (left.pass == "host-fed-constants" && left.cause == rewrite::RemainingCause::kOptIn);
  const lint::Entry* rule = matrix.Rule("large-constant");
  if (!flagged || !rule) return false;
  Progress(o, "feeding the large constants the target mishandles from the host");
  fo.passes = {"auto", "host-fed-constants"};
  fo.pass_options.host_fed_min_elements = rule->params.value("min_elements", fo.pass_options.host_fed_min_elements);
  return true;
}

bool AppliedWithoutFailure(const rewrite::FixResult& planned) {
  return std::none_of(planned.passes.begin(), planned.passes.end(),
                      [](const rewrite::PassOutcome& p) { return !p.failure.empty(); });
}

// Lint for the target, then the proven rewrites lint suggests (fix's
// engine); `model` becomes the rewritten one when the chain is proven.
// The options (constants fed from the host, fp16-safe norms) are chosen on
// applied-only fixes; one proven fix of the chosen options follows.
void ApplyOneTarget(const Options& o, ir::Model& model, Report& r, std::vector<rewrite::HostInput>& host_inputs,
                    ProofRuns& runs) {
  const Stopwatch start;
  TargetReport& t = r.target;
  t.target = o.target;
  Progress(o, "linting for " + o.target + " and applying the rewrites lint suggests");
  rewrite::FixOptions fo;
  fo.target = o.target;
  fo.data_dir = o.data_dir;
  fo.threads = HardwareCores();
  fo.prove_as_chain = true;
  if (o.prove) fo.chain_sets = 1;  // onnxruntime's proof of the result covers every set
  fo.inputs = runs.inputs;
  fo.reference = std::make_shared<rewrite::ReferenceOutputs>();
  auto planned_with = [&](const rewrite::FixOptions& options) {
    rewrite::FixOptions dry = options;
    dry.prove = false;
    return rewrite::Fix(model, dry);
  };
  rewrite::FixResult planned = planned_with(fo);
  const std::string data_dir = o.data_dir.empty() ? lint::DefaultDataDir() : o.data_dir;
  const lint::Matrix matrix = lint::LoadMatrix(data_dir + "/compat", o.target);
  const rewrite::FixOptions plain = fo;
  bool fed = false;
  if (AppliedWithoutFailure(planned) && o.host_feed_large_constants && FeedLargeConstants(o, matrix, planned, fo)) {
    rewrite::FixResult with = planned_with(fo);
    fed = AppliedWithoutFailure(with);
    if (fed)
      planned = std::move(with);
    else
      fo = plain;
  }
  const rewrite::FixOptions unsafe = fo;
  // fp16 targets: where the target's arithmetic breaks the outputs (a
  // LayerNorm squaring |x| ~ 400 overflows half precision), the norms are
  // rebuilt in their scale-first forms, kept only when that helps.
  const exec::Precision precision = lint::NumericModel(matrix);
  bool safe_norms = false;
  // The planned model's correlation in the target's arithmetic, run only
  // when needed: a fallback from safe norms that did not prove asks for it.
  std::function<Fp16Comparison()> planned_correlation;
  if (AppliedWithoutFailure(planned) && precision != exec::Precision::kFp32) {
    Progress(o, fmt::format("checking the outputs in {}'s arithmetic ({})", o.target, exec::PrecisionName(precision)));
    try {
      t.numeric_model = std::string(exec::PrecisionName(precision));
      // fp32 truth is the lowered model on the first proof set (the
      // rewrites keep it within their bounds); the fix reuses that run.
      const std::vector<npy::Array> first =
          fo.inputs.empty() ? rewrite::ProofInputs(model.main(), fo.seed, {}).at(0) : fo.inputs.at(0);
      auto fp32 = std::make_shared<const NumericRun>(RunForNumerics(model, exec::Precision::kFp32, first));
      fo.reference->outputs.resize(std::max<size_t>(1, fo.inputs.size()));
      fo.reference->outputs[0] = fp32->outputs;
      auto run_reduced = [&model, first, precision](const rewrite::FixResult& fixed) {
        const std::vector<npy::Array> inputs =
            InputsWithHostFed(model.main(), first, fixed.model.main(), fixed.host_inputs);
        return RunForNumerics(fixed.model, precision, inputs);
      };
      planned_correlation = [fp32, run_reduced, &planned, &model] {
        return CompareInTargetArithmetic(model.main(), *fp32, run_reduced(planned));
      };
      rewrite::FixOptions safe = fo;
      if (safe.passes.empty()) safe.passes = {"auto"};
      safe.passes.insert(safe.passes.end(), kFp16SafePasses.begin(), kFp16SafePasses.end());
      // The fp16-safe model, planned and run once: nullopt when the
      // rewrites change nothing (or fail to apply).
      std::optional<Fp16Comparison> safe_correlation;
      bool safe_tried = false;
      bool safe_finite = false;
      auto try_safe = [&]() -> std::optional<Fp16Comparison> {
        if (safe_tried) return safe_correlation;
        safe_tried = true;
        rewrite::FixResult safer = planned_with(safe);
        const bool rebuilt = std::any_of(safer.passes.begin(), safer.passes.end(), [](const rewrite::PassOutcome& p) {
          return !p.sites.empty() &&
                 std::find(kFp16SafePasses.begin(), kFp16SafePasses.end(), p.id) != kFp16SafePasses.end();
        });
        if (!rebuilt) Progress(o, "nothing for the fp16-safe rewrites to change");
        if (!rebuilt || !AppliedWithoutFailure(safer)) return std::nullopt;
        const NumericRun reduced = run_reduced(safer);
        safe_finite = reduced.non_finite == 0;
        safe_correlation = CompareInTargetArithmetic(model.main(), *fp32, reduced);
        return safe_correlation;
      };
      auto keep_safe = [&](const Fp16Comparison& c) {
        RecordFp16(t, c);
        fo = safe;
        safe_norms = true;
      };
      // fp32 values past half's range overflow in the target's arithmetic:
      // the fp16-safe model runs first, and is kept without running the
      // planned model (on a 1024x1024 model that run is a third of the
      // convert) when it meets the bar or every value it computes stays
      // finite. Otherwise both run and the better one is kept.
      bool decided = false;
      if (fp32->largest > kHalfMax) {
        Progress(o, fmt::format("fp32 values reach {:.4g} ({}), past half's {:g}: trying the fp16-safe rewrites ({})",
                                fp32->largest, fp32->largest_tensor, kHalfMax, fmt::join(kFp16SafePasses, ", ")));
        if (const auto c = try_safe(); c && (safe_finite || c->correlation >= kFp16MinCorrelation)) {
          keep_safe(*c);
          t.fp32_largest_before = fp32->largest;
          t.fp32_largest_tensor = fp32->largest_tensor;
          decided = true;
        }
      }
      if (!decided) {
        RecordFp16(t, planned_correlation());
        if (t.fp16_correlation < kFp16MinCorrelation) {
          if (!safe_tried)
            Progress(o, fmt::format("{} correlation {:.6f}: trying the fp16-safe rewrites ({})", t.numeric_model,
                                    t.fp16_correlation, fmt::join(kFp16SafePasses, ", ")));
          if (const auto c = try_safe(); c && c->correlation > t.fp16_correlation) {
            t.fp16_correlation_before = t.fp16_correlation;
            t.fp16_gates_before = t.fp16_gates;
            keep_safe(*c);
          }
        }
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInternal) throw;
      t.numeric_model.clear();  // the interpreter cannot run it: lint's verdict stands alone
      planned_correlation = nullptr;
    }
  }
  Progress(o, "proving the rewrites on our interpreter");
  rewrite::FixResult fix = rewrite::Fix(model, fo);
  if (!fix.proven && safe_norms) {  // the fp16-safe rewrites did not prove: without them
    fix = rewrite::Fix(model, unsafe);
    if (t.fp16_correlation_before) {
      t.fp16_correlation = *t.fp16_correlation_before;
      t.fp16_gates = t.fp16_gates_before;
    } else {  // it was not run: the fp32 values alone chose the safe norms
      try {
        RecordFp16(t, planned_correlation());
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kInternal) throw;
        t.numeric_model.clear();
      }
    }
    t.fp16_correlation_before.reset();
    t.fp32_largest_before.reset();
    t.fp32_largest_tensor.clear();
  }
  if (!fix.proven && fed) {  // feeding did not prove: the plain fix, lint names the constants
    fed = false;
    fix = rewrite::Fix(model, plain);
  }
  // The fix's runs of the model it proved, or, where the model stays the
  // lowered one, the reference runs of it.
  runs.final_outputs = fix.proven && fix.changed_sites() > 0 ? fix.outputs : fo.reference->outputs;
  if (fed) {
    const lint::Entry* rule = matrix.Rule("large-constant");
    // Named on purpose this time: not a suggestion left unapplied.
    std::erase_if(fix.not_applied, [](const std::string& line) { return line.starts_with("host-fed-constants "); });
    for (const rewrite::HostInput& h : fix.host_inputs)
      t.host_fed.push_back(fmt::format("{} [{}] ({} elements): {}", h.name, fmt::join(h.value.shape, ","),
                                       h.value.num_elements(), rule->why));
  }
  t.errors_before = fix.before.count(lint::Severity::kError);
  t.warnings_before = fix.before.count(lint::Severity::kWarning);
  if (!fix.before.residency.empty()) t.predicted_before = lint::PredictedLine(fix.before.residency[0]);
  for (const rewrite::PassOutcome& p : fix.passes) {
    if (p.sites.empty()) continue;
    t.passes.push_back(fmt::format("{} ({}, {} site(s)){}", p.id, rewrite::ExactnessName(p.exactness), p.sites.size(),
                                   p.proven ? "" : ": " + p.failure));
    if (p.proven && p.exactness == rewrite::Exactness::kApprox) t.added_atol += p.bound;
  }
  t.not_applied = fix.not_applied;
  if (fix.proven) {
    model = fix.model;
    host_inputs = fix.host_inputs;
    t.errors_after = fix.after.count(lint::Severity::kError);
    t.warnings_after = fix.after.count(lint::Severity::kWarning);
    if (!fix.after.residency.empty()) t.predicted_after = lint::PredictedLine(fix.after.residency[0]);
    for (const rewrite::Remaining& left : fix.remaining)
      t.remaining.push_back(fmt::format("node {} {} {} [{}{}]: {}", left.finding.node, left.finding.op,
                                        left.finding.rule, rewrite::RemainingCauseName(left.cause),
                                        left.pass.empty() ? "" : ", " + left.pass, left.why));
  } else {
    // A rewrite failed its proof: keep the plain lowering, which lint judged.
    t.failure = fix.failure;
    t.added_atol = 0;
    t.errors_after = t.errors_before;
    t.warnings_after = t.warnings_before;
    t.predicted_after = t.predicted_before;
    for (const lint::Finding& f : fix.before.findings)
      if (f.severity == lint::Severity::kError)
        t.remaining.push_back(fmt::format("node {} {} {}: {}", f.node, f.op, f.rule, f.why));
  }
  t.clean = t.errors_after == 0;
  r.target_ms = start.ms();
}

// One file for several delegates (Android's OpenCL and the web's WebGPU):
// each target's rewrites in turn on the result of the others', rounds
// until a whole round changes nothing, then every target's lint of the
// final model. The first target's numeric model is the one checked.
void ApplyTarget(const Options& o, ir::Model& model, Report& r, std::vector<rewrite::HostInput>& host_inputs,
                 ProofRuns& runs) {
  const std::vector<std::string> targets = lint::SplitTargets(o.target);
  if (targets.size() <= 1) return ApplyOneTarget(o, model, r, host_inputs, runs);
  ProofRuns none;  // each round's fix on its own model proves on its own inputs
  const Stopwatch start;
  const std::string data_dir = o.data_dir.empty() ? lint::DefaultDataDir() : o.data_dir;
  std::vector<lint::Matrix> matrices;
  for (const std::string& id : targets) matrices.push_back(lint::LoadMatrix(data_dir + "/compat", id));
  const ir::Model lowered = model;
  Options first = o;
  first.target = targets[0];
  ApplyOneTarget(first, model, r, host_inputs, none);
  TargetReport& t = r.target;
  constexpr int kMaxRounds = 3;
  for (int round = 0; round < kMaxRounds && t.failure.empty(); ++round) {
    bool changed = false;
    for (size_t k = round == 0 ? 1 : 0; k < targets.size(); ++k) {
      Options one = o;
      one.target = targets[k];
      Report other;
      std::vector<rewrite::HostInput> added;
      ApplyOneTarget(one, model, other, added, none);
      host_inputs.insert(host_inputs.end(), added.begin(), added.end());
      for (const std::string& p : other.target.passes) t.passes.push_back(p + " for " + targets[k]);
      for (const std::string& h : other.target.host_fed) t.host_fed.push_back(h);
      t.added_atol += other.target.added_atol;
      if (!other.target.failure.empty()) t.failure = other.target.failure + " (for " + targets[k] + ")";
      changed = changed || !other.target.passes.empty();
    }
    if (!changed) break;
  }
  t.target = o.target;
  t.errors_before = t.errors_after = t.warnings_before = t.warnings_after = 0;
  t.remaining.clear();
  t.per_target.clear();
  for (size_t k = 0; k < targets.size(); ++k) {
    const lint::Report before = lint::Lint(lowered, matrices[k]), after = lint::Lint(model, matrices[k]);
    const int e0 = before.count(lint::Severity::kError), e1 = after.count(lint::Severity::kError);
    t.errors_before += e0;
    t.errors_after += e1;
    t.warnings_before += before.count(lint::Severity::kWarning);
    t.warnings_after += after.count(lint::Severity::kWarning);
    const std::string predicted = after.residency.empty() ? "" : lint::PredictedLine(after.residency[0]);
    if (k == 0) t.predicted_after = predicted;
    t.per_target.push_back(fmt::format("{}: {} error(s) -> {}; {}", targets[k], e0, e1, predicted));
    for (const lint::Finding& f : after.findings)
      if (f.severity == lint::Severity::kError)
        t.remaining.push_back(fmt::format("{}: node {} {} {}: {}", targets[k], f.node, f.op, f.rule, f.why));
  }
  t.clean = t.errors_after == 0;
  r.target_ms = start.ms();
}

// The written model on LiteRT.js's WebGPU delegate in fp16, fed proof set 1,
// against onnxruntime's outputs for that set.
void ProbeWebGpu(const Options& o, const onnx::Graph& g, const ir::Model& model,
                 const std::vector<npy::Array>& onnx_inputs, const std::vector<npy::Array>& reference,
                 const std::vector<onnx::Perm>& in_perms, const std::vector<onnx::Perm>& out_perms,
                 const std::vector<rewrite::HostInput>& host_inputs, ProbeReport& pr) {
  const ir::Subgraph& sg = model.main();
  std::vector<std::pair<std::string, npy::Array>> inputs;
  for (size_t i = 0; i < onnx_inputs.size(); ++i)
    inputs.emplace_back(std::to_string(i), ToGraphInput(onnx_inputs[i], sg.tensors[sg.inputs[i]], in_perms[i]));
  for (const rewrite::HostInput& host : host_inputs) inputs.emplace_back(host.name, host.value);
  const probe::ProbeResult result =
      std::move(probe::RunOnArrays(o.output_path, inputs, {probe::Runtime::kLiteRtWebGpu}, "fp16").at(0));
  if (!result.ok) ThrowBadInput(result.error);
  pr.ran = true;
  pr.residency = probe::Summarize(result.residency);
  pr.fully_delegated = result.residency.fully_delegated.value_or(false);
  for (size_t k = 0; k < result.outputs.size() && k < reference.size(); ++k) {
    const npy::Array got = onnx::TransposeHost(result.outputs[k], onnx::InversePerm(out_perms[k]));
    const analyze::Metrics a = analyze::Compare(reference[k], got);
    pr.outputs.push_back({g.outputs.at(k).name, a.max_abs_diff, a.correlation});
    pr.min_correlation = std::min(pr.min_correlation, std::isfinite(a.correlation) ? a.correlation : -1.0);
  }
}

// A selection's padded outputs (detections after NMS) that fail only by
// order: rows whose scores tie within fp32 noise come out swapped, on
// onnxruntime as here. Paired one to one within the bound, they are proven.
void AcceptRowsInAnotherOrder(const ir::Model& model, const onnx::Graph& g, const std::vector<npy::Array>& ref,
                              const std::vector<npy::Array>& ours, int set, Report& r) {
  std::vector<size_t> group;
  for (const PaddedOutput& p : ReadPaddedOutputs(model))
    for (size_t k = 0; k < g.outputs.size() && k < ref.size() && k < ours.size(); ++k)
      if (g.outputs[k].name == p.output && p.axis == 0) group.push_back(k);
  std::vector<OutputProof*> failed;
  for (OutputProof& p : r.proof)
    if (p.seed == set && !p.ok) failed.push_back(&p);
  if (failed.empty() || group.empty()) return;
  std::vector<npy::Array> a, b;
  for (size_t k : group) a.push_back(ref[k]), b.push_back(ours[k]);
  for (const OutputProof* p : failed)
    if (std::none_of(group.begin(), group.end(), [&](size_t k) { return g.outputs[k].name == p->name; })) return;
  std::optional<std::string> paired = analyze::RowsInAnotherOrder(a, b, r.atol);
  const auto layout = analyze::InferDetectionLayout(a);
  if (!paired && layout) paired = analyze::DetectionsTiedWithinNoise(*layout, a, b, r.atol);
  if (!paired) return;
  for (OutputProof* p : failed) {
    p->ok = true;
    p->why = "a selection's near-ties: " + *paired;
  }
}

// The proof against onnxruntime at the bound already in `r` (atol,
// min_correlation): seeded input sets (the first with Options::proof_inputs),
// every output compared, outputs that fail only the fixed bound held to the
// model's own fp32 noise, and on failure the first diverging ONNX node.
// Fills r.proof_run, proven, proof, divergence and prove_ms; `sets` and
// `ref` receive the inputs and onnxruntime's outputs.
void Prove(const Options& o, const onnx::Graph& g, const ir::Model& model, const std::vector<onnx::Perm>& in_perms,
           const std::vector<onnx::Perm>& out_perms, const std::vector<rewrite::HostInput>& host_inputs, Report& r,
           const std::vector<std::vector<npy::Array>>& sets, const ProofRuns& runs,
           std::vector<std::vector<npy::Array>>& ref, std::future<OnnxRuntimeProof>* started = nullptr) {
  const Stopwatch prove_start;
  r.proof_run = true;
  r.first_set_given = !o.proof_inputs.empty();
  OnnxRuntimeProof onnxruntime;
  if (started) {
    Progress(o, "proving: onnxruntime's outputs (started beside the target step)");
    onnxruntime = started->get();
  } else {
    Progress(o, OnnxRuntimeProofLine(o, g, sets.size()));
    onnxruntime = RunProofOnOnnxRuntime(o, g, sets);
  }
  ref = std::move(onnxruntime.ref);
  std::vector<std::vector<npy::Array>> nudged_ref = std::move(onnxruntime.nudged);
  auto shared = std::make_shared<const ir::Model>(model);
  r.proven = true;
  std::vector<std::vector<npy::Array>> our_outputs;
  for (size_t s = 0; s < sets.size(); ++s) {
    OurRun ours;
    if (s < runs.final_outputs.size() && !runs.final_outputs[s].empty()) {
      Progress(o,
               fmt::format("proving: our interpreter, input set {}/{} (run by the target step)", s + 1, sets.size()));
      for (size_t k = 0; k < runs.final_outputs[s].size(); ++k)
        ours.outputs.push_back(onnx::TransposeHost(runs.final_outputs[s][k], onnx::InversePerm(out_perms.at(k))));
    } else {
      Progress(o, fmt::format("proving: our interpreter, input set {}/{}", s + 1, sets.size()));
      std::vector<npy::Array> inputs = sets[s];
      for (const rewrite::HostInput& h : host_inputs) inputs.push_back(h.value);
      ours = RunOurs(shared, inputs, in_perms, out_perms);
    }
    for (size_t k = 0; k < ours.outputs.size() && k < ref[s].size(); ++k) {
      const Agreement a = Agree(ref[s][k], ours.outputs[k], r.atol, r.min_correlation);
      OutputProof p;
      p.name = g.outputs.at(k).name;
      p.seed = static_cast<int>(s + 1);
      p.ok = a.ok;
      p.max_abs_diff = a.max_abs;
      p.max_scaled_diff = a.max_scaled;
      p.correlation = a.correlation;
      p.bound = r.atol;
      p.why = a.why;
      r.proof.push_back(p);
    }
    AcceptRowsInAnotherOrder(model, g, ref[s], ours.outputs, static_cast<int>(s + 1), r);
    our_outputs.push_back(std::move(ours.outputs));
  }
  HoldToNoiseFloor(o, g, sets, ref, our_outputs, r, std::move(nudged_ref));
  for (const OutputProof& p : r.proof) r.proven = r.proven && p.ok;
  if (!r.proven) {
    // On the first set an output failed on: set 1 may well agree.
    size_t failed_set = 0;
    for (const OutputProof& p : r.proof)
      if (!p.ok) {
        failed_set = static_cast<size_t>(std::max(p.seed - 1, 0));
        break;
      }
    failed_set = std::min(failed_set, sets.size() - 1);
    Progress(o,
             fmt::format("proof failed: bisecting to the first diverging ONNX node on input set {}", failed_set + 1));
    r.divergence.searched = true;
    r.divergence.set = static_cast<int>(failed_set + 1);
    try {
      r.divergence = FirstDivergence(o.onnx_path, g, model, sets[failed_set], r.atol);
      r.divergence.searched = true;
      r.divergence.set = static_cast<int>(failed_set + 1);
      if (!r.divergence.found)
        r.divergence.none_because =
            r.divergence.compared == 0
                ? "no intermediate ONNX value survives as a tensor of the converted graph to compare"
                : fmt::format(
                      "each of the {} intermediate values compared is within the bound: the outputs' "
                      "difference builds up over many nodes rather than at one",
                      r.divergence.compared);
    } catch (const Error& e) {
      r.divergence.none_because = std::string("the search failed: ") + e.what();
      Progress(o, std::string("bisect failed: ") + e.what());
    }
  }
  r.prove_ms = prove_start.ms();
}

Result Convert(const Options& o) {
  const Stopwatch start;
  Result result;
  Report& r = result.report;
  r.onnx_path = o.onnx_path;
  r.output_path = o.output_path;
  if (!o.output_path.empty()) {
    std::error_code ec;
    if (fs::exists(o.output_path, ec) && fs::equivalent(o.output_path, o.onnx_path, ec))
      throw Error(ErrorKind::kUsage, "-o names the input model; convert never overwrites its input");
  }
  onnx::ImportOptions import_options;
  import_options.input_shapes = o.input_shapes;
  import_options.input_values = o.input_values;
  onnx::Graph g = onnx::Import(o.onnx_path, import_options);
  r.import_ms = start.ms();
  r.producer = g.producer;
  r.opset = g.opset;
  r.original_opset = g.original_opset;
  for (const auto& [name, values] : o.input_values)
    r.pinned_inputs.push_back(fmt::format("{}={}", name, fmt::join(values, ",")));
  r.nodes_in = static_cast<int64_t>(g.nodes.size());
  for (const onnx::Node& n : g.nodes) ++r.ops_in[n.op_type];

  const Stopwatch lower_start;
  // Unsupported ops are an error before any progress line, so bad input
  // prints exactly one line.
  onnx::RequireSupported(g);
  Progress(o, fmt::format("lowering {} nodes (opset {}{})", g.nodes.size(), g.opset,
                          g.original_opset != g.opset ? fmt::format(", converted from {}", g.original_opset) : ""));
  onnx::LowerOptions lo;
  lo.nhwc_io = o.nhwc_io;
  lo.fp16_weights = o.fp16_weights;
  lo.int8_weights = o.int8_weights;
  onnx::LoweredGraph lowered = onnx::Lower(g, lo);
  r.lower_ms = lower_start.ms();
  r.folded = lowered.folded;
  r.half_weights_kept = lowered.half_weights_kept;
  r.int8_weights = lowered.int8_weights;
  ir::Model& model = lowered.model;
  const std::string origins = OriginsJson(lowered).dump();
  model.metadata.push_back(
      {kOriginsMetadata, Bytes::Copy({reinterpret_cast<const uint8_t*>(origins.data()), origins.size()})});
  WritePaddedOutputs(model, lowered.padded_outputs);
  model.source = o.output_path.empty() ? o.onnx_path + " (converted)" : o.output_path;
  std::vector<rewrite::HostInput> host_inputs;
  std::vector<std::vector<npy::Array>> sets, ref;
  ProofRuns runs;
  if (o.prove) {
    for (int s = 0; s < o.proof_seeds; ++s) sets.push_back(ProofInputs(g, static_cast<uint32_t>(s + 1)));
    UseGivenInputs(o, g, sets.at(0));
    const ir::Subgraph& sg = model.main();
    for (const std::vector<npy::Array>& set : sets) {
      runs.inputs.emplace_back();
      for (size_t i = 0; i < set.size() && i < sg.inputs.size(); ++i) {
        const ir::Tensor& t = sg.tensors[sg.inputs[i]];
        runs.inputs.back().push_back(ToGraphInput(set[i], t, IoPerm(t, o.nhwc_io, g.inputs[i].shape.size())));
      }
    }
  }
  // onnxruntime needs only the input sets: its proof runs beside the
  // target step, on half the cores (the target step's interpreter runs leave
  // a core idle part of the time; on a 1024x1024 model it was a third of
  // the convert).
  std::future<OnnxRuntimeProof> onnxruntime;
  if (o.prove && o.target != "none") {
    const int half = std::max(1, HardwareCores() / 2);
    Progress(o, OnnxRuntimeProofLine(o, g, sets.size()) + ", beside the target step");
    g_cores_lent += half;  // given back when the proof returns or throws
    try {
      onnxruntime = std::async(std::launch::async, [&o, &g, &sets, half] {
        struct GiveBack {
          int cores;
          ~GiveBack() { g_cores_lent -= cores; }
        } give_back{half};
        return RunProofOnOnnxRuntime(o, g, sets, half);
      });
    } catch (...) {
      g_cores_lent -= half;
      throw;
    }
  }
  if (o.target != "none") ApplyTarget(o, model, r, host_inputs, runs);
  r.ops_out = OpHistogram(model.main());
  r.transposes = TransposeReasons(model.main());

  std::vector<onnx::Perm> in_perms, out_perms;
  if (o.prove) {
    const ir::Subgraph& sg = model.main();
    for (size_t i = 0; i < sg.inputs.size(); ++i)  // host inputs (after the ONNX ones) keep their layout
      in_perms.push_back(i < g.inputs.size() ? IoPerm(sg.tensors[sg.inputs[i]], o.nhwc_io, g.inputs[i].shape.size())
                                             : onnx::Perm{});
    for (size_t i = 0; i < sg.outputs.size(); ++i) {
      const auto it = lowered.origins.find(sg.tensors[sg.outputs[i]].name);
      out_perms.push_back(it == lowered.origins.end() ? onnx::Perm{} : it->second.perm);
    }
    // Rounding weights to half is a stated bound, not exactness.
    r.atol = o.fp16_weights ? std::max(o.atol, kFp16WeightsAtol) : o.atol;
    r.min_correlation = o.fp16_weights ? std::min(o.min_correlation, kFp16WeightsMinCorrelation) : o.min_correlation;
    if (o.int8_weights) {
      r.atol = std::max(r.atol, kInt8WeightsAtol);
      r.min_correlation = std::min(r.min_correlation, kInt8WeightsMinCorrelation);
    }
    // Approximate rewrites (gelu-tanh) widen the bound by what fix proved them to.
    if (r.target.added_atol > 0) {
      r.atol += r.target.added_atol;
      r.min_correlation = std::min(r.min_correlation, kFp16WeightsMinCorrelation);
    }
    Prove(o, g, model, in_perms, out_perms, host_inputs, r, sets, runs, ref,
          onnxruntime.valid() ? &onnxruntime : nullptr);
  }
  if (o.target != "none") CheckFp16Outputs(r, r.target);

  // Apps bind by name: inputs (host-fed constants among them) and outputs
  // keep the ONNX model's names in the signature.
  model.NameSignature();
  const std::vector<uint8_t> bytes = format::Serialize(model);
  r.tflite_bytes = bytes.size();
  if (!o.output_path.empty() && (r.proven || !o.prove) && (r.target.clean || o.allow_remaining)) {
    WriteFileAtomically(o.output_path, bytes);
    for (const rewrite::HostInput& h : host_inputs) {
      npy::Write(rewrite::HostInputPath(o.output_path, h.name), h.value);
      result.host_inputs.push_back({h.name, h.value});
    }
    r.written = true;
  }
  if (o.probe) {
    const Stopwatch probe_start;
    if (!r.written)
      r.probe.skipped_because = "nothing was written";
    else if (!o.prove)
      r.probe.skipped_because = "--no-prove: no onnxruntime reference to compare with";
    else {
      Progress(o, "probing: LiteRT.js WebGPU delegate (fp16) on input set 1");
      try {
        ProbeWebGpu(o, g, model, sets[0], ref[0], in_perms, out_perms, host_inputs, r.probe);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kInternal) throw;
        r.probe.skipped_because = e.what();
      }
    }
    r.probe_ms = probe_start.ms();
  }
  r.total_ms = start.ms();
  r.peak_rss_bytes = exec::PeakRssBytes();
  result.model = std::move(model);
  return result;
}

Report ProveConverted(const std::string& onnx_path, const ir::Model& tflite, const Options& options) {
  Options o = options;
  o.onnx_path = onnx_path;
  const onnx::Graph g = ImportAtTfliteShapes(onnx_path, tflite);
  const std::map<std::string, Origin> origins = ReadOrigins(tflite);
  const ir::Subgraph& sg = tflite.main();
  if (sg.inputs.size() != g.inputs.size())
    throw Error(ErrorKind::kUsage,
                fmt::format("the .tflite has {} inputs, {} has {}", sg.inputs.size(), onnx_path, g.inputs.size()));
  const auto perm_of = [&](int t) {
    const auto it = origins.find(sg.tensors[t].name);
    return it == origins.end() ? onnx::Perm{} : it->second.perm;
  };
  std::vector<onnx::Perm> in_perms, out_perms;
  for (int t : sg.inputs) in_perms.push_back(perm_of(t));
  for (int t : sg.outputs) out_perms.push_back(perm_of(t));
  Report r;
  r.onnx_path = onnx_path;
  r.atol = o.atol;
  r.min_correlation = o.min_correlation;
  std::vector<std::vector<npy::Array>> sets, ref;
  for (int s = 0; s < o.proof_seeds; ++s) sets.push_back(ProofInputs(g, static_cast<uint32_t>(s + 1)));
  UseGivenInputs(o, g, sets.at(0));
  Prove(o, g, tflite, in_perms, out_perms, {}, r, sets, ProofRuns{}, ref);
  return r;
}

std::map<std::string, std::vector<double>> ParseInputValues(const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<double>> out;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    const auto bad = [&] {
      return Error(ErrorKind::kUsage, fmt::format("--input-value expects NAME=v0,v1,... with numbers, got '{}'", spec));
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw bad();
    std::vector<double>& values = out[spec.substr(0, eq)];
    if (!values.empty()) throw Error(ErrorKind::kUsage, "--input-value gives '" + spec.substr(0, eq) + "' twice");
    std::stringstream list(spec.substr(eq + 1));
    for (std::string v; std::getline(list, v, ',');) {
      size_t used = 0;
      double d = 0;
      try {
        d = std::stod(v, &used);
      } catch (const std::exception&) {
        throw bad();
      }
      if (used != v.size() || !std::isfinite(d)) throw bad();
      values.push_back(d);
    }
    if (values.empty()) throw bad();
  }
  return out;
}

int Result::exit_code() const {
  if (report.proof_run && !report.proven) return 1;
  return report.target.clean ? 0 : 1;
}

nlohmann::json Report::ToJson() const {
  nlohmann::json j;
  j["onnx"] = onnx_path;
  j["output"] = output_path;
  j["written"] = written;
  j["proof_run"] = proof_run;
  j["proven"] = proven;
  j["bound"] = {{"atol_scaled", atol}, {"min_correlation", min_correlation}};
  j["producer"] = producer;
  j["opset"] = opset;
  j["original_opset"] = original_opset;
  j["pinned_inputs"] = pinned_inputs;
  j["half_weights_kept"] = half_weights_kept;
  j["int8_weights"] = int8_weights;
  j["nodes_in"] = nodes_in;
  j["ops_in"] = ops_in;
  j["ops_out"] = ops_out;
  j["folded"] = folded;
  j["transposes"] = transposes;
  nlohmann::json proofs = nlohmann::json::array();
  for (const OutputProof& p : proof)
    proofs.push_back(
        {{"output", p.name},
         {"seed", p.seed},
         {"ok", p.ok},
         {"max_abs_diff", p.max_abs_diff},
         {"max_scaled_diff", p.max_scaled_diff},
         {"correlation", std::isfinite(p.correlation) ? nlohmann::json(p.correlation) : nlohmann::json()},
         {"bound", p.bound},
         {"noise_floor", p.noise_floor >= 0 ? nlohmann::json(p.noise_floor) : nlohmann::json()},
         {"half_storage_floor", p.half_storage_floor >= 0 ? nlohmann::json(p.half_storage_floor) : nlohmann::json()},
         {"why", p.why}});
  j["proof"] = proofs;
  if (divergence.found)
    j["first_divergence"] = {{"node", divergence.node},
                             {"tensor", divergence.tensor},
                             {"max_abs_diff", divergence.max_abs_diff},
                             {"max_scaled_diff", divergence.max_scaled_diff},
                             {"tensors_compared", divergence.compared},
                             {"input_set", divergence.set}};
  else if (divergence.searched)
    j["first_divergence"] = {{"node", nullptr},
                             {"input_set", divergence.set},
                             {"tensors_compared", divergence.compared},
                             {"none_because", divergence.none_because}};
  if (!target.target.empty())
    j["target"] = {
        {"id", target.target},
        {"errors_before", target.errors_before},
        {"warnings_before", target.warnings_before},
        {"errors_after", target.errors_after},
        {"warnings_after", target.warnings_after},
        {"predicted_before", target.predicted_before},
        {"predicted_after", target.predicted_after},
        {"passes", target.passes},
        {"not_applied", target.not_applied},
        {"host_fed", target.host_fed},
        {"per_target", target.per_target},
        {"fp16_selection_swaps", target.fp16_selection_swaps},
        {"remaining", target.remaining},
        {"added_atol", target.added_atol},
        {"numeric_model", target.numeric_model},
        {"fp16_correlation", target.numeric_model.empty() ? nlohmann::json() : nlohmann::json(target.fp16_correlation)},
        {"fp16_min_correlation",
         target.numeric_model.empty() ? nlohmann::json() : nlohmann::json(target.fp16_min_correlation)},
        {"fp16_broken", target.fp16_broken},
        {"fp16_gates", GatesJson(target.fp16_gates)},
        {"fp16_correlation_before_norm_rewrites",
         target.fp16_correlation_before ? nlohmann::json(*target.fp16_correlation_before) : nlohmann::json()},
        {"fp32_largest_before_norm_rewrites",
         target.fp32_largest_before
             ? nlohmann::json{{"value", *target.fp32_largest_before}, {"tensor", target.fp32_largest_tensor}}
             : nlohmann::json()},
        {"clean", target.clean},
        {"failure", target.failure}};
  if (probe.ran || !probe.skipped_because.empty()) {
    nlohmann::json outs = nlohmann::json::array();
    for (const ProbeReport::Output& out : probe.outputs)
      outs.push_back(
          {{"output", out.name},
           {"max_abs_diff", out.max_abs_diff},
           {"correlation", std::isfinite(out.correlation) ? nlohmann::json(out.correlation) : nlohmann::json()}});
    j["webgpu"] = {{"ran", probe.ran},
                   {"skipped_because", probe.skipped_because},
                   {"residency", probe.residency},
                   {"fully_delegated", probe.fully_delegated},
                   {"fp16_vs_onnxruntime", outs}};
  }
  j["time_ms"] = {{"import", import_ms}, {"lower", lower_ms}, {"target", target_ms},
                  {"prove", prove_ms},   {"probe", probe_ms}, {"total", total_ms}};
  j["peak_rss_bytes"] = peak_rss_bytes;
  j["tflite_bytes"] = tflite_bytes;
  return j;
}

std::string Report::RenderText() const {
  std::string s;
  auto hist = [](const std::map<std::string, int>& h) {
    std::string out;
    int total = 0;
    for (const auto& [op, n] : h) {
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", op, n);
      total += n;
    }
    return fmt::format("{} ops: {}", total, out);
  };
  s += fmt::format("{} (opset {}{}, {})\n", onnx_path, original_opset,
                   opset != original_opset ? fmt::format(" -> {}", opset) : "",
                   producer.empty() ? "unknown producer" : producer);
  s += "  in:  " + hist(ops_in) + "\n";
  if (half_weights_kept > 0)
    s += fmt::format(
        "  weights: {} float16 tensor(s) of the model kept as float16, read through DEQUANTIZE (lossless)\n",
        half_weights_kept);
  if (int8_weights > 0)
    s += fmt::format(
        "  weights: {} conv-like weight tensor(s) stored int8 (one symmetric scale per tensor), "
        "read through DEQUANTIZE\n",
        int8_weights);
  if (!pinned_inputs.empty())
    s += fmt::format("  pinned inputs (folded at convert time, not inputs of the .tflite): {}\n",
                     fmt::join(pinned_inputs, "; "));
  int folded_total = 0;
  std::string folded_list;
  for (const auto& [op, n] : folded) {
    folded_total += n;
    folded_list += fmt::format("{}{} {}", folded_list.empty() ? "" : ", ", op, n);
  }
  s += fmt::format("  folded at convert time: {} node(s){}\n", folded_total,
                   folded_list.empty() ? "" : " (" + folded_list + ")");
  s += "  out: " + hist(ops_out) + "\n";
  if (!target.target.empty()) {
    s += fmt::format("  target {}: lint {} error(s), {} warning(s) -> {} error(s), {} warning(s)\n", target.target,
                     target.errors_before, target.warnings_before, target.errors_after, target.warnings_after);
    s += "    before: " + target.predicted_before + "\n";
    s += "    after:  " + target.predicted_after + "\n";
    for (const std::string& p : target.passes) s += "    applied: " + p + "\n";
    if (!target.numeric_model.empty())
      s += fmt::format(
          "    outputs in the target's arithmetic ({}) vs fp32: corr {:.6f}{}{}{}\n", target.numeric_model,
          target.fp16_correlation,
          target.fp16_selection_swaps > 0
              ? fmt::format(" (rows paired by the top-K selection; {} slot(s) selected by one run only)",
                            target.fp16_selection_swaps)
              : "",
          target.fp16_correlation_before
              ? fmt::format(" (was {:.6f} before the fp16-safe rewrites)", *target.fp16_correlation_before)
          : target.fp32_largest_before
              ? fmt::format(" (fp16-safe rewrites applied: fp32 values reach {:.4g} at {}, past half's {:g})",
                            *target.fp32_largest_before, target.fp32_largest_tensor, kHalfMax)
              : "",
          target.fp16_min_correlation > 0 && target.fp16_min_correlation < kFp16MinCorrelation
              ? fmt::format("; needs >= {:.6f}, the model's own quantization noise held {:g} x",
                            target.fp16_min_correlation, kNoiseMultiple)
              : "");
    if (!target.fp16_gates.empty() && !target.fp16_broken && target.fp16_correlation < target.fp16_min_correlation)
      s += fmt::format("      below {:.6g}, and the task does not see it: every task gate holds\n",
                       target.fp16_min_correlation);
    for (const analyze::GateResult& g : target.fp16_gates)
      s += fmt::format("      task gate {} {}: {}\n", g.passed ? "ok  " : "FAIL", g.gate, g.detail);
    for (const std::string& line : target.per_target) s += "    " + line + "\n";
    for (const std::string& h : target.host_fed) s += "    fed from the host: " + h + "\n";
    for (const std::string& n : target.not_applied) s += "    not applied: " + n + "\n";
    if (!target.failure.empty()) s += "    rewrites refused: " + target.failure + "\n";
    const size_t shown = std::min<size_t>(target.remaining.size(), 12);
    for (size_t i = 0; i < shown; ++i) s += "    left: " + target.remaining[i] + "\n";
    if (target.remaining.size() > shown)
      s += fmt::format("    ... and {} more (--json lists all)\n", target.remaining.size() - shown);
  }
  s += fmt::format("  transposes left: {}\n", transposes.size());
  const size_t shown_transposes = std::min<size_t>(transposes.size(), 12);
  for (size_t i = 0; i < shown_transposes; ++i) s += "    " + transposes[i] + "\n";
  if (transposes.size() > shown_transposes)
    s += fmt::format("    ... and {} more (--json lists all)\n", transposes.size() - shown_transposes);
  if (proof_run) {
    s += fmt::format("  proof bound: |diff| <= {:.0e} * max(1,|ref|), correlation >= {}\n", atol, min_correlation);
    for (const OutputProof& p : proof)
      s += fmt::format(
          "  proof {} {}: max |diff| {:.3g}, scaled {:.3g}, corr {:.7f}{}\n",
          p.seed == 1 && first_set_given ? std::string("set 1 (--input)") : fmt::format("seed {}", p.seed), p.name,
          p.max_abs_diff, p.max_scaled_diff, p.correlation,
          p.ok ? (p.bound > atol
                      ? fmt::format(" ok (within {:g} x the model's own {} noise {:.3g})", kNoiseMultiple,
                                    p.correlation_floor >= 0                                     ? "quantization"
                                    : p.half_storage_floor >= p.noise_floor && p.noise_floor > 0 ? "half-storage"
                                                                                                 : "fp32",
                                    p.noise_floor)
                      : std::string(" ok") + (p.why.empty() ? "" : " (" + p.why + ")"))
               : " FAILED: " + p.why);
    if (divergence.found)
      s += fmt::format(
          "  first diverging ONNX node: {} (output '{}', max |diff| {:.3g}, scaled {:.3g}; {} tensors "
          "compared)\n",
          divergence.node, divergence.tensor, divergence.max_abs_diff, divergence.max_scaled_diff, divergence.compared);
    else if (divergence.searched)
      s += fmt::format("  first diverging ONNX node: none found on input set {}: {}\n", divergence.set,
                       divergence.none_because);
  } else {
    s += "  proof: not run (--no-prove); the output is unproven\n";
  }
  if (probe.ran) {
    s += "  WebGPU (LiteRT.js, fp16), measured: " + probe.residency + "\n";
    for (const ProbeReport::Output& out : probe.outputs)
      s += fmt::format("    {} vs onnxruntime fp32: max |diff| {:.3g}, corr {:.6f}\n", out.name, out.max_abs_diff,
                       out.correlation);
  } else if (!probe.skipped_because.empty()) {
    s += "  WebGPU probe not run: " + probe.skipped_because + "\n";
  }
  s += fmt::format(
      "  time: import {:.0f} ms, lower {:.0f} ms, target {:.0f} ms, prove {:.0f} ms{}, total {:.0f} ms; "
      "peak RSS {:.0f} MB; .tflite {:.2f} MB\n",
      import_ms, lower_ms, target_ms, prove_ms, probe.ran ? fmt::format(", probe {:.0f} ms", probe_ms) : "", total_ms,
      peak_rss_bytes / 1048576.0, tflite_bytes / 1048576.0);
  const bool proof_ok = !proof_run || proven;
  if (written)
    s += "  wrote " + output_path + "\n";
  else if (!output_path.empty())
    s += !proof_ok ? "  wrote nothing: the proof failed\n"
                   : fmt::format("  wrote nothing: {} for {} (--allow-remaining writes it)\n",
                                 target.errors_after > 0 ? "lint errors remain" : "the outputs break in the arithmetic",
                                 target.target);
  if (proof_ok && !target.clean)
    s += fmt::format(
        "  not GPU-clean for {}: {} lint error(s) remain{} (--target none converts without the GPU "
        "check)\n",
        target.target, target.errors_after,
        target.fp16_broken ? ", and the outputs break in the target's arithmetic" : "");
  return s;
}

}  // namespace gpuclean::convert
