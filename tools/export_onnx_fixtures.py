#!/usr/bin/python3
"""Export seeded, random-weight ONNX fixture models into .cache/onnx/.

The ONNX front end of gpuclean needs real-architecture models to convert.
Pretrained weights cannot be downloaded here, so every model is built with
weights=None from a fixed seed and then made "non-trivial":

  * weights that torchvision initialises to zero or nearly zero (ViT's head,
    ConvNeXt's layer scales, zero-init residual BN gammas, ...) are
    re-initialised: layer scales / norm gammas to ones, other weights to
    N(0, 0.02);
  * all-zero biases get N(0, 0.02) and all-ones norm weights 1 + N(0, 0.1),
    so that a converter dropping a bias or a norm's affine part is caught by
    the reference outputs;
  * BatchNorm running statistics are recalibrated on random batches
    (momentum=None, i.e. a cumulative average), because deep random nets with
    mean 0 / var 1 running stats collapse to activations of ~1e-14.

Every model is exported with opset 17, static shapes, batch 1, input name
"input", and checked with onnx.checker. Next to each NAME.onnx the script
writes a reference pair: NAME.input.npy (seeded torch.randn, float32) and
NAME.expected.npy (eager PyTorch output), or NAME.expected.<output>.npy per
output for multi-output models. mha_parity additionally gets
mha_parity.input_<k>.npy / mha_parity.expected_<k>.npy, k=0 a smooth
deterministic "golden" image, k=1..8 random. NAME.json (written last) records
shapes, seeds, versions and graph statistics; tools/fetch_onnx_fixtures.sh
treats a model as done when NAME.onnx and NAME.json both exist.

Usage (Debian's /usr/bin/python3, which has python3-torch and friends):
  tools/export_onnx_fixtures.py [--only resnet18,vit_small6] [--out DIR]
                                [--histogram] [--list]
Prints one line per model: name, size MB, node count, export seconds (and
the model's total, with BN calibration and checks) and its op-type counts;
--histogram adds the op-type union over all models.
Exit status: 0 when every requested model exported (models listed in
KNOWN_FRAGILE may fail with a clear message without failing the run), 1
otherwise.
"""

import sys

# The fixture names, in export order (MODELS below must match). `--list`
# prints them without importing torch, so tools/fetch_onnx_fixtures.sh can
# tell what is cached in a fraction of a second.
MODEL_NAMES = [
    "resnet18", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny",
    "regnet_y_400mf", "deeplabv3_mobilenet_v3_large", "vit_small6", "swin_t",
    "detr_small", "mha_parity", "rfdetr_seg_small", "maxvit_t", "sam2_hiera_t_256",
    "rfdetr_seg_nano",
]
# Exported only when named: too large for the test suite's budget.
ON_DEMAND_NAMES = ["sam2_hiera_t"]
if __name__ == "__main__" and sys.argv[1:] == ["--list-on-demand"]:
    print("\n".join(ON_DEMAND_NAMES))
    sys.exit(0)
if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    print("\n".join(MODEL_NAMES))
    sys.exit(0)

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402

OPSET = 17

# Models whose export may legitimately fail with this torch version; a failure
# is reported but does not make the run fail.
KNOWN_FRAGILE = {"swin_t"}  # exports through a patch of torchvision internals


# --------------------------------------------------------------------------
# Hand-written models
# --------------------------------------------------------------------------

def conv_bn_relu(cin, cout, k=3, s=2):
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, s, k // 2, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


def sine_position_embedding(h, w, d, temperature=10000.0):
    """DETR's 2-D sine embedding, shape [h*w, d] (d divisible by 4)."""
    assert d % 4 == 0
    npf = d // 2
    y = torch.arange(1, h + 1, dtype=torch.float32)[:, None].expand(h, w)
    x = torch.arange(1, w + 1, dtype=torch.float32)[None, :].expand(h, w)
    eps, scale = 1e-6, 2 * math.pi
    y = y / (h + eps) * scale
    x = x / (w + eps) * scale
    dim_t = torch.arange(npf, dtype=torch.float32)
    dim_t = temperature ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / npf)
    px = x[:, :, None] / dim_t
    py = y[:, :, None] / dim_t
    px = torch.stack((px[:, :, 0::2].sin(), px[:, :, 1::2].cos()), dim=3).flatten(2)
    py = torch.stack((py[:, :, 0::2].sin(), py[:, :, 1::2].cos()), dim=3).flatten(2)
    return torch.cat((py, px), dim=2).reshape(h * w, d)


class MLP(nn.Module):
    def __init__(self, din, dhidden, dout, layers):
        super().__init__()
        dims = [din] + [dhidden] * (layers - 1) + [dout]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


class DetrSmall(nn.Module):
    """A small DETR-style detector: conv backbone (stride 32, 256 channels),
    1x1 projection to d=128, fixed sine positional embedding, nn.Transformer
    (2 encoder + 2 decoder layers, 4 heads, batch_first), 20 learned queries,
    a class head (num_classes + 1 = 11) and a sigmoid box MLP."""

    def __init__(self, image_size=224, d=128, num_queries=20, num_classes=10):
        super().__init__()
        self.backbone = nn.Sequential(
            conv_bn_relu(3, 32),
            conv_bn_relu(32, 64),
            conv_bn_relu(64, 128),
            conv_bn_relu(128, 256),
            conv_bn_relu(256, 256),
        )
        fh = fw = image_size // 32
        self.input_proj = nn.Conv2d(256, d, 1)
        self.register_buffer("pos", sine_position_embedding(fh, fw, d)[None], persistent=False)
        self.transformer = nn.Transformer(
            d_model=d, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
            dim_feedforward=2 * d, dropout=0.0, batch_first=True)
        self.query_embed = nn.Embedding(num_queries, d)
        self.class_embed = nn.Linear(d, num_classes + 1)
        self.bbox_embed = MLP(d, d, 4, 3)

    def forward(self, x):
        f = self.input_proj(self.backbone(x))            # [B, d, h, w]
        src = f.flatten(2).transpose(1, 2) + self.pos    # [B, h*w, d]
        tgt = self.query_embed.weight.unsqueeze(0).expand(x.shape[0], -1, -1)
        hs = self.transformer(src, tgt)                  # [B, Q, d]
        return self.class_embed(hs), self.bbox_embed(hs).sigmoid()


