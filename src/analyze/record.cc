#include "gpuclean/record.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"

namespace gpuclean::analyze {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Refuse(const std::string& message) { throw Error(ErrorKind::kUsage, "record refused: " + message); }

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::optional<std::string> ReadTextIfExists(const std::string& path) {
  if (!fs::exists(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, path + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool ContainsNoCase(const std::string& text, const std::string& needle) {
  auto it = std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

bool IsNumericGate(GateKind kind) {
  return kind == GateKind::kCorrelation || kind == GateKind::kMaxAbs || kind == GateKind::kMeanAbs;
}

std::string Partitions(const std::optional<int64_t>& partitions) {
  if (!partitions) return "partitions not logged";
  return fmt::format("{} partition{}", *partitions, *partitions == 1 ? "" : "s");
}

std::string Today() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%d}", fmt::gmtime(now));
}

std::string Cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// The gate results of `spec` over every tensor it applied to.
struct GateOutcome {
  bool passed = true;
  double min_value = INFINITY;
  std::string first_failure;  // "out0: argmax equal in 9/10 rows (...)"
};

GateOutcome Outcome(const CompareReport& report, const GateSpec& spec) {
  GateOutcome o;
  for (const TensorComparison& t : report.tensors) {
    if (!spec.tensor.empty() && spec.tensor != t.name) continue;
    for (const GateResult& g : t.gates) {
      if (g.gate != spec.text) continue;
      o.min_value = std::min(o.min_value, g.value);
      if (!g.passed && o.passed) {
        o.passed = false;
        o.first_failure = report.tensors.size() > 1 ? t.name + ": " + g.detail : g.detail;
      }
    }
  }
  return o;
}

std::string GateLabel(const GateSpec& spec) { return spec.tensor.empty() ? spec.text : spec.tensor + ":" + spec.text; }

}  // namespace

std::string ResidencyCell(const probe::Residency& r, const std::string& accelerator,
                          std::optional<int64_t> model_node_count, bool log_mentions_xnnpack) {
  std::string cell;
  if (accelerator == "gpu") {
    if (r.gpu_ops && r.total_ops) {
      cell = fmt::format("{}/{} nodes, {}", *r.gpu_ops, *r.total_ops, Partitions(r.partitions));
    } else if (r.fully_delegated.value_or(false)) {
      // ML Drift logs no count when it takes every op.
      if (!model_node_count)
        Refuse("the log shows full GPU delegation without a node count; pass --model MODEL to count the nodes");
      cell = fmt::format("{0}/{0} nodes (counted from the model), 1 partition", *model_node_count);
    } else {
      Refuse(
          "the log has no residency line (\"Replacing N out of M node(s) with delegate ...\" or \"N operations "
          "will run on the GPU ...\"); a GPU record needs one");
    }
    if (r.fallback == "wasm") cell += "; whole model fell back to WASM";
    if (!r.compile_errors.empty()) cell += "; compile failed";
    return cell;
  }
  // A CPU run: the control. Its residency is the CPU delegate's line.
  for (const probe::Delegation& d : r.delegations) {
    std::string name = d.delegate;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name.find("xnnpack") != std::string::npos)
      return fmt::format("CPU: XNNPACK {}/{} nodes, {}", d.replaced, d.total, Partitions(d.partitions));
  }
  if (r.gpu_ops && *r.gpu_ops == 0 && r.total_ops) return fmt::format("CPU: {} nodes, 0 on the GPU", *r.total_ops);
  if (log_mentions_xnnpack) {
    if (model_node_count) return fmt::format("CPU: XNNPACK, {} nodes (counted from the model)", *model_node_count);
    return "CPU: XNNPACK delegate (node count not logged)";
  }
  Refuse("the log shows no CPU delegate (XNNPACK) line and no op counts; a CPU record needs the run's log");
}

std::string MarkdownRow(const RecordRow& row) {
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} |", Cell(row.device), Cell(row.accelerator), Cell(row.runtime),
                     Cell(row.residency), Cell(row.correlation), Cell(row.max_abs), Cell(row.task_gate));
}

namespace {
constexpr const char* kRecordHeader =
    "| device | accelerator | runtime | N/M nodes, partitions | corr | max abs | task gate |";
constexpr const char* kRecordRule = "|---|---|---|---|---|---|---|";
}  // namespace

std::string EmptyDeviceRecordsSection() {
  return std::string(kDeviceRecordsHeading) + "\n\n" + kRecordHeader + "\n" + kRecordRule + "\n";
}

