// Fix(): choose passes, apply them one at a time, and prove each on the
// interpreter before the next one runs, so a failed proof names the pass
// that broke the numbers and by how much (or, with prove_as_chain, prove
// the whole chain at once and fall back to that only when it fails).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/limits.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/run.h"
#include "gpuclean/task_gates.h"
#include "gpuclean/valid_rows.h"

namespace gpuclean::rewrite {
namespace {

std::string ImplementedList() {
  std::string out;
  for (const Pass* p : Registry()) out += (out.empty() ? "" : ", ") + std::string(p->id());
  return out;
}

bool NeedsSplitOrHost(const std::string& pass) {
  const lint::PassInfo* info = lint::FindPass(pass);
  return info && (info->kind == lint::PassKind::kSplit || info->kind == lint::PassKind::kHost);
}

// Lint's suggestions that Fix() turns into passes: every implemented, not
// opt-in hint of every finding (a finding may name several rewrites, each
// covering some of its shapes). A finding with none is explained.
std::vector<const Pass*> PassesFromFindings(const lint::Report& report, std::vector<std::string>& not_applied) {
  std::set<std::string> wanted, explained;
  for (const lint::Finding& f : report.findings) {
    bool runnable = false;
    for (const std::string& hint : f.hints) {
      const Pass* pass = FindPass(hint);
      if (pass && !pass->opt_in()) {
        wanted.insert(hint);
        runnable = true;
      }
    }
    if (runnable || f.fix_pass.empty() || explained.count(f.fix_pass)) continue;
    explained.insert(f.fix_pass);
    const Pass* pass = FindPass(f.fix_pass);
    const std::string where = f.node >= 0 ? fmt::format("node {} {}", f.node, f.op) : std::string("whole graph");
    if (pass)
      not_applied.push_back(fmt::format("{} ({}): opt-in, it changes the model's inputs; add --passes {}", f.fix_pass,
                                        where, f.fix_pass));
    else if (NeedsSplitOrHost(f.fix_pass))
      not_applied.push_back(fmt::format("{} ({}): a manual cut; use gpuclean split", f.fix_pass, where));
    else
      not_applied.push_back(fmt::format("{} ({}): no automatic rewrite yet; {}", f.fix_pass, where, f.fix));
  }
  std::vector<const Pass*> out;
  for (const Pass* p : Registry())
    if (wanted.count(std::string(p->id()))) out.push_back(p);
  return out;
}

// A pass's record of a match it left alone, kept by pass id.
struct PassSkip {
  std::string pass;
  Skip skip;
};

// Why one hint of a finding that is still there did not remove it.
std::pair<RemainingCause, std::string> WhyHintLeft(const lint::Finding& f, const std::string& hint,
                                                   const std::set<std::string>& ran,
                                                   const std::vector<PassSkip>& skips) {
  const Pass* pass = FindPass(hint);
  if (!pass) {
    if (NeedsSplitOrHost(hint))
      return {RemainingCause::kSplitOrHost, fmt::format("{}: needs a split or a host step (gpuclean split)", hint)};
    const lint::PassInfo* info = lint::FindPass(hint);
    return {RemainingCause::kNoPass, fmt::format("{}: no automatic rewrite exists{}", hint,
                                                 info ? std::string(" (") + info->summary + ")" : "")};
  }
  if (!ran.count(hint)) {
    if (pass->opt_in())
      return {RemainingCause::kOptIn,
              fmt::format("{}: opt-in, it changes the model's inputs; add --passes {}", hint, hint)};
    return {RemainingCause::kNotChosen, fmt::format("{}: not among --passes; add it (or auto)", hint)};
  }
  // The pass ran: quote the precondition it reported failing at this op.
  for (const PassSkip& s : skips) {
    if (s.pass != hint) continue;
    for (const std::string& t : s.skip.tensors)
      if (std::find(f.tensors.begin(), f.tensors.end(), t) != f.tensors.end())
        return {RemainingCause::kPrecondition, fmt::format("{}: precondition not met: {}", hint, s.skip.why)};
  }
  return {RemainingCause::kPrecondition,
          fmt::format("{}: precondition not met here (it needs: {})", hint, pass->contract())};
}

// Every error-level finding of the final lint, with why it is still there.
std::vector<Remaining> Explain(const lint::Report& after, const std::set<std::string>& ran,
                               const std::vector<PassSkip>& skips) {
  std::vector<Remaining> out;
  for (const lint::Finding& f : after.findings) {
    if (f.severity != lint::Severity::kError) continue;
    Remaining r;
    r.finding = f;
    if (f.hints.empty()) {
      r.cause = RemainingCause::kNoPass;
      r.why = "no rewrite exists for it";
      out.push_back(std::move(r));
      continue;
    }
    // The cause is that of the first implemented hint (the rewrite that was
    // meant to remove it), else of the first hint; every hint is explained.
    bool primary = false;
    for (const std::string& hint : f.hints) {
      auto [cause, why] = WhyHintLeft(f, hint, ran, skips);
      const bool implemented = FindPass(hint) != nullptr;
      if (r.pass.empty() || (implemented && !primary)) {
        r.cause = cause;
        r.pass = hint;
        primary = primary || implemented;
      }
      r.why += (r.why.empty() ? "" : "; ") + why;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<const Pass*> ChoosePasses(const std::vector<std::string>& ids, const lint::Report& report,
                                      std::vector<std::string>& not_applied) {
  if (ids.empty()) return PassesFromFindings(report, not_applied);
  std::set<std::string> chosen;
  for (const std::string& id : ids) {
    if (id == "auto") {
      for (const Pass* p : PassesFromFindings(report, not_applied)) chosen.insert(std::string(p->id()));
      continue;
    }
    if (FindPass(id)) {
      chosen.insert(id);
    } else if (lint::FindPass(id)) {
      throw Error(ErrorKind::kUsage,
                  fmt::format("pass '{}' is not an automatic rewrite{}; implemented: {}", id,
                              id == "split-graph" ? " (use gpuclean split)" : "", ImplementedList()));
    } else {
      throw Error(ErrorKind::kUsage, fmt::format("unknown pass '{}'; implemented: {}", id, ImplementedList()));
    }
  }
  // Registry order, whatever order they were named in.
  std::vector<const Pass*> out;
  for (const Pass* p : Registry())
    if (chosen.count(std::string(p->id()))) out.push_back(p);
  return out;
}

// The model's outputs on each input set (values by graph input name), one
// interpreter for all of them (prepared once; later runs reuse its memory).
// The sets are fed from where they are, not copied.
using ProofSet = std::map<std::string, npy::Array>;
std::vector<std::vector<npy::Array>> RunEach(const ir::Model& model, const std::vector<const ProofSet*>& sets,
                                             int threads) {
  std::vector<std::vector<npy::Array>> outputs;
  if (sets.empty()) return outputs;
  exec::InterpreterOptions io;
  io.threads = threads;
  exec::Interpreter interpreter(std::make_shared<const ir::Model>(model), io);
  const ir::Subgraph& graph = model.main();
  for (const ProofSet* set : sets) {
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
      const std::string& name = graph.tensors[graph.inputs[i]].name;
      auto it = set->find(name);
      if (it == set->end())
        ThrowInternal(fmt::format("graph input '{}' has no proof value (a pass renamed an input)", name));
      interpreter.SetInput(static_cast<int>(i), it->second);
    }
    interpreter.Invoke();
    std::vector<npy::Array>& out = outputs.emplace_back();
    for (int i = 0; i < interpreter.num_outputs(); ++i) out.push_back(interpreter.Output(i));
  }
  return outputs;
}

std::vector<const ProofSet*> AllOf(const std::vector<ProofSet>& sets) {
  std::vector<const ProofSet*> out;
  for (const ProofSet& set : sets) out.push_back(&set);
  return out;
}

double Value(const npy::Array& a, int64_t i) {
  switch (a.dtype) {
    case tfl::TensorType_FLOAT32: return a.as<float>()[i];
    case tfl::TensorType_INT32: return a.as<int32_t>()[i];
    case tfl::TensorType_INT64: return static_cast<double>(a.as<int64_t>()[i]);
    case tfl::TensorType_INT8: return a.as<int8_t>()[i];
    case tfl::TensorType_UINT8:
    case tfl::TensorType_BOOL: return a.as<uint8_t>()[i];
    case tfl::TensorType_INT16: return a.as<int16_t>()[i];
    default: ThrowUnsupported(fmt::format("cannot compare {} outputs", ir::DTypeName(a.dtype)));
  }
}

// Worst of two deltas for the same output.
void Merge(std::vector<OutputDelta>& worst, const std::vector<OutputDelta>& next) {
  if (worst.empty()) {
    worst = next;
    return;
  }
  for (size_t i = 0; i < worst.size(); ++i) {
    if (worst[i].holds() != next[i].holds()) {  // a failure is the worst
      if (!next[i].holds()) worst[i] = next[i];
      continue;
    }
    const double excess_w = worst[i].max_abs_diff / worst[i].allowed, excess_n = next[i].max_abs_diff / next[i].allowed;
    if (excess_n > excess_w || std::isnan(excess_n)) worst[i] = next[i];
  }
}

int ErrorCount(const lint::Report& r) { return r.count(lint::Severity::kError); }

}  // namespace

std::string_view RemainingCauseName(RemainingCause cause) {
  switch (cause) {
    case RemainingCause::kNoPass: return "no-pass";
    case RemainingCause::kPrecondition: return "precondition";
    case RemainingCause::kSplitOrHost: return "split-or-host";
    case RemainingCause::kOptIn: return "opt-in";
    case RemainingCause::kNotChosen: return "not-chosen";
  }
  return "unknown";
}

int FixResult::changed_sites() const {
  int n = 0;
  for (const PassOutcome& p : passes) n += static_cast<int>(p.sites.size());
  return n;
}

std::vector<std::vector<npy::Array>> ProofInputs(const ir::Subgraph& graph, uint32_t seed,
                                                 const std::vector<HostInput>& host_inputs) {
  std::vector<std::vector<npy::Array>> sets(2);
  uint64_t generated_bytes = 0;
  for (int32_t t : graph.inputs)
    generated_bytes +=
        2 * static_cast<uint64_t>(graph.tensors[t].num_elements()) * ir::DTypeSize(graph.tensors[t].dtype);
  CheckMemory(generated_bytes, "the two sets of proof inputs");
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::Tensor& t = graph.tensors[graph.inputs[i]];
    auto host =
        std::find_if(host_inputs.begin(), host_inputs.end(), [&](const HostInput& h) { return h.name == t.name; });
    if (host != host_inputs.end()) {
      sets[0].push_back(host->value);
      sets[1].push_back(host->value);
      continue;
    }
    const int index = static_cast<int>(i);
    sets[0].push_back(exec::GenerateInput(t, seed, index));
    npy::Array wide = exec::GenerateInput(t, seed + 1, index);
    if (wide.dtype == tfl::TensorType_FLOAT32)
      for (int64_t k = 0; k < wide.num_elements(); ++k) wide.as<float>()[k] = wide.as<float>()[k] * 8.0f - 4.0f;
    sets[1].push_back(std::move(wide));
  }
  return sets;
}

// Padded outputs along their first axis (a detector's boxes, scores and
// labels after NMS) that failed by position: their rows paired as a
// selection's near-ties (analyze::RowsInAnotherOrder, then
// DetectionsTiedWithinNoise). An exact rewrite that reassociates fp32 sums
// moves such rows as fp32 noise does.
void PairSelectionRows(const ir::Subgraph& graph, const std::vector<npy::Array>& a, const std::vector<npy::Array>& b,
                       double bound, const std::vector<PaddedOutput>& padded, std::vector<OutputDelta>& deltas) {
  std::vector<size_t> group;
  for (const PaddedOutput& p : padded)
    for (size_t k = 0; k < graph.outputs.size() && k < deltas.size(); ++k)
      if (p.axis == 0 && graph.tensors[graph.outputs[k]].name == p.output) group.push_back(k);
  if (group.empty() || std::all_of(group.begin(), group.end(), [&](size_t k) { return deltas[k].holds(); })) return;
  std::vector<npy::Array> ga, gb;
  for (size_t k : group) ga.push_back(a[k]), gb.push_back(b[k]);
  std::optional<std::string> paired = analyze::RowsInAnotherOrder(ga, gb, bound);
  const auto layout = analyze::InferDetectionLayout(ga);
  if (!paired && layout) paired = analyze::DetectionsTiedWithinNoise(*layout, ga, gb, bound);
  if (!paired) return;
  for (size_t k : group)
    if (!deltas[k].holds()) deltas[k].paired = *paired;
}

std::vector<OutputDelta> Deltas(const ir::Subgraph& graph, std::vector<npy::Array> a, std::vector<npy::Array> b,
                                double bound, const std::vector<PaddedOutput>& padded) {
  if (a.size() != b.size())
    ThrowInternal(fmt::format("the rewritten graph has {} outputs, the original {}", b.size(), a.size()));
  TrimToValidRows(graph, padded, a);
  TrimToValidRows(graph, padded, b);
  std::vector<OutputDelta> out;
  for (size_t i = 0; i < a.size(); ++i) {
    OutputDelta d;
    d.output = i < graph.outputs.size() ? graph.tensors[graph.outputs[i]].name : fmt::format("output {}", i);
    if (a[i].shape != b[i].shape || a[i].num_elements() != b[i].num_elements()) {
      d.max_abs_diff = INFINITY;
    } else {
      for (int64_t k = 0; k < a[i].num_elements(); ++k) {
        const double x = Value(a[i], k), y = Value(b[i], k);
        if (std::isnan(x) || (std::isinf(x) && x == y)) continue;  // undefined in the original, or the same infinity
        d.max_abs_ref = std::max(d.max_abs_ref, std::fabs(x));
        const double diff = std::isfinite(y) ? std::fabs(x - y) : INFINITY;
        d.max_abs_diff = std::max(d.max_abs_diff, diff);
      }
    }
    d.allowed = bound * std::max(1.0, d.max_abs_ref);
    out.push_back(d);
  }
  PairSelectionRows(graph, a, b, bound, padded, out);
  return out;
}

FixResult Fix(const ir::Model& model, const FixOptions& options) {
  const std::string data_dir = options.data_dir.empty() ? lint::DefaultDataDir() : options.data_dir;
  const lint::Matrix matrix = lint::LoadMatrix((std::filesystem::path(data_dir) / "compat").string(), options.target);
  FixResult result;
  result.before = lint::Lint(model, matrix);
  const std::vector<PaddedOutput> padded = ReadPaddedOutputs(model);
  const std::vector<const Pass*> first_chosen = [&] {
    std::vector<const Pass*> out = ChoosePasses(options.passes, result.before, result.not_applied);
    out.insert(out.end(), options.extra_passes.begin(), options.extra_passes.end());
    return out;
  }();

  // Proof inputs, by graph input name, for every input set: made when a pass
  // first changes something (a lint-clean model allocates none), and counted
  // against the memory limit while they live, so the interpreters that run
  // them refuse before allocating what would not fit beside them.
  std::vector<ProofSet> sets;
  MemoryCharge sets_charge;
  ProofSet host_values;  // host-fed constants the applied passes moved out
  auto ensure_sets = [&] {
    if (!sets.empty()) return;
    std::vector<std::vector<npy::Array>> made =
        options.inputs.empty() ? ProofInputs(model.main(), options.seed, {}) : options.inputs;
    uint64_t bytes = 0;
    for (std::vector<npy::Array>& set : made) {
      if (set.size() != model.main().inputs.size())
        ThrowInternal(
            fmt::format("a proof input set has {} arrays for {} graph inputs", set.size(), model.main().inputs.size()));
      ProofSet& by_name = sets.emplace_back();
      for (size_t i = 0; i < set.size(); ++i) {
        bytes += set[i].data.size();
        by_name[model.main().tensors[model.main().inputs[i]].name] = std::move(set[i]);
      }
      for (const auto& [name, value] : host_values) by_name[name] = value;
    }
    sets_charge.Add(bytes);
  };
  const int threads = options.threads > 0 ? options.threads : 1;
  // The original runs only once a pass has changed something: a model the
  // interpreter cannot run is still fine when there is nothing to prove.
  std::vector<std::vector<npy::Array>> reference, current_outputs;
  // The original's outputs on the first `count` sets (all by default).
  auto ensure_reference = [&](size_t count = SIZE_MAX) {
    ensure_sets();
    if (reference.empty() && options.reference) reference = options.reference->outputs;
    reference.resize(sets.size());
    std::vector<size_t> missing;
    std::vector<const ProofSet*> inputs;
    for (size_t s = 0; s < sets.size() && s < count; ++s)
      if (reference[s].empty()) {
        missing.push_back(s);
        inputs.push_back(&sets[s]);
      }
    std::vector<std::vector<npy::Array>> outputs = RunEach(model, inputs, threads);
    for (size_t m = 0; m < missing.size(); ++m) reference[missing[m]] = std::move(outputs[m]);
    if (options.reference) options.reference->outputs = reference;
    if (current_outputs.empty()) current_outputs = reference;
  };

  const bool automatic =
      options.passes.empty() || std::find(options.passes.begin(), options.passes.end(), "auto") != options.passes.end();
  ir::Model current = model;
  double total_bound = 0;
  std::set<std::string> ran;
  std::vector<PassSkip> skips;
  // Applies the chosen passes (and, in later rounds, those new findings
  // name). With `prove_each`, each is proven before the next runs; without,
  // they are only applied. False when a pass failed (result.failure says why).
  auto apply_passes = [&](bool prove_each) {
    current = model;
    total_bound = 0;
    ran.clear();
    skips.clear();
    result.passes.clear();
    result.host_inputs.clear();
    current_outputs = reference;
    std::vector<const Pass*> chosen = first_chosen;
    std::set<std::string> known_rules;
    for (const lint::Finding& f : result.before.findings) known_rules.insert(f.rule);
    // A rewrite can expose a finding the original did not have (an island
    // merged to rank 3 meets a constant the delegate misreads at rank 3);
    // later rounds apply the passes those new findings name.
    constexpr int kMaxRounds = 3;
    for (int round = 0; round < kMaxRounds; ++round) {
      if (round > 0) {
        if (!automatic) break;
        lint::Report fresh = lint::Lint(current, matrix);
        std::erase_if(fresh.findings, [&](const lint::Finding& f) { return known_rules.count(f.rule) > 0; });
        if (fresh.findings.empty()) break;
        for (const lint::Finding& f : fresh.findings) known_rules.insert(f.rule);
        std::vector<std::string> ignored;
        chosen = PassesFromFindings(fresh, ignored);
      }
      for (const Pass* pass : chosen) {
        PassOutcome outcome;
        outcome.id = std::string(pass->id());
        outcome.exactness = pass->exactness();
        outcome.bound = pass->bound(options.pass_options);
        ir::Model candidate = current;
        PassResult applied;
        try {
          applied = pass->Apply(candidate, options.pass_options);
        } catch (const Error& e) {
          outcome.failure = fmt::format("pass {} failed: {}", outcome.id, e.what());
          result.failure = outcome.failure;
          result.passes.push_back(std::move(outcome));
          return false;
        }
        outcome.sites = applied.sites;
        ran.insert(outcome.id);
        for (const Skip& skip : applied.skipped) skips.push_back({outcome.id, skip});
        if (applied.sites.empty()) {
          result.passes.push_back(std::move(outcome));
          continue;
        }
        for (const HostInput& h : applied.host_inputs) {
          host_values[h.name] = h.value;
          for (auto& set : sets) set[h.name] = h.value;
        }
        if (prove_each) {
          std::vector<std::vector<npy::Array>> outputs;
          try {
            ensure_reference();
            // Sets a chain proof left unrun: no pass has moved them yet.
            current_outputs.resize(sets.size());
            for (size_t s = 0; s < sets.size(); ++s)
              if (current_outputs[s].empty()) current_outputs[s] = reference[s];
            outputs = RunEach(candidate, AllOf(sets), threads);
            for (size_t s = 0; s < sets.size(); ++s)
              Merge(outcome.deltas, Deltas(current.main(), current_outputs[s], outputs[s], outcome.bound, padded));
          } catch (const Error& e) {
            if (e.kind() == ErrorKind::kInternal) throw;
            outcome.failure =
                fmt::format("pass {} cannot be proven: the interpreter cannot run the model: {}", outcome.id, e.what());
            result.failure = outcome.failure;
            result.passes.push_back(std::move(outcome));
            return false;
          }
          for (const OutputDelta& d : outcome.deltas)
            if (!d.holds()) {
              outcome.failure = fmt::format(
                  "pass {} is not proven: output '{}' moved by max |diff| {:.3g}, allowed {:.3g} ({} bound {:.3g} x "
                  "max(1, max |ref| {:.3g}))",
                  outcome.id, d.output, d.max_abs_diff, d.allowed, ExactnessName(outcome.exactness), outcome.bound,
                  d.max_abs_ref);
              break;
            }
          if (!outcome.failure.empty()) {
            result.failure = outcome.failure;
            result.passes.push_back(std::move(outcome));
            return false;
          }
          outcome.proven = true;
          current_outputs = std::move(outputs);
        }
        total_bound += outcome.bound;
        current = std::move(candidate);
        result.host_inputs.insert(result.host_inputs.end(), applied.host_inputs.begin(), applied.host_inputs.end());
        result.passes.push_back(std::move(outcome));
      }
    }
    return true;
  };

  // The whole chain against the original, its passes' bounds summed: one
  // run per input set instead of one per pass. Only when it fails are the
  // passes proven one by one, to name the one that broke the numbers.
  auto chain_proven = [&] {
    const bool changed =
        std::any_of(result.passes.begin(), result.passes.end(), [](const PassOutcome& p) { return !p.sites.empty(); });
    if (!changed) return true;
    std::vector<std::vector<npy::Array>> outputs;
    std::vector<OutputDelta> deltas;
    try {
      ensure_sets();
      const size_t compared = options.chain_sets > 0 ? static_cast<size_t>(options.chain_sets) : sets.size();
      ensure_reference(compared);
      outputs = RunEach(current, AllOf(sets), threads);
      for (size_t s = 0; s < sets.size() && s < compared; ++s)
        Merge(deltas, Deltas(model.main(), reference[s], outputs[s], std::max(total_bound, kExactTolerance), padded));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInternal) throw;
      return false;  // the one-by-one proofs say which pass and why
    }
    for (const OutputDelta& d : deltas)
      if (!d.holds()) return false;
    for (PassOutcome& p : result.passes) p.proven = !p.sites.empty();
    current_outputs = std::move(outputs);
    return true;
  };

