#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/input_shape_flag.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/rewrite.h"

namespace gpuclean::cli {

namespace {

std::vector<std::string> SplitCommas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    std::stringstream in(item);
    for (std::string part; std::getline(in, part, ',');)
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

// The pass catalogue by kind, for --help (docs/rewrite.md has the details).
std::string PassCatalogueHelp() {
  std::string out = "Passes (kind: ids; docs/rewrite.md):";
  for (lint::PassKind kind : {lint::PassKind::kAutomatic, lint::PassKind::kNumeric, lint::PassKind::kOptIn,
                              lint::PassKind::kSplit, lint::PassKind::kHost, lint::PassKind::kManual}) {
    std::string ids;
    for (const lint::PassInfo& p : lint::PassCatalog())
      if (p.kind == kind) ids += (ids.empty() ? "" : ", ") + std::string(p.id);
    out += "\n  " + std::string(lint::PassKindName(kind)) + ": " + ids;
  }
  return out;
}

}  // namespace

void AddFix(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "fix", "Apply graph rewrites that lint suggests (or --passes), prove each on seeded inputs, then write");
  struct Args {
    std::string model, output, format = "text";
    std::vector<std::string> passes, input_shapes;
    rewrite::FixOptions options;
    bool dry_run = false, in_place = false, allow_remaining = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->model, "the .tflite file")->required();
  cmd->add_option("-o,--output", args->output, "where to write the rewritten model");
  cmd->add_option("--target", args->options.target,
                  "compatibility target whose findings choose the passes; several joined by commas: the file is made "
                  "clean for each (mldrift-webgpu@2.5.3,mldrift-cl@2.1.6)")
      ->capture_default_str();
  cmd->add_option("--passes", args->passes,
                  "comma-separated pass ids instead of lint's choice; 'auto' adds lint's choice (docs/rewrite.md)");
  cmd->add_flag("--dry-run", args->dry_run, "apply and prove, write nothing");
  cmd->add_flag("--in-place", args->in_place, "overwrite MODEL (atomically) with the proven result");
  AddInputShapeFlag(cmd, args->input_shapes);
  cmd->add_flag("--allow-remaining", args->allow_remaining,
                "also write a proven rewrite that leaves lint errors (the exit code stays 1)");
  cmd->add_option("--seed", args->options.seed, "seed of the proof inputs")->capture_default_str();
  cmd->add_option("--threads", args->options.threads, "interpreter threads for the proofs")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--gelu-sigmoid", args->options.pass_options.gelu_sigmoid,
                "gelu-tanh: use x*sigmoid(1.702x) instead of the tanh form");
  cmd->add_option("--host-min-elements", args->options.pass_options.host_fed_min_elements,
                  "host-fed-constants: smallest constant to move out of the file")
      ->capture_default_str();
  cmd->add_option("--onehot-max-rows", args->options.pass_options.onehot_max_rows,
                  "gather-onehot-matmul: most table rows a runtime-indexed GATHER may have")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", args->format, "text|json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->footer(PassCatalogueHelp());
  cmd->callback([args, &handler] {
    handler = [args] {
      if (args->in_place && !args->output.empty())
        throw Error(ErrorKind::kUsage, "give either -o OUT or --in-place, not both");
      if (!args->dry_run && !args->in_place && args->output.empty())
        throw Error(ErrorKind::kUsage, "fix needs -o OUT (or --dry-run, or --in-place)");
      args->options.passes = SplitCommas(args->passes);
      const ir::Model model = ReadModelAtShapes(args->model, args->input_shapes);
      exec::CheckTensorsFitMemory(model);
      const std::vector<std::string> targets = lint::SplitTargets(args->options.target);
      std::string several_text;
      nlohmann::json several_json;
      rewrite::FixResult result;
      if (targets.size() > 1) {
        // One file for several delegates: each target's rewrites in turn.
        const rewrite::TargetsFixResult all = rewrite::FixForTargets(model, args->options, targets);
        const std::string data_dir = lint::DefaultDataDir();
        for (const auto& [target, step] : all.steps) {
          if (step.changed_sites() == 0 && step.proven) continue;
          several_text +=
              "for " + target + ":\n" + rewrite::RenderText(step, lint::LoadMatrix(data_dir + "/compat", target));
        }
        several_json = nlohmann::json::array();
        for (const auto& [target, verdict] : all.final) {
          const lint::Report& after = verdict.before;  // the final model's lint for this target
          several_text += fmt::format("{}: {} error(s) left; {}\n", target, after.count(lint::Severity::kError),
                                      after.residency.empty() ? "" : lint::PredictedLine(after.residency[0]));
          several_json.push_back({{"target", target}, {"result", rewrite::ToJson(verdict)}});
        }
        result = all.AsFixResult();
      } else {
        result = rewrite::Fix(model, args->options);
      }
      // Exit 0 means fixed: proven and lint-clean. A proven rewrite that
      // leaves errors is written only on request, and still exits 1.
      const bool write = result.ok || (result.proven && args->allow_remaining);
      std::vector<std::string> written;
      if (write && !args->dry_run)
        written = rewrite::WriteResult(result, args->in_place ? args->model : args->output, args->in_place);
      if (args->format == "json") {
        nlohmann::json j = rewrite::ToJson(result);
        j["model"] = args->model;
        j["written"] = written;
        if (!several_json.is_null()) j["targets"] = several_json;
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        std::cout << "fix " << args->model << "\n";
        if (targets.size() > 1) {
          std::cout << several_text;
        } else {
          const lint::Matrix matrix = lint::LoadMatrix(lint::DefaultDataDir() + "/compat", args->options.target);
          std::cout << rewrite::RenderText(result, matrix);
        }
        if (!write && result.proven && args->dry_run)
          std::cout << "proof passed, but not fixed (dry run: nothing written)\n";
        else if (!write && result.proven)
          std::cout << "nothing written (--allow-remaining writes the proven partial rewrite, still exit 1)\n";
        else if (!write)
          std::cout << "nothing written\n";
        else if (args->dry_run)
          std::cout << "proof passed (dry run: nothing written)\n";
        for (const std::string& f : written) std::cout << "wrote " << f << "\n";
      }
      return result.ok ? 0 : 1;
    };
  });
}

}  // namespace gpuclean::cli
