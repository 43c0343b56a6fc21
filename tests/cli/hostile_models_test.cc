// Every command on every model of the hostile corpus: refusals are exit 2
// with one line that says what is wrong, never a crash, a hang, an
// "internal error", a multi-line message or a written file.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpuclean/builder.h"
#include "gpuclean/format.h"
#include "support/hostile_models.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

namespace fs = std::filesystem;
using testing::HostileModel;
using testing::Hostility;

struct Invocation {
  std::string command;  // the subcommand
  std::string flags;    // before MODEL
  bool writes = false;  // "-o OUT" follows MODEL
};

// Commands that read a .tflite; `check` without the WebGPU probe or a photo.
const std::vector<Invocation>& Commands() {
  static const std::vector<Invocation> kCommands = {
      {"inspect", ""},
      {"inspect", "--json"},
      {"lint", ""},
      {"lint", "--format sarif"},
      {"run", "--out"},
      {"run", "--precision fp16-compute --out"},
      {"bisect", ""},
      {"fix", "", true},
      {"split", "--dry-run --at"},
      {"check", "--no-probe --no-image"},
  };
  return kCommands;
}

struct Outcome {
  int exit_code = -1;
  std::string err;
  bool wrote = false;
};

Outcome RunOn(const testing::TempDir& dir, const Invocation& inv, const std::string& model, const std::string& extra,
              const std::string& cut_at = "") {
  const std::string out = dir.file("out.tflite");
  fs::remove(out);
  // A hang shows as exit 124.
  // A flag list ending in --out takes the outputs folder; in --at, the first
  // op's output (where split cuts).
  std::string flags = inv.flags;
  if (flags.ends_with("--out")) flags += " " + testing::ShellQuote(dir.file("outs"));
  if (flags.ends_with("--at")) flags += " " + testing::ShellQuote(cut_at.empty() ? "none" : cut_at);
  const std::string line = "timeout 120 " + testing::ShellQuote(GPUCLEAN_BINARY) + " " + inv.command + " " + flags +
                           " " + extra + " " + testing::ShellQuote(model) +
                           (inv.writes ? " -o " + testing::ShellQuote(out) : "");
  testing::CommandResult r = testing::RunCommand(line + " >/dev/null");
  return {r.exit_code, r.err, fs::exists(out)};
}

// The refusal: the last line of stderr, the only one from `gpuclean:`
// (progress lines of bisect and check may come before it).
std::string LastLine(const std::string& err) {
  const size_t end = err.empty() || err.back() != '\n' ? err.size() : err.size() - 1;
  const size_t begin = err.rfind('\n', end == 0 ? 0 : end - 1);
  return err.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1));
}

int ErrorLines(const std::string& err) {
  int n = 0;
  for (size_t at = err.find("gpuclean: "); at != std::string::npos; at = err.find("gpuclean: ", at + 1))
    if (at == 0 || err[at - 1] == '\n') ++n;
  return n;
}

void ExpectOneLineRefusal(const Outcome& o, const std::string& expect, const std::string& what) {
  EXPECT_EQ(o.exit_code, 2) << what << ": " << o.err;
  EXPECT_EQ(ErrorLines(o.err), 1) << what << ": " << o.err;
  EXPECT_TRUE(LastLine(o.err).starts_with("gpuclean: error: ")) << what << ": " << o.err;
  EXPECT_EQ(o.err.find("internal error"), std::string::npos) << what << ": " << o.err;
  if (!expect.empty())
    EXPECT_NE(LastLine(o.err).find(expect), std::string::npos) << what << ": wants '" << expect << "': " << o.err;
  EXPECT_FALSE(o.wrote) << what << ": wrote a file";
}

// Exit 0 or 1 with whatever output, or a clean one-line refusal.
void ExpectSurvived(const Outcome& o, const std::string& what) {
  EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1 || o.exit_code == 2)
      << what << ": exit " << o.exit_code << " " << o.err;
  EXPECT_EQ(o.err.find("internal error"), std::string::npos) << what << ": " << o.err;
  if (o.exit_code == 2) {
    EXPECT_EQ(ErrorLines(o.err), 1) << what << ": " << o.err;
    EXPECT_TRUE(LastLine(o.err).starts_with("gpuclean: error: ")) << what << ": " << o.err;
  }
}

