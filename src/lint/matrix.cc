// Compatibility matrix files: reading, `extends` chains, validation.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/ranges.h>

#include "gpuclean/error.h"
#include "gpuclean/lint.h"
#include "lint/graph_view.h"
#include "lint/rules/rule.h"

namespace gpuclean::lint {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "gpuclean-compat/1";
const std::set<std::string> kTopKeys = {
    "format", "target", "extends",          "description", "runtime", "inherited_provenance", "residency", "entries",
    "rules",  "remove", "known_mismatches", "notes",       "numerics"};
const std::set<std::string> kNumericsKeys = {"model", "provenance", "evidence", "why"};
const std::set<std::string> kEntryKeys = {"id",  "op",          "when",  "status", "provenance", "evidence",
                                          "why", "consequence", "hints", "folded", "params",     "severity"};
const std::set<std::string> kConsequences = {"rejected", "partition", "wrong-numbers", "compile-failure", "none"};

json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kIo, path + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    ThrowBadInput(path + ": not valid JSON: " + e.what());
  }
}

// "path/file.cc:123 @ v2.2.0" (or a line range, or a commit id) somewhere
// in the text: where in the delegate's published source the fact was read.
bool CitesSource(const std::string& text) {
  static const std::regex kCitation(R"([\w./-]+\.(cc|h|mm):\d+(-\d+)? @ (v\d+\.\d+\.\d+|[0-9a-f]{7,40}))");
  return std::regex_search(text, kCitation);
}

