#pragma once
// The base of a pass that looks at ops one at a time. A pass declares its
// identity and the op codes it looks at once; the base owns the edit
// session, the loop over the ops the graph had when the pass began (ops it
// appends are not visited), a copy of each op (the builder appends to the
// op vector, so a reference into it would dangle), the site record and the
// commit.
//
//   class ReluSixPass final : public PatternPass<int> {
//    public:
//     ReluSixPass() : PatternPass({"relu-six", Exactness::kExact, "..."}, {tfl::BuiltinOperator_RELU6}) {}
//     std::optional<int> Match(const OpSite& site) const override { ... }   // reads only
//     std::string Rewrite(OpSite& site, const int& x) const override { ... } // edits
//   };
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuclean/rewrite.h"
#include "rewrite/graph_edit.h"

namespace gpuclean::rewrite {

struct PassIdentity {
  std::string_view id;  // an id of lint::PassCatalog()
  Exactness exactness;
  std::string_view contract;  // see Pass::contract()
};

// One op the pass looks at, in the edit session of one Apply().
struct OpSite {
  GraphEdit& edit;
  const PassOptions& options;
  int node;          // index of the op in the graph as the pass found it
  const ir::Op& op;  // a copy, stable while the edit appends ops
  const ir::Subgraph& graph() const { return edit.graph(); }
  builder::GraphBuilder& b() const { return edit.b(); }
  const ir::Tensor& tensor(int index) const { return edit.graph().tensors.at(index); }
  // Records a match left alone, with the precondition that failed (PassResult::skipped).
  void Skip(std::vector<std::string> tensors, std::string why) const {
    skipped.push_back({node, op.name(), std::move(tensors), std::move(why)});
  }
  // The tensor `make` returns at the first site of this Apply() that asks
  // for `key`; every later site gets the same one (a mask several SELECTs on
  // one condition share). For edits only, so not on a const site.
  int Shared(const std::string& key, const std::function<int()>& make);
  // A [1] float32 graph input "<pass_id>/<name>" the host feeds with `value`,
  // added once per Apply() and recorded in PassResult::host_inputs.
  int SharedHostScalar(const std::string& name, float value);
  std::vector<rewrite::Skip>& skipped;
  std::vector<HostInput>& host_inputs;
  std::map<std::string, int>& shared;
};

class OpPass : public Pass {
 public:
  OpPass(PassIdentity identity, std::initializer_list<tfl::BuiltinOperator> codes)
      : identity_(identity), codes_(codes) {}
  // For a family the op table names (IsBinaryElementwise, say).
  OpPass(PassIdentity identity, bool (*looks_at)(tfl::BuiltinOperator)) : identity_(identity), looks_at_(looks_at) {}
  std::string_view id() const final { return identity_.id; }
  Exactness exactness() const final { return identity_.exactness; }
  std::string_view contract() const final { return identity_.contract; }
  PassResult Apply(ir::Model& model, const PassOptions& options) const final;

 protected:
  // Rewrites the op through site.edit (Replace / Remove) and returns one line
  // on what replaced it, or leaves the graph alone and returns nothing.
  virtual std::optional<std::string> Visit(OpSite& site) const = 0;

 private:
  PassIdentity identity_;
  std::vector<tfl::BuiltinOperator> codes_;
  bool (*looks_at_)(tfl::BuiltinOperator) = nullptr;
};

// An OpPass split into a read-only Match, which decides and extracts what
// the rewrite needs, and a Rewrite, which edits and says what it did.
template <class Found>
class PatternPass : public OpPass {
 public:
  using OpPass::OpPass;

 protected:
  virtual std::optional<Found> Match(const OpSite& site) const = 0;
  virtual std::string Rewrite(OpSite& site, const Found& found) const = 0;

 private:
  std::optional<std::string> Visit(OpSite& site) const final {
    std::optional<Found> found = Match(site);
    if (!found) return std::nullopt;
    return Rewrite(site, *found);
  }
};

}  // namespace gpuclean::rewrite
