#pragma once
// `gpuclean recipe`: lay out a converted model - one .tflite or a pipeline -
// as a model recipe an app team can take as it is (docs/pipeline.md, "The
// model recipe"):
//
//   DIR/README.md      what it is, files, inputs and outputs, residency per
//                      stage (predicted, and measured with `measure`),
//                      fidelity per output against the reference (fp32, the
//                      target's arithmetic, and measured), the commands,
//                      versions, a Kotlin snippet, an empty device-records
//                      table that `gpuclean record` fills
//   DIR/pipeline.json  the stages (a single graph is a one-stage pipeline)
//   DIR/*.tflite, DIR/*.npy   the graphs and host-fed constants
//   DIR/refs/set<k>/in.<input>.npy, out.<output>.npy   reference inputs and
//                      the reference model's outputs on them
//   DIR/run.mjs        runs every stage with LiteRT.js by signature names
//                      and writes the outputs as .npy
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuclean/gates.h"
#include "gpuclean/lint.h"

namespace gpuclean::recipe {

struct Options {
  // A PREFIX.pipeline.json, or a .tflite (its host-fed constants are read
  // from MODEL.<input>.npy beside it, as convert writes them).
  std::string source;
  std::string out_dir;  // must not exist yet (or be empty); written whole or not at all
  // The model the references come from: an .onnx (onnxruntime) or a
  // .tflite (gpuclean's interpreter, fp32). Empty: the pipeline's "source"
  // when that file exists, else the recipe's own stages in fp32 (said so).
  std::string against;
  // GPU targets (comma-separated): residency predicted for each, fidelity
  // in each one's arithmetic.
  std::string target = lint::kDefaultTarget;
  // The realistic input (NAME -> .npy, the reference model's layout): set 1.
  std::map<std::string, std::string> inputs;
  int seeded_sets = 1;  // seeded input sets after the realistic one
  // Also run on LiteRT.js (GPU stages on WebGPU in fp16, CPU stages on wasm,
  // one Chromium page): measured residency and fidelity.
  bool measure = false;
  std::vector<analyze::GateSpec> gates;  // empty: inferred per output
  analyze::GateOptions gate_options;
  std::string title;                  // what the model is; empty: the source's file name
  std::vector<std::string> commands;  // the commands that produced the source (README)
  std::function<void(const std::string&)> progress;
};

struct Result {
  std::string out_dir;
  std::vector<std::string> files;  // relative to out_dir
  bool passed = true;              // every fidelity check's gates held
  nlohmann::json summary;          // what the README's tables say
};

// Error(kUsage) when out_dir exists and is not empty; Error(kBadInput) for
// a source that does not load. Built in a sibling folder and renamed into
// place at the end.
Result WriteRecipe(const Options& options);

// The generated runner's text (a Node ES module); exposed for tests.
std::string RunnerScript();

}  // namespace gpuclean::recipe