void ValidateEntry(const json& entry, const std::string& where, bool is_rule, std::vector<std::string>& errors) {
  auto error = [&](const std::string& message) { errors.push_back(where + ": " + message); };
  if (!entry.is_object()) return error("not an object");
  for (const auto& [key, value] : entry.items())
    if (!kEntryKeys.count(key)) error("unknown key '" + key + "'");
  if (!entry.contains("id") || !entry["id"].is_string() || entry["id"].get<std::string>().empty())
    error("needs a string 'id'");
  if (!is_rule && (!entry.contains("op") || !entry["op"].is_string())) error("needs a string 'op'");
  if (is_rule && entry.contains("id") && entry["id"].is_string() && !FindStructuralRule(entry["id"].get<std::string>()))
    error("no structural rule named " + entry["id"].dump() + " (see docs/lint.md)");
  if (is_rule && (entry.contains("op") || entry.contains("when"))) error("a rule takes no 'op' or 'when'");
  if (!entry.contains("status") || !entry["status"].is_string() || !ParseStatus(entry["status"].get<std::string>()))
    error("'status' must be one of delegated|partial|fallback|rejected|incorrect|unknown");
  const std::string provenance = entry.value("provenance", "");
  if (std::none_of(std::begin(kProvenances), std::end(kProvenances), [&](const char* p) { return provenance == p; }))
    error("'provenance' must be one of measured|source|reference-doc|upstream-issue|inferred");
  if (!entry.contains("evidence") || !entry["evidence"].is_object()) {
    error("needs an 'evidence' object {date, runtime, source}");
  } else {
    for (const char* field : {"date", "runtime", "source"})
      if (!entry["evidence"].contains(field) || !entry["evidence"][field].is_string() ||
          entry["evidence"][field].get<std::string>().empty())
        error(std::string("evidence needs a non-empty '") + field + "'");
    if (provenance == "measured" && entry["evidence"].value("source", "").find("probe") == std::string::npos)
      error("a measured entry must name the probe run in evidence.source");
    if (provenance == "source" && !CitesSource(entry["evidence"].value("source", "")))
      error(
          "a source entry must cite FILE:LINE @ TAG-or-COMMIT in evidence.source "
          "(ml_drift_delegate/tflite/model_builder.cc:5033 @ v2.2.0)");
  }
  if (entry.contains("hints")) {
    if (!entry["hints"].is_array())
      error("'hints' must be an array of pass ids");
    else
      for (const auto& hint : entry["hints"])
        if (!hint.is_string() || !FindPass(hint.get<std::string>()))
          error("hint " + hint.dump() + " is not a pass id (see docs/lint.md)");
  }
  if (entry.contains("consequence") &&
      (!entry["consequence"].is_string() || !kConsequences.count(entry["consequence"].get<std::string>())))
    error("'consequence' must be rejected|partition|wrong-numbers|compile-failure|none");
  if (entry.contains("severity")) {
    const std::string s = entry["severity"].is_string() ? entry["severity"].get<std::string>() : "";
    if (s != "error" && s != "warning" && s != "info") error("'severity' must be error|warning|info");
  }
  if (entry.contains("folded") && !entry["folded"].is_boolean()) error("'folded' must be a boolean");
  if (entry.contains("params") && !entry["params"].is_object()) error("'params' must be an object");
  if (entry.contains("when")) {
    if (!entry["when"].is_object()) return error("'when' must be an object");
    const auto& keys = ConstraintKeys();
    for (const auto& [key, value] : entry["when"].items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        error("unknown constraint '" + key + "'");
      else if (const std::string wrong = ConstraintValueError(key, value); !wrong.empty())
        error("constraint '" + key + "' " + wrong);
  }
}

// "numerics": {model, provenance, evidence, why}: the interpreter mode that
// models the target's fp16 numbers, held to the same evidence rules as entries.
void ValidateNumerics(const json& numerics, const std::string& path, std::vector<std::string>& errors) {
  auto error = [&](const std::string& message) { errors.push_back(path + ": numerics: " + message); };
  if (!numerics.is_object()) return error("must be an object {model, provenance, evidence, why}");
  for (const auto& [key, value] : numerics.items())
    if (!kNumericsKeys.count(key)) error("unknown key '" + key + "'");
  const std::vector<std::string>& modes = PrecisionNames();
  const std::string model = numerics.value("model", "");
  if (std::find(modes.begin(), modes.end(), model) == modes.end())
    error("'model' must be one of " + fmt::format("{}", fmt::join(modes, "|")));
  const std::string provenance = numerics.value("provenance", "");
  if (std::none_of(std::begin(kProvenances), std::end(kProvenances), [&](const char* p) { return provenance == p; }))
    error("'provenance' must be one of measured|source|reference-doc|upstream-issue|inferred");
  if (!numerics.contains("evidence") || !numerics["evidence"].is_object()) return error("needs an 'evidence' object");
  for (const char* field : {"date", "runtime", "source"})
    if (!numerics["evidence"].contains(field) || !numerics["evidence"][field].is_string() ||
        numerics["evidence"][field].get<std::string>().empty())
      error(std::string("evidence needs a non-empty '") + field + "'");
  if (provenance == "measured" && numerics["evidence"].value("source", "").find("probe") == std::string::npos)
    error("a measured model must name the probe run in evidence.source");
}

std::vector<std::string> ValidateJson(const json& doc, const std::string& path) {
  std::vector<std::string> errors;
  auto error = [&](const std::string& message) { errors.push_back(path + ": " + message); };
  if (!doc.is_object()) {
    error("top level must be an object");
    return errors;
  }
  for (const auto& [key, value] : doc.items())
    if (!kTopKeys.count(key)) error("unknown top-level key '" + key + "'");
  if (doc.value("format", "") != kFormat) error(std::string("'format' must be \"") + kFormat + "\"");
  const std::string stem = fs::path(path).stem().string();
  if (doc.value("target", "") != stem) error("'target' must equal the file name ('" + stem + "')");
  if (doc.contains("extends") && !doc["extends"].is_string()) error("'extends' must be a target id");
  if (doc.contains("inherited_provenance") && doc["inherited_provenance"] != "inferred")
    error("'inherited_provenance' can only be \"inferred\"");
  std::set<std::string> ids;
  for (const char* list : {"entries", "rules"}) {
    if (!doc.contains(list)) continue;
    if (!doc[list].is_array()) {
      error(std::string("'") + list + "' must be an array");
      continue;
    }
    for (size_t i = 0; i < doc[list].size(); ++i) {
      const json& entry = doc[list][i];
      const std::string where = path + ": " + list + "[" + std::to_string(i) + "]" +
                                (entry.is_object() && entry.contains("id") ? " (" + entry["id"].dump() + ")" : "");
      ValidateEntry(entry, where, std::string(list) == "rules", errors);
      if (entry.is_object() && entry.contains("id") && entry["id"].is_string() && !ids.insert(entry["id"]).second)
        errors.push_back(where + ": duplicate id");
    }
  }
  if (doc.contains("numerics")) ValidateNumerics(doc["numerics"], path, errors);
  if (doc.contains("residency")) {
    const json& r = doc["residency"];
    if (!r.is_object())
      error("'residency' must be an object");
    else if (r.contains("max_delegated_partitions") && !r["max_delegated_partitions"].is_null() &&
             !(r["max_delegated_partitions"].is_number_integer() && r["max_delegated_partitions"].get<int>() > 0))
      error("'residency.max_delegated_partitions' must be a positive integer or null");
  }
  return errors;
}

Entry ParseEntry(const json& j, const std::string& origin, bool downgrade) {
  Entry e;
  e.id = j.at("id");
  e.op = j.value("op", "");
  e.when = j.value("when", json::object());
  e.status = *ParseStatus(j.at("status").get<std::string>());
  e.provenance = j.at("provenance");
  e.evidence = {j["evidence"].value("date", ""), j["evidence"].value("runtime", ""), j["evidence"].value("source", "")};
  e.why = j.value("why", "");
  e.consequence = j.value("consequence", "");
  e.hints = j.value("hints", std::vector<std::string>{});
  e.folded = j.value("folded", false);
  e.params = j.value("params", json::object());
  if (j.contains("severity")) e.params["severity"] = j["severity"];
  if (downgrade && e.provenance != "inferred") {
    // A fact documented for another runtime is only an inference for this one.
    e.evidence.source = e.provenance + " for " + origin + ": " + e.evidence.source;
    e.provenance = "inferred";
  }
  return e;
}

void Upsert(std::vector<Entry>& list, Entry entry) {
  auto it = std::find_if(list.begin(), list.end(), [&](const Entry& e) { return e.id == entry.id; });
  if (it != list.end())
    *it = std::move(entry);
  else
    list.push_back(std::move(entry));
}

void LoadInto(const std::string& dir, const std::string& target, Matrix& matrix, int depth, bool downgrade,
              const std::string& origin_runtime) {
  if (depth > 8) ThrowBadInput(dir + "/" + target + ".json: 'extends' chain deeper than 8 (a cycle?)");
  const std::string path = (fs::path(dir) / (target + ".json")).string();
  const json doc = ReadJsonFile(path);
  if (auto errors = ValidateJson(doc, path); !errors.empty()) ThrowBadInput(errors.front());
  // Inherited entries are downgraded when a file between them and the target
  // asks for it.
  const bool downgrade_base = downgrade || doc.contains("inherited_provenance");
  const std::string runtime = doc.value("runtime", "");
  if (doc.contains("extends"))
    LoadInto(dir, doc["extends"], matrix, depth + 1, downgrade_base, runtime.empty() ? origin_runtime : runtime);
  matrix.chain.insert(matrix.chain.begin(), target);
  for (const auto& id : doc.value("remove", std::vector<std::string>{})) {
    std::erase_if(matrix.entries, [&](const Entry& e) { return e.id == id; });
    std::erase_if(matrix.rules, [&](const Entry& e) { return e.id == id; });
  }
  for (const auto& j : doc.value("entries", json::array()))
    Upsert(matrix.entries, ParseEntry(j, runtime.empty() ? target : runtime, downgrade));
  for (const auto& j : doc.value("rules", json::array()))
    Upsert(matrix.rules, ParseEntry(j, runtime.empty() ? target : runtime, downgrade));
  if (doc.contains("residency")) {
    const json& r = doc["residency"];
    if (r.contains("max_delegated_partitions"))
      matrix.residency.max_delegated_partitions = r["max_delegated_partitions"].is_null()
                                                      ? std::nullopt
                                                      : std::optional<int>(r["max_delegated_partitions"].get<int>());
    matrix.residency.log_style = r.value("log_style", matrix.residency.log_style);
    matrix.residency.delegate_name = r.value("delegate_name", matrix.residency.delegate_name);
  }
  if (doc.contains("numerics")) {
    const json& n = doc["numerics"];
    matrix.numerics = {ParsePrecision(n["model"]),
                       n["provenance"],
                       {n["evidence"]["date"], n["evidence"]["runtime"], n["evidence"]["source"]},
                       n.value("why", "")};
  }
  if (doc.contains("known_mismatches"))
    for (const auto& [model, reason] : doc["known_mismatches"].items()) matrix.known_mismatches[model] = reason;
  if (!runtime.empty()) matrix.runtime = runtime;
  if (doc.contains("description")) matrix.description = doc["description"];
}

}  // namespace

