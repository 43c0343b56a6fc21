#include "gpuclean/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gpuclean/error.h"

namespace gpuclean::analyze {
namespace {

namespace fs = std::filesystem;

bool IsFloat(ir::DType dtype) {
  return dtype == tfl::TensorType_FLOAT32 || dtype == tfl::TensorType_FLOAT16 || dtype == tfl::TensorType_FLOAT64;
}

// in0.npy, in12.npy: the inputs `gpuclean run` and `gpuclean probe` write
// beside their outputs when they generate them.
bool IsGeneratedInputName(const std::string& file_name) {
  if (!file_name.starts_with("in") || !file_name.ends_with(".npy")) return false;
  const std::string digits = file_name.substr(2, file_name.size() - 6);
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string Stem(const std::string& file_name) {
  return file_name.ends_with(".npy") ? file_name.substr(0, file_name.size() - 4) : file_name;
}

struct FolderListing {
  std::map<std::string, std::string> files;  // file name -> path
  std::vector<std::string> skipped_inputs;
};

// skip_generated_inputs: either folder was written by `gpuclean run` or
// `probe` (has a meta.json); its in<N>.npy are inputs, not outputs, and
// matching inputs on the other side would read as a silent fallback.
FolderListing ListNpy(const fs::path& dir, bool skip_generated_inputs) {
  FolderListing out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string name = it->path().filename().string();
    if (!name.ends_with(".npy")) continue;
    if (skip_generated_inputs && IsGeneratedInputName(name)) {
      out.skipped_inputs.push_back(name);
      continue;
    }
    out.files[name] = it->path().string();
  }
  if (ec) throw Error(ErrorKind::kIo, fmt::format("{}: cannot list the folder: {}", dir.string(), ec.message()));
  return out;
}

std::string Num(double x, const char* spec = "{:.6g}") {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format(fmt::runtime(spec), x);
}

std::string ShapeText(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

TensorComparison CompareFiles(const std::string& name, const std::string& ref_path, const std::string& got_path,
                              const CompareOptions& options) {
  TensorComparison t;
  t.name = name;
  t.ref_path = ref_path;
  t.got_path = got_path;
  const npy::Array ref = npy::Read(ref_path), got = npy::Read(got_path);
  t.ref_dtype = std::string(ir::DTypeName(ref.dtype));
  t.got_dtype = std::string(ir::DTypeName(got.dtype));
  t.ref_shape = ref.shape;
  t.got_shape = got.shape;
  t.got_is_float = IsFloat(got.dtype);
  try {
    t.metrics = Compare(ref, got);
    for (const GateSpec& spec : options.gates)
      if (spec.tensor.empty() || spec.tensor == name)
        t.gates.push_back(ApplyGate(spec, ref, got, t.metrics, options.gate_options));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kBadInput) throw;
    throw Error(ErrorKind::kBadInput, fmt::format("{} vs {}: {}", ref_path, got_path, e.what()));
  }
  return t;
}

}  // namespace

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      // Compare the numbers without leading zeros: longer is larger.
      std::string_view na(a.data() + i, ie - i), nb(b.data() + j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // "out01" vs "out1": any fixed order
}

bool CompareReport::gates_passed() const {
  for (const TensorComparison& t : tensors)
    for (const GateResult& g : t.gates)
      if (!g.passed) return false;
  return true;
}

int CompareReport::exit_code() const {
  return gates_passed() && only_in_ref.empty() && only_in_got.empty() && !silent_fallback_suspected ? 0 : 1;
}

CompareReport CompareOutputs(const std::string& ref, const std::string& got, const CompareOptions& options) {
  for (const std::string& p : {ref, got})
    if (!fs::exists(p)) ThrowBadInput(p + ": no such file or folder");
  if (options.got_accelerator != "" && options.got_accelerator != "gpu" && options.got_accelerator != "cpu")
    throw Error(ErrorKind::kUsage, "--got-accelerator expects gpu or cpu, got '" + options.got_accelerator + "'");
  CompareReport report;
  report.ref = ref;
  report.got = got;
  report.got_accelerator = options.got_accelerator;
  const bool ref_dir = fs::is_directory(ref), got_dir = fs::is_directory(got);
  if (ref_dir != got_dir)
    throw Error(ErrorKind::kUsage, fmt::format("compare takes two .npy files or two folders; {} is a {} and {} a {}",
                                               ref, ref_dir ? "folder" : "file", got, got_dir ? "folder" : "file"));
  report.folders = ref_dir;

  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> pairs;  // name -> (ref, got)
  if (!report.folders) {
    pairs.push_back({Stem(fs::path(ref).filename().string()), {ref, got}});
  } else {
    const bool skip_inputs = fs::exists(fs::path(ref) / "meta.json") || fs::exists(fs::path(got) / "meta.json");
    FolderListing a = ListNpy(ref, skip_inputs), b = ListNpy(got, skip_inputs);
    report.skipped_inputs = a.skipped_inputs;
    for (const std::string& s : b.skipped_inputs)
      if (std::find(report.skipped_inputs.begin(), report.skipped_inputs.end(), s) == report.skipped_inputs.end())
        report.skipped_inputs.push_back(s);
    for (const auto& [name, path] : a.files) {
      if (auto it = b.files.find(name); it != b.files.end())
        pairs.push_back({Stem(name), {path, it->second}});
      else
        report.only_in_ref.push_back(name);
    }
    for (const auto& [name, path] : b.files)
      if (!a.files.count(name)) report.only_in_got.push_back(name);
    if (pairs.empty()) ThrowBadInput(fmt::format("{} and {} have no .npy file name in common", ref, got));
    const auto by_name = [](const auto& x, const auto& y) { return NaturalLess(x.first, y.first); };
    std::sort(pairs.begin(), pairs.end(), by_name);
    std::sort(report.only_in_ref.begin(), report.only_in_ref.end(), NaturalLess);
    std::sort(report.only_in_got.begin(), report.only_in_got.end(), NaturalLess);
    std::sort(report.skipped_inputs.begin(), report.skipped_inputs.end(), NaturalLess);
  }

  // A gate aimed at a tensor that is not compared is a typo, not a pass.
  for (const GateSpec& spec : options.gates) {
    if (spec.tensor.empty()) continue;
    const bool found = std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == spec.tensor; });
    if (!found)
      throw Error(ErrorKind::kUsage,
                  fmt::format("--gate {}:{}: no tensor named {} is compared", spec.tensor, spec.text, spec.tensor));
  }

  int float_tensors = 0;
  for (const auto& [name, paths] : pairs) {
    report.tensors.push_back(CompareFiles(name, paths.first, paths.second, options));
    const TensorComparison& t = report.tensors.back();
    if (!t.got_is_float) continue;
    ++float_tensors;
    if (t.metrics.bit_identical && t.metrics.count > 0) report.bit_identical_float.push_back(name);
  }
  report.silent_fallback_suspected = options.got_accelerator == "gpu" && float_tensors > 0 &&
                                     static_cast<int>(report.bit_identical_float.size()) == float_tensors;
  return report;
}

