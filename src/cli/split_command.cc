#include <filesystem>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/input_shape_flag.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/pipeline.h"
#include "gpuclean/split.h"

namespace gpuclean::cli {
namespace {

struct SplitArgs {
  std::string model, prefix, host, target = lint::kDefaultTarget, islands = "steps";
  std::vector<std::string> at, input_shapes;
  uint32_t seed = 0;
  bool dry_run = false, json = false;
};

std::vector<int> AutoHostOps(const ir::Model& model, const std::string& target, split::Islands islands) {
  std::vector<std::string> stays;
  const std::vector<int> ops = split::HostOpsForTarget(model, target, islands, &stays);
  for (const std::string& line : stays) std::cerr << "split: " << line << "\n";
  if (ops.empty())
    throw Error(ErrorKind::kUsage,
                fmt::format("--host auto: no op that {} keeps off the GPU can move to {} "
                            "(gpuclean lint MODEL --target {} lists them)",
                            target, islands == split::Islands::kCpuGraphs ? "a CPU graph" : "a host step", target));
  return ops;
}

int SplitForHost(const SplitArgs& args) {
  const ir::Model model = ReadModelAtShapes(args.model, args.input_shapes);
  std::vector<std::string> types;
  std::stringstream list(args.host);
  for (std::string t; std::getline(list, t, ',');)
    if (!t.empty()) types.push_back(t);
  const split::Islands islands = split::ParseIslands(args.islands);
  const std::vector<int> ops =
      args.host == "auto" ? AutoHostOps(model, args.target, islands) : split::OpsOfTypes(model.main(), types);
  const std::string stem = std::filesystem::path(args.prefix.empty() ? "split" : args.prefix).filename().string();
  split::HostCut cut = split::CutHostIslands(model, ops, stem, islands);
  const std::vector<split::GraphCleanup> cleanup = split::CleanGraphs(cut, args.target);
  int graphs = 0;
  for (const auto& s : cut.spec.stages) graphs += s.kind == pipeline::Stage::Kind::kGraph;
  if (args.dry_run) {
    if (args.json)
      std::cout << pipeline::ToJson(cut.spec).dump(2) << "\n";
    else
      std::cout << fmt::format("split {} for the host: {} graph(s), {}\n", args.model, graphs,
                               split::HostStepSummary(cut))
                << split::DescribeHostCut(cut.spec) << split::DescribeCleanup(cleanup, args.target)
                << "nothing written (--dry-run)\n";
    return 0;
  }
  // Prove before keeping anything: the written pipeline against the model.
  const std::string spec_path = split::WriteHostCut(cut, args.prefix);
  pipeline::ProveReport report;
  try {
    pipeline::ProveOptions options;
    options.run.seed = args.seed;
    report = pipeline::Prove(pipeline::LoadSpec(spec_path), args.model, options);
  } catch (...) {
    std::filesystem::remove(spec_path);
    throw;
  }
  if (!report.passed) std::filesystem::remove(spec_path);
  if (args.json) {
    nlohmann::json j = pipeline::ToJson(cut.spec);
    j["proof"] = pipeline::ToJson(report);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("split {} for the host: {} graph(s), {}\n", args.model, graphs,
                             split::HostStepSummary(cut))
              << split::DescribeHostCut(cut.spec) << split::DescribeCleanup(cleanup, args.target)
              << pipeline::RenderProve(report)
              << (report.passed
                      ? fmt::format("wrote {} (run it: gpuclean pipeline run {} --out DIR)\n", spec_path, spec_path)
                      : "the pipeline spec was not written\n");
  }
  return report.passed ? 0 : 1;
}

int SplitAtTensors(const SplitArgs& args) {
  const ir::Model model = ReadModelAtShapes(args.model, args.input_shapes);
  const std::vector<split::Part> parts = split::Cut(model, args.at);
  const split::Proof proof = split::ProveChain(model, parts, args.seed);
  std::vector<std::string> files;
  for (size_t p = 0; p < parts.size(); ++p)
    files.push_back(args.dry_run ? std::string() : args.prefix + ".part" + std::to_string(p + 1) + ".tflite");
  const nlohmann::json chain = split::ChainJson(model, parts, files, proof);
  if (proof.bit_exact && !args.dry_run) split::WriteParts(parts, args.prefix, chain);
  if (args.json) {
    std::cout << chain.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "split " << args.model << " into " << parts.size() << " parts\n"
              << split::DescribeChain(model, parts, args.dry_run ? std::vector<std::string>{} : files);
    if (proof.bit_exact)
      std::cout << "proof: the chain reproduces all " << proof.outputs
                << " model output(s) bit for bit on seeded inputs (seed " << args.seed << ")\n";
    else
      for (const std::string& m : proof.mismatches) std::cout << "proof failed: " << m << "\n";
    if (!proof.bit_exact)
      std::cout << "nothing written\n";
    else if (!args.dry_run)
      std::cout << "wrote " << args.prefix << ".part1.tflite .. part" << parts.size() << ".tflite and " << args.prefix
                << ".pipeline.json (run it: gpuclean pipeline run " << args.prefix << ".pipeline.json --out DIR)\n";
  }
  return proof.bit_exact ? 0 : 1;
}

}  // namespace

void AddSplit(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "split",
      "Cut a graph at named tensors (--at) or around ops that must run on the host (--host) into a pipeline; prove it "
      "against the monolith");
  auto args = std::make_shared<SplitArgs>();
  cmd->add_option("MODEL", args->model, "the .tflite file")->required();
  cmd->add_option("--at", args->at, "tensor names to cut at (comma-separated or repeated)")->delimiter(',');
  cmd->add_option("--host", args->host,
                  "op types to run as host steps between graphs (TOPK_V2,GATHER,...), or 'auto': the ops --target "
                  "keeps off the GPU that a host step computes");
  cmd->add_option("--target", args->target, "target for --host auto")->capture_default_str();
  cmd->add_option("--islands", args->islands,
                  "what --host ops become: steps (one host step per op, the default) or cpu (CPU graphs that "
                  "LiteRT's CPU path runs; any op gpuclean's interpreter runs)")
      ->check(CLI::IsMember({"steps", "cpu"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->prefix,
                  "prefix of the written files: PREFIX.part<k>.tflite (--at) or PREFIX.graph<k>.tflite and "
                  "PREFIX.const.*.npy (--host), and PREFIX.pipeline.json");
  AddInputShapeFlag(cmd, args->input_shapes);
  cmd->add_option("--seed", args->seed, "seed of the proof inputs")->capture_default_str();
  cmd->add_flag("--dry-run", args->dry_run, "cut (and for --at prove), write nothing");
  cmd->add_flag("--json", args->json, "print the pipeline spec (JSON) instead of the description");
  cmd->callback([args, &handler] {
    handler = [args] {
      if (args->at.empty() == args->host.empty())
        throw Error(ErrorKind::kUsage, "split needs exactly one of --at T1[,T2...] or --host OPS|auto");
      if (!args->dry_run && args->prefix.empty())
        throw Error(ErrorKind::kUsage, "split needs -o PREFIX (or --dry-run)");
      return args->host.empty() ? SplitAtTensors(*args) : SplitForHost(*args);
    };
  });
}

}  // namespace gpuclean::cli
