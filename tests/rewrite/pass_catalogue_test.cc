// The one pass catalogue (src/lint/passes.cc) against everything that lists
// passes: the rewrite registry, the matrices' hints, docs/rewrite.md and
// docs/lint.md. A pass added in one place only fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpuclean/lint.h"
#include "gpuclean/rewrite.h"
#include "support/test_support.h"

namespace gpuclean::rewrite {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The section of `text` from the line starting with `heading` to the next "## ".
std::string Section(const std::string& text, const std::string& heading) {
  const size_t start = text.find(heading);
  EXPECT_NE(start, std::string::npos) << heading;
  if (start == std::string::npos) return "";
  const size_t end = text.find("\n## ", start + heading.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// First-column ids of the markdown table rows ("| `id` | ...").
std::vector<std::string> TableIds(const std::string& section) {
  std::vector<std::string> ids;
  const std::regex row(R"(\n\| `([a-z0-9-]+)` \|)");
  for (std::sregex_iterator it(section.begin(), section.end(), row), end; it != end; ++it) ids.push_back((*it)[1]);
  return ids;
}

TEST(PassCatalogue, RegistryAndCatalogueAgree) {
  std::set<std::string> registered;
  for (const Pass* pass : Registry()) {
    const std::string id(pass->id());
    registered.insert(id);
    const lint::PassInfo* info = lint::FindPass(id);
    ASSERT_NE(info, nullptr) << id << " is registered but not in the catalogue";
    EXPECT_TRUE(lint::IsRewrite(info->kind))
        << id << " is a rewrite but catalogued as " << lint::PassKindName(info->kind);
    EXPECT_EQ(pass->opt_in(), info->kind == lint::PassKind::kOptIn) << id;
  }
  for (const lint::PassInfo& info : lint::PassCatalog())
    if (lint::IsRewrite(info.kind))
      EXPECT_TRUE(registered.count(info.id)) << info.id << " is catalogued as a rewrite but not registered";
}

// The registry is the catalogue's rewrite rows in order, and each row's
// accessor returns the pass that carries the row's id.
TEST(PassCatalogue, EachRowsAccessorIsThePassWithItsId) {
  std::vector<std::string> rows;
  for (const lint::PassInfo& info : lint::PassCatalog())
    if (lint::IsRewrite(info.kind)) rows.emplace_back(info.id);
  std::vector<std::string> registered;
  for (const Pass* pass : Registry()) registered.emplace_back(pass->id());
  EXPECT_EQ(registered, rows);
}

// An automatic pass runs only when a finding names it: some matrix must.
TEST(PassCatalogue, EveryAutomaticPassIsHintedBySomeMatrix) {
  std::set<std::string> hinted;
  for (const auto& file : std::filesystem::directory_iterator(testing::SourceDir() + "/data/compat")) {
    const nlohmann::json j = nlohmann::json::parse(ReadText(file.path().string()));
    for (const char* list : {"entries", "rules"})
      if (j.contains(list))
        for (const auto& e : j[list])
          if (e.contains("hints"))
            for (const auto& h : e["hints"]) hinted.insert(h.get<std::string>());
  }
  for (const lint::PassInfo& info : lint::PassCatalog())
    if (info.kind == lint::PassKind::kAutomatic) EXPECT_TRUE(hinted.count(info.id)) << info.id << " is never hinted";
}

TEST(PassCatalogue, RewriteDocsListTheRegistryInOrderAndTheRest) {
  const std::string doc = ReadText(testing::SourceDir() + "/docs/rewrite.md");
  const std::string passes = Section(doc, "## Passes");
  std::vector<std::string> registry;
  for (const Pass* pass : Registry()) registry.emplace_back(pass->id());
  EXPECT_EQ(TableIds(passes), registry) << "docs/rewrite.md's pass table must list the registry in its order";
  // The "Not automatic" paragraph names every split, host and manual id.
  const size_t at = passes.find("Not automatic");
  ASSERT_NE(at, std::string::npos);
  const std::string paragraph = passes.substr(at, passes.find("\n\n", at) - at);
  std::set<std::string> named;
  const std::regex id("`([a-z0-9-]+)`");
  for (std::sregex_iterator it(paragraph.begin(), paragraph.end(), id), end; it != end; ++it) named.insert((*it)[1]);
  std::set<std::string> want;
  for (const lint::PassInfo& info : lint::PassCatalog())
    if (!lint::IsRewrite(info.kind)) want.insert(info.id);
  EXPECT_EQ(named, want);
}

TEST(PassCatalogue, LintDocsTableIsTheCatalogue) {
  const std::string section = Section(ReadText(testing::SourceDir() + "/docs/lint.md"), "## Pass ids");
  std::vector<std::string> want_rows;
  for (const lint::PassInfo& info : lint::PassCatalog())
    want_rows.push_back(std::string("| `") + info.id + "` | " + std::string(lint::PassKindName(info.kind)) + " | " +
                        info.summary + " |");
  for (const std::string& row : want_rows)
    EXPECT_NE(section.find(row), std::string::npos) << "docs/lint.md lacks: " << row;
  EXPECT_EQ(TableIds(section).size(), want_rows.size());
}

}  // namespace
}  // namespace gpuclean::rewrite
