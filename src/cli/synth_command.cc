#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "gpuclean/error.h"
#include "gpuclean/synth.h"

namespace gpuclean::cli {

void AddSynth(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("synth", "Write micro-probe and fp16 pattern graphs (docs/synth.md)");
  struct Args {
    std::vector<std::string> names;
    std::string out;
    bool list = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("NAME", args->names, "graph names, or probes | patterns | all");
  cmd->add_option("--out", args->out, "folder to write NAME.tflite (and NAME.in0.npy for patterns) into");
  cmd->add_flag("--list", args->list, "list the graphs and what each shows");
  cmd->callback([args, &handler] {
    handler = [args] {
      if (args->list) {
        for (const synth::SynthGraph& g : synth::Catalog()) {
          std::string detail = g.group == synth::Group::kProbe ? fmt::format("rule {} on {}", g.rule, g.target)
                                                               : g.input_doc;
          if (!g.fixed && g.group == synth::Group::kPattern)
            detail += fmt::format("; bisect: {} {} -> {}", g.expected.op, g.expected.cause, g.expected.fix);
          std::cout << fmt::format("{:<28} {:<7} {} [{}]\n", g.name, synth::GroupName(g.group), g.shows, detail);
        }
        return 0;
      }
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
