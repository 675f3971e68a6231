"""Blind cases for check_patch_embedding (chapter 19), written from the chapter's text only."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def _grid(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return images.reshape(B, C, H // P, P, W // P, P)  # (B, C, h, P, w, P)


class ReshapeWithoutPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class ChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._grid(images).permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C)
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class GridColumnByColumn(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._grid(images).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class PatchRowsColumnsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._grid(images).permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P cols, P rows)
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class NoBias(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._grid(images).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class ConvFlattenedWithReshape(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # reshape where a transpose is needed


class OverlappingHalfStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        stride = max(patch_size // 2, 1)
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=stride)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class ConvFlattenTranspose(nn.Module):
    """Correct: Conv2d with kernel and stride P, flatten, transpose."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)


class UnfoldThenLinear(_Linear):
    """Correct: F.unfold cuts the patches (channel, then rows, then columns), then a Linear."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class TensorUnfoldPermute(_Linear):
    """Correct: Tensor.unfold on height and width, then permute to (B, h, w, C, P, P)."""

    def forward(self, images: Tensor, flatten: bool = True) -> Tensor:
        P = self.patch_size
        B = images.shape[0]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, self.proj.in_features))


CASES = [
    BlindCase(
        CHECK,
        "reshape_without_permute",
        ReshapeWithoutPermute,
        "mistake",
        "I reshaped (B, C, H, W) straight to (B, N, C*P*P) without a permute",
    ),
    BlindCase(
        CHECK,
        "channel_last",
        ChannelLast,
        "mistake",
        "I flattened each patch as rows, columns, then channels",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        GridColumnByColumn,
        "mistake",
        "I put the grid's width before its height, so the patches go column by column",
    ),
    BlindCase(
        CHECK,
        "patch_rows_columns_swapped",
        PatchRowsColumnsSwapped,
        "mistake",
        "inside a patch I put the columns before the rows",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        NoBias,
        "mistake",
        "I made the projection nn.Linear(..., bias=False), like the Q/K/V of some papers",
    ),
    BlindCase(
        CHECK,
        "conv_flattened_with_reshape",
        ConvFlattenedWithReshape,
        "mistake",
        "after the Conv2d I reshaped (B, D, h, w) to (B, N, D) instead of transposing",
    ),
    BlindCase(
        CHECK,
        "overlapping_half_stride",
        OverlappingHalfStride,
        "mistake",
        "I used stride P // 2 in the Conv2d, so the patches overlap",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        ConvFlattenTranspose,
        "correct",
        "Conv2d(kernel P, stride P), flatten(2), transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "unfold_then_linear",
        UnfoldThenLinear,
        "correct",
        "F.unfold to cut the patches, transposed to (B, N, C*P*P), then the Linear",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_permute",
        TensorUnfoldPermute,
        "correct",
        "Tensor.unfold on height and width, permute, view; an unused optional argument",
    ),
]