class MhaParity(nn.Module):
    """Patchify conv stem (3->64, k=16, s=16) -> 196 tokens ->
    nn.MultiheadAttention(64, 4 heads, batch_first) with residual + LayerNorm
    -> mean pool -> linear head (10 classes)."""

    def __init__(self, dim=64, heads=4, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, kernel_size=16, stride=16)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        t = self.stem(x).flatten(2).transpose(1, 2)      # [B, 196, 64]
        a, _ = self.attn(t, t, t, need_weights=False)
        t = self.norm(t + a)
        return self.head(t.mean(dim=1))


class DeformableSampler(nn.Module):
    """Single-scale deformable cross-attention (Deformable DETR / RF-DETR's
    shape): each query samples `points` locations around its reference box
    with F.grid_sample (bilinear, zeros padding) and mixes them with
    softmax weights."""

    def __init__(self, d, points=4):
        super().__init__()
        self.points = points
        self.offsets = nn.Linear(d, points * 2)
        self.weights = nn.Linear(d, points)
        self.value_proj = nn.Linear(d, d)
        self.output_proj = nn.Linear(d, d)

    def forward(self, q, ref, memory, h, w):
        b, k, d = q.shape
        offsets = self.offsets(q).reshape(b, k, self.points, 2)
        loc = ref[:, :, None, :2] + offsets / self.points * ref[:, :, None, 2:] * 0.5  # [b,k,p,2] in 0..1
        value = self.value_proj(memory).transpose(1, 2).reshape(b, d, h, w)
        sampled = F.grid_sample(value, 2 * loc - 1, mode="bilinear", padding_mode="zeros",
                                align_corners=False)                                # [b,d,k,p]
        weights = self.weights(q).softmax(-1)                                        # [b,k,p]
        out = (sampled * weights[:, None]).sum(-1).transpose(1, 2)                   # [b,k,d]
        return self.output_proj(out)


class RfDetrSegSmall(nn.Module):
    """A small RF-DETR-Seg-style two-stage detector and segmenter: conv
    backbone (a stride-4 map for masks, a stride-16 7x7 map for tokens), one
    transformer encoder layer, encoder proposals (class scores and boxes
    refined from a constant anchor grid), two-stage query selection
    (torch.topk over the 49 proposal scores -> torch.gather of the chosen
    memory rows and boxes), one decoder layer with self-attention and a
    GridSample deformable sampler around the reference boxes, a class head,
    boxes reparametrised against the reference boxes, and mask logits as
    query embeddings dotted with per-pixel embeddings."""

    def __init__(self, image_size=112, d=64, num_queries=16, num_classes=6):
        super().__init__()
        self.stem = nn.Sequential(conv_bn_relu(3, 16), conv_bn_relu(16, 32))      # stride 4
        self.deep = nn.Sequential(conv_bn_relu(32, 64), conv_bn_relu(64, 128))    # stride 16
        self.h = self.w = image_size // 16
        self.num_queries = num_queries
        self.input_proj = nn.Conv2d(128, d, 1)
        self.register_buffer("pos", sine_position_embedding(self.h, self.w, d)[None], persistent=False)
        self.encoder = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        cy, cx = torch.meshgrid((torch.arange(self.h) + 0.5) / self.h, (torch.arange(self.w) + 0.5) / self.w,
                                indexing="ij")
        anchors = torch.stack([cx, cy, torch.full_like(cx, 0.2), torch.full_like(cx, 0.2)], -1).reshape(1, -1, 4)
        self.register_buffer("anchor_logits", torch.log(anchors / (1 - anchors)), persistent=False)
        self.enc_class = nn.Linear(d, num_classes)
        self.enc_box = MLP(d, d, 4, 2)
        self.query_pos = MLP(4, d, d, 2)
        self.self_attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.sampler = DeformableSampler(d)
        self.norm2 = nn.LayerNorm(d)
        self.ffn = MLP(d, 2 * d, d, 2)
        self.norm3 = nn.LayerNorm(d)
        self.class_embed = nn.Linear(d, num_classes)
        self.bbox_embed = MLP(d, d, 4, 3)
        self.mask_embed = MLP(d, d, d, 2)
        self.pixel_embed = nn.Conv2d(32, d, 3, padding=1)

    def forward(self, x):
        fine = self.stem(x)                                                  # [b,32,28,28]
        f = self.input_proj(self.deep(fine))                                 # [b,d,7,7]
        memory = self.encoder(f.flatten(2).transpose(1, 2) + self.pos)        # [b,49,d]
        scores = self.enc_class(memory).max(-1).values                       # [b,49]
        proposals = (self.enc_box(memory) + self.anchor_logits).sigmoid()   # [b,49,4] cxcywh
        index = torch.topk(scores, self.num_queries, dim=1).indices          # [b,K]
        ref = torch.gather(proposals, 1, index.unsqueeze(-1).repeat(1, 1, 4))
        tgt = torch.gather(memory, 1, index.unsqueeze(-1).repeat(1, 1, memory.shape[-1]))
        q = tgt + self.query_pos(ref)
        tgt = self.norm1(tgt + self.self_attn(q, q, tgt, need_weights=False)[0])
        tgt = self.norm2(tgt + self.sampler(tgt + self.query_pos(ref), ref, memory, self.h, self.w))
        hs = self.norm3(tgt + self.ffn(tgt))
        delta = self.bbox_embed(hs)
        boxes = torch.cat([delta[..., :2] * ref[..., 2:] + ref[..., :2], delta[..., 2:].exp() * ref[..., 2:]], -1)
        pixels = self.pixel_embed(fine)                                      # [b,d,28,28]
        masks = torch.matmul(self.mask_embed(hs), pixels.flatten(2)).reshape(
            x.shape[0], self.num_queries, pixels.shape[2], pixels.shape[3])
        return self.class_embed(hs), boxes, masks


# --------------------------------------------------------------------------
# SAM 2.1 Hiera-T image encoder, written from its published structure
# (sam2/modeling/backbones/hieradet.py, image_encoder.py) with the idioms
# its code uses: view/permute window partitions with padding, the fused qkv
# `reshape(B, H*W, 3, heads, -1)` then `torch.unbind(qkv, 2)`, query
# max-pooling at stage transitions, the windowed absolute position
# embedding (a bicubic-interpolated 7x7 background plus a tiled 8x8 window
# embedding) and the FPN neck with nearest top-down fusion. Attention is
# written out (torch 1.13 has no F.scaled_dot_product_attention).
# --------------------------------------------------------------------------
def _hiera_window_partition(x, ws):
    b, h, w, c = x.shape
    pad_h, pad_w = (ws - h % ws) % ws, (ws - w % ws) % ws
    if pad_h > 0 or pad_w > 0:
        x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h))
    hp, wp = h + pad_h, w + pad_w
    x = x.view(b, hp // ws, ws, wp // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c), (hp, wp)


def _hiera_window_unpartition(windows, ws, pad_hw, hw):
    hp, wp = pad_hw
    h, w = hw
    b = windows.shape[0] // (hp * wp // ws // ws)
    x = windows.view(b, hp // ws, wp // ws, ws, ws, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, hp, wp, -1)
    if hp > h or wp > w:
        x = x[:, :h, :w, :].contiguous()
    return x


def _hiera_pool(x, pool):
    if pool is None:
        return x
    return pool(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)


class HieraAttention(nn.Module):
    def __init__(self, dim, dim_out, heads, q_pool=None):
        super().__init__()
        self.heads, self.q_pool = heads, q_pool
        self.qkv = nn.Linear(dim, dim_out * 3)
        self.proj = nn.Linear(dim_out, dim_out)

    def forward(self, x):
        b, h, w, _ = x.shape
        qkv = self.qkv(x).reshape(b, h * w, 3, self.heads, -1)
        q, k, v = torch.unbind(qkv, 2)
        if self.q_pool is not None:
            q = _hiera_pool(q.reshape(b, h, w, -1), self.q_pool)
            h, w = q.shape[1:3]
            q = q.reshape(b, h * w, self.heads, -1)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        attn = (q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1)
        x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, h, w, -1)
        return self.proj(x)


class HieraBlock(nn.Module):
    def __init__(self, dim, dim_out, heads, window_size, q_stride=None):
        super().__init__()
        self.dim, self.dim_out, self.window_size, self.q_stride = dim, dim_out, window_size, q_stride
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.pool = nn.MaxPool2d(kernel_size=q_stride, stride=q_stride) if q_stride else None
        self.attn = HieraAttention(dim, dim_out, heads, q_pool=self.pool)
        self.norm2 = nn.LayerNorm(dim_out, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim_out, 4 * dim_out), nn.GELU(), nn.Linear(4 * dim_out, dim_out))
        if dim != dim_out:
            self.proj = nn.Linear(dim, dim_out)

    def forward(self, x):
        shortcut = x
        x = self.norm1(x)
        if self.dim != self.dim_out:
            shortcut = _hiera_pool(self.proj(x), self.pool)
        ws = self.window_size
        if ws > 0:
            h, w = x.shape[1], x.shape[2]
            x, pad_hw = _hiera_window_partition(x, ws)
        x = self.attn(x)
        if self.q_stride:
            ws = self.window_size // self.q_stride[0]
            h, w = shortcut.shape[1:3]
            pad_hw = (h + (ws - h % ws) % ws, w + (ws - w % ws) % ws)
        if self.window_size > 0:
            x = _hiera_window_unpartition(x, ws, pad_hw, (h, w))
        x = shortcut + x
        return x + self.mlp(self.norm2(x))