probe::Residency ReadResidencyLog(const std::string& log_path) {
  std::ifstream in(log_path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, log_path + ": cannot read the log file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::kIo, log_path + ": read error");
  return probe::ParseDelegateLog(text.str());
}

std::string RenderResidency(const probe::Residency& r, const std::string& source) {
  std::string s = fmt::format("residency ({}): {}\n", source, probe::Summarize(r));
  for (const probe::Delegation& d : r.delegations)
    s += fmt::format("  delegate {}: {}/{} nodes, {} partition(s)\n", d.delegate, d.replaced, d.total, d.partitions);
  if (!r.unsupported.empty()) {
    s += "  rejected by the GPU delegate:\n";
    for (const probe::UnsupportedOp& u : r.unsupported)
      s += fmt::format("    {}: {}\n", u.op, u.reason.empty() ? "(no reason logged)" : u.reason);
  }
  if (!r.compile_errors.empty()) {
    s += "  compile / prepare failures:\n";
    for (const std::string& e : r.compile_errors) s += "    " + e + "\n";
  }
  return s;
}

std::string SilentFallbackWarning(const CompareReport& r) {
  if (r.silent_fallback_suspected) {
    std::string s = fmt::format(
        "!! SILENT FALLBACK SUSPECTED: GOT is marked a GPU run, yet every float output is bit-identical to REF.\n"
        "!! A real fp16 GPU run drifts in the last digits; this one almost certainly ran on the CPU.\n");
    if (r.residency && r.residency->gpu_ops && *r.residency->gpu_ops == 0)
      s += "!! The log agrees: no op ran on the GPU.\n";
    else if (r.residency && r.residency->fully_delegated.value_or(false))
      s += "!! The log claims full GPU residency: check that this log belongs to this run and accelerator.\n";
    else
      s += "!! Check the delegate log's residency line (--log) before quoting these numbers.\n";
    return s;
  }
  if (r.got_accelerator == "gpu" && !r.bit_identical_float.empty())
    return fmt::format("!! {} bit-identical to REF in a GPU run: computed on the CPU (a partition fallback)?\n",
                       fmt::join(r.bit_identical_float, ", "));
  return "";
}

std::string RenderText(const CompareReport& r) {
  std::string s = fmt::format("REF {}\nGOT {}{}\n\n", r.ref, r.got,
                              r.got_accelerator.empty() ? "" : " (" + r.got_accelerator + " run)");
  size_t name_width = 6;
  for (const TensorComparison& t : r.tensors) name_width = std::max(name_width, t.name.size());
  s +=
      fmt::format("{:<{}}  {:<16}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>8}  {:>10}  {}\n", "tensor", name_width,
                  "shape", "corr", "cosine", "max abs", "mean abs", "rel err", "SNR dB", "non-finite", "bit-identical");
  for (const TensorComparison& t : r.tensors) {
    const Metrics& m = t.metrics;
    std::string shape = ShapeText(t.ref_shape);
    if (!m.shape_match) shape += " vs " + ShapeText(t.got_shape);
    s += fmt::format("{:<{}}  {:<16}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>8}  {:>10}  {}\n", t.name, name_width,
                     shape, Num(m.correlation, "{:.6f}"), Num(m.cosine, "{:.6f}"), Num(m.max_abs_diff),
                     Num(m.mean_abs_diff), Num(m.relative_error), Num(m.snr_db, "{:.1f}"),
                     fmt::format("{}/{}", m.nonfinite_ref, m.nonfinite_got), m.bit_identical ? "yes" : "no");
  }
  int passed = 0, failed = 0;
  std::string gates;
  for (const TensorComparison& t : r.tensors)
    for (const GateResult& g : t.gates) {
      (g.passed ? passed : failed)++;
      gates +=
          fmt::format("  {:<{}}  {:<14}  {}  {}\n", t.name, name_width, g.gate, g.passed ? "pass" : "FAIL", g.detail);
    }
  if (!gates.empty()) s += "\ngates:\n" + gates;
  if (!r.skipped_inputs.empty())
    s += fmt::format("\nskipped generated inputs: {}\n", fmt::join(r.skipped_inputs, ", "));
  if (!r.only_in_ref.empty()) s += fmt::format("\nonly in REF: {}\n", fmt::join(r.only_in_ref, ", "));
  if (!r.only_in_got.empty())
    s += fmt::format("{}only in GOT: {}\n", r.only_in_ref.empty() ? "\n" : "", fmt::join(r.only_in_got, ", "));
  if (r.residency) s += "\n" + RenderResidency(*r.residency, r.log_path);
  if (const std::string warning = SilentFallbackWarning(r); !warning.empty()) s += "\n" + warning;
  std::string verdict;
  if (passed + failed > 0)
    verdict = fmt::format("{} gate(s) passed, {} failed", passed, failed);
  else
    verdict = "no gates given";
  if (!r.only_in_ref.empty() || !r.only_in_got.empty()) verdict += "; files missing on one side";
  if (r.silent_fallback_suspected) verdict += "; silent fallback suspected";
  s += fmt::format("\nresult: {} ({})\n", r.exit_code() == 0 ? "PASS" : "FAIL", verdict);
  return s;
}

nlohmann::json ToJson(const CompareReport& r) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorComparison& t : r.tensors) {
    nlohmann::json gates = nlohmann::json::array();
    for (const GateResult& g : t.gates) gates.push_back(ToJson(g));
    tensors.push_back({{"name", t.name},
                       {"ref", t.ref_path},
                       {"got", t.got_path},
                       {"ref_dtype", t.ref_dtype},
                       {"got_dtype", t.got_dtype},
                       {"ref_shape", t.ref_shape},
                       {"got_shape", t.got_shape},
                       {"metrics", ToJson(t.metrics)},
                       {"gates", gates}});
  }
  return {{"ref", r.ref},
          {"got", r.got},
          {"folders", r.folders},
          {"got_accelerator", r.got_accelerator.empty() ? nlohmann::json() : nlohmann::json(r.got_accelerator)},
          {"tensors", tensors},
          {"only_in_ref", r.only_in_ref},
          {"only_in_got", r.only_in_got},
          {"skipped_inputs", r.skipped_inputs},
          {"bit_identical_float", r.bit_identical_float},
          {"silent_fallback_suspected", r.silent_fallback_suspected},
          {"residency", r.residency ? probe::ToJson(*r.residency) : nlohmann::json()},
          {"log", r.log_path.empty() ? nlohmann::json() : nlohmann::json(r.log_path)},
          {"gates_passed", r.gates_passed()},
          {"passed", r.exit_code() == 0}};
}

}  // namespace gpuclean::analyze