std::string AppendRecordRow(const std::string& readme, const std::string& row) {
  const std::string kHeader = kRecordHeader;
  const std::string kRule = kRecordRule;
  std::vector<std::string> lines;  // split on '\n'; a trailing '\r' stays in its line
  for (size_t pos = 0;;) {
    const size_t end = readme.find('\n', pos);
    if (end == std::string::npos) {
      lines.push_back(readme.substr(pos));
      break;
    }
    lines.push_back(readme.substr(pos, end - pos));
    pos = end + 1;
  }
  const auto bare = [](const std::string& line) { return Trim(line); };
  const auto is_heading = [&](const std::string& line) { return bare(line).starts_with("#"); };
  const auto is_table = [&](const std::string& line) { return bare(line).starts_with("|"); };
  const auto join = [](const std::vector<std::string>& ls) {
    std::string out;
    for (size_t i = 0; i < ls.size(); ++i) out += (i ? "\n" : "") + ls[i];
    return out;
  };

  size_t heading = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string b = bare(lines[i]);
    std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return std::tolower(c); });
    if (b == "## device records") {
      heading = i;
      break;
    }
  }
  if (heading == lines.size()) {
    std::string out = readme;
    if (!out.empty() && !out.ends_with("\n")) out += "\n";
    if (!out.empty()) out += "\n";
    return out + std::string(kDeviceRecordsHeading) + "\n\n" + kHeader + "\n" + kRule + "\n" + row + "\n";
  }
  // Keep the file's line ending style for what we insert.
  const std::string cr = lines[heading].ends_with("\r") ? "\r" : "";
  size_t section_end = heading + 1;
  while (section_end < lines.size() && !is_heading(lines[section_end])) ++section_end;
  size_t table = heading + 1;
  while (table < section_end && !is_table(lines[table])) ++table;
  if (table < section_end) {
    size_t last = table;
    while (last + 1 < section_end && is_table(lines[last + 1])) ++last;
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(last + 1), row + cr);
    return join(lines);
  }
  // The heading without a table: the table goes right under it.
  std::vector<std::string> block = {"", kHeader + cr, kRule + cr, row + cr};
  if (heading + 1 < lines.size() && !bare(lines[heading + 1]).empty()) block.push_back(cr);
  if (cr.size()) block[0] = cr;
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(heading + 1), block.begin(), block.end());
  return join(lines);
}