// The first op's first output: where `split --at` cuts.
std::string CutAt(const HostileModel& m) {
  const ir::Subgraph& g = m.model.main();
  if (g.ops.empty() || g.ops[0].outputs.empty()) return "";
  return g.tensors[g.ops[0].outputs[0]].name;
}

// check goes on past a stage it cannot prepare (exit 1, not verified, with
// the stage's one-line reason in its progress), or refuses like the others.
void ExpectCheckRefusedOrNotRun(const Outcome& o, const std::string& expect, const std::string& what) {
  if (o.exit_code == 2) return ExpectOneLineRefusal(o, expect, what);
  EXPECT_EQ(o.exit_code, 1) << what << ": " << o.err;
  EXPECT_NE(o.err.find("not run: "), std::string::npos) << what << ": " << o.err;
  EXPECT_NE(o.err.find(expect), std::string::npos) << what << ": wants '" << expect << "': " << o.err;
  EXPECT_EQ(o.err.find("internal error"), std::string::npos) << what << ": " << o.err;
}

class HostileModels : public ::testing::Test {
 protected:
  std::string Write(const HostileModel& m, std::string* input_flags) {
    const std::string path = dir_.file(m.name + ".tflite");
    format::WriteModel(m.model, path);
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      const std::string npy_path = dir_.file(m.name + "_in" + std::to_string(i) + ".npy");
      npy::Write(npy_path, m.inputs[i]);
      *input_flags += " --input " + std::to_string(i) + "=" + testing::ShellQuote(npy_path);
    }
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(HostileModels, InvalidModelsAreRefusedByEveryCommand) {
  for (const HostileModel& m : testing::HostileCorpus()) {
    if (m.hostility != Hostility::kInvalid) continue;
    std::string inputs;
    const std::string path = Write(m, &inputs);
    for (const Invocation& inv : Commands())
      ExpectOneLineRefusal(RunOn(dir_, inv, path, "", CutAt(m)), m.expect,
                           m.name + ": " + inv.command + " " + inv.flags);
  }
}

TEST_F(HostileModels, ModelsNeedingTooMuchMemoryAreRefusedBeforeAllocating) {
  for (const HostileModel& m : testing::HostileCorpus()) {
    if (m.hostility != Hostility::kTooBig) continue;
    std::string inputs;
    const std::string path = Write(m, &inputs);
    for (const Invocation& inv : Commands()) {
      const std::string what = m.name + ": " + inv.command + " " + inv.flags;
      // The commands that run the graph refuse, and so do lint and fix (the
      // same check on the declared shapes); describing it is fine, and check
      // reports the stage it could not run in its verdict.
      const Outcome o = RunOn(dir_, inv, path, "--max-memory 2G", CutAt(m));
      if (inv.command == "run" || inv.command == "bisect" || inv.command == "lint" || inv.command == "fix")
        ExpectOneLineRefusal(o, m.expect, what);
      else if (inv.command == "check")
        ExpectCheckRefusedOrNotRun(o, m.expect, what);
      else
        ExpectSurvived(o, what);
    }
  }
}

TEST_F(HostileModels, OutOfRangeRuntimeIndicesAreRefusedInEveryPrecision) {
  for (const HostileModel& m : testing::HostileCorpus()) {
    if (m.hostility != Hostility::kRuntimeValues) continue;
    std::string inputs;
    const std::string path = Write(m, &inputs);
    for (const char* precision : {"fp32", "fp16-storage", "fp16-compute", "fp16-fused", "fp16-f32acc"})
      ExpectOneLineRefusal(RunOn(dir_, {"run", std::string("--precision ") + precision + " --out"}, path, inputs),
                           m.expect, m.name + ": run " + precision);
    ExpectOneLineRefusal(RunOn(dir_, {"bisect", ""}, path, inputs), m.expect, m.name + ": bisect");
    ExpectCheckRefusedOrNotRun(RunOn(dir_, {"check", "--no-probe --no-image"}, path, inputs), m.expect,
                               m.name + ": check");
    for (const Invocation& inv : Commands())
      ExpectSurvived(RunOn(dir_, inv, path, "", CutAt(m)), m.name + ": " + inv.command);
  }
}

TEST_F(HostileModels, OddButValidModelsRun) {
  for (const HostileModel& m : testing::HostileCorpus()) {
    if (m.hostility != Hostility::kOdd) continue;
    std::string inputs;
    const std::string path = Write(m, &inputs);
    for (const char* precision : {"fp32", "fp16-fused"}) {
      const Outcome run = RunOn(dir_, {"run", std::string("--precision ") + precision + " --out"}, path, inputs);
      EXPECT_EQ(run.exit_code, 0) << m.name << ": " << run.err;
    }
    for (const Invocation& inv : Commands())
      ExpectSurvived(RunOn(dir_, inv, path, "", CutAt(m)), m.name + ": " + inv.command);
  }
}

// Each allocation fits the limit alone, the arena (700 MB in, 700 MB out)
// and the generated 700 MB input do not fit together: refused before the
// second is made, not by the machine running out of memory.
TEST_F(HostileModels, AllocationsThatFitOnlyOneAtATimeAreRefusedBeforeAllocating) {
  builder::GraphBuilder b;
  b.Output(b.Relu(b.Input("x", tfl::TensorType_FLOAT32, {1, 175000000})));
  const std::string path = dir_.file("seven_hundred_mb.tflite");
  format::WriteModel(b.Finish(), path);
  for (const Invocation& inv : {Invocation{"run", "--out"}, Invocation{"bisect", ""}}) {
    const Outcome o = RunOn(dir_, inv, path, "--max-memory 2G");
    ExpectOneLineRefusal(o, "memory limit of 2.0 GB", "700 MB input: " + inv.command);
    EXPECT_NE(o.err.find("input values"), std::string::npos) << inv.command << ": " << o.err;
  }
  // lint and fix refuse what run refuses: the RELU's input and output are in
  // the arena at once, beside the input value.
  for (const Invocation& inv : {Invocation{"lint", ""}, Invocation{"fix", "", true}})
    ExpectOneLineRefusal(RunOn(dir_, inv, path, "--max-memory 2G"), "memory limit of 2.0 GB",
                         "700 MB input: " + inv.command);
  const Outcome lint = RunOn(dir_, {"lint", ""}, path, "--max-memory 3G");
  EXPECT_EQ(lint.exit_code, 0) << lint.err;
}

// fix makes its two proof input sets only when a pass has changed something:
// a lint-clean model whose sets would not fit beside each other is fixed
// (nothing to do) without allocating them.
TEST_F(HostileModels, FixMakesNoProofInputsWhenNothingChanges) {
  builder::GraphBuilder b;
  b.Input("unread", tfl::TensorType_FLOAT32, {1, 100000000});  // 400 MB, twice for the proof
  b.Output(b.Relu(b.Input("x", tfl::TensorType_FLOAT32, {1, 8})));
  const std::string path = dir_.file("unread_input.tflite");
  format::WriteModel(b.Finish(), path);
  const Outcome fix = RunOn(dir_, {"fix", "", true}, path, "--max-memory 600M");
  EXPECT_EQ(fix.exit_code, 0) << fix.err;
}

TEST(MaxMemoryFlag, BadSizesAreUsageErrors) {
  for (const char* size : {"lots", "-1G", "3X", "0"}) {
    auto r = testing::RunGpuclean(std::string("inspect --max-memory ") + size + " x.tflite");
    EXPECT_EQ(r.exit_code, 2) << size;
    EXPECT_NE(r.err.find("not a memory size"), std::string::npos) << size << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuclean
