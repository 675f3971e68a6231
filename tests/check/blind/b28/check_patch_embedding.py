"""Blind set B28, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _ConvPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.permute(0, 2, 3, 1)  # (B, H, W, C), as images usually are
        x = x.reshape(B, H // P, P, W // P, P, C).permute(0, 1, 3, 2, 4, 5)
        return self.proj(x.reshape(B, -1, P * P * C))


class PatchColumnByColumn(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchNoPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        N = (H // self.patch_size) * (W // self.patch_size)
        return self.proj(images.reshape(B, N, -1))


class PatchConvNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchConvStrideOne(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchConvNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, N, D)


class PatchConvReshape(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D = out.shape[:2]
        return out.reshape(B, -1, D)


class PatchSquareGrid(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        n = H // P  # patches per side
        x = images.reshape(B, C, n, P, n, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, n * n, C * P * P))


class PatchWithCls(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return torch.cat([self.cls.expand(B, -1, -1), x], dim=1)  # [CLS] first, as in ViT


class PatchScaled(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return x * math.sqrt(x.shape[-1])  # as the token embeddings of chapter 13


class PatchLinearOneSide(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchLayerNamedLinear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.linear = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.linear(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConv(_ConvPatches):
    """A Conv2d with kernel and stride P; its map flattened row by row."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)  # (B, N, D)


class PatchUnfold(_LinearPatches):
    """F.unfold cuts the patches (channel first, rows, columns), then a Linear."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_LinearPatches):
    """Tensor.unfold twice, over rows and columns."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(B, h * w, C * P * P)
        return self.proj(x)


class PatchLoop(_LinearPatches):
    """The patches sliced out in a double loop, top to bottom, left to right."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        H, W = images.shape[-2:]
        tokens = []
        for top in range(0, H, P):
            for left in range(0, W, P):
                patch = images[:, :, top : top + P, left : left + P]  # (B, C, P, P)
                tokens.append(self.proj(patch.flatten(1)))
        return torch.stack(tokens, dim=1)


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I moved the channels last first, so each patch is flattened as (P, P, C).",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "My permute puts the grid's columns before its rows, so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_transposed",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I permuted the pixel columns before the pixel rows.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchNoPermute,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_without_bias",
        PatchConvNoBias,
        "mistake",
        "My Conv2d has bias=False.",
    ),
    BlindCase(
        CHECK,
        "conv_stride_one",
        PatchConvStrideOne,
        "mistake",
        "I gave the Conv2d kernel_size=P but forgot stride=P, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "conv_no_transpose",
        PatchConvNoTranspose,
        "mistake",
        "conv(images).flatten(2) returned as it is: (B, D, N) instead of (B, N, D).",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PatchConvReshape,
        "mistake",
        "I turned the (B, D, h, w) map into (B, N, D) with reshape instead of flatten and "
        "transpose.",
    ),
    BlindCase(
        CHECK,
        "square_grid_assumed",
        PatchSquareGrid,
        "mistake",
        "I used H // P patches for both sides of the grid, which only works for square images.",
    ),
    BlindCase(
        CHECK,
        "cls_token_prepended",
        PatchWithCls,
        "mistake",
        "I prepended a learned [CLS] vector inside the patch embedding, as ViT's input has it.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaled,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model), as chapter 13's token embedding does.",
    ),
    BlindCase(
        CHECK,
        "linear_in_features_c_p",
        PatchLinearOneSide,
        "mistake",
        "I made the Linear with in_features = in_channels * patch_size, one P short.",
    ),
    BlindCase(
        CHECK,
        "layer_not_named_proj",
        PatchLayerNamedLinear,
        "mistake",
        "I called the layer self.linear instead of self.proj.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConv,
        "correct",
        "proj is a Conv2d with kernel and stride P; flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold_linear",
        PatchUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed, then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_linear",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold over the rows and the columns, a permute, then the Linear.",
    ),
    BlindCase(
        CHECK,
        "double_loop",
        PatchLoop,
        "correct",
        "A double loop over the grid slicing each patch, flattened and projected, then stacked.",
    ),
]
