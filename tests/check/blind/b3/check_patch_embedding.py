"""Blind cases for check_patch_embedding (chapter 19), written from the chapter's text only."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


# ---------------------------------------------------------------- mistakes


class ReshapeWithoutPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class ChannelLastPatch(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels with their colours
        return self.proj(x.reshape(B, -1, C * P * P))


class GridColumnByColumn(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class RowsAndColumnsSwappedInPatch(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class TransposeInsteadOfPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.view(B, C, H // P, P, W // P, P).transpose(3, 4)  # (B, C, h, w, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class ConvWithoutStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class NoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class ConvNotTransposed(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        return self.proj(images).reshape(B, -1, self.proj.out_channels)  # (B, D, h, w) as is


class LayerNamedProjection(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.projection = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.projection(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class ConvThenFlatten(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, D, h*w) -> (B, N, D)


class UnfoldThenLinear(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        patches = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel-first
        return self.proj(patches.transpose(1, 2))


class TensorUnfoldPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C = images.shape[:2]
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


CASES = [
    BlindCase(
        CHECK,
        "reshape_without_permute",
        ReshapeWithoutPermute,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P) without a permute, so a 'patch' is a "
        "run of consecutive pixels, not a P x P square",
    ),
    BlindCase(
        CHECK,
        "channel_last_patch",
        ChannelLastPatch,
        "mistake",
        "I flattened each patch channel-last, (P, P, C), instead of channel-first (C, P, P)",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        GridColumnByColumn,
        "mistake",
        "I put the grid's column index before its row index in the permute, so the patches "
        "come column by column instead of row by row",
    ),
    BlindCase(
        CHECK,
        "rows_and_columns_swapped_in_patch",
        RowsAndColumnsSwappedInPatch,
        "mistake",
        "inside each patch I swapped the pixel rows and columns (permute ... 5, 3 instead of "
        "3, 5): each patch is flattened transposed",
    ),
    BlindCase(
        CHECK,
        "transpose_instead_of_permute",
        TransposeInsteadOfPermute,
        "mistake",
        "I only transposed P and w, giving (B, C, h, w, P, P), and reshaped that: the channel "
        "dimension stays in front of the grid, so patches mix channels and positions",
    ),
    BlindCase(
        CHECK,
        "conv_without_stride",
        ConvWithoutStride,
        "mistake",
        "I used nn.Conv2d(C, D, kernel_size=P) and forgot stride=P: overlapping patches, one "
        "per pixel position",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        NoBias,
        "mistake",
        "I made proj an nn.Linear with bias=False",
    ),
    BlindCase(
        CHECK,
        "conv_not_transposed",
        ConvNotTransposed,
        "mistake",
        "I reshaped the conv output (B, D, h, w) straight to (B, N, D) without moving D "
        "last first (no transpose)",
    ),
    BlindCase(
        CHECK,
        "layer_named_projection",
        LayerNamedProjection,
        "mistake",
        "I named the linear layer projection instead of proj",
    ),
    BlindCase(
        CHECK,
        "conv_then_flatten",
        ConvThenFlatten,
        "correct",
        "proj is nn.Conv2d(C, D, kernel_size=P, stride=P); flatten(2) and transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "unfold_then_linear",
        UnfoldThenLinear,
        "correct",
        "F.unfold with kernel and stride P gives the channel-first patches, then the Linear",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_permute",
        TensorUnfoldPermute,
        "correct",
        "Tensor.unfold on the height and width, then permute(0, 2, 3, 1, 4, 5) and view",
    ),
]
