"""Blind set B12, check_patch_embedding (chapter 19): ViT's patch embedding as readers write
it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


# ---------------------------------------------------------------- mistakes


class PeChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (.., P, P, C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeColumnMajor(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # w before h
        return self.proj(x.reshape(B, -1, C * P * P))


class PeRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)  # (C, Pw, Ph)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeNoPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class PeUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(cols.shape[0], -1, cols.shape[1]))  # reshape, not .mT


class PeOverlap(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        # stride 1 by default: the patches overlap
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, padding="same")
        self.patch_size = patch_size

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = self.proj(images)[:, :, ::P, ::P]  # keep one position per patch
        return x.flatten(2).transpose(1, 2)


class PeNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeConvFlattenWrong(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.reshape(x.shape[0], -1, x.shape[1])  # (B, N, D) without moving D


class PeConvTransposeHW(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.transpose(2, 3).flatten(2).transpose(1, 2)  # column by column


class PeMeanPool(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = x.reshape(B, -1, C * P * P)
        return self.proj(x) / (P * P)  # averaged over the pixels of the patch


# ---------------------------------------------------------------- correct variants


class PeConv(nn.Module):
    """nn.Conv2d with kernel and stride P, then flatten and transpose."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeUnfold(_Linear):
    """F.unfold (channel-first patches, row-major), then the linear layer."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        return self.proj(F.unfold(images, kernel_size=P, stride=P).transpose(1, 2))


class PeEinops(_Linear):
    """Tensor.unfold twice and an einsum with the linear layer's weight; a helper method."""

    def patches(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        return x.permute(0, 2, 3, 1, 4, 5).flatten(1, 2).flatten(2)  # (B, N, C*P*P)

    def forward(self, images: Tensor) -> Tensor:
        x = self.patches(images)
        return torch.einsum("bnk,dk->bnd", x, self.proj.weight) + self.proj.bias


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        PeChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel-last, like an image library does.",
    ),
    BlindCase(
        CHECK,
        "column_major_grid",
        PeColumnMajor,
        "mistake",
        "I put the grid's column index before its row index, so patches go column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PeRowsColsSwapped,
        "mistake",
        "Inside a patch I flattened the columns before the rows.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PeNoPermute,
        "mistake",
        "I reshaped (B, C, H, W) straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PeUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PeOverlap,
        "mistake",
        "My Conv2d has kernel P but stride 1 (padding 'same'), then I subsample: the "
        "patches overlap.",
    ),
    BlindCase(CHECK, "no_bias", PeNoBias, "mistake", "I built the convolution with bias=False."),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PeConvFlattenWrong,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, N, D) without moving D last.",
    ),
    BlindCase(
        CHECK,
        "conv_column_by_column",
        PeConvTransposeHW,
        "mistake",
        "I transposed h and w before flattening, so the patches are read column by column.",
    ),
    BlindCase(
        CHECK,
        "divided_by_patch_area",
        PeMeanPool,
        "mistake",
        "I divided by P*P to average the patch's pixels.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PeConv,
        "correct",
        "nn.Conv2d with kernel and stride P, then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PeUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed, then nn.Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        PeEinops,
        "correct",
        "Tensor.unfold twice, a patches helper method, and an einsum with proj's weight.",
    ),
]
