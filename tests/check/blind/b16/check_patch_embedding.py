"""Blind set B16, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import math

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


class PeChannelLast(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels with their colours
        return self.proj(x.reshape(B, -1, P * P * C))


class PeColumnByColumn(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeRowsColumnsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeReshapeOnly(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        N = (H // self.patch_size) * (W // self.patch_size)
        return self.proj(images.reshape(B, N, -1))  # the numbers are all there


class PeOverlapping(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        stride = max(1, patch_size // 2)  # half-overlapping patches see more context
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=stride)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeNoBias(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, bias=False
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeConvNotTransposed(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D = out.shape[:2]
        return out.reshape(B, -1, D)  # (B, N, D)


class PeConvColumnMajor(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.permute(0, 3, 2, 1).flatten(1, 2)  # (B, w*h, D)


class PeUnfoldNotTransposed(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(cols.shape[0], cols.shape[2], cols.shape[1]))


class PeScaledBySqrtD(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images).flatten(2).transpose(1, 2)
        return out * math.sqrt(out.shape[-1])  # as the token embedding of chapter 13


class PeStrideOne(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left out

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


# ---------------------------------------------------------------- correct variants


class PeConv(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)  # (B, h*w, D)


class PeUnfold(_LinearPatches):
    def num_patches(self, height: int, width: int) -> int:
        return (height // self.patch_size) * (width // self.patch_size)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel first
        return self.proj(cols.transpose(1, 2))


class PeTensorUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PeChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), the colours of a pixel together, not channel first.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PeColumnByColumn,
        "mistake",
        "I put the patch-column axis before the patch-row axis, so the patches come column by "
        "column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_columns_swapped",
        PeRowsColumnsSwapped,
        "mistake",
        "Inside a patch I ordered the pixels column by column (I swapped the two P axes in the "
        "permute).",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PeReshapeOnly,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PeOverlapping,
        "mistake",
        "I used a Conv2d with stride P // 2 so that neighbouring patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PeNoBias,
        "mistake",
        "I made the Conv2d with bias=False, as a patch projection needs no bias, I thought.",
    ),
    BlindCase(
        CHECK,
        "conv_reshaped_not_transposed",
        PeConvNotTransposed,
        "mistake",
        "I reshaped the Conv2d's (B, D, h, w) output to (B, N, D) without moving D to the end.",
    ),
    BlindCase(
        CHECK,
        "conv_column_major",
        PeConvColumnMajor,
        "mistake",
        "I permuted the Conv2d's output to (B, w, h, D) before flattening, so the grid is read "
        "column by column.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshaped_not_transposed",
        PeUnfoldNotTransposed,
        "mistake",
        "I reshaped F.unfold's (B, C*P*P, N) to (B, N, C*P*P) instead of transposing it.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PeScaledBySqrtD,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model), as chapter 13's token embedding does.",
    ),
    BlindCase(
        CHECK,
        "conv_stride_one",
        PeStrideOne,
        "mistake",
        "I gave the Conv2d kernel_size=P but forgot stride=P.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PeConv,
        "correct",
        "proj is a Conv2d with kernel and stride P, flattened and transposed.",
    ),
    BlindCase(
        CHECK,
        "functional_unfold",
        PeUnfold,
        "correct",
        "F.unfold cuts the patches (channel first), transposed, then the Linear; an extra "
        "num_patches method.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PeTensorUnfold,
        "correct",
        "Tensor.unfold twice, a permute to (B, h, w, C, P, P), contiguous().view, then Linear.",
    ),
]
