"""Blind set B22, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.d_model = d_model
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _Conv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (.., P, P, C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # w before h
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlappingConv(_Conv):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeNoPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchConvNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D = out.shape[:2]
        return out.reshape(B, -1, D)


class PatchUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        B, CPP, N = cols.shape
        return self.proj(cols.reshape(B, N, CPP))


class PatchSquareGrid(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        n = H // P  # patches per side
        x = images.reshape(B, C, n, P, n, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, n * n, C * P * P))


class PatchScaledBySqrtD(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P)) * math.sqrt(self.d_model)


class PatchImageTransposed(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        x = images.transpose(2, 3)  # to (B, C, W, H), x before y
        B, C, A, Bw = x.shape
        P = self.patch_size
        x = x.reshape(B, C, A // P, P, Bw // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchUnfoldWrongPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 4, 5, 1)  # channels moved last
        return self.proj(x.reshape(B, h * w, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)


class PatchFUnfold(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous().view(B, h * w, C * P * P)
        return self.proj(x)


class PatchEinsum(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bcypxq,dcpq->byxd", x, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I permuted to (B, h, w, P, P, C), so each patch is flattened channel-last.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajorGrid,
        "mistake",
        "My permute puts the patch column before the patch row: the grid is read column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I ordered the pixel columns before the pixel rows (permute ..., 5, 3).",
    ),
    BlindCase(
        CHECK,
        "conv_stride_one",
        PatchOverlappingConv,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) without stride=P: overlapping patches.",
    ),
    BlindCase(
        CHECK,
        "linear_no_bias",
        PatchNoBias,
        "mistake",
        "I made proj an nn.Linear with bias=False.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeNoPermute,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P), without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_no_transpose",
        PatchConvNoTranspose,
        "mistake",
        "After the convolution I reshaped (B, D, h, w) to (B, N, D) without moving D last.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_no_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "square_grid_assumed",
        PatchSquareGrid,
        "mistake",
        "I computed the number of patches per side from H only, as for square images.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaledBySqrtD,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model), as the token embedding of chapter 13 "
        "does.",
    ),
    BlindCase(
        CHECK,
        "image_axes_transposed",
        PatchImageTransposed,
        "mistake",
        "I transposed the image to (B, C, W, H) first, thinking of (x, y) order.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_channels_last",
        PatchUnfoldWrongPermute,
        "mistake",
        "Two Tensor.unfold calls, then permute(0, 2, 3, 4, 5, 1): channels last in each patch.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "proj is nn.Conv2d(C, D, P, stride=P); flatten(2) and transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold_linear",
        PatchFUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed, then the linear proj.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_linear",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on the height and width, permute to (B, h, w, C, P, P), view.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_linear_weight",
        PatchEinsum,
        "correct",
        "The linear proj's weight viewed as (D, C, P, P) and applied with einsum, plus bias.",
    ),
]
