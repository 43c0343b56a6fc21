// gpuclean's command line: parses flags, calls the library, prints. No logic.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "gpuclean/error.h"

namespace {

// A repeatable option (--input, --gate, --passes...) takes one value per
// occurrence, so `run --input 0=x.npy MODEL` leaves MODEL to the positional.
void OneValuePerOccurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_allow_extra_args() && option->nonpositional()) option->allow_extra_args(false);
  for (CLI::App* sub : app.get_subcommands({})) OneValuePerOccurrence(*sub);
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
  gpuclean::cli::AddCompare(app, handler);
  gpuclean::cli::AddRecord(app, handler);
  gpuclean::cli::AddBench(app, handler);
  gpuclean::cli::AddSynth(app, handler);
  OneValuePerOccurrence(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpuclean: usage error: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    return handler ? handler() : 0;
  } catch (const gpuclean::Error& e) {
    const bool internal = e.kind() == gpuclean::ErrorKind::kInternal;
    std::cerr << "gpuclean: " << (internal ? "internal error: " : "error: ") << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "gpuclean: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gpuclean: internal error: " << e.what() << "\n";
    return 2;
  }
}
