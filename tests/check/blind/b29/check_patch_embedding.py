"""Blind set B29, check_patch_embedding (chapter 19): the ViT's patch embedding as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    """The layer ``proj`` as a linear map of a flattened patch."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _Conv(nn.Module):
    """The layer ``proj`` as a strided convolution."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # C last
        return self.proj(x.reshape(B, -1, P * P * C))


class PatchColumnMajor(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, ...)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=max(1, P // 2))  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


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


class PatchReshapeOnly(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class PatchConvViewNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.view(B, -1, D)  # (B, N, D)


class PatchConvColumnFlatten(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.transpose(2, 3).flatten(2).transpose(1, 2)


class PatchSquareGrid(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        n = H // P  # patches per side
        x = images[..., : n * P, : n * P].reshape(B, C, n, P, n, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, n * n, C * P * P))


class PatchWithCls(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))  # ViT's [CLS] token

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)


class PatchScaled(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)
        return x * math.sqrt(x.shape[-1])  # embeddings are scaled by sqrt(d_model)


class PatchWithPositions(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)
        self.d_model = d_model

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)
        N, D = x.shape[1:]
        pos = torch.arange(N, dtype=x.dtype, device=x.device)[:, None]
        freq = torch.exp(-math.log(10000.0) * torch.arange(0, D, 2, dtype=x.dtype) / D)
        pe = torch.zeros(N, D, dtype=x.dtype, device=x.device)
        pe[:, 0::2] = torch.sin(pos * freq)
        pe[:, 1::2] = torch.cos(pos * freq)
        return x + pe  # each patch knows where it is


class PatchPixelsTransposed(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.transpose(2, 3)  # (B, C, W, H): "x before y"
        B, C, W, H = x.shape
        x = x.reshape(B, C, W // P, P, H // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_Conv):
    """Conv2d with kernel and stride P, flattened row by row."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchUnfold(_Linear):
    """F.unfold cuts the patches (channel-first, row by row); then the linear layer."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        return self.proj(F.unfold(images, kernel_size=P, stride=P).transpose(1, 2))


class PatchTensorUnfold(_Linear):
    """Tensor.unfold twice, then a permute; the layer applied with einsum."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(B, h * w, C * P * P)
        return torch.einsum("bnk,dk->bnd", x, self.proj.weight) + self.proj.bias


class PatchLoop(_Linear):
    """A loop over the grid, each patch cut by slicing and flattened."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        H, W = images.shape[-2:]
        patches = [
            images[:, :, r : r + P, c : c + P].flatten(1)
            for r in range(0, H, P)
            for c in range(0, W, P)
        ]
        return self.proj(torch.stack(patches, dim=1))


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channels last, the way images are stored on disk.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajor,
        "mistake",
        "My permute puts the grid's columns before its rows, so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I flattened the columns before the rows (permute ..., 5, 3).",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PatchOverlapping,
        "mistake",
        "I used F.unfold with stride P // 2, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "I built proj with bias=False.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_view_without_transpose",
        PatchConvViewNoTranspose,
        "mistake",
        "After the convolution I used .view(B, -1, D) on the (B, D, h, w) map instead of "
        "flatten and transpose.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_columns_first",
        PatchConvColumnFlatten,
        "mistake",
        "I transposed the feature map's h and w before flattening, so the tokens run column by "
        "column.",
    ),
    BlindCase(
        CHECK,
        "square_grid_assumed",
        PatchSquareGrid,
        "mistake",
        "I computed the patches per side from H only, as for square images, and cropped to it.",
    ),
    BlindCase(
        CHECK,
        "cls_token_prepended",
        PatchWithCls,
        "mistake",
        "I prepended ViT's [CLS] token inside the patch embedding, so N + 1 vectors come out.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaled,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model), as the token embeddings of chapter 13 "
        "are.",
    ),
    BlindCase(
        CHECK,
        "positions_added",
        PatchWithPositions,
        "mistake",
        "I added 1-D sinusoidal positions to the patch vectors inside the patch embedding.",
    ),
    BlindCase(
        CHECK,
        "height_width_transposed",
        PatchPixelsTransposed,
        "mistake",
        "I transposed the image to (B, C, W, H) first, so both the grid and each patch are read "
        "in the wrong order.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten",
        PatchConvFlatten,
        "correct",
        "nn.Conv2d(C, D, kernel_size=P, stride=P), then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PatchUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the linear layer.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on the height and the width, a permute, and the linear layer written "
        "with einsum.",
    ),
    BlindCase(
        CHECK,
        "slicing_loop",
        PatchLoop,
        "correct",
        "A loop over the grid slicing each patch, flattened and stacked.",
    ),
]
