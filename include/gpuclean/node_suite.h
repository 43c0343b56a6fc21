#pragma once
// ONNX's backend node tests (Debian's libonnx-testdata) as a check of
// `gpuclean convert`: every test whose op types have a lowering and whose
// dtypes we handle is converted (import + lower, no onnxruntime proof) and
// run on our interpreter with the suite's inputs; its outputs are compared
// with the suite's expected ones (docs/convert.md, "ONNX node-test suite").
//
//   convert::SuiteOptions o;                       // o.dir: the node/ folder
//   convert::SuiteReport r = convert::RunNodeSuite(o);
//   r.Count(convert::TestStatus::kPass), r.RenderMarkdown()
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuclean::convert {

// Where Debian's libonnx-testdata puts the node tests.
constexpr const char* kDefaultNodeSuiteDir = "/usr/share/libonnx-testdata/data/node";

enum class TestStatus {
  kPass,
  kFail,                // ran; the numbers (or shapes) differ
  kUnsupportedOp,       // an op type without a lowering (or from another domain)
  kUnsupportedFeature,  // a lowering (or import, or the interpreter) refuses: kUnsupported
  kUnsupportedDType,    // graph inputs/outputs of an element type we do not convert (not run)
  kError,               // anything else: malformed data, internal errors, crashes, timeouts
};
const char* TestStatusName(TestStatus s);  // "pass", "fail", "unsupported-op", ...

struct TestResult {
  std::string name;                   // "test_abs"
  std::vector<std::string> op_types;  // distinct, in graph order
  bool float32_only = false;          // every graph input and output is float32
  TestStatus status = TestStatus::kError;
  std::string detail;  // the reason (one line), or the error of a failed comparison
  // Graph inputs bound to the test's data as constants because a lowering
  // needs them at convert time (as an exporter stores weights and shapes).
  std::vector<std::string> frozen;
  // TFLite ops of the converted graph (distinct, sorted), when it converted.
  std::vector<std::string> tflite_ops;
  double max_abs_err = 0, max_scaled_err = 0;  // over every output of every data set
  int data_sets = 0;
  double ms = 0;
};

struct SuiteOptions {
  std::string dir = kDefaultNodeSuiteDir;
  // Only tests whose name contains this (empty: all).
  std::string filter;
  // An element passes when |got - exp| <= max(proof_tol * max(1, |exp|),
  // atol + rtol * |exp|): convert's proof bound or numpy's allclose.
  double proof_tol = 1e-4, rtol = 1e-3, atol = 1e-5;
  // Run each test in a forked child so a crash or hang is an error result,
  // not the end of the run.
  bool isolate = true;
  int timeout_s = 30;
};

struct SuiteReport {
  std::string dir;
  std::vector<TestResult> tests;
  // Op types of the float32-only tests, and those with a lowering.
  std::set<std::string> float32_ops, float32_ops_supported;
  double ms = 0;

  int Count(TestStatus s) const;
  // Tests that were run: all op types supported, dtypes handled.
  int Runnable() const;
  double PassRate() const;  // pass / Runnable()
  nlohmann::json ToJson() const;
  // One line per test: name, status, ops, detail.
  std::string RenderTable() const;
  // The docs/convert.md section body: numbers, bound, every test that does
  // not pass with its reason (unsupported ops grouped by op).
  std::string RenderMarkdown() const;
};

// Throws Error(kUsage) when `dir` holds no test_*/model.onnx.
SuiteReport RunNodeSuite(const SuiteOptions& options);

}  // namespace gpuclean::convert
