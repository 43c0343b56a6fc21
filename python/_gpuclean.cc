// The Python binding of gpuclean: thin wrappers over the C++ library, with
// numpy arrays for tensors and Python dicts for the JSON reports. No logic
// lives here that the CLI does not share; each function calls the same
// library entry points as its command (see docs/python.md).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuclean/bisect.h"
#include "gpuclean/convert.h"
#include "gpuclean/convert_pipeline.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/gates.h"
#include "gpuclean/host_steps.h"
#include "gpuclean/inspect.h"
#include "gpuclean/io.h"
#include "gpuclean/limits.h"
#include "gpuclean/lint.h"
#include "gpuclean/metrics.h"
#include "gpuclean/npy.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/recipe.h"
#include "gpuclean/rewrite.h"
#include "gpuclean/run.h"
#include "gpuclean/shapes.h"
#include "gpuclean/split.h"

namespace py = pybind11;
using namespace gpuclean;

namespace {

// ---- JSON <-> Python ---------------------------------------------------------
// The reports are documented as JSON (docs/*.md); going through the json
// module keeps the Python dicts byte-for-byte what `--json` prints, including
// the replacement of invalid UTF-8 and NaN -> null.
py::object ToPython(const nlohmann::json& value) {
  // Leaked on purpose: a static py::object would be released after the
  // interpreter has finalised, which aborts the process at exit.
  static const py::handle loads = py::object(py::module_::import("json").attr("loads")).release();
  return loads(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// ---- numpy <-> npy::Array ----------------------------------------------------
// Every dtype the interpreter has kernels for has a numpy twin of the same name.
constexpr ir::DType kNumpyDTypes[] = {
    tfl::TensorType_FLOAT32, tfl::TensorType_FLOAT16, tfl::TensorType_FLOAT64, tfl::TensorType_INT8,
    tfl::TensorType_UINT8,   tfl::TensorType_INT16,   tfl::TensorType_UINT16,  tfl::TensorType_INT32,
    tfl::TensorType_UINT32,  tfl::TensorType_INT64,   tfl::TensorType_UINT64,  tfl::TensorType_BOOL,
};

std::optional<ir::DType> DTypeFromNumpy(const py::dtype& dtype) {
  const std::string name = py::str(dtype.attr("name"));
  for (ir::DType d : kNumpyDTypes)
    if (ir::DTypeName(d) == name) return d;
  return std::nullopt;
}

py::dtype NumpyDType(ir::DType dtype) {
  for (ir::DType d : kNumpyDTypes)
    if (d == dtype) return py::dtype(std::string(ir::DTypeName(d)));
  throw Error(ErrorKind::kUnsupported,
              fmt::format("tensors of dtype {} have no numpy equivalent", ir::DTypeName(dtype)));
}

// The bytes of `given` in C order and native byte order (ascontiguousarray
// with a native-order dtype also undoes a byte swap).
npy::Array Pack(const py::array& given, ir::DType dtype) {
  static const py::handle contiguous = py::object(py::module_::import("numpy").attr("ascontiguousarray")).release();
  py::array packed = contiguous(given, py::arg("dtype") = given.dtype().attr("newbyteorder")("="));
  npy::Array array;
  array.dtype = dtype;
  array.shape.assign(packed.shape(), packed.shape() + packed.ndim());
  const auto* bytes = static_cast<const uint8_t*>(packed.data());
  array.data.assign(bytes, bytes + packed.nbytes());
  return array;
}

// A copy of `value` checked against graph input `index`: the dtype must
// match exactly (no silent casts - a float64 array fed to a float32 model is
// usually a bug in the caller's preprocessing) and so must the shape.
npy::Array FromNumpy(const py::handle& value, const ir::Subgraph& graph, int index) {
  const ir::Tensor& tensor = graph.tensors[graph.inputs[index]];
  if (!py::isinstance<py::array>(value))
    throw Error(ErrorKind::kBadInput, fmt::format("input {} ('{}') must be a numpy array, got {}", index, tensor.name,
                                                  std::string(py::str(py::type::of(value).attr("__name__")))));
  // ascontiguousarray also turns a byte-swapped array into native order.
  py::array given = py::reinterpret_borrow<py::array>(value);
  const std::optional<ir::DType> dtype = DTypeFromNumpy(given.dtype());
  if (!dtype || *dtype != tensor.dtype)
    throw Error(ErrorKind::kBadInput,
                fmt::format("input {} ('{}') expects {} but got {}", index, tensor.name, ir::DTypeName(tensor.dtype),
                            std::string(py::str(given.dtype().attr("name")))));
  std::vector<int32_t> shape(given.shape(), given.shape() + given.ndim());
  if (shape != tensor.shape)
    throw Error(ErrorKind::kBadInput, fmt::format("input {} ('{}') expects shape {} but got {}", index, tensor.name,
                                                  ir::FormatShape(tensor.shape), ir::FormatShape(shape)));
  return Pack(given, *dtype);
}

// Zero-copy: the numpy array views the npy::Array's bytes and owns them
// through a capsule, so results are not copied a second time.
py::array ToNumpy(npy::Array&& array) {
  auto* owned = new npy::Array(std::move(array));
  py::capsule owner(owned, [](void* p) { delete static_cast<npy::Array*>(p); });
  const py::dtype dtype = NumpyDType(owned->dtype);
  std::vector<py::ssize_t> shape(owned->shape.begin(), owned->shape.end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = dtype.itemsize();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return py::array(dtype, shape, strides, owned->data.data(), owner);
}

// ---- the model object --------------------------------------------------------
struct PyModel {
  std::string path;
  std::shared_ptr<const ir::Model> model;

  // Prepared interpreters, reused across runs: preparing folds constants and
  // plans the arena, which costs as much as a run on the fixture models.
  // Each run takes one out of the pool (or prepares a new one), so runs of
  // one model from several threads proceed in parallel.
  struct PoolKey {
    exec::Precision precision;
    int threads;
    auto operator<=>(const PoolKey&) const = default;
  };
  std::mutex pool_mutex;
  std::map<PoolKey, std::vector<std::unique_ptr<exec::Interpreter>>> pool;

  const ir::Subgraph& graph() const { return model->main(); }

  std::unique_ptr<exec::Interpreter> Take(const PoolKey& key) {
    {
      std::lock_guard lock(pool_mutex);
      auto& idle = pool[key];
      if (!idle.empty()) {
        auto interpreter = std::move(idle.back());
        idle.pop_back();
        return interpreter;
      }
    }
    return std::make_unique<exec::Interpreter>(model, exec::InterpreterOptions{key.threads, key.precision});
  }
  void Give(const PoolKey& key, std::unique_ptr<exec::Interpreter> interpreter) {
    std::lock_guard lock(pool_mutex);
    pool[key].push_back(std::move(interpreter));
  }
};

std::shared_ptr<PyModel> Load(const std::string& path) {
  auto model = std::make_shared<PyModel>();
  model->path = path;
  {
    py::gil_scoped_release release;  // reading and verifying a large model takes a while
    model->model = std::make_shared<const ir::Model>(format::ReadModel(path));
  }
  return model;
}

py::list TensorList(const ir::Subgraph& graph, const std::vector<int32_t>& indices) {
  py::list list;
  for (int32_t t : indices) {
    const ir::Tensor& tensor = graph.tensors[t];
    py::dict entry;
    entry["name"] = tensor.name;
    entry["dtype"] = std::string(ir::DTypeName(tensor.dtype));
    entry["shape"] = py::tuple(py::cast(tensor.shape));
    entry["index"] = t;
    list.append(entry);
  }
  return list;
}

py::list OpList(const ir::Subgraph& graph) {
  py::list list;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const ir::Op& op = graph.ops[i];
    py::dict entry;
    entry["index"] = static_cast<int>(i);
    entry["op"] = op.name();
    entry["inputs"] = op.inputs;
    entry["outputs"] = op.outputs;
    list.append(entry);
  }
  return list;
}

int ResolveKey(const ir::Subgraph& graph, const py::handle& key) {
  if (py::isinstance<py::int_>(key)) {
    const int index = key.cast<int>();
    if (index < 0 || index >= static_cast<int>(graph.inputs.size()))
      throw Error(ErrorKind::kUsage,
                  fmt::format("input {} does not exist (the model has {})", index, graph.inputs.size()));
    return index;
  }
  if (py::isinstance<py::str>(key)) return exec::ResolveInputKey(graph, key.cast<std::string>());
  throw Error(ErrorKind::kUsage, "input keys are input indices (int) or tensor names (str)");
}

// Every graph input's value: those given (a list in input order, or a dict
// keyed by index or name) checked and copied, the rest generated exactly as
// `gpuclean run --seed` does.
std::vector<npy::Array> Inputs(const ir::Subgraph& graph, const py::object& given, uint32_t seed) {
  std::vector<npy::Array> inputs = exec::PrepareInputs(graph, {}, seed);
  if (given.is_none()) return inputs;
  if (py::isinstance<py::dict>(given)) {
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(given)) {
      const int index = ResolveKey(graph, key);
      inputs[index] = FromNumpy(value, graph, index);
    }
    return inputs;
  }
  if (py::isinstance<py::array>(given) || !py::isinstance<py::sequence>(given) || py::isinstance<py::str>(given))
    throw Error(ErrorKind::kUsage,
                "inputs must be a list of numpy arrays (input order) or a dict keyed by "
                "input index or tensor name");
  const py::sequence list = py::reinterpret_borrow<py::sequence>(given);
  if (list.size() != graph.inputs.size())
    throw Error(ErrorKind::kUsage,
                fmt::format("the model has {} input(s) but {} were given", graph.inputs.size(), list.size()));
  for (size_t i = 0; i < list.size(); ++i) inputs[i] = FromNumpy(list[i], graph, static_cast<int>(i));
  return inputs;
}

py::object Run(PyModel& self, const py::object& given, const std::string& precision, std::optional<int> threads,
               bool taps, uint32_t seed) {
  const PyModel::PoolKey key{exec::ParsePrecision(precision), threads.value_or(1)};
  if (key.threads < 1) throw Error(ErrorKind::kUsage, "threads must be at least 1");
  std::vector<npy::Array> inputs = Inputs(self.graph(), given, seed);
  std::vector<npy::Array> outputs;
  std::vector<std::pair<int, npy::Array>> tapped;  // tensor index -> value, in execution order
  {
    // The run touches no Python object: other Python threads keep going.
    py::gil_scoped_release release;
    std::unique_ptr<exec::Interpreter> interpreter = self.Take(key);
    for (size_t i = 0; i < inputs.size(); ++i) interpreter->SetInput(static_cast<int>(i), inputs[i]);
    exec::TapFn tap;
    if (taps)
      tap = [&tapped](int, int tensor, const exec::Tensor& value) {
        tapped.emplace_back(tensor, exec::ToArray(value));
      };
    interpreter->Invoke(tap);
    for (int i = 0; i < interpreter->num_outputs(); ++i) outputs.push_back(interpreter->Output(i));
    self.Give(key, std::move(interpreter));
  }
  py::list result;
  for (npy::Array& output : outputs) result.append(ToNumpy(std::move(output)));
  if (!taps) return result;
  py::dict tensors;
  for (auto& [index, value] : tapped) tensors[py::str(self.graph().tensors[index].name)] = ToNumpy(std::move(value));
  return py::make_tuple(result, tensors);
}

std::shared_ptr<const ir::Model> ModelOf(const py::object& model_or_path, std::string& label) {
  if (py::isinstance<PyModel>(model_or_path)) {
    const auto& model = model_or_path.cast<const PyModel&>();
    label = model.path;
    return model.model;
  }
  label = py::str(py::module_::import("os").attr("fspath")(model_or_path));
  py::gil_scoped_release release;
  return std::make_shared<const ir::Model>(format::ReadModel(label));
}

std::string CompatDir(const std::optional<std::string>& matrix_dir) {
  return matrix_dir ? *matrix_dir : (std::filesystem::path(lint::DefaultDataDir()) / "compat").string();
}

py::object Lint(const py::object& model_or_path, const std::optional<std::string>& target,
                const std::optional<std::string>& matrix_dir) {
  std::string label;
  const std::shared_ptr<const ir::Model> model = ModelOf(model_or_path, label);
  nlohmann::json report;
  {
    py::gil_scoped_release release;
    const lint::Matrix matrix = lint::LoadMatrix(CompatDir(matrix_dir), target.value_or(lint::kDefaultTarget));
    lint::Report result = lint::Lint(*model, matrix);
    if (result.model.empty()) result.model = label;
    report = lint::ToJson(result, matrix);
  }
  return ToPython(report);
}

// A side of a bisect: a numeric mode of the model, or another model (a Model
// or a path) run in fp32 - the same choices as `bisect --a/--b`.
analyze::BisectSide Side(const py::object& spec, const std::shared_ptr<const ir::Model>& model) {
  if (py::isinstance<py::str>(spec)) {
    const std::string text = spec.cast<std::string>();
    const std::vector<std::string>& modes = exec::PrecisionNames();
    if (std::find(modes.begin(), modes.end(), text) != modes.end()) return {model, text, exec::ParsePrecision(text)};
    if (!std::filesystem::exists(text))
      throw Error(ErrorKind::kUsage,
                  "a/b take fp32, fp16-storage, fp16-compute, fp16-fused, fp16-f32acc, a Model or a model file; '" +
                      text + "' is neither");
  }
  std::string label;
  auto other = ModelOf(spec, label);
  return {other, label, exec::Precision::kFp32};
}

py::object Bisect(const py::object& model_or_path, const py::object& given, const py::object& a, const py::object& b,
                  double min_correlation, int threads, uint32_t seed) {
  if (threads < 1) throw Error(ErrorKind::kUsage, "threads must be at least 1");
  std::string label;
  const std::shared_ptr<const ir::Model> model = ModelOf(model_or_path, label);
  const analyze::BisectSide side_a = Side(a, model), side_b = Side(b, model);
  const std::vector<npy::Array> inputs = Inputs(model->main(), given, seed);
  nlohmann::json report;
  {
    py::gil_scoped_release release;
    analyze::BisectReport result =
        analyze::Bisect(side_a, side_b, inputs, {.min_correlation = min_correlation, .threads = threads});
    result.model = label;
    report = analyze::ToJson(result);
  }
  return ToPython(report);
}

// An array compared with a reference: `compare`'s metrics and gates for one
// tensor pair, without the .npy files in between.
npy::Array AnyArray(const py::handle& value, const char* which) {
  if (!py::isinstance<py::array>(value)) throw Error(ErrorKind::kUsage, fmt::format("{} must be a numpy array", which));
  py::array given = py::reinterpret_borrow<py::array>(value);
  const std::optional<ir::DType> dtype = DTypeFromNumpy(given.dtype());
  if (!dtype)
    throw Error(ErrorKind::kBadInput, fmt::format("{} has dtype {}, which gpuclean does not compare", which,
                                                  std::string(py::str(given.dtype().attr("name")))));
  return Pack(given, *dtype);
}

py::object Compare(const py::object& ref, const py::object& got, const std::vector<std::string>& gates,
                   std::optional<std::string> boxes, std::optional<double> mask_threshold) {
  const npy::Array ref_array = AnyArray(ref, "ref"), got_array = AnyArray(got, "got");
  analyze::GateOptions options;
  if (boxes) options.boxes = analyze::ParseBoxFormat(*boxes);
  options.mask_threshold = mask_threshold;
  std::vector<analyze::GateSpec> specs;
  for (const std::string& text : gates) specs.push_back(analyze::ParseGate(text));
  nlohmann::json report;
  {
    py::gil_scoped_release release;
    const analyze::Metrics metrics = analyze::Compare(ref_array, got_array);
    report["metrics"] = analyze::ToJson(metrics);
    report["gates"] = nlohmann::json::array();
    bool passed = true;
    for (const analyze::GateSpec& spec : specs) {
      const analyze::GateResult result = analyze::ApplyGate(spec, ref_array, got_array, metrics, options);
      passed = passed && result.passed;
      report["gates"].push_back(analyze::ToJson(result));
    }
    report["passed"] = passed;
  }
  return ToPython(report);
}

// fix: the report `gpuclean fix --format json` prints plus the fixed model
// (a Model, or None when a proof failed or lint errors remain, unless
// allow_remaining); written to `output` when given.
py::object Fix(const py::object& model_or_path, const std::optional<std::string>& output,
               const std::optional<std::vector<std::string>>& passes, const std::optional<std::string>& target,
               uint32_t seed, bool gelu_sigmoid, bool allow_remaining) {
  std::string label;
  const std::shared_ptr<const ir::Model> model = ModelOf(model_or_path, label);
  rewrite::FixOptions options;
  options.target = target.value_or(lint::kDefaultTarget);
  options.passes = passes.value_or(std::vector<std::string>{});
  options.seed = seed;
  options.pass_options.gelu_sigmoid = gelu_sigmoid;
  nlohmann::json report;
  std::shared_ptr<PyModel> fixed;
  {
    py::gil_scoped_release release;
    rewrite::FixResult result = rewrite::Fix(*model, options);
    report = rewrite::ToJson(result);
    report["model"] = label;
    const bool keep = result.ok || (result.proven && allow_remaining);
    report["written"] = output && keep ? rewrite::WriteResult(result, *output, false) : std::vector<std::string>{};
    if (keep) {
      fixed = std::make_shared<PyModel>();
      fixed->path = output.value_or(label + " (fixed)");
      fixed->model = std::make_shared<const ir::Model>(std::move(result.model));
    }
  }
  return py::make_tuple(ToPython(report), fixed ? py::cast(fixed) : py::none());
}

// convert: ONNX -> .tflite proven against onnxruntime (`gpuclean convert --json`).
py::object ConvertPipeline(const convert::Options& options, const std::string& islands,
                           const std::optional<std::string>& recipe_dir);

// convert(..., recipe=DIR): the recipe of what was written (recipe.h), its
// references from the same ONNX model; the report gains "recipe".
void AddRecipe(nlohmann::json& report, const convert::Options& options, const std::string& written,
               const std::optional<std::string>& recipe_dir) {
  if (!recipe_dir || written.empty()) return;
  recipe::Options o;
  o.source = written;
  o.out_dir = *recipe_dir;
  o.against = options.onnx_path;
  o.target = options.target;
  o.commands = {"gpuclean.convert(\"" + options.onnx_path + "\", target=\"" + options.target + "\", ...)"};
  const recipe::Result r = recipe::WriteRecipe(o);
  report["recipe"] = {{"dir", r.out_dir}, {"files", r.files}, {"passed", r.passed}, {"summary", r.summary}};
}

py::object Convert(const std::string& path, const std::optional<std::string>& output,
                   const std::map<std::string, std::vector<int64_t>>& inputs, const std::string& weights,
                   const std::string& io_layout, bool prove, const std::string& target, bool allow_remaining,
                   const std::map<std::string, std::vector<double>>& input_values, const std::string& host_ops,
                   const std::string& islands, const std::optional<std::string>& recipe_dir) {
  if (weights != "fp32" && weights != "fp16") throw Error(ErrorKind::kUsage, "weights must be 'fp32' or 'fp16'");
  if (host_ops != "none" && host_ops != "auto") throw Error(ErrorKind::kUsage, "host_ops must be 'none' or 'auto'");
  if (io_layout != "onnx" && io_layout != "nhwc") throw Error(ErrorKind::kUsage, "io_layout must be 'onnx' or 'nhwc'");
  convert::Options options;
  options.onnx_path = path;
  options.output_path = output.value_or("");
  options.input_shapes = inputs;
  options.fp16_weights = weights == "fp16";
  options.nhwc_io = io_layout == "nhwc";
  options.prove = prove;
  options.target = target;
  options.allow_remaining = allow_remaining;
  options.input_values = input_values;
  if (host_ops == "auto") return ConvertPipeline(options, islands, recipe_dir);
  if (recipe_dir && !output)
    throw Error(ErrorKind::kUsage, "recipe= needs output= (the recipe copies what is written)");
  nlohmann::json report;
  std::shared_ptr<PyModel> converted;
  {
    py::gil_scoped_release release;
    convert::Result result = convert::Convert(options);
    report = result.report.ToJson();
    if (result.exit_code() == 0 && result.report.written) AddRecipe(report, options, options.output_path, recipe_dir);
    if ((result.report.proven || !prove) && (result.report.target.clean || allow_remaining)) {
      converted = std::make_shared<PyModel>();
      converted->path = output.value_or(path + " (converted)");
      converted->model = std::make_shared<const ir::Model>(std::move(result.model));
    }
  }
  return py::make_tuple(ToPython(report), converted ? py::cast(converted) : py::none());
}

// split: the chain (`gpuclean split --json`) and the parts as Models;
// written as OUTPUT.part<k>.tflite + OUTPUT.pipeline.json when output is given.
py::object Split(const py::object& model_or_path, const std::vector<std::string>& at,
                 const std::optional<std::string>& output, uint32_t seed) {
  std::string label;
  const std::shared_ptr<const ir::Model> model = ModelOf(model_or_path, label);
  nlohmann::json chain;
  std::vector<std::shared_ptr<PyModel>> parts;
  {
    py::gil_scoped_release release;
    std::vector<split::Part> cut = split::Cut(*model, at);
    const split::Proof proof = split::ProveChain(*model, cut, seed);
    std::vector<std::string> files;
    if (output)
      for (size_t p = 0; p < cut.size(); ++p) files.push_back(*output + ".part" + std::to_string(p + 1) + ".tflite");
    chain = split::ChainJson(*model, cut, files, proof);
    if (output && proof.bit_exact) split::WriteParts(cut, *output, chain);
    for (size_t p = 0; p < cut.size(); ++p) {
      auto part = std::make_shared<PyModel>();
      part->path = output ? files[p] : fmt::format("{} (part {})", label, p + 1);
      part->model = std::make_shared<const ir::Model>(std::move(cut[p].model));
      parts.push_back(std::move(part));
    }
  }
  return py::make_tuple(ToPython(chain), py::cast(parts));
}

// ---- pipelines -----------------------------------------------------------------
// A pipeline spec (docs/pipeline.md), loaded and checked once; run() and
// prove() take numpy arrays by input name.
struct PyPipeline {
  pipeline::Spec spec;
  nlohmann::json last_run;  // per-stage placement and times of the last run()
};

std::shared_ptr<PyPipeline> LoadPipeline(const std::string& path) {
  auto p = std::make_shared<PyPipeline>();
  p->spec = pipeline::LoadSpec(path);
  return p;
}

// convert(..., host_ops="auto"): (report dict, Pipeline or None when nothing
// was written); a model that needs no island gives the plain conversion's
// (report, Model).
py::object ConvertPipeline(const convert::Options& options, const std::string& islands,
                           const std::optional<std::string>& recipe_dir) {
  convert::PipelineOptions pipeline_options;
  pipeline_options.islands = split::ParseIslands(islands);
  nlohmann::json report;
  std::shared_ptr<PyModel> single;
  std::shared_ptr<PyPipeline> written;
  {
    py::gil_scoped_release release;
    convert::PipelineResult result = convert::ConvertToPipeline(options, pipeline_options);
    report = result.ToJson();
    if (result.exit_code() == 0) AddRecipe(report, options, result.spec_path, recipe_dir);
    if (result.written) {
      written = LoadPipeline(result.spec_path);
    } else if (!result.cut_made && result.exit_code() == 0) {
      single = std::make_shared<PyModel>();
      single->path = options.onnx_path + " (converted)";
      single->model = std::make_shared<const ir::Model>(std::move(result.conversion.model));
    }
  }
  if (written) return py::make_tuple(ToPython(report), py::cast(written));
  return py::make_tuple(ToPython(report), single ? py::cast(single) : py::none());
}

// A fresh folder for the LiteRT runtimes' files, removed when done.
pipeline::RunOptions PipelineOptions(const std::string& runtime, const std::string& precision, uint32_t seed,
                                     const std::string& work) {
  pipeline::RunOptions o;
  o.runtime = pipeline::ParseRuntime(runtime);
  o.precision = pipeline::ParsePrecisionFor(o.runtime, precision);
  o.seed = seed;
  o.work_dir = work;
  return o;
}

// The pipeline inputs: given ones by name (numpy arrays), the rest generated.
std::vector<npy::Array> PipelineInputs(const pipeline::Spec& spec, const py::object& given, uint32_t seed) {
  std::map<std::string, npy::Array> arrays;
  if (!given.is_none()) {
    if (!py::isinstance<py::dict>(given)) throw Error(ErrorKind::kUsage, "inputs must be a dict {name: numpy array}");
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(given))
      arrays[std::string(py::str(key))] = AnyArray(value, "an input");
  }
  return pipeline::PrepareInputArrays(spec, std::move(arrays), seed);
}

py::object RunPipeline(PyPipeline& self, const py::object& given, const std::string& runtime,
                       const std::string& precision, uint32_t seed) {
  std::vector<npy::Array> inputs = PipelineInputs(self.spec, given, seed);
  pipeline::RunResult result;
  {
    py::gil_scoped_release release;
    const ScratchDir scratch("gpuclean-py");
    result = pipeline::Run(self.spec, inputs, PipelineOptions(runtime, precision, seed, scratch.path()));
  }
  self.last_run = {{"runtime", runtime}};
  self.last_run.update(pipeline::StagesJson(result));
  py::dict out;
  for (size_t o = 0; o < self.spec.outputs.size(); ++o)
    out[py::str(self.spec.outputs[o])] = ToNumpy(std::move(result.outputs[o]));
  return out;
}

py::object ProvePipeline(PyPipeline& self, const std::string& against, const py::object& given,
                         const std::string& runtime, const std::string& precision, uint32_t seed,
                         const std::vector<std::string>& gates, std::optional<std::string> boxes,
                         std::optional<double> mask_threshold, bool match_boxes) {
  pipeline::ProveOptions options;
  options.match_boxes = match_boxes;
  for (const std::string& g : gates) options.gates.push_back(analyze::ParseGate(g));
  if (boxes) options.gate_options.boxes = analyze::ParseBoxFormat(*boxes);
  options.gate_options.mask_threshold = mask_threshold;
  const ScratchDir scratch("gpuclean-py");
  // Given arrays travel as .npy files, the way prove reads --input.
  if (!given.is_none()) {
    const std::vector<npy::Array> inputs = PipelineInputs(self.spec, given, seed);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string file = scratch / fmt::format("given{}.npy", i);
      npy::Write(file, inputs[i]);
      options.inputs[self.spec.inputs[i]] = file;
    }
  }
  nlohmann::json report;
  {
    py::gil_scoped_release release;
    options.run = PipelineOptions(runtime, precision, seed, scratch / "work");
    report = pipeline::ToJson(pipeline::Prove(self.spec, against, options));
  }
  return ToPython(report);
}