std::string AppendRecordJson(const std::string& json_text, const nlohmann::json& entry, const std::string& path) {
  nlohmann::json records = nlohmann::json::array();
  if (!Trim(json_text).empty()) {
    try {
      records = nlohmann::json::parse(json_text);
    } catch (const nlohmann::json::exception& e) {
      ThrowBadInput(path + ": not JSON (" + std::string(e.what()) + ")");
    }
    if (!records.is_array()) ThrowBadInput(path + ": expected a JSON array of records");
  }
  records.push_back(entry);
  return records.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

RecordResult Record(const RecordRequest& q) {
  // Refusals first: nothing is compared or written for a row that cannot stand.
  if (Trim(q.device).empty()) Refuse("--device is required (the phone or board, e.g. \"Pixel 8a (Mali-G615)\")");
  static const std::regex version(R"(\d+(\.\d+)+)");
  if (Trim(q.runtime).empty() || !std::regex_search(q.runtime, version))
    Refuse("--runtime needs the runtime version (X.Y.Z), got '" + q.runtime + "'");
  if (q.accelerator != "gpu" && q.accelerator != "cpu") Refuse("--accelerator must be gpu or cpu");
  if (q.log_path.empty()) Refuse("--log is required: the residency line comes from the run's delegate log");
  if (q.readme_path.empty()) Refuse("--readme is required");
  const std::optional<std::string> log_text = ReadTextIfExists(q.log_path);
  if (!log_text) throw Error(ErrorKind::kIo, q.log_path + ": cannot read the log file");
  const probe::Residency residency = probe::ParseDelegateLog(*log_text);
  std::optional<int64_t> model_nodes;
  if (!q.model_path.empty()) model_nodes = static_cast<int64_t>(format::ReadModel(q.model_path).main().ops.size());

  RecordResult result;
  RecordRow& row = result.row;
  row.device = Trim(q.device);
  row.accelerator = q.accelerator;
  row.runtime = Trim(q.runtime);
  row.residency = ResidencyCell(residency, q.accelerator, model_nodes, ContainsNoCase(*log_text, "xnnpack"));

  if (!fs::is_directory(q.ref_dir))
    throw Error(ErrorKind::kUsage, "--ref must be a folder of .npy files: " + q.ref_dir);
  if (!fs::is_directory(q.got_dir))
    throw Error(ErrorKind::kUsage, "--got must be a folder of .npy files: " + q.got_dir);
  CompareOptions options{q.gates, q.gate_options, q.accelerator};
  result.comparison = CompareOutputs(q.ref_dir, q.got_dir, options);
  result.comparison.residency = residency;
  result.comparison.log_path = q.log_path;
  const CompareReport& c = result.comparison;

  // One number per column over every tensor: the worst one.
  double min_corr = INFINITY, max_abs = 0;
  int64_t extra_nonfinite = 0;
  bool corr_nan = false;
  for (const TensorComparison& t : c.tensors) {
    if (std::isnan(t.metrics.correlation))
      corr_nan = true;
    else
      min_corr = std::min(min_corr, t.metrics.correlation);
    if (!std::isnan(t.metrics.max_abs_diff)) max_abs = std::max(max_abs, t.metrics.max_abs_diff);
    extra_nonfinite += std::max<int64_t>(0, t.metrics.nonfinite_got - t.metrics.nonfinite_ref);
  }
  const std::string of = c.tensors.size() > 1 ? fmt::format(" (worst of {})", c.tensors.size()) : "";
  row.correlation = (corr_nan ? std::string("nan") : fmt::format("{:.6f}", min_corr)) + of;
  row.max_abs = fmt::format("{:.4g}", max_abs) + of;
  if (extra_nonfinite) row.max_abs += fmt::format("; {} non-finite", extra_nonfinite);
  std::vector<std::string> task;
  for (const GateSpec& spec : q.gates) {
    const GateOutcome o = Outcome(c, spec);
    const std::string label = GateLabel(spec);
    std::string text = o.passed ? label + " pass" : label + " FAIL (" + o.first_failure + ")";
    if (o.passed && (spec.kind == GateKind::kIou || spec.kind == GateKind::kBoxIou || spec.kind == GateKind::kMaskIou))
      text += fmt::format(" (min {:.4g})", o.min_value);
    if (IsNumericGate(spec.kind)) {
      std::string& cell = spec.kind == GateKind::kCorrelation ? row.correlation : row.max_abs;
      cell += fmt::format("; {}", o.passed ? label + " pass" : label + " FAIL");
    } else {
      task.push_back(text);
    }
  }
  row.task_gate = task.empty() ? "none" : fmt::format("{}", fmt::join(task, "; "));
  if (c.silent_fallback_suspected) row.task_gate = "SILENT FALLBACK? bit-identical to the reference; " + row.task_gate;

  nlohmann::json comparison = ToJson(c);
  comparison.erase("residency");  // kept once, at the top level
  result.json = {{"date", q.date.empty() ? Today() : q.date},
                 {"device", row.device},
                 {"accelerator", row.accelerator},
                 {"runtime", row.runtime},
                 {"residency_line", row.residency},
                 {"residency", probe::ToJson(residency)},
                 {"correlation", row.correlation},
                 {"max_abs", row.max_abs},
                 {"task_gate", row.task_gate},
                 {"silent_fallback_suspected", c.silent_fallback_suspected},
                 {"passed", c.exit_code() == 0},
                 {"model", q.model_path.empty() ? nlohmann::json() : nlohmann::json(q.model_path)},
                 {"comparison", comparison}};
  result.exit_code = c.exit_code();

  // Both outputs are prepared before either is written, so a bad JSON file
  // leaves the README untouched too.
  const std::string readme = AppendRecordRow(ReadTextIfExists(q.readme_path).value_or(""), MarkdownRow(row));
  std::optional<std::string> records;
  if (!q.json_path.empty())
    records = AppendRecordJson(ReadTextIfExists(q.json_path).value_or(""), result.json, q.json_path);
  if (records) WriteFileAtomically(q.json_path, *records);
  WriteFileAtomically(q.readme_path, readme);
  return result;
}

std::string RenderText(const RecordResult& r) {
  std::string s = RenderText(r.comparison);
  s += "\nrecorded: " + MarkdownRow(r.row) + "\n";
  return s;
}

}  // namespace gpuclean::analyze
