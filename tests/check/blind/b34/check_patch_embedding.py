"""Blind set B34, check_patch_embedding (chapter 19): patch embeddings as readers write them."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """``proj`` is a Linear layer on C * P * P pixels; each reader writes ``forward``."""

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
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # C last
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnByColumn(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchConvNoStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
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
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchConvNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, D, N)


class PatchConvViewNotTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D, h, w = x.shape
        return x.reshape(B, h * w, D)


class PatchUnfoldViewNotTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B, K, N = cols.shape
        return self.proj(cols.reshape(B, N, K))


class PatchConvColumnMajor(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.transpose(2, 3).flatten(2).transpose(1, 2)


class PatchStridedPixels(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, P, h, P, w).permute(0, 3, 5, 1, 2, 4)  # pixel index first
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchSquareGridAssumed(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        n = H // P  # the grid is n x n
        x = images[:, :, : n * P, : n * P].reshape(B, C, n, P, n, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, n * n, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConv(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchFUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel first
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channels last like an image file",
    ),
    BlindCase(
        CHECK,
        "column_by_column",
        PatchColumnByColumn,
        "mistake",
        "I put the patch columns before the patch rows in the permute",
    ),
    BlindCase(
        CHECK,
        "rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "inside a patch I flattened columns before rows",
    ),
    BlindCase(
        CHECK,
        "conv_no_stride",
        PatchConvNoStride,
        "mistake",
        "I gave Conv2d the kernel size but forgot stride=P",
    ),
    BlindCase(CHECK, "no_bias", PatchNoBias, "mistake", "I made the projection without a bias"),
    BlindCase(
        CHECK,
        "reshape_only",
        PatchReshapeOnly,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P) without a permute",
    ),
    BlindCase(
        CHECK,
        "conv_no_transpose",
        PatchConvNoTranspose,
        "mistake",
        "after the Conv2d I flattened and returned (B, D, N)",
    ),
    BlindCase(
        CHECK,
        "conv_view_not_transpose",
        PatchConvViewNotTranspose,
        "mistake",
        "I reshaped the conv output (B, D, h, w) to (B, h*w, D)",
    ),
    BlindCase(
        CHECK,
        "unfold_view_not_transpose",
        PatchUnfoldViewNotTranspose,
        "mistake",
        "I reshaped F.unfold's (B, C*P*P, N) into (B, N, C*P*P) instead of transposing",
    ),
    BlindCase(
        CHECK,
        "conv_column_major",
        PatchConvColumnMajor,
        "mistake",
        "I transposed h and w before flattening the feature map",
    ),
    BlindCase(
        CHECK,
        "strided_pixels",
        PatchStridedPixels,
        "mistake",
        "I reshaped to (B, C, P, h, P, w), so a patch takes every h-th pixel",
    ),
    BlindCase(
        CHECK,
        "square_grid_assumed",
        PatchSquareGridAssumed,
        "mistake",
        "I assumed a square grid of H / P by H / P patches",
    ),
    BlindCase(
        CHECK,
        "conv",
        PatchConv,
        "correct",
        "Conv2d with kernel and stride P, flatten(2), transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PatchFUnfold,
        "correct",
        "F.unfold with stride P, transposed, then the Linear layer",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on height and width, permute, then the Linear layer",
    ),
]
