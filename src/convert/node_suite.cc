// ONNX's backend node tests as a check of the ONNX lowering: import, lower,
// run on our interpreter, compare with the suite's expected outputs.
#include "gpuclean/node_suite.h"
#include "gpuclean/valid_rows.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/metrics.h"
#include "gpuclean/stopwatch.h"
#include "onnx/lowering.h"
#include "onnx/onnx_model.h"

namespace gpuclean::convert {
namespace fs = std::filesystem;

const char* TestStatusName(TestStatus s) {
  switch (s) {
    case TestStatus::kPass: return "pass";
    case TestStatus::kFail: return "fail";
    case TestStatus::kUnsupportedOp: return "unsupported-op";
    case TestStatus::kUnsupportedFeature: return "unsupported-feature";
    case TestStatus::kUnsupportedDType: return "unsupported-dtype";
    case TestStatus::kError: return "error";
  }
  return "?";
}

namespace {

// ONNX element types whose graph inputs/outputs the suite runs: float32,
// float64 (computed in float32, as convert does), uint8, int8, int32, int64
// (int32 in the graph), bool.
bool HandledType(int t) { return t == 1 || t == 2 || t == 3 || t == 6 || t == 7 || t == 9 || t == 11; }

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

// Messages name the model file; the test's name says which one.
std::string Strip(std::string s, const std::string& model_path) {
  for (const std::string& prefix : {model_path + ": ", model_path}) {
    size_t at;
    while ((at = s.find(prefix)) != std::string::npos) s.erase(at, prefix.size());
  }
  return OneLine(s);
}

std::vector<std::string> DataSets(const fs::path& test_dir) {
  std::vector<std::string> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(test_dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::vector<npy::Array> ReadAll(const std::string& set_dir, const std::string& prefix) {
  std::vector<npy::Array> out;
  for (int k = 0;; ++k) {
    const std::string file = fmt::format("{}/{}_{}.pb", set_dir, prefix, k);
    if (!fs::exists(file)) break;
    out.push_back(onnx::ReadTensorProto(file));
  }
  return out;
}

// A suite array as the converted graph's input tensor wants it.
npy::Array ToGraphDType(const npy::Array& a, ir::DType want, const std::string& name) {
  if (a.dtype == want) return a;
  npy::Array n;
  n.dtype = want;
  n.shape = a.shape;
  const int64_t count = a.num_elements();
  if (want == tfl::TensorType_INT32 && a.dtype == tfl::TensorType_INT64) {
    n.data.resize(count * 4);
    for (int64_t k = 0; k < count; ++k) {
      const int64_t v = a.as<int64_t>()[k];
      if (v > INT32_MAX || v < INT32_MIN)
        ThrowUnsupported(fmt::format("input '{}' holds {}, which does not fit the converted graph's int32", name, v));
      n.as<int32_t>()[k] = static_cast<int32_t>(v);
    }
    return n;
  }
  ThrowUnsupported(
      fmt::format("input '{}' is {}, the converted graph wants {}", name, ir::DTypeName(a.dtype), ir::DTypeName(want)));
}

bool IsFloat(ir::DType d) {
  return d == tfl::TensorType_FLOAT32 || d == tfl::TensorType_FLOAT16 || d == tfl::TensorType_FLOAT64;
}

std::string FormatDims(const std::vector<int64_t>& d) { return fmt::format("[{}]", fmt::join(d, ",")); }

// Compares one output; returns "" when it agrees, the reason otherwise.
std::string CompareOutput(const npy::Array& exp, const npy::Array& got, const SuiteOptions& o, TestResult& r,
                          const std::string& what) {
  if (exp.shape != got.shape)
    return fmt::format("{}: shape {} vs expected {}", what, FormatDims(got.shape), FormatDims(exp.shape));
  const std::vector<double> e = analyze::ToDoubles(exp), g = analyze::ToDoubles(got);
  const bool integral = !IsFloat(exp.dtype);
  std::string why;
  for (size_t i = 0; i < e.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(g[i])) continue;
    if (std::isinf(e[i]) || std::isinf(g[i]) || std::isnan(e[i]) || std::isnan(g[i])) {
      if (e[i] == g[i]) continue;
      r.max_abs_err = r.max_scaled_err = INFINITY;
      if (why.empty()) why = fmt::format("{}: element {} is {} vs expected {}", what, i, g[i], e[i]);
      continue;
    }
    const double d = std::abs(g[i] - e[i]);
    r.max_abs_err = std::max(r.max_abs_err, d);
    r.max_scaled_err = std::max(r.max_scaled_err, d / std::max(1.0, std::abs(e[i])));
    const double bound =
        integral ? 0.0 : std::max(o.proof_tol * std::max(1.0, std::abs(e[i])), o.atol + o.rtol * std::abs(e[i]));
    if (d > bound && why.empty()) why = fmt::format("{}: element {} is {:.7g} vs expected {:.7g}", what, i, g[i], e[i]);
  }
  return why;
}

// The name a "must be known at convert time" refusal gives.
std::string WantedConstant(const std::string& message) {
  static const std::regex re(R"(\('([^']*)'\) must be known at convert time)");
  std::smatch m;
  return std::regex_search(message, m, re) ? m[1].str() : "";
}

void RunTest(const fs::path& test_dir, const SuiteOptions& o, TestResult& r) {
  const std::string model_path = (test_dir / "model.onnx").string();
  const onnx::ModelSummary s = onnx::Summarize(model_path);
  for (const std::string& op : s.op_types)
    if (std::find(r.op_types.begin(), r.op_types.end(), op) == r.op_types.end()) r.op_types.push_back(op);
  r.float32_only = !s.output_types.empty();
  for (int t : s.input_types) r.float32_only = r.float32_only && t == 1;
  for (int t : s.output_types) r.float32_only = r.float32_only && t == 1;
  auto missing_in = [](const std::vector<std::string>& ops) {
    std::vector<std::string> missing;
    for (const std::string& op : ops)
      if (!onnx::Rules().rules.count(op) && std::find(missing.begin(), missing.end(), op) == missing.end())
        missing.push_back(op);
    return missing;
  };
  auto unsupported_op = [&](const std::vector<std::string>& missing) {
    r.status = TestStatus::kUnsupportedOp;
    r.detail = fmt::format("no lowering for {}", fmt::join(missing, ", "));
  };
  // Models of other opsets may hold ops the opset adaptation replaces
  // (Upsample becomes Resize, Gelu its Erf form): those are judged after import.
  const std::vector<std::string> missing = missing_in(r.op_types);
  if (!missing.empty() && s.opset == onnx::kCanonicalOpset) return unsupported_op(missing);
  for (size_t i = 0; i < s.input_types.size() + s.output_types.size(); ++i) {
    const bool in = i < s.input_types.size();
    const int t = in ? s.input_types[i] : s.output_types[i - s.input_types.size()];
    if (!HandledType(t)) {
      if (!missing.empty()) return unsupported_op(missing);
      r.status = TestStatus::kUnsupportedDType;
      r.detail =
          fmt::format("{} {} is {}", in ? "input" : "output", in ? i : i - s.input_types.size(), onnx::OnnxTypeName(t));
      return;
    }
  }
  const std::vector<std::string> sets = DataSets(test_dir);
  if (sets.empty()) ThrowBadInput("no test_data_set_*");
  onnx::Graph graph;
  try {
    graph = onnx::Import(model_path);
  } catch (const Error&) {
    if (!missing.empty()) return unsupported_op(missing);
    throw;
  }
  if (!missing.empty()) {
    std::vector<std::string> imported;
    for (const onnx::Node& n : graph.nodes)
      imported.push_back(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
    if (const auto still = missing_in(imported); !still.empty()) return unsupported_op(still);
  }
  for (const std::string& set : sets) {
    const std::vector<npy::Array> inputs = ReadAll(set, "input"), expected = ReadAll(set, "output");
    if (inputs.size() != graph.inputs.size())
      ThrowBadInput(fmt::format("{} inputs in {}, the graph has {}", inputs.size(), fs::path(set).filename().string(),
                                graph.inputs.size()));
    if (expected.size() != graph.outputs.size())
      ThrowBadInput(fmt::format("{} outputs in {}, the graph has {}", expected.size(),
                                fs::path(set).filename().string(), graph.outputs.size()));
    // Lower; inputs a lowering needs at convert time become initializers
    // holding this data set's values.
    onnx::Graph g = graph;
    std::vector<npy::Array> runtime_inputs = inputs;
    onnx::LoweredGraph lowered;
    std::vector<std::string> frozen;
    for (;;) {
      try {
        onnx::Graph attempt = g;  // Lower takes the initializers
        lowered = onnx::Lower(attempt, onnx::LowerOptions{});
        break;
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kUnsupported) throw;
        // The graph inputs the wanted value is computed from.
        std::vector<std::string> todo = {WantedConstant(e.what())}, sources;
        std::set<std::string> seen;
        while (!todo.empty()) {
          const std::string v = todo.back();
          todo.pop_back();
          if (v.empty() || !seen.insert(v).second) continue;
          if (std::any_of(g.inputs.begin(), g.inputs.end(), [&](const onnx::ValueInfo& i) { return i.name == v; })) {
            sources.push_back(v);
            continue;
          }
          for (const onnx::Node& n : g.nodes)
            if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end())
              todo.insert(todo.end(), n.inputs.begin(), n.inputs.end());
        }
        if (sources.empty()) throw;
        for (const std::string& name : sources) {
          auto it =
              std::find_if(g.inputs.begin(), g.inputs.end(), [&](const onnx::ValueInfo& v) { return v.name == name; });
          const size_t k = static_cast<size_t>(it - g.inputs.begin());
          g.initializers[name] = runtime_inputs[k];
          g.inputs.erase(it);
          runtime_inputs.erase(runtime_inputs.begin() + static_cast<std::ptrdiff_t>(k));
          frozen.push_back(name);
        }
      }
    }
    for (const std::string& f : frozen)
      if (std::find(r.frozen.begin(), r.frozen.end(), f) == r.frozen.end()) r.frozen.push_back(f);
    for (const ir::Op& op : lowered.model.main().ops) {
      const std::string name = op.name();
      if (std::find(r.tflite_ops.begin(), r.tflite_ops.end(), name) == r.tflite_ops.end()) r.tflite_ops.push_back(name);
    }
    std::sort(r.tflite_ops.begin(), r.tflite_ops.end());
    const std::vector<PaddedOutput> padded = lowered.padded_outputs;
    auto model = std::make_shared<const ir::Model>(std::move(lowered.model));
    exec::Interpreter interp(model);
    const ir::Subgraph& sg = model->main();
    if (static_cast<size_t>(interp.num_inputs()) != runtime_inputs.size() ||
        static_cast<size_t>(interp.num_outputs()) != expected.size() + padded.size())
      ThrowInternal("the converted graph's inputs/outputs do not match the ONNX graph's");
    for (size_t i = 0; i < runtime_inputs.size(); ++i) {
      npy::Array value = ToGraphDType(runtime_inputs[i], sg.tensors[sg.inputs[i]].dtype, g.inputs[i].name);
      // A clip [1, C, D, H, W] is the graph's input less its batch of one.
      if (value.shape.size() == sg.tensors[sg.inputs[i]].shape.size() + 1 && value.shape[0] == 1)
        value.shape.erase(value.shape.begin());
      interp.SetInput(static_cast<int>(i), value);
    }
    interp.Invoke();
    ++r.data_sets;
    std::vector<npy::Array> outputs;
    for (int k = 0; k < interp.num_outputs(); ++k) outputs.push_back(interp.Output(k));
    TrimToValidRows(sg, padded, outputs);  // each padded output cut to its count
    for (size_t k = 0; k < expected.size(); ++k) {
      const std::string why =
          CompareOutput(expected[k], outputs[k], o, r,
                        fmt::format("{} output '{}'", fs::path(set).filename().string(), g.outputs[k].name));
      if (!why.empty() && r.detail.empty()) r.detail = why;
    }
  }
  r.status = r.detail.empty() ? TestStatus::kPass : TestStatus::kFail;
  if (r.status == TestStatus::kFail)
    r.detail = fmt::format("max |diff| {:.3g} (scaled {:.3g}); first: {}", r.max_abs_err, r.max_scaled_err, r.detail);
}

TestResult RunOne(const fs::path& test_dir, const SuiteOptions& o) {
  TestResult r;
  r.name = test_dir.filename().string();
  const std::string model_path = (test_dir / "model.onnx").string();
  try {
    RunTest(test_dir, o, r);
  } catch (const Error& e) {
    r.status = e.kind() == ErrorKind::kUnsupported ? TestStatus::kUnsupportedFeature : TestStatus::kError;
    r.detail = Strip(e.what(), model_path);
  } catch (const std::exception& e) {
    r.status = TestStatus::kError;
    r.detail = Strip(std::string("exception: ") + e.what(), model_path);
  }
  return r;
}

nlohmann::json ResultJson(const TestResult& r) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf"); };
  return {{"name", r.name},
          {"ops", r.op_types},
          {"float32_only", r.float32_only},
          {"status", TestStatusName(r.status)},
          {"detail", r.detail},
          {"frozen", r.frozen},
          {"tflite_ops", r.tflite_ops},
          {"max_abs_err", num(r.max_abs_err)},
          {"max_scaled_err", num(r.max_scaled_err)},
          {"data_sets", r.data_sets},
          {"ms", r.ms}};
}

TestResult ResultFromJson(const nlohmann::json& j) {
  TestResult r;
  auto num = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : INFINITY; };
  r.name = j.at("name");
  r.op_types = j.at("ops").get<std::vector<std::string>>();
  r.float32_only = j.at("float32_only");
  const std::string status = j.at("status");
  for (TestStatus s : {TestStatus::kPass, TestStatus::kFail, TestStatus::kUnsupportedOp,
                       TestStatus::kUnsupportedFeature, TestStatus::kUnsupportedDType, TestStatus::kError})
    if (status == TestStatusName(s)) r.status = s;
  r.detail = j.at("detail");
  r.frozen = j.at("frozen").get<std::vector<std::string>>();
  r.tflite_ops = j.value("tflite_ops", std::vector<std::string>{});
  r.max_abs_err = num(j.at("max_abs_err"));
  r.max_scaled_err = num(j.at("max_scaled_err"));
  r.data_sets = j.at("data_sets");
  r.ms = j.at("ms");
  return r;
}