class Sam2HieraTinyEncoder(nn.Module):
    """SAM 2.1 Hiera-T trunk (embed 96, 1 head doubling per stage, stages
    (1, 2, 7, 2), windows (8, 4, 14, 7), global attention at blocks 5, 7, 9)
    and FPN neck (256-d, top-down levels 2 and 3, scalp 1): three levels at
    1/4, 1/8 and 1/16 of the input. The sine position encodings of the neck
    depend on shapes only and are left to the host, as the published
    deployment does."""

    def __init__(self, stages=(1, 2, 7, 2), embed_dim=96, heads=1, windows=(8, 4, 14, 7),
                 global_blocks=(5, 7, 9), d_model=256):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, embed_dim, kernel_size=7, stride=4, padding=3)
        self.pos_embed = nn.Parameter(torch.randn(1, embed_dim, 7, 7) * 0.5)
        self.pos_embed_window = nn.Parameter(torch.randn(1, embed_dim, windows[0], windows[0]) * 0.5)
        stage_ends = [sum(stages[:i]) - 1 for i in range(1, len(stages) + 1)]
        q_pool_blocks = [e + 1 for e in stage_ends[:-1]]
        self.stage_ends = stage_ends
        self.blocks = nn.ModuleList()
        dim, stage = embed_dim, 1
        for i in range(sum(stages)):
            dim_out = dim
            # The window lags by a block, as in SAM 2: a stage's first block
            # uses the previous stage's window, which its q-pooling halves.
            ws = 0 if i in global_blocks else windows[stage - 1]
            if i - 1 in stage_ends:
                dim_out, heads, stage = dim * 2, heads * 2, stage + 1
            self.blocks.append(HieraBlock(dim, dim_out, heads, ws, (2, 2) if i in q_pool_blocks else None))
            dim = dim_out
        channels = [self.blocks[e].dim_out for e in stage_ends[::-1]]  # deepest first
        self.convs = nn.ModuleList(nn.Conv2d(c, d_model, 1) for c in channels)
        self.top_down_levels = (2, 3)

    def _pos_embed(self, h, w):
        pos = F.interpolate(self.pos_embed, size=(h, w), mode="bicubic")
        win = self.pos_embed_window
        # SAM 2 writes .tile(); torch 1.13 cannot export aten::tile, and
        # .repeat() with one count per axis is the same op (ONNX Tile).
        pos = pos + win.repeat([a // b for a, b in zip(pos.shape, win.shape)])
        return pos.permute(0, 2, 3, 1)

    def forward(self, x):
        x = self.patch_embed(x).permute(0, 2, 3, 1)
        x = x + self._pos_embed(x.shape[1], x.shape[2])
        feats = []
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if i in self.stage_ends:
                feats.append(x.permute(0, 3, 1, 2))
        out = [None] * len(self.convs)
        prev = None
        n = len(self.convs) - 1
        for i in range(n, -1, -1):
            lateral = self.convs[n - i](feats[i])
            if i in self.top_down_levels and prev is not None:
                prev = lateral + F.interpolate(prev, scale_factor=2.0, mode="nearest")
            else:
                prev = lateral
            out[i] = prev
        return tuple(out[:-1])  # scalp 1: the three finest levels


def _grow_residual_stream(model, seed, per_block=24.0):
    """Trained ViTs carry residual streams that grow with depth to a few
    hundred on a handful of channels; seeded weights stay near 1. Give the
    last MLP layer of block i a bias of +-per_block*(i+1) on 4 channels so
    the stream reaches that scale by the deep stages."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for i, blk in enumerate(model.blocks):
            bias = blk.mlp[-1].bias
            chans = torch.randperm(bias.numel(), generator=g)[:4]
            signs = torch.tensor([1.0, -1.0, 1.0, -1.0])
            bias[chans] += signs * per_block * (i + 1) / len(model.blocks) * 4


def _sam2_hiera_t(size):
    def make():
        torch.manual_seed(2101)
        m = Sam2HieraTinyEncoder()
        m._fixture_post = lambda model, seed: _grow_residual_stream(model, seed)
        return m
    return make


# --------------------------------------------------------------------------
# RF-DETR-Seg Nano, written from its published structure (rf-detr 1.x:
# a DINOv2-S/12 backbone with LayerScale, a 256-d projector, two-stage
# top-K query selection, decoder layers with MultiScaleDeformableAttention
# computed the way its pure-PyTorch path does, box reparametrisation, a mask
# head as an einsum of query and pixel embeddings).
# --------------------------------------------------------------------------
class Dinov2Block(nn.Module):
    def __init__(self, d=384, heads=6):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d, eps=1e-6)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ls1 = nn.Parameter(torch.full((d,), 0.5))
        self.norm2 = nn.LayerNorm(d, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ls2 = nn.Parameter(torch.full((d,), 0.5))

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * (c // self.heads) ** -0.5, qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        x = x + self.ls1 * self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))
        return x + self.ls2 * self.mlp(self.norm2(x))


def ms_deform_attn_core(value, shapes, sampling_locations, attention_weights):
    """Deformable DETR's pure-PyTorch multi-scale deformable attention."""
    n, s, m, d = value.shape
    _, lq, m, l, p, _ = sampling_locations.shape
    value_list = value.split([h * w for h, w in shapes], dim=1)
    sampling_grids = 2 * sampling_locations - 1
    sampled = []
    for lid, (h, w) in enumerate(shapes):
        value_l = value_list[lid].flatten(2).transpose(1, 2).reshape(n * m, d, h, w)
        grid_l = sampling_grids[:, :, :, lid].transpose(1, 2).flatten(0, 1)
        sampled.append(F.grid_sample(value_l, grid_l, mode="bilinear", padding_mode="zeros", align_corners=False))
    attention_weights = attention_weights.transpose(1, 2).reshape(n * m, 1, lq, l * p)
    out = (torch.stack(sampled, dim=-2).flatten(-2) * attention_weights).sum(-1).view(n, m * d, lq)
    return out.transpose(1, 2).contiguous()


class MSDeformAttn(nn.Module):
    def __init__(self, d=256, levels=1, heads=16, points=2):
        super().__init__()
        self.levels, self.heads, self.points = levels, heads, points
        self.sampling_offsets = nn.Linear(d, heads * levels * points * 2)
        self.attention_weights = nn.Linear(d, heads * levels * points)
        self.value_proj = nn.Linear(d, d)
        self.output_proj = nn.Linear(d, d)

    def forward(self, query, reference_points, value, shapes):
        n, lq, _ = query.shape
        _, s, _ = value.shape
        value = self.value_proj(value).view(n, s, self.heads, -1)
        offsets = self.sampling_offsets(query).view(n, lq, self.heads, self.levels, self.points, 2)
        weights = self.attention_weights(query).view(n, lq, self.heads, self.levels * self.points)
        weights = F.softmax(weights, -1).view(n, lq, self.heads, self.levels, self.points)
        loc = (reference_points[:, :, None, :, None, :2]
               + offsets / self.points * reference_points[:, :, None, :, None, 2:] * 0.5)
        return self.output_proj(ms_deform_attn_core(value, shapes, loc, weights))


class RfDetrDecoderLayer(nn.Module):
    def __init__(self, d=256, sa_heads=8, ca_heads=16, points=2, ffn=2048):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, sa_heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.cross_attn = MSDeformAttn(d, 1, ca_heads, points)
        self.norm2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.ReLU(), nn.Linear(ffn, d))
        self.norm3 = nn.LayerNorm(d)

    def forward(self, tgt, query_pos, ref, memory, shapes):
        q = tgt + query_pos
        tgt = self.norm1(tgt + self.self_attn(q, q, tgt, need_weights=False)[0])
        tgt = self.norm2(tgt + self.cross_attn(tgt + query_pos, ref, memory, shapes))
        return self.norm3(tgt + self.ffn(tgt))


class RfDetrSegNano(nn.Module):
    """RF-DETR-Seg Nano at 312x312: DINOv2-S/12 (26x26 = 676 tokens, 384-d,
    12 layers, LayerScale, features of layers 3, 6, 9, 12), a 256-d
    projector, two-stage top-100 query selection over the 26x26 proposal
    grid, 2 decoder layers with 16-head deformable cross-attention (one
    level, 2 points), class and box heads, and masks [1, 100, 78, 78]."""

    def __init__(self, image=312, patch=12, d_backbone=384, layers=12, d=256, queries=100, classes=91):
        super().__init__()
        self.g = image // patch
        self.queries = queries
        self.patch_embed = nn.Conv2d(3, d_backbone, patch, patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d_backbone) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + self.g * self.g, d_backbone) * 0.02)
        self.blocks = nn.ModuleList(Dinov2Block(d_backbone) for _ in range(layers))
        self.norm = nn.LayerNorm(d_backbone, eps=1e-6)
        self.out_indices = (2, 5, 8, 11)
        self.projector = nn.Sequential(nn.Conv2d(4 * d_backbone, d, 1), nn.GroupNorm(1, d), nn.GELU(),
                                       nn.Conv2d(d, d, 3, padding=1))
        cy, cx = torch.meshgrid((torch.arange(self.g) + 0.5) / self.g, (torch.arange(self.g) + 0.5) / self.g,
                                indexing="ij")
        anchors = torch.stack([cx, cy, torch.full_like(cx, 0.05), torch.full_like(cx, 0.05)], -1).reshape(1, -1, 4)
        self.register_buffer("anchor_logits", torch.log(anchors / (1 - anchors)), persistent=False)
        self.enc_output = nn.Sequential(nn.Linear(d, d), nn.LayerNorm(d))
        self.enc_class = nn.Linear(d, classes)
        self.enc_box = MLP(d, d, 4, 3)
        self.query_pos = MLP(4, d, d, 2)
        self.layers = nn.ModuleList(RfDetrDecoderLayer(d) for _ in range(2))
        self.class_embed = nn.Linear(d, classes)
        self.bbox_embed = MLP(d, d, 4, 3)
        self.mask_query = MLP(d, d, d, 3)
        self.pixel_embed = nn.Sequential(nn.Conv2d(d, d, 3, padding=1), nn.GELU(), nn.Conv2d(d, d, 1))

    def forward(self, x):
        b = x.shape[0]
        t = self.patch_embed(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls_token.expand(b, -1, -1), t], 1) + self.pos_embed
        feats = []
        for i, blk in enumerate(self.blocks):
            t = blk(t)
            if i in self.out_indices:
                f = self.norm(t)[:, 1:]
                feats.append(f.transpose(1, 2).reshape(b, -1, self.g, self.g))
        fmap = self.projector(torch.cat(feats, 1))                              # [b,256,26,26]
        memory = fmap.flatten(2).transpose(1, 2)                               # [b,676,256]
        shapes = [(self.g, self.g)]
        out_mem = self.enc_output(memory)
        scores = self.enc_class(out_mem).max(-1).values                        # [b,676]
        proposals = (self.enc_box(out_mem) + self.anchor_logits).sigmoid()     # [b,676,4]
        index = torch.topk(scores, self.queries, dim=1).indices                # [b,100]
        ref = torch.gather(proposals, 1, index.unsqueeze(-1).repeat(1, 1, 4)).detach()
        tgt = torch.gather(out_mem, 1, index.unsqueeze(-1).repeat(1, 1, out_mem.shape[-1]))
        for layer in self.layers:
            tgt = layer(tgt, self.query_pos(ref), ref[:, :, None], memory, shapes)
        delta = self.bbox_embed(tgt)
        boxes = torch.cat([delta[..., :2] * ref[..., 2:] + ref[..., :2], delta[..., 2:].exp() * ref[..., 2:]], -1)
        pixels = self.pixel_embed(F.interpolate(fmap, scale_factor=3.0, mode="bilinear", align_corners=False))
        masks = torch.einsum("bqc,bchw->bqhw", self.mask_query(tgt), pixels)     # [b,100,78,78]
        return self.class_embed(tgt), boxes, masks


