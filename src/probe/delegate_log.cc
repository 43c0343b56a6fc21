// GPU-delegate residency from log text. Kept free of any process or file
// handling so that `gpuclean compare --log` can feed it a saved logcat.
// probe/residency.mjs is the harness's copy of the same rules; the probe
// tests check that both agree on real harness logs.
#include <cctype>
#include <cstring>
#include <regex>
#include <sstream>

#include "gpuclean/error.h"
#include "gpuclean/probe.h"

namespace gpuclean::probe {
namespace {

constexpr auto kRegexFlags = std::regex::ECMAScript | std::regex::optimize;
constexpr auto kRegexFlagsIcase = kRegexFlags | std::regex::icase;

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

int64_t ToInt(const std::ssub_match& m) { return std::stoll(m.str()); }

bool Contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

// Cheap guard before the compile-error regex: every alternative in it holds
// one of these words (case-insensitively).
bool MayBeCompileError(const std::string& line) {
  std::string lower = line;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* word : {"fail", "unresolved", "aborted(", "runtimeerror", "could not compile"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

// Hand-written prefix matchers: std::regex took ~50 us a line, too slow for
// a 100k-line logcat. Each returns the prefix length, or 0 when `s` does not
// start with that prefix. Patterns (the same as probe/residency.mjs):
//   logcat threadtime  ^\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+\s+[VDIWEF]\s+[^:]*:
//   logcat brief       ^[VDIWEF]/[^(:]*(\(\s*\d+\))?\s*:
//   logcat tag         ^[VDIWEF]\s+[\w.$-]+\s*:
//   glog (ML Drift)    ^[IWEF]\d{4}\s+\d\d:\d\d:\d\d\.\d+\s+\d+\s+[^\]\s]+:\d+\]
//   bracket tag        ^\[[\w .-]*\]          ([compile], [LiteRT])
//   TFLite severity    ^(INFO|WARNING|ERROR|VERBOSE|DEBUG|FATAL)\s*:\s*(\[[^\]]*\])?
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  size_t pos() const { return i_; }
  bool AtEnd() const { return i_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[i_]; }
  bool Char(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }
  bool OneOf(const char* set) {
    if (AtEnd() || !std::strchr(set, s_[i_])) return false;
    ++i_;
    return true;
  }
  // Exactly n digits (n > 0), or at least one when n == 0.
  bool Digits(size_t n = 0) {
    size_t k = 0;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(s_[i_])) && (n == 0 || k < n)) ++i_, ++k;
    return n == 0 ? k > 0 : k == n;
  }
  size_t Spaces() {
    size_t k = 0;
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_, ++k;
    return k;
  }
  template <typename Pred>
  size_t While(Pred pred) {
    size_t k = 0;
    while (!AtEnd() && pred(s_[i_])) ++i_, ++k;
    return k;
  }
  bool Word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

constexpr const char* kLogcatLevels = "VDIWEF";

bool Time(Cursor& c) {  // HH:MM:SS.fraction
  return c.Digits(2) && c.Char(':') && c.Digits(2) && c.Char(':') && c.Digits(2) && c.Char('.') && c.Digits();
}

size_t LogcatThreadtime(std::string_view s) {
  Cursor c(s);
  if (!(c.Digits(2) && c.Char('-') && c.Digits(2) && c.Spaces() && Time(c) && c.Spaces() && c.Digits() && c.Spaces() &&
        c.Digits() && c.Spaces() && c.OneOf(kLogcatLevels) && c.Spaces()))
    return 0;
  c.While([](char ch) { return ch != ':'; });
  return c.Char(':') ? c.pos() : 0;
}

size_t LogcatBrief(std::string_view s) {
  Cursor c(s);
  if (!(c.OneOf(kLogcatLevels) && c.Char('/'))) return 0;
  c.While([](char ch) { return ch != '(' && ch != ':'; });
  if (c.Char('(')) {
    c.Spaces();
    if (!(c.Digits() && c.Char(')'))) return 0;
  }
  c.Spaces();
  return c.Char(':') ? c.pos() : 0;
}

size_t LogcatTag(std::string_view s) {
  Cursor c(s);
  if (!(c.OneOf(kLogcatLevels) && c.Spaces())) return 0;
  const auto tag_char = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '$' || ch == '-';
  };
  if (!c.While(tag_char)) return 0;
  c.Spaces();
  return c.Char(':') ? c.pos() : 0;
}

size_t Glog(std::string_view s) {
  Cursor c(s);
  if (!(c.OneOf("IWEF") && c.Digits(4) && c.Spaces() && Time(c) && c.Spaces() && c.Digits() && c.Spaces())) return 0;
  // "file.cc:855]": the file name runs to the last ':' before ']'.
  const size_t start = c.pos();
  if (!c.While([](char ch) { return ch != ']' && !std::isspace(static_cast<unsigned char>(ch)); })) return 0;
  if (!c.Char(']')) return 0;
  const std::string_view location = s.substr(start, c.pos() - 1 - start);
  const size_t colon = location.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == location.size()) return 0;
  for (char ch : location.substr(colon + 1))
    if (!std::isdigit(static_cast<unsigned char>(ch))) return 0;
  return c.pos();
}

