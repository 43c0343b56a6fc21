// Pipeline specs: what LoadSpec accepts, and the one-line refusal of every
// kind of bad spec (missing files, unknown values, cycles, shape mismatches).
#include "gpuclean/pipeline.h"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "support/arrays.h"
#include "support/test_support.h"

namespace gpuclean::pipeline {
namespace {

using Json = nlohmann::json;

// Graph a: x [1,6] -> scores = tanh(x) [1,6]; graph b: q [1,3] -> exp(q).
struct Fixture {
  testing::TempDir dir;
  Fixture() {
    builder::GraphBuilder a;
    a.Output(a.Tanh(a.Input("x", tfl::TensorType_FLOAT32, {1, 6})));
    format::WriteModel(a.Finish(), dir.file("a.tflite"));
    builder::GraphBuilder b;
    b.Output(b.Exp(b.Input("q", tfl::TensorType_FLOAT32, {1, 3})));
    format::WriteModel(b.Finish(), dir.file("b.tflite"));
    npy::Write(dir.file("bias.npy"), testing::F32({1, 3}, {0.5f, -0.5f, 1.0f}));
  }
  Json Good() const {
    return Json::parse(R"({
      "format": "gpuclean.pipeline", "version": 1,
      "inputs": ["x"],
      "constants": [{"name": "bias", "file": "bias.npy"}],
      "stages": [
        {"name": "b", "graph": "b.tflite", "inputs": ["shifted"], "outputs": ["y"]},
        {"name": "a", "graph": "a.tflite", "inputs": ["x"], "outputs": ["scores"]},
        {"name": "top", "host": "topk", "params": {"k": 3}, "inputs": ["scores"], "outputs": ["v", "i"]},
        {"name": "shift", "host": "add", "inputs": ["v", "bias"], "outputs": ["shifted"]}
      ],
      "outputs": ["y", "i"]
    })");
  }
  std::string Write(const Json& j, const std::string& name = "p.pipeline.json") const {
    std::ofstream(dir.file(name)) << j.dump();
    return dir.file(name);
  }
  std::string ErrorOf(const Json& j) const {
    try {
      LoadSpec(Write(j));
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return e.what();
    }
    return "";
  }
};

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PipelineSpec, RunsStagesInDependencyOrderAndComputesTheChain) {
  Fixture f;
  const Spec spec = LoadSpec(f.Write(f.Good()));
  std::vector<std::string> order;
  for (int i : RunOrder(spec)) order.push_back(spec.stages[i].name);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "top", "shift", "b"}));
  const npy::Array x = testing::F32({1, 6}, {0.1f, 2.0f, -1.0f, 0.7f, 3.0f, 0.0f});
  const RunResult r = pipeline::Run(spec, {x}, {});
  ASSERT_EQ(r.outputs.size(), 2u);
  // top-3 of tanh(x): indices 4, 1, 3.
  EXPECT_EQ(std::vector<int32_t>(r.outputs[1].as<int32_t>(), r.outputs[1].as<int32_t>() + 3),
            (std::vector<int32_t>{4, 1, 3}));
  EXPECT_FLOAT_EQ(r.outputs[0].as<float>()[0], std::exp(std::tanh(3.0f) + 0.5f));
  // Written back, it reads the same.
  WriteSpec(spec, f.dir.file("again.pipeline.json"));
  EXPECT_EQ(ToJson(LoadSpec(f.dir.file("again.pipeline.json"))), ToJson(spec));
}

TEST(PipelineSpec, BadSpecsAreOneLine) {
  Fixture f;
  Json j = f.Good();
  j["format"] = "chain";
  EXPECT_TRUE(Has(f.ErrorOf(j), "\"format\" must be \"gpuclean.pipeline\"")) << f.ErrorOf(j);

  j = f.Good();
  j["stages"][0]["graph"] = "missing.tflite";
  EXPECT_TRUE(Has(f.ErrorOf(j), "stage 'b': graph file")) << f.ErrorOf(j);

  j = f.Good();
  j["constants"][0]["file"] = "nope.npy";
  EXPECT_FALSE(f.ErrorOf(j).empty());

  j = f.Good();
  j["stages"][2]["inputs"] = {"score"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "stage 'top' reads 'score', which no input, constant or stage provides"))
      << f.ErrorOf(j);

  j = f.Good();
  j["outputs"] = {"y", "z"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "output 'z' is not provided")) << f.ErrorOf(j);

  j = f.Good();
  j["stages"][3]["outputs"] = {"v"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "value 'v' is defined twice")) << f.ErrorOf(j);

  j = f.Good();  // a cycle: top reads what shift makes from top's output
  j["stages"][2]["inputs"] = {"shifted"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "stages form a cycle: top -> shift -> top")) << f.ErrorOf(j);

  j = f.Good();  // graph b fed straight from graph a: [1,6] into [1,3]
  j["stages"][0]["inputs"] = {"scores"};
  j["stages"].erase(3);
  j["stages"].erase(2);
  j["outputs"] = {"y"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "stage 'b' input 0 ('scores') is float32 [1,6] but b.tflite expects float32 [1,3]"))
      << f.ErrorOf(j);

  j = f.Good();
  j["stages"][2]["outputs"] = {"v"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "lists 1 outputs; the step produces 2")) << f.ErrorOf(j);

  j = f.Good();
  j["stages"][1]["inputs"] = {"x", "x"};
  EXPECT_TRUE(Has(f.ErrorOf(j), "stage 'a' lists 2 inputs; a.tflite has 1")) << f.ErrorOf(j);

  j = f.Good();
  j["stages"][2]["host"] = "sort";
  EXPECT_TRUE(Has(f.ErrorOf(j), "unknown host step 'sort'")) << f.ErrorOf(j);

  std::ofstream(f.dir.file("broken.json")) << "{\"format\": ";
  EXPECT_THROW(LoadSpec(f.dir.file("broken.json")), Error);
  EXPECT_THROW(LoadSpec(f.dir.file("absent.json")), Error);
}

