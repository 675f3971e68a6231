"""Blind set B11, check_patch_embedding (chapter 19): the ViT patch embedding as readers write
it."""

from __future__ import annotations

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

    def _split(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return images.reshape(B, C, H // P, P, W // P, P)  # (B, C, h, P, w, P)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._split(images).permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels, then C
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class PatchColumnMajor(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._split(images).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class PatchRowsColsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        x = self._split(images).permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, self.proj.in_features))


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        # bias=False: the position embeddings are added afterwards anyway
        self.proj = nn.Linear(in_channels * patch_size**2, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, (H // P) * (W // P), C * P * P))


class PatchReshapeOnly(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        N = images.shape[2] * images.shape[3] // self.patch_size**2
        return self.proj(images.reshape(B, N, -1))  # N rows of C*P*P numbers


class PatchConvNoTranspose(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.reshape(out.shape[0], -1, out.shape[1])  # (B, N, D)


class PatchSplitOrder(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, P, H // P, P, W // P)  # (B, C, P, h, P, w)
        x = x.permute(0, 3, 5, 1, 2, 4)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchUnfoldNoTranspose(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        B, CPP, N = cols.shape
        return self.proj(cols.reshape(B, N, CPP))  # (B, C*P*P, N) -> (B, N, C*P*P)


class PatchGridNotFlattened(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).permute(0, 2, 3, 1)  # (B, h, w, D): one vector per patch


class PatchPixelScaled(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = self._split(images).permute(0, 2, 4, 1, 3, 5).reshape(B, -1, C * P * P)
        x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-6)  # normalise
        return self.proj(x)


# ---------------------------------------------------------------- correct variants


class PatchConv(nn.Module):
    """Conv2d with kernel and stride P, flattened row by row and transposed."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)  # (B, N, D)


class PatchUnfold(_LinearBase):
    """F.unfold cuts the patches (channel-first, row-major), then the linear layer."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchEinsum(_LinearBase):
    """The linear layer's weight viewed as (D, C, P, P) and applied with einsum; an extra
    helper method num_patches."""

    def num_patches(self, H: int, W: int) -> int:
        return (H // self.patch_size) * (W // self.patch_size)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        x = self._split(images)  # (B, C, h, P, w, P)
        out = torch.einsum("bchpwq,dcpq->bhwd", x, weight) + self.proj.bias
        return out.reshape(B, self.num_patches(H, W), -1)


CASES = [
    BlindCase(
        CHECK,
        "channel_last_patch",
        PatchChannelLast,
        "mistake",
        "I flattened each patch channel-last, (P, P, C), instead of (C, P, P).",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajor,
        "mistake",
        "My permute puts the grid's column index before its row index, so the patches come "
        "column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I flattened columns before rows (a transposed patch).",
    ),
    BlindCase(
        CHECK,
        "overlapping_conv",
        PatchOverlapping,
        "mistake",
        "Conv2d with kernel_size=P but no stride, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(..., bias=False), since positions are added later.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P) without cutting patches first.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PatchConvNoTranspose,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, N, D) instead of flatten + transpose.",
    ),
    BlindCase(
        CHECK,
        "split_order_swapped",
        PatchSplitOrder,
        "mistake",
        "I reshaped to (B, C, P, h, P, w) instead of (B, C, h, P, w, P): the pixel index "
        "outside the patch index.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N) and I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "grid_not_flattened",
        PatchGridNotFlattened,
        "mistake",
        "I returned (B, h, w, D): the patch grid not flattened into a sequence.",
    ),
    BlindCase(
        CHECK,
        "patch_normalised",
        PatchPixelScaled,
        "mistake",
        "I normalised each patch's pixels (mean 0, std 1) before the linear layer.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "proj is nn.Conv2d with kernel and stride P; flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "unfold_linear",
        PatchUnfold,
        "correct",
        "F.unfold to cut the patches, transposed, then the linear layer.",
    ),
    BlindCase(
        CHECK,
        "einsum_weight_view",
        PatchEinsum,
        "correct",
        "The linear weight viewed as (D, C, P, P) and applied with einsum plus the bias; a "
        "helper method.",
    ),
]