size_t BracketTag(std::string_view s) {
  Cursor c(s);
  if (!c.Char('[')) return 0;
  c.While([](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ' ' || ch == '.' || ch == '-';
  });
  return c.Char(']') ? c.pos() : 0;
}

size_t Severity(std::string_view s) {
  Cursor c(s);
  bool matched = false;
  for (const char* word : {"INFO", "WARNING", "ERROR", "VERBOSE", "DEBUG", "FATAL"})
    if (c.Word(word)) {
      matched = true;
      break;
    }
  if (!matched) return 0;
  c.Spaces();
  if (!c.Char(':')) return 0;
  c.Spaces();
  const size_t before_location = c.pos();
  if (c.Char('[')) {
    c.While([](char ch) { return ch != ']'; });
    if (!c.Char(']')) return before_location;
  }
  return c.pos();
}

}  // namespace

std::string StripLogPrefixes(std::string_view line) {
  std::string s = Trim(line);
  for (bool changed = true; changed && !s.empty();) {
    changed = false;
    for (auto matcher : {LogcatThreadtime, LogcatBrief, LogcatTag, Glog, BracketTag, Severity}) {
      if (const size_t n = matcher(s); n > 0) {
        s = Trim(std::string_view(s).substr(n));
        changed = true;
      }
    }
  }
  return s;
}