// An output whose length depends on the data: the graph holds it padded
// and counts its valid rows; valid_rows pairs them and Run cuts it.
TEST(PipelineSpec, ValidRowsCutAPaddedOutputToItsCount) {
  Fixture f;
  builder::GraphBuilder g;
  const int x = g.Input("x", tfl::TensorType_FLOAT32, {6});
  g.Output(g.Tanh(x));
  g.Output(g.ArgMax(x, 0));  // the count: where the largest value sits
  format::WriteModel(g.Finish(), f.dir.file("padded.tflite"));
  Json j = Json::parse(R"({
    "format": "gpuclean.pipeline", "version": 1, "inputs": ["x"],
    "stages": [{"name": "g", "graph": "padded.tflite", "inputs": ["x"], "outputs": ["y", "n"]}],
    "outputs": ["y", "n"],
    "valid_rows": [{"output": "y", "axis": 0, "count": "n"}]
  })");
  const Spec spec = LoadSpec(f.Write(j));
  ASSERT_EQ(spec.valid_rows.size(), 1u);
  const RunResult r = pipeline::Run(spec, {testing::F32({6}, {0.1f, 0.2f, -1.0f, 0.3f, 3.0f, 0.0f})}, {});
  EXPECT_EQ(r.outputs[0].shape, (std::vector<int64_t>{4}));
  EXPECT_FLOAT_EQ(r.outputs[0].as<float>()[3], std::tanh(0.3f));
  WriteSpec(spec, f.dir.file("again.pipeline.json"));
  EXPECT_EQ(ToJson(LoadSpec(f.dir.file("again.pipeline.json"))), ToJson(spec));

  j["valid_rows"][0]["count"] = "m";
  EXPECT_TRUE(Has(f.ErrorOf(j), "valid_rows names 'y' and 'm', which are not both pipeline outputs")) << f.ErrorOf(j);
  j["valid_rows"] = {{{"output", "y"}}};
  EXPECT_TRUE(Has(f.ErrorOf(j), "valid_rows must be a list")) << f.ErrorOf(j);
}

TEST(PipelineSpec, AHostStepOutputOfTheWrongShapeIsNamedWhenItReachesAGraph) {
  Fixture f;
  Json j = f.Good();
  j["stages"][2]["params"]["k"] = 2;  // [1,2] + bias [1,3] does not broadcast...
  j["constants"][0]["file"] = "one.npy";
  npy::Write(f.dir.file("one.npy"), testing::F32({1}, {1.0f}));  // ...so bias [1]: shifted is [1,2]
  const Spec spec = LoadSpec(f.Write(j));
  try {
    pipeline::Run(spec, {testing::F32({1, 6}, {0, 1, 2, 3, 4, 5})}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Has(e.what(), "stage 'b' input 0 ('shifted') is float32 [1,2] but b.tflite expects float32 [1,3]"))
        << e.what();
  }
}

TEST(PipelineSpec, CliRunWritesOutputsAndRefusesBadInputNames) {
  Fixture f;
  const std::string spec = f.Write(f.Good());
  const auto run = testing::RunGpuclean("pipeline run " + spec + " --out " + f.dir.file("out") + " -q");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* file : {"y.npy", "i.npy", "in0.npy", "meta.json"})
    EXPECT_TRUE(std::filesystem::exists(f.dir.file(std::string("out/") + file))) << file;
  const auto bad = testing::RunGpuclean("pipeline run " + spec + " --input nope=x.npy --out " + f.dir.file("o2"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Has(bad.err, "the pipeline has no input 'nope'")) << bad.err;
  const auto steps = testing::RunGpuclean("pipeline steps");
  EXPECT_EQ(steps.exit_code, 0);
  EXPECT_TRUE(Has(steps.out, "replaces TOPK_V2")) << steps.out;
}

}  // namespace
}  // namespace gpuclean::pipeline
