"""Blind cases for check_patch_embedding (chapter 19), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.P = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def cut(self, images, order):
        B, C, H, W = images.shape
        P = self.P
        h, w = H // P, W // P
        x = images.reshape(B, C, h, P, w, P).permute(*order)
        return x.reshape(B, h * w, C * P * P)


# ---- mistakes -------------------------------------------------------------------------------


class ChannelLast(_Linear):
    def forward(self, images):
        return self.proj(self.cut(images, (0, 2, 4, 3, 5, 1)))  # (B, h, w, P, P, C)


class ColumnByColumn(_Linear):
    def forward(self, images):
        return self.proj(self.cut(images, (0, 4, 2, 1, 3, 5)))  # (B, w, h, C, P, P)


class RowsAndColumnsSwapped(_Linear):
    def forward(self, images):
        return self.proj(self.cut(images, (0, 2, 4, 1, 5, 3)))  # (B, h, w, C, P_col, P_row)


class OverlappingPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images):
        return self.proj(images).flatten(2).transpose(1, 2)


class NoBias(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images):
        return self.proj(self.cut(images, (0, 2, 4, 1, 3, 5)))


class ReshapeWithoutPermute(_Linear):
    def forward(self, images):
        B, C, H, W = images.shape
        N = (H // self.P) * (W // self.P)
        return self.proj(images.reshape(B, N, C * self.P * self.P))


class ConvOutputViewed(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images):
        y = self.proj(images)  # (B, D, h, w)
        B, D, h, w = y.shape
        return y.reshape(B, h * w, D)  # no transpose


class UnfoldWithoutTranspose(_Linear):
    def forward(self, images):
        cols = F.unfold(images, kernel_size=self.P, stride=self.P)  # (B, C*P*P, N)
        B, CPP, N = cols.shape
        return self.proj(cols.reshape(B, N, CPP))


# ---- reader's slip ------------------------------------------------------------------------------


class LayerNamedProjection(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.projection = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images):
        return self.projection(images).flatten(2).transpose(1, 2)


# ---- correct variants ---------------------------------------------------------------------------


class StridedConv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int, bias: bool = True) -> None:
        super().__init__()
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, bias=bias
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)


class UnfoldLinear(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.P, stride=self.P)  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class TensorUnfoldEinsum(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.P
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        W = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        return torch.einsum("bchwij,dcij->bhwd", x, W).reshape(B, h * w, -1) + self.proj.bias


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        ChannelLast,
        "mistake",
        "I flattened each patch channel-last, (P, P, C), instead of channel-first",
    ),
    BlindCase(
        CHECK,
        "column_by_column",
        ColumnByColumn,
        "mistake",
        "I put the grid's column axis before its row axis, so the patches come column by column",
    ),
    BlindCase(
        CHECK,
        "rows_and_columns_swapped",
        RowsAndColumnsSwapped,
        "mistake",
        "inside each patch I flattened the columns before the rows",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        OverlappingPatches,
        "mistake",
        "I used a Conv2d with kernel P but forgot stride=P, so the patches overlap",
    ),
    BlindCase(CHECK, "no_bias", NoBias, "mistake", "I made the projection without a bias"),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        ReshapeWithoutPermute,
        "mistake",
        "I reshaped (B, C, H, W) straight to (B, N, C*P*P) without a permute",
    ),
    BlindCase(
        CHECK,
        "conv_output_viewed",
        ConvOutputViewed,
        "mistake",
        "I reshaped the (B, D, h, w) convolution output to (B, N, D) without transposing",
    ),
    BlindCase(
        CHECK,
        "unfold_without_transpose",
        UnfoldWithoutTranspose,
        "mistake",
        "I reshaped F.unfold's (B, C*P*P, N) to (B, N, C*P*P) instead of transposing it",
    ),
    BlindCase(
        CHECK,
        "layer_named_projection",
        LayerNamedProjection,
        "mistake",
        "I named the layer self.projection instead of self.proj",
    ),
    BlindCase(
        CHECK,
        "strided_conv",
        StridedConv,
        "correct",
        "I used a Conv2d with kernel and stride P, flattened the grid and transposed, with an optional bias argument",
    ),
    BlindCase(
        CHECK,
        "unfold_linear",
        UnfoldLinear,
        "correct",
        "I cut the patches with F.unfold and transposed them before the linear layer",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        TensorUnfoldEinsum,
        "correct",
        "I cut patches with Tensor.unfold twice and applied the linear weights as a (D, C, P, P) kernel with einsum",
    ),
]