void WriteAll(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// A result for a test whose process died, with the op types for the counts.
TestResult Died(const fs::path& test_dir, const std::string& why) {
  TestResult r;
  r.name = test_dir.filename().string();
  r.status = TestStatus::kError;
  r.detail = why;
  try {
    const onnx::ModelSummary s = onnx::Summarize((test_dir / "model.onnx").string());
    for (const std::string& op : s.op_types)
      if (std::find(r.op_types.begin(), r.op_types.end(), op) == r.op_types.end()) r.op_types.push_back(op);
    r.float32_only = !s.output_types.empty();
    for (int t : s.input_types) r.float32_only = r.float32_only && t == 1;
    for (int t : s.output_types) r.float32_only = r.float32_only && t == 1;
  } catch (const std::exception&) {}
  return r;
}

// Runs the tests in forked children, one JSON line per test back through a
// pipe: a crash, an abort or a hang (SIGALRM) ends the child and becomes an
// error result for the test it was running; a new child takes the rest.
std::vector<TestResult> RunIsolated(const std::vector<fs::path>& dirs, const SuiteOptions& o) {
  std::vector<TestResult> results;
  size_t next = 0;
  while (next < dirs.size()) {
    int fds[2];
    if (pipe(fds) != 0) ThrowInternal("pipe() failed");
    const pid_t pid = fork();
    if (pid < 0) ThrowInternal("fork() failed");
    if (pid == 0) {
      close(fds[0]);
      for (size_t i = next; i < dirs.size(); ++i) {
        alarm(static_cast<unsigned>(std::max(1, o.timeout_s)));
        const Stopwatch t0;
        TestResult r = RunOne(dirs[i], o);
        r.ms = t0.ms();
        WriteAll(fds[1], ResultJson(r).dump() + "\n");
      }
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    std::string pending;
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        const std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        try {
          results.push_back(ResultFromJson(nlohmann::json::parse(line)));
        } catch (const std::exception& e) {
          results.push_back(Died(dirs[next], std::string("unreadable result from the test process: ") + e.what()));
        }
        ++next;
      }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (next >= dirs.size()) break;
    std::string why;
    if (WIFSIGNALED(status))
      why = WTERMSIG(status) == SIGALRM ? fmt::format("timed out after {} s", o.timeout_s)
                                        : fmt::format("crashed: {}", strsignal(WTERMSIG(status)));
    else
      why = fmt::format("the test process exited with status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    results.push_back(Died(dirs[next], why));
    ++next;
  }
  return results;
}

}  // namespace

int SuiteReport::Count(TestStatus s) const {
  return static_cast<int>(
      std::count_if(tests.begin(), tests.end(), [&](const TestResult& t) { return t.status == s; }));
}

int SuiteReport::Runnable() const {
  return static_cast<int>(tests.size()) - Count(TestStatus::kUnsupportedOp) - Count(TestStatus::kUnsupportedDType);
}

double SuiteReport::PassRate() const {
  const int n = Runnable();
  return n == 0 ? 0.0 : static_cast<double>(Count(TestStatus::kPass)) / n;
}

nlohmann::json SuiteReport::ToJson() const {
  nlohmann::json j;
  j["dir"] = dir;
  j["tests"] = nlohmann::json::array();
  for (const TestResult& t : tests) j["tests"].push_back(ResultJson(t));
  nlohmann::json counts;
  for (TestStatus s : {TestStatus::kPass, TestStatus::kFail, TestStatus::kUnsupportedOp,
                       TestStatus::kUnsupportedFeature, TestStatus::kUnsupportedDType, TestStatus::kError})
    counts[TestStatusName(s)] = Count(s);
  j["counts"] = counts;
  j["runnable"] = Runnable();
  j["pass_rate"] = PassRate();
  j["float32_ops"] = float32_ops;
  j["float32_ops_supported"] = float32_ops_supported;
  j["ms"] = ms;
  return j;
}

std::string SuiteReport::RenderTable() const {
  std::string s = "test\tstatus\tops\tfrozen\tmax_abs_err\tdetail\n";
  for (const TestResult& t : tests)
    s += fmt::format("{}\t{}\t{}\t{}\t{:.3g}\t{}\n", t.name, TestStatusName(t.status), fmt::join(t.op_types, ","),
                     fmt::join(t.frozen, ","), t.max_abs_err, t.detail);
  return s;
}

namespace {
std::string Cell(std::string s) {
  size_t at = 0;
  while ((at = s.find('|', at)) != std::string::npos) {
    s.replace(at, 1, "\\|");
    at += 2;
  }
  return s;
}
}  // namespace

std::string SuiteReport::RenderMarkdown() const {
  std::string s;
  const int frozen_pass = static_cast<int>(std::count_if(tests.begin(), tests.end(), [](const TestResult& t) {
    return t.status == TestStatus::kPass && !t.frozen.empty();
  }));
  s += fmt::format(
      "Numbers from the last run ({} node tests in `{}`):\n\n"
      "| | |\n|---|---|\n"
      "| op types in the float32-only tests with a lowering | **{} / {}** |\n"
      "| tests run (every op type lowered, dtypes handled) | {} |\n"
      "| pass | **{}** ({:.1f}% of the tests run; {} with inputs bound as constants) |\n"
      "| fail (numbers or shapes differ) | {} |\n"
      "| unsupported-feature (a lowering, import or kernel refuses) | {} |\n"
      "| error | {} |\n"
      "| unsupported-op (not run) | {} |\n"
      "| unsupported-dtype (not run) | {} |\n\n",
      tests.size(), dir, float32_ops_supported.size(), float32_ops.size(), Runnable(), Count(TestStatus::kPass),
      100.0 * PassRate(), frozen_pass, Count(TestStatus::kFail), Count(TestStatus::kUnsupportedFeature),
      Count(TestStatus::kError), Count(TestStatus::kUnsupportedOp), Count(TestStatus::kUnsupportedDType));
  std::vector<std::string> missing;
  for (const std::string& op : float32_ops)
    if (!float32_ops_supported.count(op)) missing.push_back(op);
  s += fmt::format("Op types of the float32-only tests without a lowering: {}.\n\n",
                   missing.empty() ? "none" : fmt::format("{}", fmt::join(missing, ", ")));
  // The op table: per ONNX op type (of single-op tests), the TFLite ops its
  // passing tests converted to and the largest error against the expected
  // outputs.
  struct OpRow {
    int run = 0, pass = 0;
    std::set<std::string> tflite;
    double max_scaled = 0;
  };
  std::map<std::string, OpRow> op_rows;
  for (const TestResult& t : tests) {
    if (t.op_types.size() != 1 || t.status == TestStatus::kUnsupportedOp || t.status == TestStatus::kUnsupportedDType)
      continue;
    OpRow& row = op_rows[t.op_types[0]];
    ++row.run;
    if (t.status != TestStatus::kPass) continue;
    ++row.pass;
    row.tflite.insert(t.tflite_ops.begin(), t.tflite_ops.end());
    row.max_scaled = std::max(row.max_scaled, t.max_scaled_err);
  }
  s += "#### Op table\n\nPer ONNX op type (tests holding that op alone): the TFLite ops the passing tests "
       "converted to (none: folded to constants), and the largest error against ONNX's expected outputs, "
       "|diff| / max(1, |expected|) (0: exact).\n\n| ONNX op | tests passed | TFLite ops | max scaled error |\n"
       "|---|---|---|---|\n";
  for (const auto& [op, row] : op_rows)
    s += fmt::format("| {} | {} / {} | {} | {:.2g} |\n", op, row.pass, row.run,
                     row.tflite.empty() ? std::string("(folded)") : fmt::format("{}", fmt::join(row.tflite, ", ")),
                     row.max_scaled);
  s += "\n";
  auto section = [&](TestStatus st, const std::string& title) {
    std::string rows;
    for (const TestResult& t : tests)
      if (t.status == st)
        rows += fmt::format("| {} | {} | {} |\n", t.name, Cell(fmt::format("{}", fmt::join(t.op_types, ", "))),
                            Cell(t.detail));
    if (rows.empty()) return;
    s += fmt::format("#### {} ({})\n\n| test | ops | reason |\n|---|---|---|\n{}\n", title, Count(st), rows);
  };
  section(TestStatus::kFail, "fail");
  section(TestStatus::kUnsupportedFeature, "unsupported-feature");
  section(TestStatus::kError, "error");
  section(TestStatus::kUnsupportedDType, "unsupported-dtype");
  // Unsupported ops: grouped by the ops missing.
  std::map<std::string, std::vector<std::string>> by_missing;
  for (const TestResult& t : tests)
    if (t.status == TestStatus::kUnsupportedOp) {
      std::string key = t.detail;
      if (key.rfind("no lowering for ", 0) == 0) key = key.substr(16);
      by_missing[key].push_back(t.name);
    }
  if (!by_missing.empty()) {
    s += fmt::format("#### unsupported-op ({})\n\n| op types without a lowering | tests |\n|---|---|\n",
                     Count(TestStatus::kUnsupportedOp));
    for (const auto& [ops, names] : by_missing) s += fmt::format("| {} | {} |\n", Cell(ops), fmt::join(names, ", "));
    s += "\n";
  }
  return s;
}

SuiteReport RunNodeSuite(const SuiteOptions& o) {
  const Stopwatch start;
  SuiteReport report;
  report.dir = o.dir;
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("test_", 0) != 0 || !fs::exists(e.path() / "model.onnx")) continue;
    if (!o.filter.empty() && name.find(o.filter) == std::string::npos) continue;
    dirs.push_back(e.path());
  }
  if (dirs.empty())
    throw Error(ErrorKind::kUsage, fmt::format("{}: no test_*/model.onnx (is libonnx-testdata installed?)", o.dir));
  std::sort(dirs.begin(), dirs.end());
  if (o.isolate) {
    report.tests = RunIsolated(dirs, o);
  } else {
    for (const fs::path& d : dirs) {
      const Stopwatch t0;
      report.tests.push_back(RunOne(d, o));
      report.tests.back().ms = t0.ms();
    }
  }
  // An op type is supported when it has a lowering, or when a test holding
  // it converts (an older op the version converter replaces).
  for (const TestResult& r : report.tests) {
    if (r.float32_only)
      for (const std::string& op : r.op_types) {
        report.float32_ops.insert(op);
        if (onnx::Rules().rules.count(op) || (r.status != TestStatus::kUnsupportedOp && r.status != TestStatus::kError))
          report.float32_ops_supported.insert(op);
      }
  }
  report.ms = start.ms();
  return report;
}

}  // namespace gpuclean::convert