py::object HostStep(const std::string& name, const py::list& inputs, const py::object& params) {
  std::vector<npy::Array> arrays;
  for (const py::handle& value : inputs) arrays.push_back(AnyArray(value, "a host-step input"));
  nlohmann::json p = nlohmann::json::object();
  if (!params.is_none())
    p = nlohmann::json::parse(std::string(py::str(py::module_::import("json").attr("dumps")(params))));
  std::vector<npy::Array> out;
  {
    py::gil_scoped_release release;
    out = pipeline::RunHostStep(name, p, arrays);
  }
  py::list result;
  for (npy::Array& a : out) result.append(ToNumpy(std::move(a)));
  return result;
}

}  // namespace

PYBIND11_MODULE(_gpuclean, m) {
  m.doc() = "gpuclean: check .tflite models for mobile GPUs (C++ library binding)";

  // One Python exception per ErrorKind, all under GpucleanError, each
  // carrying the same one-line message the CLI prints.
  // Leaked like the handles above, for the same reason.
  static auto& base = *new py::exception<Error>(m, "GpucleanError", PyExc_RuntimeError);
  struct ModelErrorTag {};
  struct UsageErrorTag {};
  struct UnsupportedErrorTag {};
  struct IoErrorTag {};
  static auto& model_error = *new py::exception<ModelErrorTag>(m, "ModelError", base.ptr());
  static auto& usage_error = *new py::exception<UsageErrorTag>(m, "UsageError", base.ptr());
  static auto& unsupported_error = *new py::exception<UnsupportedErrorTag>(m, "UnsupportedError", base.ptr());
  static auto& io_error = *new py::exception<IoErrorTag>(m, "IoError", base.ptr());
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::kBadInput: model_error(e.what()); break;
        case ErrorKind::kUsage: usage_error(e.what()); break;
        case ErrorKind::kUnsupported: unsupported_error(e.what()); break;
        case ErrorKind::kIo: io_error(e.what()); break;
        default: base(e.what()); break;
      }
    }
  });

  py::class_<PyModel, std::shared_ptr<PyModel>>(m, "Model", "A .tflite model read and verified by gpuclean.")
      .def_readonly("path", &PyModel::path)
      .def_property_readonly(
          "inputs", [](const PyModel& self) { return TensorList(self.graph(), self.graph().inputs); },
          "Graph inputs: list of dicts name, dtype, shape, index (tensor index).")
      .def_property_readonly(
          "outputs", [](const PyModel& self) { return TensorList(self.graph(), self.graph().outputs); },
          "Graph outputs: list of dicts name, dtype, shape, index (tensor index).")
      .def_property_readonly(
          "ops", [](const PyModel& self) { return OpList(self.graph()); },
          "Ops of the main subgraph: list of dicts index, op, inputs, outputs (tensor indices).")
      .def(
          "inspect", [](const PyModel& self) { return ToPython(inspect::Summarize(*self.model)); },
          "The model's structure, equal to `gpuclean inspect --json`.")
      .def("run", &Run, py::arg("inputs") = py::none(), py::arg("precision") = "fp32", py::arg("threads") = py::none(),
           py::arg("taps") = false, py::arg("seed") = 0,
           "Run on the reference interpreter. inputs: list (input order) or dict (index or name -> numpy array); "
           "inputs not given are generated as `gpuclean run --seed` does. Returns the list of outputs, or "
           "(outputs, {tensor name: array}) with taps=True.")
      .def("__repr__", [](const PyModel& self) {
        return fmt::format("<gpuclean.Model '{}': {} ops, {} inputs, {} outputs>", self.path, self.graph().ops.size(),
                           self.graph().inputs.size(), self.graph().outputs.size());
      });

  m.def("load", &Load, py::arg("path"), "Read and verify a .tflite model.");
  m.def(
      "set_max_memory",
      [](const py::object& size) {
        if (size.is_none()) return SetMemoryLimit(0);
        if (py::isinstance<py::str>(size)) return SetMemoryLimit(ParseByteSize(size.cast<std::string>()));
        const int64_t bytes = size.cast<int64_t>();
        if (bytes <= 0) throw Error(ErrorKind::kUsage, "set_max_memory: the limit must be positive");
        SetMemoryLimit(static_cast<uint64_t>(bytes));
      },
      py::arg("size"),
      "Refuse models that would need more memory than this (bytes, or a size such as '512M', '8G'); "
      "None restores the default, 3/4 of the machine's memory. The CLI's --max-memory.");
  m.def("max_memory", &MemoryLimit, "The memory limit in force, in bytes.");
  m.def("lint", &Lint, py::arg("model"), py::arg("target") = py::none(), py::arg("matrix_dir") = py::none(),
        "Static GPU compatibility: the dict `gpuclean lint --format json` prints.");
  m.def("bisect", &Bisect, py::arg("model"), py::arg("inputs") = py::none(), py::arg("a") = "fp32",
        py::arg("b") = "fp16-compute", py::arg("min_correlation") = 0.999, py::arg("threads") = 1, py::arg("seed") = 0,
        "First divergence between two numeric modes or models: the dict `bisect --json` prints.");
  m.def("compare", &Compare, py::arg("ref"), py::arg("got"), py::arg("gates") = std::vector<std::string>{},
        py::arg("boxes") = py::none(), py::arg("mask_threshold") = py::none(),
        "Metrics of GOT against REF and the given gates (`compare --gate` syntax).");
  m.def("fix", &Fix, py::arg("model"), py::arg("output") = py::none(), py::arg("passes") = py::none(),
        py::arg("target") = py::none(), py::arg("seed") = 0, py::arg("gelu_sigmoid") = false,
        py::arg("allow_remaining") = false,
        "Apply and prove graph rewrites (`gpuclean fix`): returns (report dict, fixed Model or None when a proof "
        "failed or lint errors remain); writes `output` (and host-input .npy files beside it) when given and fixed. "
        "allow_remaining=True also returns and writes a proven rewrite that leaves lint errors (report['ok'] stays "
        "False).");
  m.def("convert", &Convert, py::arg("path"), py::arg("output") = py::none(),
        py::arg("inputs") = std::map<std::string, std::vector<int64_t>>{}, py::arg("weights") = "fp32",
        py::arg("io_layout") = "onnx", py::arg("prove") = true, py::arg("target") = lint::kDefaultTarget,
        py::arg("allow_remaining") = false, py::arg("input_values") = std::map<std::string, std::vector<double>>{},
        py::arg("host_ops") = "none", py::arg("islands") = "cpu", py::arg("recipe") = py::none(),
        "Convert an ONNX model (`gpuclean convert`): returns (report dict, Model or None when the proof against "
        "onnxruntime failed or lint errors remain for `target`); writes `output` only when proven and GPU-clean "
        "(allow_remaining=True: proven is enough). inputs={'name': [1, 3, 224, 224]} pins dynamic dimensions; "
        "weights='fp16' stores float weights as float16; target='none' keeps the plain lowering; "
        "input_values={'sr': [16000]} fixes inputs to constants at convert time (they leave the model). "
        "host_ops='auto' (output is then a prefix) cuts the ops `target` keeps off the GPU into CPU graphs "
        "(islands='steps': host steps) and returns (report, Pipeline or None), proven in fp32 and in the target's "
        "arithmetic. recipe='DIR' lays out what was written as a model recipe (`gpuclean recipe`; report['recipe']).");
  m.def("split", &Split, py::arg("model"), py::arg("at"), py::arg("output") = py::none(), py::arg("seed") = 0,
        "Cut at the named tensors (`gpuclean split`): returns (pipeline spec dict, proof under 'proof', list of part "
        "Models); writes OUTPUT.part<k>.tflite and OUTPUT.pipeline.json when output is given and the chain is "
        "bit-exact.");
  py::class_<PyPipeline, std::shared_ptr<PyPipeline>>(m, "Pipeline",
                                                      "A pipeline spec (docs/pipeline.md): graphs and host steps.")
      .def(py::init(&LoadPipeline), py::arg("spec"), "Read and check PREFIX.pipeline.json.")
      .def_property_readonly("inputs", [](const PyPipeline& p) { return p.spec.inputs; })
      .def_property_readonly("outputs", [](const PyPipeline& p) { return p.spec.outputs; })
      .def_property_readonly("spec", [](const PyPipeline& p) { return ToPython(pipeline::ToJson(p.spec)); })
      .def("run", &RunPipeline, py::arg("inputs") = py::none(), py::arg("runtime") = "ours",
           py::arg("precision") = "fp32", py::arg("seed") = 0,
           "Run every stage; returns {output name: array}. inputs={name: array}; the rest are generated from "
           "`seed`. runtime: ours, litert-wasm or litert-webgpu (all graphs in one Chromium page). Per-stage "
           "placement and times: last_run.")
      .def_property_readonly(
          "last_run", [](const PyPipeline& p) { return ToPython(p.last_run); },
          "The last run(): {'runtime', 'stages': [{name, where, ms (wall), run_ms (the runtime's "
          "own invoke time), residency (WebGPU)}], 'browser_pages'}; None before any run.")
      .def("prove", &ProvePipeline, py::arg("against"), py::arg("inputs") = py::none(), py::arg("runtime") = "ours",
           py::arg("precision") = "fp32", py::arg("seed") = 0, py::arg("gates") = std::vector<std::string>{},
           py::arg("boxes") = py::none(), py::arg("mask_threshold") = py::none(), py::arg("match_boxes") = true,
           "Run the pipeline and the monolithic model (.tflite or .onnx) on the same inputs and apply task gates "
           "per output (`gpuclean pipeline prove --json`'s report, with per-stage times under 'stages'). Gates: "
           "corr>=X, maxabs<=X, meanabs<=X, argmax, topk=K, iou>=X, box_iou>=X, mask_iou>=X, equal, optionally "
           "'OUTPUT:GATE'. match_boxes: pair detections by box before gating.");
  m.def("host_step", &HostStep, py::arg("name"), py::arg("inputs"), py::arg("params") = py::none(),
        "Run one host step (`gpuclean pipeline steps`) on numpy arrays; returns its outputs as a list.");
  m.attr("DEFAULT_TARGET") = lint::kDefaultTarget;
}
