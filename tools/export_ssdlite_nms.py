#!/usr/bin/env python3
"""torchvision's SSDlite320-MobileNetV3 exported WITH its postprocessing
(per-class NonZero, TopK of min(k, n), If, NonMaxSuppression), seeded so a
photograph gets a few hundred detections above 0.5: the model docs/pipeline.md
converts with --host-ops auto. Debian's torch 1.13 / torchvision 0.14.

    tools/export_ssdlite_nms.py OUT_DIR
writes OUT_DIR/ssdlite320_nms.onnx and OUT_DIR/photo.npy (the cached
photograph, 320x320, [3, H, W] in [0, 1] as the model's own transform wants).
"""
import os
import sys

import numpy as np
import torch
import torchvision
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_onnx_fixtures import fix_tiny_weights, randomise_affine, recalibrate_batchnorm  # noqa: E402

# The class head's weights scaled so softmax scores spread like a trained
# model's (a few hundred above 0.5 on a photograph) instead of all near 1/91.
CLASS_HEAD_SCALE = 9.0


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                   num_classes=91)
    m.eval()
    fix_tiny_weights(m)
    randomise_affine(m, 1)
    recalibrate_batchnorm(m.backbone, (1, 3, 320, 320), 2)
    with torch.no_grad():
        for mod in m.head.classification_head.modules():
            if isinstance(mod, torch.nn.Conv2d):
                mod.weight.mul_(CLASS_HEAD_SCALE)
    m.eval()
    x = torch.rand(3, 320, 320)
    torch.onnx.export(m, ([x],), os.path.join(out_dir, "ssdlite320_nms.onnx"), opset_version=17,
                      input_names=["image"], output_names=["boxes", "scores", "labels"])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    photo = Image.open(os.path.join(root, ".cache/images/grace_hopper.jpg")).convert("RGB").resize((320, 320))
    np.save(os.path.join(out_dir, "photo.npy"),
            (np.asarray(photo).astype(np.float32) / 255).transpose(2, 0, 1).copy())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".cache/ssdlite")
