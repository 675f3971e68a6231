"""Blind set B18, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearBase(nn.Module):
    """``proj`` as the book's linear layer; each case cuts the patches its own way."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels with their RGB together
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnByColumn(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColumnsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P cols, P rows)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        # one pixel of context around each patch; padding 1 keeps the grid at H/P x W/P
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size + 2, stride=patch_size, padding=1
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size**2, d_model, bias=False)  # ViT has none?

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeNoPermute(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        patches = images.reshape(B, (H // P) * (W // P), C * P * P)  # N rows of C*P*P numbers
        return self.proj(patches)


class PatchConvViewNoTranspose(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D, h, w = x.shape
        return x.reshape(B, h * w, D)  # (B, N, D)


class PatchStridedPixels(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, P, H // P, P, W // P)  # P first, then the grid
        x = x.permute(0, 3, 5, 1, 2, 4)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchUnfoldReshape(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(cols.shape[0], -1, cols.shape[1]))  # (B, N, C*P*P)


class PatchHeightWidthTransposed(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        images = images.transpose(2, 3)  # (B, C, W, H): "channels, x, y"
        return self.proj(images).flatten(2).transpose(1, 2)


# ---------------------------------------------------------------- correct variants


class PatchConv(nn.Module):
    """``nn.Conv2d`` with kernel and stride P, then flatten and transpose."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)  # (B, N, D)


class PatchUnfoldTranspose(_LinearBase):
    """``F.unfold`` gives (B, C*P*P, N), channel-first patches in row-major order."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_LinearBase):
    """``Tensor.unfold`` twice, with a helper method and ``num_patches``."""

    def patches(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return x.view(x.shape[0], x.shape[1] * x.shape[2], -1)

    def num_patches(self, height: int, width: int) -> int:
        return (height // self.patch_size) * (width // self.patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(self.patches(images))


CASES = [
    BlindCase(
        CHECK,
        "channel_last_patch",
        PatchChannelLast,
        "mistake",
        "I flattened each patch channel-last (rows, columns, then C), as an image library "
        "stores pixels.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "My permute puts the patch column before the patch row, so the patches come out "
        "column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_columns_swapped",
        PatchRowsColumnsSwapped,
        "mistake",
        "Inside each patch I swapped the pixel rows and columns in the permute.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PatchOverlapping,
        "mistake",
        "I gave each patch one pixel of context on every side: a Conv2d with kernel P + 2, "
        "stride P and padding 1, so neighbouring patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "I made proj with bias=False.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeNoPermute,
        "mistake",
        "I reshaped (B, C, H, W) straight to (B, N, C*P*P), without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PatchConvViewNoTranspose,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, N, D) instead of flattening and "
        "transposing.",
    ),
    BlindCase(
        CHECK,
        "split_order_strided",
        PatchStridedPixels,
        "mistake",
        "I split H as (P, H/P) instead of (H/P, P), so a 'patch' is pixels H/P apart.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape",
        PatchUnfoldReshape,
        "mistake",
        "F.unfold gives (B, C*P*P, N) and I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "image_transposed",
        PatchHeightWidthTransposed,
        "mistake",
        "I transposed the image to (B, C, W, H) first, reading it as x, y.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "proj is nn.Conv2d(C, D, kernel_size=P, stride=P); flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "functional_unfold",
        PatchUnfoldTranspose,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the linear proj.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold along H and W, a permute to (B, h, w, C, P, P), a helper method "
        "patches() and num_patches().",
    ),
]
