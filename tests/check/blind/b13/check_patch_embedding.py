"""Blind set B13, check_patch_embedding (chapter 19): patch embeddings as readers write them."""

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


class _Conv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (B,h,w,P,P,C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnByColumn(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B,w,h,C,P,P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)  # (B,h,w,C,Pc,Pr)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeNoPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchNoBias(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchConvNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # (B, N, D)


class PatchConvTransposeHW(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.transpose(2, 3).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=max(P // 2, 1))  # half-overlapping patches
        return self.proj(cols.transpose(1, 2))


class PatchUnfoldWrongOrder(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.reshape(B, h * w, C * P * P)  # reshape straight to patches
        return self.proj(x)


# ---------------------------------------------------------------- correct variants


class PatchConv(_Conv):
    """A Conv2d with kernel and stride P, flattened row by row."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchFUnfold(_Linear):
    """F.unfold (which orders each patch channel first) and a Linear."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_Linear):
    """Tensor.unfold twice, then a permute to (B, h, w, C, P, P) and a helper method."""

    def patches(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()
        return x.view(x.shape[0], -1, x.shape[3] * P * P)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(self.patches(images))


CASES = [
    BlindCase(
        CHECK,
        "flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, like an image file.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "My permute put the grid's columns before its rows, so patches go column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I put the columns before the rows when flattening.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeNoPermute,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "I made proj a Linear with bias=False.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_no_transpose",
        PatchConvNoTranspose,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, N, D) without transposing.",
    ),
    BlindCase(
        CHECK,
        "conv_grid_transposed",
        PatchConvTransposeHW,
        "mistake",
        "I swapped h and w of the conv output before flattening.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PatchOverlapping,
        "mistake",
        "I cut patches with a stride of P/2, so they overlap.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_no_permute",
        PatchUnfoldWrongOrder,
        "mistake",
        "Tensor.unfold twice, then reshaped (B, C, h, w, P, P) to patches with no permute.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "proj is a Conv2d with kernel and stride P; flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PatchFUnfold,
        "correct",
        "F.unfold with kernel and stride P, then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_permute",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold twice with the right permute, in a helper method.",
    ),
]
