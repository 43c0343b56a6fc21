// The synth catalogue and `gpuclean synth`: names, pairs, groups, files
// written, the documented input generator, and one-line usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "gpuclean/error.h"
#include "gpuclean/format.h"
#include "gpuclean/lint.h"
#include "gpuclean/synth.h"
#include "support/test_support.h"

namespace gpuclean::synth {
namespace {

TEST(Catalog, NamesAreUniqueAndComeInPairs) {
  std::set<std::string> names;
  for (const SynthGraph& g : Catalog()) {
    EXPECT_TRUE(names.insert(g.name).second) << g.name;
    EXPECT_FALSE(g.shows.empty()) << g.name;
    const SynthGraph* other = Find(g.counterpart);
    ASSERT_NE(other, nullptr) << g.name;
    EXPECT_EQ(other->counterpart, g.name);
    EXPECT_NE(other->fixed, g.fixed);
    const std::string suffix = g.group == Group::kProbe ? ".ok" : ".fixed";
    EXPECT_EQ(g.fixed, g.name.size() > suffix.size() && g.name.ends_with(suffix)) << g.name;
    if (g.group == Group::kPattern) {
      EXPECT_TRUE(g.inputs) << g.name;
      EXPECT_FALSE(g.input_doc.empty()) << g.name;
      if (!g.fixed) EXPECT_FALSE(g.expected.fix.empty()) << g.name;
    } else {
      EXPECT_FALSE(g.rule.empty()) << g.name;
    }
  }
}

// tests/lint/rules_test.cc checks each rule against its probe pair; here:
// every rule a probe names exists in its target's matrix.
TEST(Catalog, EveryProbeNamesAConfiguredRule) {
  const std::string compat = testing::SourceDir() + "/data/compat";
  for (const SynthGraph& g : Catalog()) {
    if (g.group != Group::kProbe || g.fixed) continue;
    const lint::Matrix m = lint::LoadMatrix(compat, g.target);
    bool found = m.Rule(g.rule) != nullptr;
    for (const lint::Entry& e : m.entries) found = found || e.id == g.rule;
    EXPECT_TRUE(found) << g.name << ": rule " << g.rule << " not in " << g.target;
  }
}

TEST(Catalog, EveryGraphBuildsAndRoundTrips) {
  testing::TempDir dir;
  for (const SynthGraph& g : Catalog()) {
    const Written w = Write(g, dir.path().string());
    const ir::Model m = format::ReadModel(w.model);
    EXPECT_FALSE(m.main().ops.empty()) << g.name;
    EXPECT_EQ(w.inputs.size(), g.group == Group::kPattern ? m.main().inputs.size() : 0u) << g.name;
    if (g.group == Group::kProbe && !g.fixed && g.rule != "compile-ceiling" && g.rule != "large-constant")
      EXPECT_LT(std::filesystem::file_size(w.model), 4096u) << g.name << " is not a micro-probe";
  }
}

TEST(Catalog, ResolveExpandsGroupsAndRejectsUnknownNames) {
  size_t probes = 0, patterns = 0;
  for (const SynthGraph& g : Catalog()) (g.group == Group::kProbe ? probes : patterns)++;
  EXPECT_EQ(Resolve({"probes"}).size(), probes);
  EXPECT_EQ(Resolve({"patterns"}).size(), patterns);
  EXPECT_EQ(Resolve({"all", "split"}).size(), Catalog().size());
  EXPECT_EQ(Resolve({"split", "split"}).size(), 1u);
  try {
    Resolve({"no-such-graph"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("rank5-reshape"), std::string::npos) << e.what();
  }
}

TEST(HashUniform, IsTheDocumentedGenerator) {
  // docs/synth.md: u = (lowbias32(i + seed * 0x9E3779B9) >> 8) / 2^24.
  const npy::Array a = HashUniform({4}, 0, 1, 1);
  auto lowbias32 = [](uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
  };
  for (uint32_t i = 0; i < 4; ++i)
    EXPECT_EQ(a.as<float>()[i], static_cast<float>(lowbias32(i + 0x9E3779B9U) >> 8) / 16777216.0f);
  const npy::Array b = HashUniform({1000}, 420, 460, 7);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_GE(b.as<float>()[i], 420);
    EXPECT_LT(b.as<float>()[i], 460);
  }
}

TEST(SynthCli, WritesModelsAndInputs) {
  testing::TempDir dir;
  auto r = testing::RunGpuclean("synth layernorm-256 rank5-reshape.ok --out " + testing::ShellQuote(dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/layernorm-256.tflite")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/layernorm-256.in0.npy")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/rank5-reshape.ok.tflite")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/rank5-reshape.ok.in0.npy")));
  const npy::Array x = npy::Read(dir.file("out/layernorm-256.in0.npy"));
  EXPECT_EQ(x.shape, (std::vector<int64_t>{1, 8, 256}));

  // The written pair feeds straight into bisect: the break is a finding (exit 1).
  auto b = testing::RunGpuclean("bisect " + testing::ShellQuote(dir.file("out/layernorm-256.tflite")) +
                                " --input 0=" + testing::ShellQuote(dir.file("out/layernorm-256.in0.npy")) + " --json");
  EXPECT_EQ(b.exit_code, 1) << b.err;
  EXPECT_NE(b.out.find("safe-layernorm-v2"), std::string::npos);
}

TEST(SynthCli, ProbesGroupAndList) {
  testing::TempDir dir;
  auto r = testing::RunGpuclean("synth probes --out " + testing::ShellQuote(dir.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.path().extension() == ".tflite";
  EXPECT_EQ(files, Resolve({"probes"}).size());
  auto list = testing::RunGpuclean("synth --list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const SynthGraph& g : Catalog()) EXPECT_NE(list.out.find(g.name), std::string::npos) << g.name;
}

TEST(SynthCli, BadUsageIsOneLineAndExit2) {
  testing::TempDir dir;
  auto unknown = testing::RunGpuclean("synth nope --out " + testing::ShellQuote(dir.path().string()));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1) << unknown.err;
  EXPECT_NE(unknown.err.find("layernorm-256"), std::string::npos) << unknown.err;
  auto no_out = testing::RunGpuclean("synth split");
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_EQ(std::count(no_out.err.begin(), no_out.err.end(), '\n'), 1) << no_out.err;
  auto nothing = testing::RunGpuclean("synth --out " + testing::ShellQuote(dir.path().string()));
  EXPECT_EQ(nothing.exit_code, 2);
}

}  // namespace
}  // namespace gpuclean::synth