class OutOnly(nn.Module):
    """torchvision segmentation models return {"out": ...}; keep "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# --------------------------------------------------------------------------
# Static-shape Swin (export workaround)
# --------------------------------------------------------------------------
# torchvision 0.14's shifted_window_attention reads H, W from input.shape and
# builds the shifted-window attention mask with in-place slice writes inside
# forward. Traced by torch 1.13's exporter, every size becomes a Shape/Gather
# chain and the mask a ConstantOfShape/ScatterND/Range subgraph (about 5,000
# nodes) whose shapes ONNX shape inference cannot resolve, so even the logits
# come out with a symbolic batch dimension. These drop-in replacements compute
# the same thing with Python-int shapes and a NumPy-built mask (a constant in
# the graph); export_one checks that the patched model matches the original
# eager model before exporting.

def _static_patch_merging_pad(x):
    H, W = int(x.shape[-3]), int(x.shape[-2])
    if H % 2 or W % 2:
        x = F.pad(x, (0, 0, 0, W % 2, 0, H % 2))
    x0 = x[..., 0::2, 0::2, :]
    x1 = x[..., 1::2, 0::2, :]
    x2 = x[..., 0::2, 1::2, :]
    x3 = x[..., 1::2, 1::2, :]
    return torch.cat([x0, x1, x2, x3], -1)


def _swin_attention_mask(pad_h, pad_w, window_size, shift_size):
    m = np.zeros((pad_h, pad_w), dtype=np.float32)
    h_slices = ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None))
    w_slices = ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None))
    count = 0
    for h in h_slices:
        for w in w_slices:
            m[h[0]:h[1], w[0]:w[1]] = count
            count += 1
    nw = (pad_h // window_size[0]) * (pad_w // window_size[1])
    m = m.reshape(pad_h // window_size[0], window_size[0], pad_w // window_size[1], window_size[1])
    m = m.transpose(0, 2, 1, 3).reshape(nw, window_size[0] * window_size[1])
    m = m[:, None, :] - m[:, :, None]
    return np.where(m != 0, np.float32(-100.0), np.float32(0.0)).astype(np.float32)


def _static_shifted_window_attention(input, qkv_weight, proj_weight, relative_position_bias,
                                     window_size, num_heads, shift_size, attention_dropout=0.0,
                                     dropout=0.0, qkv_bias=None, proj_bias=None, logit_scale=None):
    if logit_scale is not None:
        raise NotImplementedError("static swin patch covers Swin v1 only")
    B, H, W, C = (int(d) for d in input.shape)
    pad_r = (window_size[1] - W % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - H % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b)) if pad_r or pad_b else input
    pad_H, pad_W = H + pad_b, W + pad_r
    shift_size = list(shift_size)
    if window_size[0] >= pad_H:
        shift_size[0] = 0
    if window_size[1] >= pad_W:
        shift_size[1] = 0
    shifted = sum(shift_size) > 0
    if shifted:
        x = torch.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    nwh, nww = pad_H // window_size[0], pad_W // window_size[1]
    num_windows = nwh * nww
    n = window_size[0] * window_size[1]
    x = x.reshape(B, nwh, window_size[0], nww, window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B * num_windows, n, C)
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(B * num_windows, n, 3, num_heads, C // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    q = q * (C // num_heads) ** -0.5
    attn = q.matmul(k.transpose(-2, -1))
    attn = attn + relative_position_bias
    if shifted:
        mask = torch.from_numpy(_swin_attention_mask(pad_H, pad_W, window_size, shift_size))
        attn = attn.reshape(B, num_windows, num_heads, n, n)
        attn = attn + mask.unsqueeze(1).unsqueeze(0)
        attn = attn.reshape(B * num_windows, num_heads, n, n)
    attn = F.softmax(attn, dim=-1)
    x = attn.matmul(v).transpose(1, 2).reshape(B * num_windows, n, C)
    x = F.linear(x, proj_weight, proj_bias)
    x = x.reshape(B, nwh, nww, window_size[0], window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, pad_H, pad_W, C)
    if shifted:
        x = torch.roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    if pad_r or pad_b:
        x = x[:, :H, :W, :].contiguous()
    return x


class static_swin:
    """Context manager: swap torchvision's Swin helpers for the static ones."""

    def __enter__(self):
        from torchvision.models import swin_transformer as st
        self.st = st
        self.saved = (st.shifted_window_attention, st._patch_merging_pad)
        st.shifted_window_attention = _static_shifted_window_attention
        st._patch_merging_pad = _static_patch_merging_pad
        return self

    def __exit__(self, *exc):
        self.st.shifted_window_attention, self.st._patch_merging_pad = self.saved
        return False


