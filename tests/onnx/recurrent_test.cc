// ctest-labels: litert
// RNN/GRU/LSTM lowerings proven against onnxruntime in the configurations
// ONNX's node tests do not cover: bidirectional, reverse, initial states,
// GRU's linear_before_reset (layout 1 is covered by the node tests only:
// onnxruntime does not run it).
#include <gtest/gtest.h>

#include "gpuclean/convert.h"
#include "onnx/onnx_test_model.h"
#include "support/test_support.h"

namespace gpuclean {
namespace {

using testing::OnnxTestModel;
using testing::RandomValues;

struct CaseRecurrent {
  std::string op;
  std::string direction;
  bool batch_first = false;
  bool initial = false;
  int64_t linear_before_reset = 0;
};

void ProveRecurrent(const CaseRecurrent& c) {
  SCOPED_TRACE(c.op + " " + c.direction + (c.batch_first ? " layout 1" : "") + (c.initial ? " initial" : "") +
               (c.linear_before_reset ? " lbr" : ""));
  const int64_t seq = 5, batch = 2, in = 3, hs = 4;
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const int64_t gates = c.op == "RNN" ? 1 : c.op == "GRU" ? 3 : 4;
  testing::TempDir dir;
  OnnxTestModel m;
  m.Input("x", c.batch_first ? std::vector<int64_t>{batch, seq, in} : std::vector<int64_t>{seq, batch, in});
  m.InitF32("w", {dirs, gates * hs, in}, RandomValues(dirs * gates * hs * in, 1, 0.6f));
  m.InitF32("r", {dirs, gates * hs, hs}, RandomValues(dirs * gates * hs * hs, 2, 0.6f));
  m.InitF32("b", {dirs, 2 * gates * hs}, RandomValues(dirs * 2 * gates * hs, 3, 0.3f));
  std::vector<std::string> inputs = {"x", "w", "r", "b"};
  std::vector<std::string> outputs = {"y", "y_h"};
  if (c.op == "LSTM") outputs.push_back("y_c");
  if (c.initial) {
    const std::vector<int64_t> state =
        c.batch_first ? std::vector<int64_t>{batch, dirs, hs} : std::vector<int64_t>{dirs, batch, hs};
    m.Input("h0", state);
    inputs.insert(inputs.end(), {"", "h0"});
    if (c.op == "LSTM") {
      m.Input("c0", state);
      inputs.push_back("c0");
      m.InitF32("p", {dirs, 3 * hs}, RandomValues(dirs * 3 * hs, 4, 0.5f));
      inputs.push_back("p");
    }
  }
  auto node = m.Node(c.op, inputs, outputs);
  node.Int("hidden_size", hs).Str("direction", c.direction).Int("layout", c.batch_first ? 1 : 0);
  if (c.op == "GRU") node.Int("linear_before_reset", c.linear_before_reset);
  for (const auto& o : outputs) m.Output(o);
  convert::Options o;
  o.onnx_path = m.Write(dir.file("rnn.onnx"));
  o.target = "none";
  const convert::Result r = convert::Convert(o);
  EXPECT_TRUE(r.report.proven) << r.report.RenderText();
  EXPECT_EQ(r.report.ops_out.count("TRANSPOSE"), 0u) << r.report.RenderText();
}

TEST(Recurrent, ProvenAgainstOnnxRuntime) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    ProveRecurrent({op, "forward"});
    ProveRecurrent({op, "reverse", false, true});
    ProveRecurrent({op, "bidirectional", false, true});  // onnxruntime has no layout 1 (the node tests cover it)
  }
  ProveRecurrent({"GRU", "bidirectional", false, true, 1});
}

}  // namespace
}  // namespace gpuclean
