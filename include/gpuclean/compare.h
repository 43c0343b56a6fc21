#pragma once
// `gpuclean compare`: metrics and gates between two .npy files or two
// folders of them (matched by file name), with the silent-fallback tell and,
// from a delegate log, the residency the numbers were measured at.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/gates.h"
#include "gpuclean/metrics.h"
#include "gpuclean/probe.h"

namespace gpuclean::analyze {

struct CompareOptions {
  std::vector<GateSpec> gates;
  GateOptions gate_options;
  // What produced GOT: "gpu", "cpu" or "" (not said). Only a GPU run that is
  // bit-identical to REF raises the silent-fallback tell.
  std::string got_accelerator;
};

struct TensorComparison {
  std::string name;  // file name without ".npy"
  std::string ref_path, got_path;
  std::string ref_dtype, got_dtype;
  std::vector<int64_t> ref_shape, got_shape;
  bool got_is_float = false;  // integer outputs may legitimately be exact on a GPU
  Metrics metrics;
  std::vector<GateResult> gates;
};

struct CompareReport {
  std::string ref, got;
  bool folders = false;
  std::string got_accelerator;
  std::vector<TensorComparison> tensors;              // in natural file-name order (out2 before out10)
  std::vector<std::string> only_in_ref, only_in_got;  // file names
  // Generated-input files (in<N>.npy beside a meta.json) that were skipped:
  // identical inputs would otherwise read as a silent fallback.
  std::vector<std::string> skipped_inputs;
  // Float tensors of a GPU run that are bit-identical to REF. Integer
  // tensors (labels, indices) may legitimately be exact and are not counted.
  std::vector<std::string> bit_identical_float;
  // GOT is marked a GPU run and every float tensor it shares with REF is
  // bit-identical: a real fp16 GPU run drifts in the last digits.
  bool silent_fallback_suspected = false;
  std::optional<probe::Residency> residency;  // from --log
  std::string log_path;

  bool gates_passed() const;
  // 0: every gate passed, no one-sided file, no suspected fallback; 1 otherwise.
  int exit_code() const;
};

// Compares REF and GOT: two .npy files, or two folders. Error(kBadInput) for
// a missing path or unreadable .npy, Error(kUsage) for a file against a
// folder, a gate naming a tensor that is not compared, or an iou gate
// without --boxes / --mask-threshold.
CompareReport CompareOutputs(const std::string& ref, const std::string& got, const CompareOptions& options);

// Reads a logcat / console log and parses the delegate residency from it.
// Error(kIo) when the file cannot be read.
probe::Residency ReadResidencyLog(const std::string& log_path);

// Several lines: the probe::Summarize headline, then the delegations, the
// rejected ops with their reasons and the compile failures.
std::string RenderResidency(const probe::Residency& residency, const std::string& source);

// The loud warning printed for a suspected silent fallback (several lines,
// each starting with "!!"); empty when there is nothing to say.
std::string SilentFallbackWarning(const CompareReport& report);

std::string RenderText(const CompareReport& report);
nlohmann::json ToJson(const CompareReport& report);

// "out2" < "out10": digit runs compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b);

}  // namespace gpuclean::analyze
