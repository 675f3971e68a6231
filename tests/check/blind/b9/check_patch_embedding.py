"""Blind set B9, check_patch_embedding (chapter 19): patch embeddings as readers write them."""

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
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): 'b (h w) (p1 p2 c)'
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchNoPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchConvStrideOne(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left out

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


class PatchUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)  # (B, CPP, N)
        return self.proj(cols.reshape(B, cols.shape[2], cols.shape[1]))  # view, not transpose


class PatchConvViewNotTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)


class PatchConvColumnMajor(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.permute(0, 3, 2, 1).reshape(B, -1, D)  # (B, w, h, D): column by column


class PatchHeightWidthMixedUp(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = W // P, H // P  # square images in my head
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchUnfoldWrongOrder(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C = images.shape[:2]
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 4, 5, 1)  # (B, h, w, P, P, C): channel last again
        return self.proj(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchUnfoldTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C = images.shape[:2]
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


class PatchLoop(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        H, W = images.shape[2:]
        patches = [
            images[:, :, i : i + P, j : j + P].flatten(1)
            for i in range(0, H, P)
            for j in range(0, W, P)
        ]
        return self.proj(torch.stack(patches, dim=1))


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        PatchChannelLast,
        "mistake",
        "I flatten each patch as (P, P, C), the vit-pytorch '(p1 p2 c)' layout, not channel first",
    ),
    BlindCase(
        CHECK,
        "grid_column_major",
        PatchColumnMajorGrid,
        "mistake",
        "my permute puts the grid's column index before its row index, so patches are read "
        "column by column",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "inside a patch I permute the pixel columns before the pixel rows (a transposed patch)",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchNoPermute,
        "mistake",
        "I reshape (B, C, H, W) straight to (B, N, C*P*P) without any permute",
    ),
    BlindCase(
        CHECK,
        "conv_stride_one",
        PatchConvStrideOne,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) without stride=P: overlapping patches",
    ),
    BlindCase(CHECK, "no_bias", PatchNoBias, "mistake", "nn.Linear(C*P*P, D, bias=False)"),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshape it to (B, N, C*P*P) instead of transposing",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PatchConvViewNotTranspose,
        "mistake",
        "the conv gives (B, D, h, w); I reshape it to (B, N, D) instead of flatten + transpose",
    ),
    BlindCase(
        CHECK,
        "conv_column_major",
        PatchConvColumnMajor,
        "mistake",
        "after the conv I permute to (B, w, h, D), so the tokens go column by column",
    ),
    BlindCase(
        CHECK,
        "height_width_mixed_up",
        PatchHeightWidthMixedUp,
        "mistake",
        "h = W // P and w = H // P: right for square images only",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_channel_last",
        PatchUnfoldWrongOrder,
        "mistake",
        "Tensor.unfold twice, then a permute that moves the channels last",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "nn.Conv2d with kernel and stride P, then flatten(2).transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "f_unfold_transpose",
        PatchUnfoldTranspose,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the Linear",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on both spatial axes, permute to (B, h, w, C, P, P), view",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        PatchLoop,
        "correct",
        "a loop over the patches row by row, each sliced and flattened, then stacked",
    ),
]