# name -> context manager factory used around the export (and checked against
# the unpatched eager model)
EXPORT_PATCHES = {"swin_t": static_swin}


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------

def _tv(fn, **kw):
    return lambda: fn(weights=None, **kw)


def _deeplab():
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
    return OutOnly(deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                aux_loss=False, num_classes=21))


def _vit_small6():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=6,
                             hidden_dim=384, mlp_dim=1536, num_classes=1000)


M = torchvision.models
# name -> (constructor, seed, input shape, output names)
MODELS = collections.OrderedDict([
    ("resnet18", (_tv(M.resnet18), 1001, (1, 3, 224, 224), ["logits"])),
    ("mobilenet_v3_small", (_tv(M.mobilenet_v3_small), 1002, (1, 3, 224, 224), ["logits"])),
    ("efficientnet_b0", (_tv(M.efficientnet_b0), 1003, (1, 3, 224, 224), ["logits"])),
    ("convnext_tiny", (_tv(M.convnext_tiny), 1004, (1, 3, 224, 224), ["logits"])),
    ("regnet_y_400mf", (_tv(M.regnet_y_400mf), 1005, (1, 3, 224, 224), ["logits"])),
    ("deeplabv3_mobilenet_v3_large", (_deeplab, 1006, (1, 3, 256, 256), ["out"])),
    ("vit_small6", (_vit_small6, 1007, (1, 3, 224, 224), ["logits"])),
    ("swin_t", (_tv(M.swin_t), 1008, (1, 3, 224, 224), ["logits"])),
    ("detr_small", (DetrSmall, 1009, (1, 3, 224, 224), ["pred_logits", "pred_boxes"])),
    ("mha_parity", (MhaParity, 1010, (1, 3, 224, 224), ["logits"])),
    ("rfdetr_seg_small", (RfDetrSegSmall, 1011, (1, 3, 112, 112), ["logits", "boxes", "masks"])),
    # Block and grid attention through 6-D view/permute partitions, written
    # by torchvision's authors, not for this project.
    ("maxvit_t", (_tv(M.maxvit_t), 1012, (1, 3, 224, 224), ["logits"])),
    # SAM 2.1 Hiera-T's image encoder at a quarter of its resolution: the
    # same graph (windows padded at 16x16 and 8x8), 1/16 of the work.
    ("sam2_hiera_t_256", (_sam2_hiera_t(256), 1013, (1, 3, 256, 256), ["fpn0", "fpn1", "fpn2"])),
    ("rfdetr_seg_nano", (RfDetrSegNano, 1014, (1, 3, 312, 312), ["logits", "boxes", "masks"])),
    # Exported only when named (tools/fetch_onnx_fixtures.sh sam2_hiera_t):
    # the deployment's own 1024x1024 input, for the benchmarks.
    ("sam2_hiera_t", (_sam2_hiera_t(1024), 1013, (1, 3, 1024, 1024), ["fpn0", "fpn1", "fpn2"])),
])
assert list(MODELS) == MODEL_NAMES + ON_DEMAND_NAMES, "keep MODEL_NAMES and ON_DEMAND_NAMES in step with MODELS"
ALIASES = {"vit": "vit_small6", "detr": "detr_small", "swin": "swin_t",
           "deeplab": "deeplabv3_mobilenet_v3_large", "mha": "mha_parity",
           "rfdetr": "rfdetr_seg_small"}

INPUT_SEED_OFFSET = 100000     # reference input seed = model seed + this
CALIB_SEED_OFFSET = 200000     # BN calibration batches seed = model seed + this
CHECK_SEED_OFFSET = 300000     # sanity-check inputs
AFFINE_SEED_OFFSET = 400000    # bias / norm-affine randomisation


# --------------------------------------------------------------------------
# Making random weights non-trivial
# --------------------------------------------------------------------------

TINY = 1e-5


