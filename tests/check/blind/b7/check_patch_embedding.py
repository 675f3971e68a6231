"""Blind set B7, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

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
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (.., P, P, C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchGridByColumns(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, ..)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)  # (.., C, Px, Py)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class PatchConvNoStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride forgotten

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


class PatchConvNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, D, N)


class PatchConvViewNoPermute(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D, h, w = out.shape
        return out.reshape(B, h * w, D)


class PatchConvColumnMajor(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.permute(0, 3, 2, 1).reshape(out.shape[0], -1, out.shape[1])  # (B, w*h, D)


class PatchGridSidesSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        rows, cols = W // P, H // P  # (square images in my head)
        x = images.reshape(B, C, rows, P, cols, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, rows * cols, C * P * P))


class PatchUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        B, CPP, N = cols.shape
        return self.proj(cols.reshape(B, N, CPP))  # reshape where a transpose was needed


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_Conv):
    """Conv2d with kernel and stride P, then flatten(2) and transpose(1, 2)."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchUnfoldLinear(_Linear):
    """F.unfold (channel-first patches, row by row), transposed, then the linear layer."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_Linear):
    """Tensor.unfold on height then width, then permute and reshape."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


class PatchConvPermute(_Conv):
    """Conv2d, then permute to channel-last and reshape; an extra flatten flag (default on)."""

    def forward(self, images: Tensor, flatten: bool = True) -> Tensor:
        out = self.proj(images).permute(0, 2, 3, 1)  # (B, h, w, D)
        return out.reshape(out.shape[0], -1, out.shape[-1]) if flatten else out


CASES = [
    BlindCase(
        CHECK,
        "patch_flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "I flatten each patch as (P, P, C), channel last, while the layer expects C, then rows, "
        "then columns.",
    ),
    BlindCase(
        CHECK,
        "grid_read_by_columns",
        PatchGridByColumns,
        "mistake",
        "I put the column index of the grid before the row index, so the patches come column "
        "by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_and_columns_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside each patch I put the pixel columns before the pixel rows (permute ..., 1, 5, 3).",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "I reshape (B, C, H, W) straight to (B, N, C*P*P), which cuts the image into strips, "
        "not patches.",
    ),
    BlindCase(
        CHECK,
        "conv_without_stride",
        PatchConvNoStride,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) without stride=P: overlapping patches at every pixel.",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(C * P * P, D, bias=False), as if a patch embedding had no bias.",
    ),
    BlindCase(
        CHECK,
        "conv_output_not_transposed",
        PatchConvNoTranspose,
        "mistake",
        "Conv2d then flatten(2), forgetting transpose(1, 2): the result is (B, D, N).",
    ),
    BlindCase(
        CHECK,
        "conv_output_reshaped_not_permuted",
        PatchConvViewNoPermute,
        "mistake",
        "Conv2d's (B, D, h, w) reshaped directly to (B, h*w, D) without moving D last.",
    ),
    BlindCase(
        CHECK,
        "conv_grid_column_major",
        PatchConvColumnMajor,
        "mistake",
        "Conv2d output permuted to (B, w, h, D) instead of (B, h, w, D) before flattening, so "
        "the patches are in column-major order.",
    ),
    BlindCase(
        CHECK,
        "grid_height_width_swapped",
        PatchGridSidesSwapped,
        "mistake",
        "I computed the grid as W // P rows and H // P columns: fine on square images, wrong "
        "on a 3 x 4 grid.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshaped_not_transposed",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N) and I reshape it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "nn.Conv2d(C, D, P, stride=P), then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "functional_unfold",
        PatchUnfoldLinear,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_twice",
        PatchTensorUnfold,
        "correct",
        "images.unfold(2, P, P).unfold(3, P, P), permuted to (B, h, w, C, P, P) and viewed.",
    ),
    BlindCase(
        CHECK,
        "conv_channel_last_permute",
        PatchConvPermute,
        "correct",
        "Conv2d then permute(0, 2, 3, 1) and reshape; an extra flatten=True argument.",
    ),
]