std::string_view StatusName(Status status) {
  switch (status) {
    case Status::kDelegated: return "delegated";
    case Status::kPartial: return "partial";
    case Status::kFallback: return "fallback";
    case Status::kRejected: return "rejected";
    case Status::kIncorrect: return "incorrect";
    case Status::kUnknown: return "unknown";
  }
  return "unknown";
}

std::optional<Status> ParseStatus(std::string_view name) {
  for (Status s : {Status::kDelegated, Status::kPartial, Status::kFallback, Status::kRejected, Status::kIncorrect,
                   Status::kUnknown})
    if (StatusName(s) == name) return s;
  return std::nullopt;
}

bool RunsOnAccelerator(Status status) { return status != Status::kFallback && status != Status::kRejected; }

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "info";
  }
  return "info";
}

int Entry::specificity() const { return static_cast<int>(when.size()); }

const Entry* Matrix::Rule(const std::string& id) const {
  for (const Entry& rule : rules)
    if (rule.id == id) return &rule;
  return nullptr;
}

std::string ProvenanceSummary(const Matrix& matrix) {
  std::map<std::string, int> kinds;
  for (const auto& e : matrix.entries) ++kinds[e.provenance];
  for (const auto& e : matrix.rules) ++kinds[e.provenance];
  std::vector<std::string> counts;
  for (const char* kind : kProvenances)
    if (kinds.count(kind)) counts.push_back(fmt::format("{} {}", kinds[kind], kind));
  return fmt::format("{:>4} entries: {}", matrix.entries.size() + matrix.rules.size(), fmt::join(counts, ", "));
}