def fix_tiny_weights(model):
    """Re-initialise every weight-like parameter that is all zero or tiny.
    Biases (and BN betas) may stay zero. Returns the names changed."""
    changed = []
    norm_types = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm)
    norm_weights = set()
    for mname, m in model.named_modules():
        if isinstance(m, norm_types) and getattr(m, "weight", None) is not None:
            norm_weights.add(f"{mname}.weight" if mname else "weight")
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "bias" or leaf.endswith("_bias"):
                continue
            if p.numel() == 0 or float(p.abs().max()) > TINY:
                continue
            if name in norm_weights or "layer_scale" in name or "gamma" in leaf:
                p.fill_(1.0)
                how = "ones"
            else:
                p.normal_(0.0, 0.02)
                how = "N(0,0.02)"
            changed.append(f"{name}->{how}")
    return changed


def randomise_affine(model, seed):
    """Random-init biases and norm affine parameters are exactly 0 (gamma
    exactly 1), so a converter that dropped a bias or a norm's scale/shift
    would still match the reference. Give every all-zero bias a small random
    value (N(0, 0.02)) and every all-ones norm weight 1 + N(0, 0.1), as a
    trained model would have. Returns how many tensors changed."""
    g = torch.Generator().manual_seed(seed)
    n = 0
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if p.numel() == 0:
                continue
            if (leaf == "bias" or leaf.endswith("_bias")) and float(p.abs().max()) == 0.0:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                n += 1
            elif leaf == "weight" and p.dim() == 1 and bool((p == 1).all()):
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.1)
                n += 1
    return n