Residency ParseDelegateLog(std::string_view log_text) {
  static const std::regex some_on_gpu(
      R"((\d+) operations? will run on the GPU, and the remaining (\d+) operations? will run on the CPU)",
      kRegexFlagsIcase);
  static const std::regex none_on_gpu(
      R"(No operations will run on the GPU, and all (\d+) operations? will run on the CPU)", kRegexFlagsIcase);
  static const std::regex all_on_gpu(R"(All (\d+) operations? will run on the GPU)", kRegexFlagsIcase);
  static const std::regex replacing(
      R"(Replacing (\d+) out of (\d+) node\(s\) with delegate \(([^)]*)\) node, yielding (\d+) partitions?)",
      kRegexFlagsIcase);
  static const std::regex unsupported_header(R"(Following operations are not supported by GPU delegate)",
                                             kRegexFlagsIcase);
  // "DENSIFY: Operation is not supported.", "DEQUANTIZE: " (reason may be empty)
  static const std::regex unsupported_entry(R"(^([A-Za-z_][A-Za-z0-9_]*(?:\s*\([^)]*\))?):\s*(.*)$)", kRegexFlags);
  static const std::regex fallback(
      R"(Model not fully compiled for (\w+)(?: on [^.]*)?\.\s*(Partially delegating to WASM execution|Falling back to WASM execution))",
      kRegexFlagsIcase);
  // ML Drift prints no count when it takes every op: the delegate kernel
  // coming up without any CPU report is what full delegation looks like.
  static const std::regex delegate_initialized(
      R"(Initializing (?:WebGPU|OpenCL|OpenGL|Metal|Vulkan)-based API|Created TensorFlow Lite delegate for GPU|Initialized (?:OpenCL|OpenGL)-based API)",
      kRegexFlagsIcase);
  static const std::regex compile_error(
      R"(failed to (?:prepare|compile|apply|create|initialize|build|allocate)|Failed to allocate tensors|Failed to invoke|Invoke failed|compilation failed|unresolved custom op|Aborted\(|RuntimeError|could not compile)",
      kRegexFlagsIcase);

  Residency r;
  struct OpCount {
    int64_t gpu, cpu;
  };
  std::vector<OpCount> op_counts;
  bool in_unsupported_list = false;

  size_t pos = 0;
  while (pos <= log_text.size()) {
    size_t end = log_text.find('\n', pos);
    if (end == std::string_view::npos) end = log_text.size();
    const std::string line = StripLogPrefixes(log_text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    std::smatch m;
    // Cheap substring tests first: logcat dumps run to 100k lines.
    if (Contains(line, "not supported by GPU delegate") && std::regex_search(line, unsupported_header)) {
      in_unsupported_list = true;
      continue;
    }
    if (Contains(line, "will run on the")) {
      if (std::regex_search(line, m, some_on_gpu))
        op_counts.push_back({ToInt(m[1]), ToInt(m[2])});
      else if (std::regex_search(line, m, none_on_gpu))
        op_counts.push_back({0, ToInt(m[1])});
      else if (std::regex_search(line, m, all_on_gpu))
        op_counts.push_back({ToInt(m[1]), 0});
    } else if (Contains(line, "Replacing") && std::regex_search(line, m, replacing)) {
      r.delegations.push_back({m[3].str(), ToInt(m[1]), ToInt(m[2]), ToInt(m[4])});
    } else if (Contains(line, "-based API") || Contains(line, "delegate for GPU")) {
      if (std::regex_search(line, delegate_initialized)) r.delegate_initialized = true;
    } else if (Contains(line, "not fully compiled") && std::regex_search(line, m, fallback)) {
      r.fallback = m[2].str().rfind("Partially", 0) == 0 ? "partial" : "wasm";
    } else if (in_unsupported_list && std::regex_search(line, m, unsupported_entry)) {
      r.unsupported.push_back({m[1].str(), Trim(m[2].str())});
      continue;
    } else if (MayBeCompileError(line) && std::regex_search(line, compile_error)) {
      r.compile_errors.push_back(line);
    }
    in_unsupported_list = false;
  }

  // XNNPACK reports its own "Replacing" line; that is the CPU path.
  std::vector<const Delegation*> gpu_delegations;
  for (const Delegation& d : r.delegations) {
    std::string name = d.delegate;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name.find("xnnpack") == std::string::npos) gpu_delegations.push_back(&d);
  }
  if (!op_counts.empty()) {
    int64_t gpu = 0, cpu = 0;
    for (const OpCount& c : op_counts) gpu += c.gpu, cpu += c.cpu;
    r.gpu_ops = gpu;
    r.cpu_ops = cpu;
  } else if (!gpu_delegations.empty()) {
    int64_t gpu = 0, cpu = 0;
    for (const Delegation* d : gpu_delegations) gpu += d->replaced, cpu += d->total - d->replaced;
    r.gpu_ops = gpu;
    r.cpu_ops = cpu;
  }
  if (r.gpu_ops) {
    r.total_ops = *r.gpu_ops + *r.cpu_ops;
    r.counts_source = "log";
  }
  if (!gpu_delegations.empty()) {
    int64_t partitions = 0;
    for (const Delegation* d : gpu_delegations) partitions += d->partitions;
    r.partitions = partitions;
  } else if (r.gpu_ops && *r.gpu_ops == 0) {
    r.partitions = 0;
  }

  if (!r.fallback.empty() || !r.compile_errors.empty() || !r.unsupported.empty() || (r.cpu_ops && *r.cpu_ops > 0) ||
      (r.gpu_ops && *r.gpu_ops == 0)) {
    r.fully_delegated = false;
  } else if (r.gpu_ops) {
    r.fully_delegated = !r.partitions || *r.partitions <= 1;
  } else if (r.delegate_initialized) {
    r.fully_delegated = true;
  }
  return r;
}

