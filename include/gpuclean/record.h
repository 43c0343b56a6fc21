#pragma once
// `gpuclean record`: one verification record per device run, appended to the
// recipe README's "## Device records" table and to a JSON array file. A record
// names the device, the accelerator, the runtime version and the residency
// line from the delegate log; without them a number is not a result, so
// such a row is refused.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/compare.h"

namespace gpuclean::analyze {

struct RecordRequest {
  std::string ref_dir;      // source-model reference dump (the truth)
  std::string got_dir;      // the device run's outputs
  std::string log_path;     // logcat / console text of that run
  std::string device;       // "Pixel 8a (Mali-G615)"
  std::string runtime;      // "2.1.6", "LiteRT 2.1.6"
  std::string accelerator;  // "gpu" | "cpu"
  std::vector<GateSpec> gates;
  GateOptions gate_options;
  std::string readme_path;  // Markdown file that receives the table row
  std::string json_path;    // JSON array file; empty: none
  // Counts the nodes when the log shows full delegation without a count
  // (ML Drift prints none when it takes every op). Optional.
  std::string model_path;
  std::string date;  // YYYY-MM-DD; empty: today (UTC)
};

struct RecordRow {
  std::string device, accelerator, runtime, residency, correlation, max_abs, task_gate;
};

struct RecordResult {
  CompareReport comparison;
  RecordRow row;
  nlohmann::json json;  // the object appended to the JSON file
  int exit_code = 0;    // 1 when a gate failed, a file is one-sided or a fallback is suspected
};

inline constexpr const char* kDeviceRecordsHeading = "## Device records";

// Validates, compares, then writes the JSON file and the README atomically
// (each one whole or not at all). Error(kUsage) - exit 2, nothing written -
// for a missing device, runtime, accelerator or residency.
RecordResult Record(const RecordRequest& request);

// The residency cell: "388/388 nodes, 1 partition" for a GPU run. Throws
// Error(kUsage) when the log does not tell (no count, no full delegation
// with a model to count, or for a CPU run no CPU delegate line).
std::string ResidencyCell(const probe::Residency& residency, const std::string& accelerator,
                          std::optional<int64_t> model_node_count, bool log_mentions_xnnpack);

// One Markdown row (cells with '|' escaped), no trailing newline.
std::string MarkdownRow(const RecordRow& row);
// `readme` with `row` appended to the table under "## Device records"; the
// heading and table header are created (at the end) when absent. Everything
// else is kept byte for byte.
std::string AppendRecordRow(const std::string& readme, const std::string& row);
// The section a new README starts with: the heading and the table's header,
// no rows (what AppendRecordRow fills).
std::string EmptyDeviceRecordsSection();
// `json_text` (a JSON array, or empty) with `entry` appended, pretty-printed.
// Error(kBadInput) naming `path` when it is not a JSON array.
std::string AppendRecordJson(const std::string& json_text, const nlohmann::json& entry, const std::string& path);

std::string RenderText(const RecordResult& result);

}  // namespace gpuclean::analyze