  if (!options.prove) {
    if (!apply_passes(false)) {
      result.model = std::move(current);
      return result;
    }
  } else if (!options.prove_as_chain || !apply_passes(false) || !chain_proven()) {
    if (options.prove_as_chain) result.failure.clear();
    if (!apply_passes(true)) {
      result.model = std::move(current);
      return result;
    }
  }

  for (size_t s = 0; s < reference.size(); ++s)
    if (!reference[s].empty())  // a set the chain was not compared on
      Merge(result.total,
            Deltas(model.main(), reference[s], current_outputs[s], std::max(total_bound, kExactTolerance), padded));
  result.after = lint::Lint(current, matrix);
  result.model = std::move(current);
  if (!reference.empty()) result.outputs = current_outputs;

  // The chain must not introduce an error lint did not report before.
  std::set<std::string> known;
  for (const lint::Finding& f : result.before.findings) known.insert(f.rule);
  for (const lint::Finding& f : result.after.findings)
    if (f.severity == lint::Severity::kError && !known.count(f.rule)) {
      result.failure =
          fmt::format("the rewritten graph has a new lint error: {} at node {} ({}): {}", f.rule, f.node, f.op, f.why);
      return result;
    }
  if (ErrorCount(result.after) > ErrorCount(result.before)) {
    result.failure = fmt::format("the rewritten graph has more lint errors ({}) than the original ({})",
                                 ErrorCount(result.after), ErrorCount(result.before));
    return result;
  }
  result.proven = options.prove;
  // Proven is not fixed: a CI job reads ok, so it holds only when no lint
  // error is left for the GPU delegate to reject.
  result.remaining = Explain(result.after, ran, skips);
  if (!options.prove) {
    result.failure = "applied only: nothing was proven (FixOptions::prove is off)";
    return result;
  }
  if (!result.remaining.empty()) {
    result.failure = fmt::format("{} lint error(s) remain after the fix", result.remaining.size());
    return result;
  }
  result.ok = true;
  return result;
}

TargetsFixResult FixForTargets(const ir::Model& model, const FixOptions& options,
                               const std::vector<std::string>& targets) {
  // An unknown id is a usage error before any proof runs.
  const std::string data_dir = options.data_dir.empty() ? lint::DefaultDataDir() : options.data_dir;
  for (const std::string& target : targets)
    lint::LoadMatrix((std::filesystem::path(data_dir) / "compat").string(), target);
  TargetsFixResult out;
  out.model = model;
  out.proven = true;
  constexpr int kMaxRounds = 3;
  for (int round = 0; round < kMaxRounds && out.proven; ++round) {
    bool changed = false;
    for (const std::string& target : targets) {
      FixOptions one = options;
      one.target = target;
      FixResult r = Fix(out.model, one);
      out.proven = out.proven && r.proven;
      if (r.proven && r.changed_sites() > 0) {
        out.model = r.model;
        out.host_inputs.insert(out.host_inputs.end(), r.host_inputs.begin(), r.host_inputs.end());
        changed = true;
      }
      out.steps.emplace_back(target, std::move(r));
      if (!out.proven) break;
    }
    if (!changed) break;
  }
  out.ok = out.proven;
  for (const std::string& target : targets) {
    FixOptions one = options;
    one.target = target;
    FixResult verdict = Fix(out.model, one);
    out.ok = out.ok && verdict.ok && verdict.changed_sites() == 0;
    out.final.emplace_back(target, std::move(verdict));
  }
  return out;
}

FixResult TargetsFixResult::AsFixResult() const {
  FixResult r = final.empty() ? FixResult{} : final.front().second;
  r.model = model;
  r.host_inputs = host_inputs;
  r.proven = proven;
  r.ok = ok;
  return r;
}

std::vector<std::string> WriteResult(const FixResult& result, const std::string& path, bool in_place) {
  if (!result.proven) ThrowInternal("refusing to write a rewrite whose proof failed");
  std::vector<std::string> written;
  if (in_place)
    WriteFileAtomically(path, format::Serialize(result.model));
  else
    format::WriteModel(result.model, path);
  written.push_back(path);
  for (const HostInput& h : result.host_inputs) {
    const std::string file = HostInputPath(path, h.name);
    npy::Write(file, h.value);
    written.push_back(file);
  }
  return written;
}

std::string HostInputPath(const std::string& model_path, const std::string& name) {
  return exec::HostInputPath(model_path, name);
}

}  // namespace gpuclean::rewrite