namespace {
template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
template <typename T>
std::optional<T> OptionalFrom(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}
}  // namespace

nlohmann::json ToJson(const Residency& r) {
  nlohmann::json unsupported = nlohmann::json::array();
  for (const UnsupportedOp& u : r.unsupported) unsupported.push_back({{"op", u.op}, {"reason", u.reason}});
  nlohmann::json delegations = nlohmann::json::array();
  for (const Delegation& d : r.delegations)
    delegations.push_back(
        {{"delegate", d.delegate}, {"replaced", d.replaced}, {"total", d.total}, {"partitions", d.partitions}});
  return {
      {"gpu_ops", OrNull(r.gpu_ops)},
      {"cpu_ops", OrNull(r.cpu_ops)},
      {"total_ops", OrNull(r.total_ops)},
      {"partitions", OrNull(r.partitions)},
      {"fully_delegated", OrNull(r.fully_delegated)},
      {"fallback", r.fallback.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.fallback)},
      {"delegate_initialized", r.delegate_initialized},
      {"unsupported", unsupported},
      {"compile_errors", r.compile_errors},
      {"delegations", delegations},
      {"counts_source", r.counts_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.counts_source)},
  };
}

Residency ResidencyFromJson(const nlohmann::json& j) {
  Residency r;
  try {
    r.gpu_ops = OptionalFrom<int64_t>(j, "gpu_ops");
    r.cpu_ops = OptionalFrom<int64_t>(j, "cpu_ops");
    r.total_ops = OptionalFrom<int64_t>(j, "total_ops");
    r.partitions = OptionalFrom<int64_t>(j, "partitions");
    r.fully_delegated = OptionalFrom<bool>(j, "fully_delegated");
    r.fallback = OptionalFrom<std::string>(j, "fallback").value_or("");
    r.delegate_initialized = j.value("delegate_initialized", false);
    for (const auto& u : j.value("unsupported", nlohmann::json::array()))
      r.unsupported.push_back({u.at("op").get<std::string>(), u.value("reason", "")});
    r.compile_errors = j.value("compile_errors", std::vector<std::string>{});
    for (const auto& d : j.value("delegations", nlohmann::json::array()))
      r.delegations.push_back({d.at("delegate").get<std::string>(), d.at("replaced").get<int64_t>(),
                               d.at("total").get<int64_t>(), d.at("partitions").get<int64_t>()});
    r.counts_source = OptionalFrom<std::string>(j, "counts_source").value_or("");
  } catch (const nlohmann::json::exception& e) {
    ThrowBadInput(std::string("residency JSON: ") + e.what());
  }
  return r;
}

std::string Summarize(const Residency& r) {
  std::ostringstream out;
  if (r.gpu_ops && r.total_ops) {
    out << *r.gpu_ops << "/" << *r.total_ops << " ops on the GPU, " << *r.cpu_ops << " on the CPU";
    if (r.counts_source == "model") out << " (counted from the model)";
  } else {
    out << "op counts not in the log";
  }
  if (r.partitions) out << "; " << *r.partitions << " GPU partition(s)";
  if (r.fully_delegated)
    out << (*r.fully_delegated ? "; fully delegated" : "; not fully delegated");
  else
    out << "; residency unknown (no GPU delegate lines)";
  if (r.fallback == "partial")
    out << " (the rest runs on WASM)";
  else if (r.fallback == "wasm")
    out << " (the whole model fell back to WASM)";
  if (!r.unsupported.empty()) out << "; " << r.unsupported.size() << " rejected op report(s)";
  if (!r.compile_errors.empty()) out << "; " << r.compile_errors.size() << " compile error line(s)";
  return out.str();
}

}  // namespace gpuclean::probe
