"""Blind set B23, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearBase(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): channel last inside a patch
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): the grid read column by column
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row): a patch transposed
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchConvNoStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        # no bias: I thought the position embedding added later plays its part
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))  # no permute: not patches at all


class PatchUnfoldViewNotTranspose(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(B, -1, C * P * P))  # reshape where transpose(1, 2) was due


class PatchConvChannelsLast(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.flatten(2)  # (B, D, N): I forgot to move D last


class PatchGridSidesSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = W // P, H // P  # height and width of the grid mixed up
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchScaledLikeTokens(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        out = self.proj(x.reshape(B, -1, C * P * P))
        return out * math.sqrt(out.shape[-1])  # times sqrt(D), as chapter 13's token embedding


class PatchConvTransposedGrid(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.permute(0, 3, 2, 1).reshape(x.shape[0], -1, x.shape[1])  # (B, w*h, D)


# ---------------------------------------------------------------- correct variants


class PatchConv(nn.Module):
    """nn.Conv2d with kernel and stride P, then flatten and transpose."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)


class PatchUnfold(_LinearBase):
    """F.unfold cuts the patches (channel first, row-major) and a Linear maps them."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfoldEinsum(_LinearBase):
    """Tensor.unfold twice, and the Linear's weight applied with einsum."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        patches = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bchwpq,dcpq->bhwd", patches, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


CASES = [
    BlindCase(
        CHECK,
        "channel_last_patch",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, instead of (C, P, P)",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajorGrid,
        "mistake",
        "permute put the grid's column index before its row index: patches column by column",
    ),
    BlindCase(
        CHECK,
        "patch_transposed",
        PatchRowsColsSwapped,
        "mistake",
        "inside a patch I put the pixel column before the pixel row",
    ),
    BlindCase(
        CHECK,
        "conv_without_stride",
        PatchConvNoStride,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) with the stride left at 1: overlapping patches",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(C * P * P, D, bias=False)",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "images.reshape(B, N, C * P * P) directly, with no permute",
    ),
    BlindCase(
        CHECK,
        "unfold_reshaped_not_transposed",
        PatchUnfoldViewNotTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing",
    ),
    BlindCase(
        CHECK,
        "conv_output_d_not_last",
        PatchConvChannelsLast,
        "mistake",
        "Conv2d then flatten(2), returning (B, D, N): forgot the transpose",
    ),
    BlindCase(
        CHECK,
        "grid_height_width_swapped",
        PatchGridSidesSwapped,
        "mistake",
        "I computed the grid as h = W // P, w = H // P",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaledLikeTokens,
        "mistake",
        "I multiplied the patch vectors by sqrt(D), as chapter 13 does for token embeddings",
    ),
    BlindCase(
        CHECK,
        "conv_grid_transposed",
        PatchConvTransposedGrid,
        "mistake",
        "Conv2d, then permute(0, 3, 2, 1): the patches come out column by column",
    ),
    BlindCase(
        CHECK,
        "conv2d_stride_p",
        PatchConv,
        "correct",
        "proj = nn.Conv2d(C, D, kernel_size=P, stride=P), then flatten(2).transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "f_unfold_linear",
        PatchUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed, then the Linear",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        PatchTensorUnfoldEinsum,
        "correct",
        "Tensor.unfold on both image axes and the Linear's weight applied with einsum",
    ),
]