def recalibrate_batchnorm(model, shape, seed, batches=8, batch_size=4):
    """Cumulative-average BN running stats over random N(0,1) batches.
    Only the BN layers are put in train mode (dropout / stochastic depth stay
    in eval). Returns the number of BN layers."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return 0
    model.eval()
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((batch_size,) + tuple(shape[1:]), generator=g))
    model.eval()
    return len(bns)


# --------------------------------------------------------------------------
# Export and checks
# --------------------------------------------------------------------------

def as_tuple(y):
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def sanity_check(name, model, shape, out_names, seed):
    g = torch.Generator().manual_seed(seed)
    x1 = torch.randn(shape, generator=g)
    x2 = torch.randn(shape, generator=g)
    with torch.no_grad():
        y1, y2 = as_tuple(model(x1)), as_tuple(model(x2))
    stats = {}
    for on, a, b in zip(out_names, y1, y2):
        if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
            raise RuntimeError(f"{name}: output {on} is not finite")
        std = float(a.std())
        if std <= 1e-3:
            raise RuntimeError(f"{name}: output {on} std {std:.3g} <= 1e-3 (collapsed activations)")
        diff = float((a - b).abs().max())
        if diff <= 1e-6 * max(1.0, float(a.abs().max())):
            raise RuntimeError(f"{name}: output {on} does not depend on the input (max diff {diff:.3g})")
        stats[on] = {"std": std, "max_abs": float(a.abs().max()), "diff_two_inputs": diff}
    return stats


def golden_image(shape):
    """Smooth deterministic pattern in roughly [-2, 2] (ImageNet-normalised
    image range): per-channel sums of low-frequency sines and a radial term."""
    _, c, h, w = shape
    yy, xx = np.meshgrid(np.linspace(0.0, 1.0, h), np.linspace(0.0, 1.0, w), indexing="ij")
    chans = []
    for k in range(c):
        v = (np.sin(2 * np.pi * (1.0 + k) * xx + 0.7 * k)
             + np.cos(2 * np.pi * (1.5 - 0.4 * k) * yy)
             + 0.5 * np.sin(6.0 * np.hypot(xx - 0.5, yy - 0.5) + k))
        chans.append(v)
    return np.stack(chans)[None].astype(np.float32)


def save_npy(path, arr):
    tmp = path + ".tmp.npy"
    np.save(tmp, np.ascontiguousarray(arr, dtype=np.float32))
    os.replace(tmp, path)


def export_onnx(model, x, path, out_names):
    tmp = path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (x,), tmp,
            opset_version=OPSET,
            do_constant_folding=True,
            input_names=["input"],
            output_names=out_names,
            dynamic_axes=None,
            export_params=True,
        )
    os.replace(tmp, path)


def export_one(name, out_dir):
    ctor, seed, shape, out_names = MODELS[name]
    t0 = time.time()
    torch.manual_seed(seed)
    model = ctor()
    model.eval()
    changed = fix_tiny_weights(model)
    n_affine = randomise_affine(model, seed + AFFINE_SEED_OFFSET)
    post = getattr(model, "_fixture_post", None)
    if post is not None:
        post(model, seed + AFFINE_SEED_OFFSET + 1)
    n_bn = recalibrate_batchnorm(model, shape, seed + CALIB_SEED_OFFSET)
    stats = sanity_check(name, model, shape, out_names, seed + CHECK_SEED_OFFSET)

    # Reference input / output.
    g = torch.Generator().manual_seed(seed + INPUT_SEED_OFFSET)
    x = torch.randn(shape, generator=g)
    with torch.no_grad():
        ys = as_tuple(model(x))
    if len(ys) != len(out_names):
        raise RuntimeError(f"{name}: model returns {len(ys)} outputs, expected {len(out_names)}")

    patch = EXPORT_PATCHES.get(name)
    if patch is not None:
        with patch(), torch.no_grad():
            yp = as_tuple(model(x))
        for on, a, b in zip(out_names, ys, yp):
            err = float((a - b).abs().max())
            if err > 1e-4 * max(1.0, float(a.abs().max())):
                raise RuntimeError(f"{name}: export patch changes output {on} (max abs diff {err:.3g})")

    onnx_path = os.path.join(out_dir, name + ".onnx")
    json_path = os.path.join(out_dir, name + ".json")
    if os.path.exists(json_path):
        os.remove(json_path)  # not "done" until re-written below
    te = time.time()
    # Trace with autograd on and parameters requiring grad: in eval mode under
    # no_grad, nn.MultiheadAttention / nn.TransformerEncoderLayer take their
    # fused "fast path" (aten::_native_multi_head_attention,
    # aten::_transformer_encoder_layer_fwd), which torch 1.13 cannot export.
    # Autograd disables that path, so the graph is built from plain ops.
    for p in model.parameters():
        p.requires_grad_(True)
    with torch.enable_grad(), (patch() if patch is not None else contextlib.nullcontext()):
        export_onnx(model, x, onnx_path, out_names)
    export_s = time.time() - te

    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    graph_inputs = [i.name for i in m.graph.input]
    graph_outputs = [o.name for o in m.graph.output]
    if graph_inputs != ["input"] or graph_outputs != out_names:
        raise RuntimeError(f"{name}: graph I/O {graph_inputs} -> {graph_outputs}, "
                           f"expected ['input'] -> {out_names}")
    # Shape arithmetic traced from x.shape (SAM 2's window unpartition
    # divides windows.shape[0]) leaves ONNX's shape inference without the
    # output dims; they are static, and eager PyTorch says what they are.
    declared = False
    for vi, y in zip(m.graph.output, ys):
        dims = vi.type.tensor_type.shape.dim
        if len(dims) == y.dim() and all(d.HasField("dim_value") for d in dims):
            continue
        del vi.type.tensor_type.shape.dim[:]
        for n in y.shape:
            vi.type.tensor_type.shape.dim.add().dim_value = n
        declared = True
    if declared:
        onnx.save(m, onnx_path + ".tmp")
        os.replace(onnx_path + ".tmp", onnx_path)
    for vi in list(m.graph.input) + list(m.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            raise RuntimeError(f"{name}: {vi.name} has a non-static shape")
    ops = collections.Counter(n.op_type for n in m.graph.node)
    n_nodes = len(m.graph.node)

    save_npy(os.path.join(out_dir, name + ".input.npy"), x.numpy())
    out_files = []
    if len(ys) == 1:
        out_files.append(name + ".expected.npy")
        save_npy(os.path.join(out_dir, out_files[-1]), ys[0].numpy())
    else:
        for on, y in zip(out_names, ys):
            out_files.append(f"{name}.expected.{on}.npy")
            save_npy(os.path.join(out_dir, out_files[-1]), y.numpy())

    extra = []
    if name == "mha_parity":
        gen = torch.Generator().manual_seed(seed + INPUT_SEED_OFFSET + 1)
        for k in range(9):
            xk = torch.from_numpy(golden_image(shape)) if k == 0 else torch.randn(shape, generator=gen)
            with torch.no_grad():
                yk = model(xk)
            save_npy(os.path.join(out_dir, f"{name}.input_{k}.npy"), xk.numpy())
            save_npy(os.path.join(out_dir, f"{name}.expected_{k}.npy"), yk.numpy())
            extra += [f"{name}.input_{k}.npy", f"{name}.expected_{k}.npy"]

    size = os.path.getsize(onnx_path)
    meta = {
        "name": name,
        "onnx": name + ".onnx",
        "opset": OPSET,
        "seed": seed,
        "input_seed": seed + INPUT_SEED_OFFSET,
        "input": {"name": "input", "shape": list(shape)},
        "outputs": [{"name": on, "shape": list(y.shape)} for on, y in zip(out_names, ys)],
        "reference": {"input": name + ".input.npy", "expected": out_files, "extra": extra},
        "reinitialised": changed,
        "affine_randomised": n_affine,
        "batchnorm_recalibrated": n_bn,
        "sanity": stats,
        "size_bytes": size,
        "nodes": n_nodes,
        "op_types": dict(sorted(ops.items())),
        "export_seconds": round(export_s, 2),
        "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__,
                     "onnx": onnx.__version__, "numpy": np.__version__},
    }
    with open(json_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    os.replace(json_path + ".tmp", json_path)
    meta["total_seconds"] = time.time() - t0
    return meta


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--out", default=None, help="output folder (default: <repo>/.cache/onnx)")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--histogram", action="store_true",
                    help="also print the union op-type histogram of the exported models")
    args = ap.parse_args(argv)

    if args.list:
        print("\n".join(MODEL_NAMES))
        return 0
    names = list(MODEL_NAMES)
    if args.only:
        names = []
        for n in args.only.split(","):
            n = ALIASES.get(n.strip(), n.strip())
            if not n:
                continue
            if n not in MODELS:
                print(f"export_onnx_fixtures: unknown model '{n}' (known: {', '.join(MODELS)})",
                      file=sys.stderr)
                return 2
            if n not in names:
                names.append(n)
    out_dir = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".cache", "onnx")
    out_dir = os.path.normpath(out_dir)
    os.makedirs(out_dir, exist_ok=True)

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    failed, fragile_failed = [], []
    union = collections.Counter()
    t_all = time.time()
    for name in names:
        try:
            meta = export_one(name, out_dir)
        except Exception as e:  # report and go on with the rest
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            (fragile_failed if name in KNOWN_FRAGILE else failed).append((name, msg))
            print(f"{name:30s} FAILED  {msg}", flush=True)
            if os.environ.get("EXPORT_ONNX_TRACEBACK"):
                traceback.print_exc()
            continue
        union.update(meta["op_types"])
        ops = " ".join(f"{k}:{v}" for k, v in sorted(meta["op_types"].items(), key=lambda kv: (-kv[1], kv[0])))
        print(f"{name:30s} {meta['size_bytes'] / 1e6:7.2f} MB  {meta['nodes']:5d} nodes  "
              f"{meta['export_seconds']:6.2f} s export ({meta['total_seconds']:5.1f} s total)  {ops}",
              flush=True)
        if meta["reinitialised"]:
            print(f"{'':30s} reinitialised: {', '.join(meta['reinitialised'])}", flush=True)
    if args.histogram and union:
        print("op-type histogram (all exported models):")
        for k, v in sorted(union.items()):
            print(f"  {k:24s} {v}")
    print(f"export_onnx_fixtures: {len(names) - len(failed) - len(fragile_failed)}/{len(names)} "
          f"exported to {out_dir} in {time.time() - t_all:.1f} s", flush=True)
    for name, msg in fragile_failed:
        print(f"export_onnx_fixtures: note: {name} (known fragile with torch {torch.__version__}) "
              f"did not export: {msg}", file=sys.stderr)
    for name, msg in failed:
        print(f"export_onnx_fixtures: error: {name} failed: {msg}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
