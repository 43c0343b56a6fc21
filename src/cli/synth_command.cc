#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/io.h"
#include "gpuclean/lint.h"
#include "gpuclean/op_table.h"
#include "gpuclean/synth.h"

namespace gpuclean::cli {

namespace {

int WriteRuleEdges(const std::string& target, const std::string& out) {
  if (out.empty()) throw Error(ErrorKind::kUsage, "synth --edges: --out DIR is required");
  const lint::Matrix matrix =
      lint::LoadMatrix((std::filesystem::path(lint::DefaultDataDir()) / "compat").string(), target);
  const synth::RuleEdgeSet set = synth::RuleEdgeProbes(matrix);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw Error(ErrorKind::kIo, fmt::format("{}: cannot create: {}", out, ec.message()));
  nlohmann::json manifest = {{"target", target}, {"probes", nlohmann::json::array()}, {"skipped", set.skipped}};
  for (const synth::RuleEdgeProbe& probe : set.probes) {
    const auto path = [&](const char* side) { return (std::filesystem::path(out) / (probe.entry + side)).string(); };
    format::WriteModel(probe.inside, path(".inside.tflite"));
    format::WriteModel(probe.past, path(".past.tflite"));
    manifest["probes"].push_back({{"entry", probe.entry},
                                  {"op", probe.op},
                                  {"inside", probe.entry + ".inside.tflite"},
                                  {"past", probe.entry + ".past.tflite"}});
  }
  WriteFileAtomically((std::filesystem::path(out) / "edges.json").string(), manifest.dump(2) + "\n");
  std::cout << fmt::format("{}: {} rule-edge probe pairs written to {}, {} rules skipped (edges.json says why)\n",
                           target, set.probes.size(), out, set.skipped.size());
  return 0;
}

// The op table's plain graphs: OP.tflite per row that synth can build.
int WriteOpGraphs(const std::string& out) {
  if (out.empty()) throw Error(ErrorKind::kUsage, "synth --ops: --out DIR is required");
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw Error(ErrorKind::kIo, fmt::format("{}: cannot create: {}", out, ec.message()));
  int written = 0;
  std::string none;
  for (tfl::BuiltinOperator code : ir::TableOps()) {
    const std::string name = ir::BuiltinName(code);
    const std::optional<ir::Model> model = synth::OpGraph(code);
    if (!model) {
      none += " " + name;
      continue;
    }
    format::WriteModel(*model, (std::filesystem::path(out) / (name + ".tflite")).string());
    ++written;
  }
  std::cout << fmt::format("{} op graphs written to {}; no plain graph for:{}\n", written, out, none);
  return 0;
}

}  // namespace

void AddSynth(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("synth", "Write micro-probe and fp16 pattern graphs (docs/synth.md)");
  struct Args {
    std::vector<std::string> names;
    std::string out;
    bool list = false;
    std::string edges;
    bool ops = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("NAME", args->names, "graph names, or probes | patterns | all");
  cmd->add_option("--out", args->out, "folder to write NAME.tflite (and NAME.in0.npy for patterns) into");
  cmd->add_flag("--list", args->list, "list the graphs and what each shows");
  cmd->add_option("--edges", args->edges,
                  "write the rule-edge probes of this target's matrix instead: ID.inside.tflite (delegated) and "
                  "ID.past.tflite (refused by entry ID) per op rule, and edges.json listing them");
  cmd->add_flag("--ops", args->ops,
                "write every op-table row's measuring graph instead (OP.tflite: inputs, the op, its output; "
                "bools made by a comparison and cast back to float32), as the op-table WebGPU test measures them");
  cmd->callback([args, &handler] {
    handler = [args] {
      if (args->list) {
        for (const synth::SynthGraph& g : synth::Catalog()) {
          std::string detail =
              g.group == synth::Group::kProbe ? fmt::format("rule {} on {}", g.rule, g.target) : g.input_doc;
          if (!g.fixed && g.group == synth::Group::kPattern)
            detail += fmt::format("; bisect: {} {} -> {}", g.expected.op, g.expected.cause, g.expected.fix);
          std::cout << fmt::format("{:<28} {:<7} {} [{}]\n", g.name, synth::GroupName(g.group), g.shows, detail);
        }
        return 0;
      }
      if (!args->edges.empty()) return WriteRuleEdges(args->edges, args->out);
      if (args->ops) return WriteOpGraphs(args->out);
      if (args->names.empty()) throw Error(ErrorKind::kUsage, "synth: name at least one graph (or use --list)");
      if (args->out.empty()) throw Error(ErrorKind::kUsage, "synth: --out DIR is required");
      for (const synth::SynthGraph* g : synth::Resolve(args->names)) {
        const synth::Written w = synth::Write(*g, args->out);
        std::cout << w.model << "\n";
        for (const std::string& input : w.inputs) std::cout << input << "\n";
      }
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
