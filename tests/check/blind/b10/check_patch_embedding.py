"""Blind set B10, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearBase(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels, self.patch_size = in_channels, patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _ConvBase(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels first, channels last
        return self.proj(x.reshape(B, -1, P * P * C))


class PatchColumnMajorGrid(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): the grid column by column
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchUnfoldOverlapping(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        patches = F.unfold(images, kernel_size=self.patch_size)  # stride left at its default 1
        return self.proj(patches.transpose(1, 2))


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        # "a patch embedding is a pure projection"
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


class PatchConvViewNoTranspose(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        fmap = self.proj(images)  # (B, D, h, w)
        B, D = fmap.shape[:2]
        return fmap.view(B, -1, D)  # (B, N, D) by view, without moving D to the end


class PatchConvColumnMajor(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        fmap = self.proj(images)  # (B, D, h, w)
        return fmap.permute(0, 3, 2, 1).flatten(1, 2)  # (B, w, h, D): column by column


class PatchUnfoldNoTranspose(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        patches = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B = images.shape[0]
        return self.proj(patches.reshape(B, -1, patches.shape[1]))  # reshape, not transpose


class PatchTensorUnfoldNoPermute(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B = x.shape[0]
        return self.proj(x.reshape(B, -1, x.shape[1] * P * P))  # C still in front of h, w


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_ConvBase):
    """A strided Conv2d, then flatten(2) and transpose(1, 2)."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchUnfoldTranspose(_LinearBase):
    """F.unfold with kernel and stride P (channel-first patches, row-major), then transpose."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        patches = F.unfold(images, kernel_size=P, stride=P).transpose(1, 2)  # (B, N, C*P*P)
        return self.proj(patches)


class PatchTensorUnfoldEinsum(_LinearBase):
    """Tensor.unfold twice, then an einsum with the Linear's own weight and bias."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        W = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bchwij,dcij->bhwd", x, W) + self.proj.bias
        return out.reshape(B, h * w, -1)


class PatchChannelsLastLayout(_LinearBase):
    """Moves to channels-last (B, H, W, C) first, cuts the patches there and permutes each
    patch back to (C, P, P) before flattening."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.permute(0, 2, 3, 1)  # (B, H, W, C)
        x = x.reshape(B, H // P, P, W // P, P, C).permute(0, 1, 3, 5, 2, 4)  # (B, h, w, C, P, P)
        return self.proj(x.flatten(3).flatten(1, 2))


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channels last, as an image library stores it.",
    ),
    BlindCase(
        CHECK,
        "grid_column_major",
        PatchColumnMajorGrid,
        "mistake",
        "My permute puts the patch columns before the rows, so the grid is read column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside each patch I swapped the pixel rows and columns (permute ..., 5, 3).",
    ),
    BlindCase(
        CHECK,
        "unfold_overlapping",
        PatchUnfoldOverlapping,
        "mistake",
        "I used F.unfold(images, kernel_size=P) and forgot stride=P, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "I made the projection nn.Linear(..., bias=False).",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "I reshaped (B, C, H, W) straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_view_without_transpose",
        PatchConvViewNoTranspose,
        "mistake",
        "After the strided Conv2d I used .view(B, -1, D) on the (B, D, h, w) map instead of "
        "flatten and transpose.",
    ),
    BlindCase(
        CHECK,
        "conv_column_major",
        PatchConvColumnMajor,
        "mistake",
        "After the Conv2d I permuted to (B, w, h, D) before flattening, so the patches come "
        "column by column.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gave (B, C*P*P, N) and I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_without_permute",
        PatchTensorUnfoldNoPermute,
        "mistake",
        "I cut patches with Tensor.unfold to (B, C, h, w, P, P) and reshaped without moving C "
        "behind h and w.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "proj is nn.Conv2d(C, D, P, stride=P); flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "unfold_transpose",
        PatchUnfoldTranspose,
        "correct",
        "F.unfold with kernel_size=P and stride=P, transposed, then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        PatchTensorUnfoldEinsum,
        "correct",
        "Tensor.unfold twice and an einsum with proj.weight viewed as (D, C, P, P), plus "
        "proj.bias.",
    ),
    BlindCase(
        CHECK,
        "channels_last_then_permute",
        PatchChannelsLastLayout,
        "correct",
        "Goes through a channels-last (B, H, W, C) layout but permutes each patch back to "
        "(C, P, P) before flattening.",
    ),
]
