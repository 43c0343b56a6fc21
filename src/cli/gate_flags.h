#pragma once
// The gate flags `compare` and `record` share: --gate, --boxes, --mask-threshold.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuclean/gates.h"

namespace gpuclean::cli {

struct GateFlags {
  std::vector<std::string> gates;
  std::string boxes;
  std::optional<double> mask_threshold;

  void Add(CLI::App* cmd) {
    cmd->add_option("--gate", gates,
                    "corr>=X | maxabs<=X | meanabs<=X | argmax | topk=K | iou>=X | box_iou>=X | mask_iou>=X | equal, "
                    "optionally NAME:GATE for one tensor "
                    "(repeatable); exit 1 when one fails");
    cmd->add_option("--boxes", boxes, "iou>=X and box_iou>=X read boxes: xyxy or cxcywh in the last axis (size 4)");
    cmd->add_option("--mask-threshold", mask_threshold, "iou>=X and mask_iou>=X read masks: value > T is foreground");
  }
  std::vector<analyze::GateSpec> Specs() const {
    std::vector<analyze::GateSpec> specs;
    for (const std::string& g : gates) specs.push_back(analyze::ParseGate(g));
    return specs;
  }
  analyze::GateOptions Options() const {
    analyze::GateOptions options;
    if (!boxes.empty()) options.boxes = analyze::ParseBoxFormat(boxes);
    options.mask_threshold = mask_threshold;
    if (options.boxes && options.mask_threshold)
      for (const analyze::GateSpec& g : Specs())
        if (g.kind == analyze::GateKind::kIou)
          throw Error(ErrorKind::kUsage,
                      "iou>=X reads boxes (--boxes) or masks (--mask-threshold), not both; gate them with "
                      "box_iou>=X and mask_iou>=X");
    return options;
  }
};

}  // namespace gpuclean::cli
