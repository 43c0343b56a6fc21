// The self-contained HTML bisect report: no scripts from the network, no
// external files. The graph is drawn as an SVG with one box per compared
// tensor, one row per depth, coloured by divergence; a second SVG plots
// correlation against depth; the first break is outlined and described.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "gpuclean/bisect.h"

namespace gpuclean::analyze {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Green when the tensor agrees, through yellow to red as correlation falls;
// magenta for new non-finite values.
std::string Colour(const TensorDivergence& d, double min_correlation) {
  if (d.metrics.nonfinite_got > d.metrics.nonfinite_ref) return "#d400ff";
  const double c = d.metrics.correlation;
  if (!std::isfinite(c)) return "#d400ff";
  if (c >= 0.99999) return "#66bb6a";
  if (c >= min_correlation) return "#d4e157";
  if (c >= 0.99) return "#ffca28";
  if (c >= 0.9) return "#ff7043";
  return "#e53935";
}

std::string NumberText(double x) {
  return std::isfinite(x) ? fmt::format("{:.6g}", x) : (std::isnan(x) ? "NaN" : "inf");
}

}  // namespace

std::string RenderHtml(const BisectReport& r, const ir::Subgraph& graph) {
  constexpr int kBoxW = 120, kBoxH = 26, kGapX = 14, kGapY = 34;
  std::map<int, std::vector<size_t>> rows;  // depth -> records
  for (size_t i = 0; i < r.tensors.size(); ++i) rows[r.tensors[i].depth].push_back(i);
  std::unordered_map<int, std::pair<int, int>> centre;  // tensor -> box centre
  size_t widest = 1;
  for (const auto& [depth, items] : rows) widest = std::max(widest, items.size());
  const int width = static_cast<int>(widest) * (kBoxW + kGapX) + kGapX;
  int y = kGapY / 2, row_index = 0;
  std::string boxes, edges;
  for (const auto& [depth, items] : rows) {
    for (size_t k = 0; k < items.size(); ++k) {
      const TensorDivergence& d = r.tensors[items[k]];
      const int x = kGapX + static_cast<int>(k) * (kBoxW + kGapX);
      centre[d.tensor] = {x + kBoxW / 2, y + kBoxH / 2};
      const bool is_break = r.first_break && *r.first_break == items[k];
      boxes += fmt::format(
          "<g><title>op {} {} -> {}\ncorrelation {}\nmax|diff| {}\nmax|x| {} / {}\nnon-finite {} / {}</title>"
          "<rect x='{}' y='{}' width='{}' height='{}' rx='4' fill='{}' stroke='{}' stroke-width='{}'/>"
          "<text x='{}' y='{}' font-size='10' text-anchor='middle'>{} {}</text></g>\n",
          d.op_index, Escape(d.op_name), Escape(d.name), NumberText(d.metrics.correlation),
          NumberText(d.metrics.max_abs_diff), NumberText(d.metrics.max_abs_ref), NumberText(d.metrics.max_abs_got),
          d.metrics.nonfinite_ref, d.metrics.nonfinite_got, x, y, kBoxW, kBoxH, Colour(d, r.min_correlation),
          is_break ? "#000" : "#555", is_break ? 4 : 1, x + kBoxW / 2, y + 17, d.op_index,
          Escape(d.op_name.substr(0, 14)));
    }
    y += kBoxH + kGapY;
    ++row_index;
  }
  for (const TensorDivergence& d : r.tensors) {
    const auto to = centre.at(d.tensor);
    for (int32_t t : graph.ops[d.op_index].inputs) {
      auto from = t >= 0 ? centre.find(t) : centre.end();
      if (from == centre.end()) continue;
      edges += fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#999' stroke-width='1'/>\n",
                           from->second.first, from->second.second + kBoxH / 2, to.first, to.second - kBoxH / 2);
    }
  }
  const int height = y;

  // Correlation against depth.
  constexpr int kPlotW = 720, kPlotH = 260, kPad = 40;
  int max_depth = 1;
  double min_corr = 0.99;
  for (const TensorDivergence& d : r.tensors) {
    max_depth = std::max(max_depth, d.depth);
    if (std::isfinite(d.metrics.correlation)) min_corr = std::min(min_corr, d.metrics.correlation);
  }
  min_corr = std::max(-1.0, std::floor(min_corr * 100) / 100);
  auto px = [&](int depth) { return kPad + (kPlotW - 2 * kPad) * depth / max_depth; };
  auto py = [&](double c) { return kPad + (kPlotH - 2 * kPad) * (1.0 - (c - min_corr) / (1.0 - min_corr)); };
  std::string points;
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorDivergence& d = r.tensors[i];
    const double c = std::isfinite(d.metrics.correlation) ? d.metrics.correlation : min_corr;
    const bool is_break = r.first_break && *r.first_break == i;
    points += fmt::format("<circle cx='{}' cy='{:.1f}' r='{}' fill='{}'><title>op {} {}: {}</title></circle>\n",
                          px(d.depth), py(c), is_break ? 6 : 3, Colour(d, r.min_correlation), d.op_index,
                          Escape(d.op_name), NumberText(d.metrics.correlation));
  }
  const std::string plot = fmt::format(
      "<svg width='{0}' height='{1}' xmlns='http://www.w3.org/2000/svg'>"
      "<rect x='{2}' y='{2}' width='{3}' height='{4}' fill='none' stroke='#333'/>"
      "<line x1='{2}' x2='{5}' y1='{6:.1f}' y2='{6:.1f}' stroke='#e53935' stroke-dasharray='4'/>"
      "<text x='{2}' y='{7}' font-size='11'>correlation {8} (top 1.0) against depth 0..{9}; dashed: threshold "
      "{10}</text>"
      "{11}</svg>",
      kPlotW, kPlotH, kPad, kPlotW - 2 * kPad, kPlotH - 2 * kPad, kPlotW - kPad, py(r.min_correlation), kPad - 8,
      NumberText(min_corr), max_depth, r.min_correlation, points);

  std::string summary;
  if (r.first_break) {
    const TensorDivergence& d = r.tensors[*r.first_break];
    summary = fmt::format(
        "<div class='break'><h2>First break: op {} ({}) &rarr; <code>{}</code></h2>"
        "<p>correlation {} &middot; cosine {} &middot; max|diff| {} &middot; relative error {} &middot; max|x| {} ({}) "
        "/ "
        "{} ({}) &middot; non-finite {} / {}</p><p><b>Cause:</b> {} &mdash; {}</p><p><b>Fix:</b> <code>{}</code> "
        "&mdash; {}</p></div>",
        d.op_index, Escape(d.op_name), Escape(d.name), NumberText(d.metrics.correlation), NumberText(d.metrics.cosine),
        NumberText(d.metrics.max_abs_diff), NumberText(d.metrics.relative_error), NumberText(d.metrics.max_abs_ref),
        Escape(r.a), NumberText(d.metrics.max_abs_got), Escape(r.b), d.metrics.nonfinite_ref, d.metrics.nonfinite_got,
        CauseName(r.cause), Escape(r.why), Escape(r.fix_pass), Escape(r.fix));
  } else {
    summary = "<div class='ok'><h2>No op diverges</h2></div>";
  }
  std::string outputs;
  for (size_t i = 0; i < r.outputs.size(); ++i)
    outputs += fmt::format("<tr><td>output {}</td><td>{}</td><td>{}</td><td>{} / {}</td></tr>", i,
                           NumberText(r.outputs[i].correlation), NumberText(r.outputs[i].max_abs_diff),
                           r.outputs[i].nonfinite_ref, r.outputs[i].nonfinite_got);

  return fmt::format(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpuclean bisect {0}</title><style>"
      "body{{font-family:sans-serif;margin:20px}} .break{{border:3px solid #000;padding:8px;background:#fff3e0}}"
      ".ok{{border:2px solid #66bb6a;padding:8px}} td,th{{padding:2px 10px;text-align:left}}"
      ".graph{{overflow:auto;max-height:900px;border:1px solid #ccc}}</style></head><body>"
      "<h1>gpuclean bisect</h1><p><code>{0}</code>: <b>{1}</b> against <b>{2}</b>, {3} tensors compared; diverged "
      "means correlation &lt; {4} or new non-finite values.</p>{5}"
      "<h2>Outputs</h2><table><tr><th></th><th>correlation</th><th>max|diff|</th><th>non-finite</th></tr>{6}</table>"
      "<h2>Correlation against depth</h2>{7}"
      "<h2>Graph</h2><p>One box per op output, one row per depth; green agrees, red diverges, magenta new inf/NaN; the "
      "first break is outlined. Hover for numbers.</p><div class='graph'>"
      "<svg width='{8}' height='{9}' xmlns='http://www.w3.org/2000/svg'>{10}{11}</svg></div></body></html>\n",
      Escape(r.model), Escape(r.a), Escape(r.b), r.tensors.size(), r.min_correlation, summary, outputs, plot, width,
      height, edges, boxes);
}

}  // namespace gpuclean::analyze
