// The one pass catalogue: every id a matrix hint, a finding, `fix`,
// `convert`, the docs and --help may name, with its kind. The automatic,
// numeric and opt-in ones are rewrite passes (src/rewrite/registry.cc);
// tests/rewrite/pass_catalogue_test.cc fails when the registry, this list,
// docs/rewrite.md or docs/lint.md disagree.
#include "gpuclean/lint.h"

namespace gpuclean::lint {

const std::vector<PassInfo>& PassCatalog() {
  static const std::vector<PassInfo> catalog = {
      {"transpose-conv-zero-stuff", PassKind::kAutomatic, "TRANSPOSE_CONV -> nearest upsample x stride mask + flipped-kernel CONV_2D + crop (exact)"},
      {"padv2-to-pad0", PassKind::kAutomatic, "PADV2 with -inf/non-zero value before a max-pool -> PAD with 0 after a ReLU, or one SAME max-pool when the padding is SAME's (exact)"},
      {"split-to-slices", PassKind::kAutomatic, "SPLIT / SPLIT_V -> one SLICE per output (exact)"},
      {"pack-to-reshape-concat", PassKind::kAutomatic, "PACK -> RESHAPE each input + CONCATENATION (exact)"},
      {"strided-slice-to-avgpool", PassKind::kAutomatic, "stride-2 STRIDED_SLICE subsample of H/W -> AVERAGE_POOL_2D k=1 s=2 (exact)"},
      {"pow-to-exp-log", PassKind::kAutomatic, "POW(x, g) -> EXP(g * LOG(clamp(x))) (approx)"},
      {"relu0to1-to-relus", PassKind::kAutomatic, "RELU_0_TO_1(x) -> RELU(x) - RELU(x - 1) (exact)"},
      {"select-to-blend", PassKind::kAutomatic, "SELECT(m, v, x) -> x * (1 - m) + v * m with fp16-finite fill values"},
      {"broadcast-to-fold", PassKind::kAutomatic, "BROADCAST_TO: bake constants at their target shape; runtime tensors -> concat of slices"},
      {"gelu-tanh", PassKind::kAutomatic, "exact GELU / FlexErf -> tanh GELU (approx, ~1e-3)"},
      {"mean-split-axes", PassKind::kAutomatic, "multi-axis MEAN/SUM -> single-axis reductions in sequence (exact in real arithmetic)"},
      {"safe-layernorm-v2", PassKind::kNumeric, "LayerNorm -> per-row scaled normalisation that never rebuilds var * S^2"},
      {"rmsnorm-scale-first", PassKind::kNumeric, "RMSNorm / ScaleNorm -> scale x down before squaring"},
      {"dot-scale-first", PassKind::kNumeric, "dot product times one scale -> the input scaled first"},
      {"layerscale-fold", PassKind::kAutomatic, "FULLY_CONNECTED followed by a broadcast MUL (LayerScale) -> gamma folded into weights and bias (exact)"},
      {"rank5-to-rank4", PassKind::kAutomatic, "every op with a rank >= 5 tensor -> the same op at rank <= 4 by its op-table rank rule (merged dimensions; decomposed transposes, tiles, broadcasts) (exact)"},
      {"gather-onehot-matmul", PassKind::kAutomatic, "GATHER / GATHER_ND of a small constant table at runtime int32 indices -> one-hot (EQUAL + CAST) x table by FULLY_CONNECTED (exact)"},
      {"add-output-alias", PassKind::kAutomatic, "ADD that is a graph output and consumed -> output acc * one with `one` a runtime input"},
      {"token-output-leaf", PassKind::kAutomatic, "[1,N,C] token outputs that are also consumed -> sole leaf outputs (or 4-D)"},
      {"host-fed-constants", PassKind::kOptIn, "large baked constants in compute chains -> runtime inputs fed from host files"},
      {"conv-weight-scale", PassKind::kManual, "conv/matmul with large outputs feeding a norm -> weights and bias scaled down (exact: the norm is scale-invariant)"},
      {"split-graph", PassKind::kSplit, "cut the graph at a block boundary; verify split == monolith"},
      {"densify-offline", PassKind::kAutomatic, "DENSIFY of sparse constant weights -> dense constants stored in the file (exact)"},
      {"static-shapes", PassKind::kManual, "dynamic dimensions / runtime shape tensors -> static shapes fixed at conversion"},
      {"resize-flags", PassKind::kManual, "RESIZE with align_corners and half_pixel_centers -> align_corners=false (equivalent coordinate map)"},
      {"cast-keep-float", PassKind::kManual, "disallowed CAST kinds -> keep the value float through the graph"},
      {"gather-to-host", PassKind::kHost, "GATHER / GATHER_ND / TOPK / EMBEDDING_LOOKUP -> host step between two GPU graphs (split-graph)"},
      {"const-fold", PassKind::kAutomatic, "ops whose inputs are all constants -> fold to a constant (or make one input runtime)"},
      {"div-identical-inputs", PassKind::kAutomatic, "DIV(x, x) -> the constant 1 at x's shape"},
      {"bmm-const-lhs", PassKind::kAutomatic, "BATCH_MATMUL(C, X) with a constant C -> transpose of BATCH_MATMUL(X^T, C^T) (exact)"},
      {"bmm-split-rows", PassKind::kAutomatic, "BATCH_MATMUL whose second operand has more rows than the target computes -> batch (or row) chunks joined by CONCATENATION (exact)"},
      {"conv-winograd-split", PassKind::kAutomatic, "3x3 stride-1 CONV_2D on ML Drift's Winograd path -> convs of <= 60 output channels + CONCATENATION (exact)"},
      {"const-operand-rank4", PassKind::kAutomatic, "binary elementwise op with a 2-D/3-D constant whose first dimension is > 1 -> the op at rank 4 with leading 1s (exact)"},
      {"bmm-mask-pre-expand", PassKind::kManual, "broadcast ADD on a BATCH_MATMUL result -> pre-expand the mask to [1,H,S,S]"},
      {"int64-to-int32", PassKind::kManual, "int64 tensors -> int32 (indices) or host"},
  };
  return catalog;
}

std::string_view PassKindName(PassKind kind) {
  switch (kind) {
    case PassKind::kAutomatic: return "automatic";
    case PassKind::kNumeric: return "numeric";
    case PassKind::kOptIn: return "opt-in";
    case PassKind::kSplit: return "split";
    case PassKind::kHost: return "host";
    case PassKind::kManual: return "manual";
  }
  return "?";
}

bool IsRewrite(PassKind kind) {
  return kind == PassKind::kAutomatic || kind == PassKind::kNumeric || kind == PassKind::kOptIn;
}

const PassInfo* FindPass(std::string_view id) {
  for (const PassInfo& pass : PassCatalog())
    if (id == pass.id) return &pass;
  return nullptr;
}

}  // namespace gpuclean::lint
