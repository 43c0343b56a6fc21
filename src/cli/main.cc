// gpuclean's command line: parses flags, calls the library, prints. No logic.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>

#include "cli/commands.h"
#include "gpuclean/error.h"
#include "gpuclean/limits.h"

namespace {

// A repeatable option (--input, --gate, --passes...) takes one value per
// occurrence, so `run --input 0=x.npy MODEL` leaves MODEL to the positional.
void OneValuePerOccurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_allow_extra_args() && option->nonpositional()) option->allow_extra_args(false);
  for (CLI::App* sub : app.get_subcommands({})) OneValuePerOccurrence(*sub);
}

// An error is one line, even when it quotes a tensor name that holds a
// newline or a terminal escape.
std::string OneLine(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += ' ';
    else if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuclean: check, fix and prove .tflite models for mobile GPUs", "gpuclean"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpuclean 0.1.0");
  gpuclean::cli::Handler handler;
  gpuclean::cli::AddInspect(app, handler);
  gpuclean::cli::AddRun(app, handler);
  gpuclean::cli::AddProbe(app, handler);
  gpuclean::cli::AddLint(app, handler);
  gpuclean::cli::AddMatrix(app, handler);
  gpuclean::cli::AddBisect(app, handler);
  gpuclean::cli::AddCheck(app, handler);
  gpuclean::cli::AddFix(app, handler);
  gpuclean::cli::AddSplit(app, handler);
  gpuclean::cli::AddConvert(app, handler);
  gpuclean::cli::AddPipeline(app, handler);
  gpuclean::cli::AddRecipe(app, handler);
  gpuclean::cli::AddCompare(app, handler);
  gpuclean::cli::AddRecord(app, handler);
  gpuclean::cli::AddBench(app, handler);
  gpuclean::cli::AddSynth(app, handler);
  OneValuePerOccurrence(app);
  std::string max_memory;
  // Every command, nested ones (pipeline run) included.
  std::function<void(CLI::App*)> add_max_memory = [&](CLI::App* parent) {
    for (CLI::App* sub : parent->get_subcommands({})) {
      sub->add_option("--max-memory", max_memory,
                      "refuse models that would need more memory than this (512M, 8G, 2GiB; default 3/4 of the memory "
                      "this process may use)")
          ->group("Resources");
      add_max_memory(sub);
    }
  };
  add_max_memory(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpuclean: usage error: " << OneLine(e.what()) << " (see --help)\n";
    return 2;
  }
  try {
    if (!max_memory.empty()) gpuclean::SetMemoryLimit(gpuclean::ParseByteSize(max_memory));
    return handler ? handler() : 0;
  } catch (const gpuclean::Error& e) {
    const bool internal = e.kind() == gpuclean::ErrorKind::kInternal;
    std::cerr << "gpuclean: " << (internal ? "internal error: " : "error: ") << OneLine(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "gpuclean: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpuclean: internal error: " << OneLine(e.what()) << "\n";
    return 2;
  }
}
