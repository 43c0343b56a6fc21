#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "gpuclean/error.h"
#include "gpuclean/exec.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"

namespace gpuclean::cli {

namespace {

std::string CompatDir(const std::string& matrix_dir) {
  return matrix_dir.empty() ? (std::filesystem::path(lint::DefaultDataDir()) / "compat").string() : matrix_dir;
}

}  // namespace

void AddLint(CLI::App& app, Handler& handler) {
  auto* cmd =
      app.add_subcommand("lint", "Static GPU compatibility against a versioned matrix, with residency prediction");
  struct Args {
    std::string model;
    std::string target = lint::kDefaultTarget;
    std::string format = "text";
    std::string fail_on = "error";
    std::string matrix_dir;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->model, "the .tflite file")->required();
  cmd->add_option("--target", args->target, "runtime target id (see data/compat/)")->capture_default_str();
  cmd->add_option("--format", args->format, "text|json|sarif|md")
      ->check(CLI::IsMember({"text", "json", "sarif", "md"}))
      ->capture_default_str();
  cmd->add_option("--fail-on", args->fail_on, "exit 1 when a finding reaches this severity: error|warning")
      ->check(CLI::IsMember({"error", "warning"}))
      ->capture_default_str();
  cmd->add_option("--matrix-dir", args->matrix_dir, "folder of <target>.json files (default: the data dir's compat/)");
  cmd->callback([args, &handler] {
    handler = [args] {
      const lint::Matrix matrix = lint::LoadMatrix(CompatDir(args->matrix_dir), args->target);
      const ir::Model model = format::ReadModel(args->model);
      exec::CheckTensorsFitMemory(model);
      const lint::Report report = lint::Lint(model, matrix);
      const auto dump = [](const nlohmann::json& j) {
        return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      };
      if (args->format == "json")
        std::cout << dump(lint::ToJson(report, matrix)) << "\n";
      else if (args->format == "sarif")
        std::cout << dump(lint::ToSarif(report, matrix)) << "\n";
      else if (args->format == "md")
        std::cout << lint::RenderMarkdown(report, matrix);
      else
        std::cout << lint::RenderText(report, matrix);
      const int errors = report.count(lint::Severity::kError);
      const int warnings = report.count(lint::Severity::kWarning);
      return errors > 0 || (args->fail_on == "warning" && warnings > 0) ? 1 : 0;
    };
  });
}

void AddMatrix(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("matrix", "Compatibility matrix files: validate, list targets");
  cmd->require_subcommand(1);
  struct Args {
    std::vector<std::string> files;
    std::string matrix_dir;
  };
  auto args = std::make_shared<Args>();
  auto* validate = cmd->add_subcommand("validate", "Check matrix files against the format (default: every target)");
  validate->add_option("FILE", args->files, "matrix .json files");
  validate->add_option("--matrix-dir", args->matrix_dir, "folder of <target>.json files");
  validate->callback([args, &handler] {
    handler = [args] {
      std::vector<std::string> files = args->files;
      const std::string dir = CompatDir(args->matrix_dir);
      if (files.empty()) {
        std::error_code ec;
        for (const auto& item : std::filesystem::directory_iterator(dir, ec))
          if (item.path().extension() == ".json") files.push_back(item.path().string());
        if (ec) throw Error(ErrorKind::kIo, dir + ": cannot list: " + ec.message());
        std::sort(files.begin(), files.end());
      }
      int bad = 0;
      for (const auto& file : files) {
        auto errors = lint::ValidateMatrixFile(file);
        for (const auto& e : errors) std::cout << e << "\n";
        if (errors.empty()) std::cout << file << ": ok\n";
        bad += errors.empty() ? 0 : 1;
      }
      // Chains are checked by loading each target whole.
      if (args->files.empty() && bad == 0)
        for (const auto& target : lint::ListTargets(dir)) lint::LoadMatrix(dir, target);
      return bad > 0 ? 1 : 0;
    };
  });
  auto* list = cmd->add_subcommand("list", "List target ids and where their entries' facts come from");
  list->add_option("--matrix-dir", args->matrix_dir, "folder of <target>.json files");
  list->callback([args, &handler] {
    handler = [args] {
      const std::string dir = CompatDir(args->matrix_dir);
      for (const auto& target : lint::ListTargets(dir)) {
        const lint::Matrix matrix = lint::LoadMatrix(dir, target);
        std::cout << fmt::format("{:<22} {}{}\n", target, lint::ProvenanceSummary(matrix),
                                 target == lint::kDefaultTarget ? "  (default)" : "");
      }
      return 0;
    };
  });
  struct ShowArgs {
    std::string target;
    std::string matrix_dir;
  };
  auto show_args = std::make_shared<ShowArgs>();
  auto* show = cmd->add_subcommand("show", "List one target's entries with each one's provenance and source");
  show->add_option("TARGET", show_args->target, "target id (gpuclean matrix list)")->required();
  show->add_option("--matrix-dir", show_args->matrix_dir, "folder of <target>.json files");
  show->callback([show_args, &handler] {
    handler = [show_args] {
      const lint::Matrix matrix = lint::LoadMatrix(CompatDir(show_args->matrix_dir), show_args->target);
      std::cout << matrix.target << ": " << matrix.runtime << " (" << fmt::format("{}", fmt::join(matrix.chain, " <- "))
                << ")\n";
      const auto print = [](const lint::Entry& e) {
        std::cout << fmt::format("{:<34} {:<24} {:<10} {:<14} {}\n", e.id, e.op.empty() ? "(rule)" : e.op,
                                 lint::StatusName(e.status), e.provenance, e.evidence.source);
      };
      for (const auto& e : matrix.entries) print(e);
      for (const auto& e : matrix.rules) print(e);
      return 0;
    };
  });
}

}  // namespace gpuclean::cli
