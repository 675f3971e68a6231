"""Blind set B21, check_patch_embedding (chapter 19): ViT patch embeddings as readers write them."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """``proj`` a Linear over C * P * P inputs (shared by the cases that cut patches by hand)."""

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
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): channel last
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajor(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): the grid column by column
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        # stride half a patch, "so no edge is lost"
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=max(patch_size // 2, 1))

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))  # no permute


class PatchConvViewNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        y = self.proj(images)  # (B, D, h, w)
        B, D, h, w = y.shape
        return y.reshape(B, h * w, D)  # reshaped where a transpose was needed


class PatchConvColumnMajor(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        y = self.proj(images)  # (B, D, h, w)
        return y.transpose(2, 3).flatten(2).transpose(1, 2)  # columns first


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


class PatchImageTransposed(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        images = images.transpose(2, 3)  # thought images were (B, C, W, H)
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchUnfoldNoTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B = cols.shape[0]
        return self.proj(cols.reshape(B, cols.shape[2], cols.shape[1]))  # reshape, not transpose


# ---------------------------------------------------------------- correct variants


class PatchConv(_ConvPatches):
    """A Conv2d with kernel and stride P, flattened row by row."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchUnfold(_LinearPatches):
    """F.unfold cuts the patches (channel-first, row-major), then the Linear."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfoldEinsum(_LinearPatches):
    """Tensor.unfold twice, and the Linear's weight applied with einsum."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bchwij,dcij->bhwd", x, weight) + self.proj.bias
        return out.reshape(B, h * w, -1)


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        PatchChannelLast,
        "mistake",
        "flattened each patch as (P, P, C), channel last",
    ),
    BlindCase(
        CHECK,
        "column_major_grid",
        PatchColumnMajor,
        "mistake",
        "put the patch columns before the rows: the grid read column by column",
    ),
    BlindCase(
        CHECK,
        "rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "inside a patch I permuted columns before rows",
    ),
    BlindCase(
        CHECK,
        "overlapping",
        PatchOverlapping,
        "mistake",
        "a Conv2d with stride P // 2: overlapping patches",
    ),
    BlindCase(CHECK, "no_bias", PatchNoBias, "mistake", "nn.Linear(..., bias=False)"),
    BlindCase(
        CHECK,
        "reshape_only",
        PatchReshapeOnly,
        "mistake",
        "reshaped the image straight to (B, N, C*P*P), no permute",
    ),
    BlindCase(
        CHECK,
        "conv_view_no_transpose",
        PatchConvViewNoTranspose,
        "mistake",
        "Conv2d, then reshape(B, h*w, D) of the (B, D, h, w) output",
    ),
    BlindCase(
        CHECK,
        "conv_column_major",
        PatchConvColumnMajor,
        "mistake",
        "Conv2d, then transposed h and w before flattening",
    ),
    BlindCase(
        CHECK,
        "with_cls",
        PatchWithCls,
        "mistake",
        "I prepended a [CLS] vector, so N + 1 tokens come out",
    ),
    BlindCase(
        CHECK,
        "scaled_sqrt_d",
        PatchScaled,
        "mistake",
        "multiplied by sqrt(D) as the token embeddings are",
    ),
    BlindCase(
        CHECK,
        "image_transposed",
        PatchImageTransposed,
        "mistake",
        "transposed the image first, thinking it is (B, C, W, H)",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold, then reshape to (B, N, C*P*P) instead of transpose",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "nn.Conv2d(C, D, P, stride=P), flatten(2).transpose(1, 2)",
    ),
    BlindCase(
        CHECK, "f_unfold", PatchUnfold, "correct", "F.unfold to cut patches, then the Linear"
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        PatchTensorUnfoldEinsum,
        "correct",
        "Tensor.unfold twice and einsum with proj.weight",
    ),
]
