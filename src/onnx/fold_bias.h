#pragma once
// ONNX's MatMul + Add(bias) arrives as a FULLY_CONNECTED without a bias and
// an ADD of a constant [..., 1, N]; the ADD becomes the FULLY_CONNECTED's
// bias input (and its fused activation the FULLY_CONNECTED's), as TFLite's
// converter writes a dense layer. One op and one pass over the layer's
// output less (sam2_hiera_t: 51 such ADDs, a tenth of its time). The same
// for a CONV_2D or DEPTHWISE_CONV_2D, whose bias (if any) and the constant
// are summed: a BatchNormalization's shift after fold_channel_scale.h took
// its scale. Internal to src/onnx/.
#include <vector>

#include "gpuclean/ir.h"
#include "onnx/fold_activations.h"

namespace gpuclean::onnx {

// Folds every such pair in `graph`: the ADD's output tensor, with its name,
// becomes the FULLY_CONNECTED's output; the FULLY_CONNECTED's own output
// tensor is left unreferenced.
std::vector<FoldedOp> FoldBiasAdds(ir::Subgraph& graph);

}  // namespace gpuclean::onnx
