#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/input_shape_flag.h"
#include "gpuclean/format.h"
#include "gpuclean/split.h"

namespace gpuclean::cli {

void AddSplit(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand(
      "split", "Cut a graph at named tensors into a chain of graphs; prove the chain equals the monolith bit for bit");
  struct Args {
    std::string model, prefix;
    std::vector<std::string> at, input_shapes;
    uint32_t seed = 0;
    bool dry_run = false, json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("MODEL", args->model, "the .tflite file")->required();
  cmd->add_option("--at", args->at, "tensor names to cut at (comma-separated or repeated)")
      ->required()
      ->delimiter(',');
  cmd->add_option("-o,--output", args->prefix, "prefix of the written files: PREFIX.part<k>.tflite, PREFIX.chain.json");
  AddInputShapeFlag(cmd, args->input_shapes);
  cmd->add_option("--seed", args->seed, "seed of the proof inputs")->capture_default_str();
  cmd->add_flag("--dry-run", args->dry_run, "cut and prove, write nothing");
  cmd->add_flag("--json", args->json, "print the chain as JSON");
  cmd->callback([args, &handler] {
    handler = [args] {
      if (!args->dry_run && args->prefix.empty()) throw Error(ErrorKind::kUsage, "split needs -o PREFIX (or --dry-run)");
      const ir::Model model = ReadModelAtShapes(args->model, args->input_shapes);
      const std::vector<split::Part> parts = split::Cut(model, args->at);
      const split::Proof proof = split::ProveChain(model, parts, args->seed);
      std::vector<std::string> files;
      for (size_t p = 0; p < parts.size(); ++p)
        files.push_back(args->dry_run ? std::string() : args->prefix + ".part" + std::to_string(p + 1) + ".tflite");
      const nlohmann::json chain = split::ChainJson(model, parts, files, proof);
      if (proof.bit_exact && !args->dry_run) split::WriteParts(parts, args->prefix, chain);
      if (args->json) {
        std::cout << chain.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        std::cout << "split " << args->model << " into " << parts.size() << " parts\n"
                  << split::DescribeChain(model, parts, args->dry_run ? std::vector<std::string>{} : files);
        if (proof.bit_exact)
          std::cout << "proof: the chain reproduces all " << proof.outputs
                    << " model output(s) bit for bit on seeded inputs (seed " << args->seed << ")\n";
        else
          for (const std::string& m : proof.mismatches) std::cout << "proof failed: " << m << "\n";
        if (!proof.bit_exact) std::cout << "nothing written\n";
        else if (!args->dry_run) std::cout << "wrote " << args->prefix << ".part1.tflite .. part" << parts.size()
                                           << ".tflite and " << args->prefix << ".chain.json\n";
      }
      return proof.bit_exact ? 0 : 1;
    };
  });
}

}  // namespace gpuclean::cli