std::string DefaultDataDir() {
  if (const char* env = std::getenv("GPUCLEAN_DATA_DIR"); env && *env) return env;
  // The data ships with the sources (CMake passes their folder: __FILE__
  // is relative when a compiler cache rewrites paths).
  return (fs::path(GPUCLEAN_SOURCE_ROOT) / "data").string();
}

std::vector<std::string> SplitTargets(const std::string& list) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    if (end > begin) out.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

std::vector<std::string> ListTargets(const std::string& compat_dir) {
  std::vector<std::string> targets;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(compat_dir, ec)) {
    const std::string name = item.path().filename().string();
    if (item.path().extension() == ".json" && !name.starts_with("_")) targets.push_back(item.path().stem().string());
  }
  std::sort(targets.begin(), targets.end());
  return targets;
}

Matrix LoadMatrix(const std::string& compat_dir, const std::string& target) {
  const std::vector<std::string> targets = ListTargets(compat_dir);
  if (std::find(targets.begin(), targets.end(), target) == targets.end()) {
    std::string valid;
    for (const auto& t : targets) valid += (valid.empty() ? "" : ", ") + t;
    throw Error(ErrorKind::kUsage, "unknown target '" + target +
                                       "' (valid: " + (valid.empty() ? "none found in " + compat_dir : valid) + ")");
  }
  Matrix matrix;
  matrix.target = target;
  LoadInto(compat_dir, target, matrix, 0, false, "");
  if (matrix.numerics.provenance.empty())
    ThrowBadInput((fs::path(compat_dir) / (target + ".json")).string() +
                  ": names no numeric model: add \"numerics\": {model, provenance, evidence, why} (docs/lint.md)");
  return matrix;
}

Precision NumericModel(const Matrix& matrix) { return matrix.numerics.model; }

Precision ResolvePrecision(const std::string& name, const std::string& target, const std::string& compat_dir) {
  if (name != "fp16") return ParsePrecision(name);
  const std::string dir = compat_dir.empty() ? (fs::path(DefaultDataDir()) / "compat").string() : compat_dir;
  return NumericModel(LoadMatrix(dir, target));
}

std::vector<std::string> ValidateMatrixFile(const std::string& path) {
  json doc;
  try {
    doc = ReadJsonFile(path);
  } catch (const Error& e) {
    return {e.what()};
  }
  std::vector<std::string> errors = ValidateJson(doc, path);
  if (errors.empty() && doc.contains("extends")) {
    const std::string base = doc["extends"];
    if (!fs::exists(fs::path(path).parent_path() / (base + ".json")))
      errors.push_back(path + ": extends unknown target '" + base + "'");
  }
  return errors;
}

}  // namespace gpuclean::lint
