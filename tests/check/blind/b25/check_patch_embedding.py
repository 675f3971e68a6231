"""Blind set B25, check_patch_embedding (chapter 19): ViT's patch embedding as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """The layer of the mistakes that cut patches themselves: ``proj`` is a Linear."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _ConvPatches(nn.Module):
    """The layer of the mistakes built on a convolution: ``proj`` is a Conv2d."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (B,h,w,P,P,C)
        return self.proj(x.reshape(B, -1, P * P * C))


class PatchColumnByColumn(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B,w,h,C,P,P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchNoPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchConvViewNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # (B, N, D)


class PatchConvChannelsFirstOut(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # one vector per patch


class PatchSquareGrid(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        n = H // P  # patches per side
        x = images[..., : n * P, : n * P].reshape(B, C, n, P, n, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, n * n, C * P * P))


class PatchUnfoldView(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B, CPP, N = cols.shape
        return self.proj(cols.view(B, N, CPP))


class PatchScaledLikeTokens(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.scale = math.sqrt(d_model)  # as TokenEmbedding in chapter 13

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P)) * self.scale


class PatchConvSamePadding(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, padding=patch_size // 2
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        stride = max(1, patch_size // 2)  # half-overlapping patches share context
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=stride)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size**2, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchWrongLayerName(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.projection = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.projection(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, D, h, w) -> (B, N, D)


class PatchUnfoldTranspose(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))  # (B, N, C*P*P)


class PatchTensorUnfold(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.P = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        P = self.P
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).flatten(3)  # (B, h, w, C*P*P)
        return self.proj(x.flatten(1, 2))


class PatchLoop(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        _, _, H, W = images.shape
        patches = [
            images[:, :, i : i + P, j : j + P].flatten(1)
            for i in range(0, H, P)
            for j in range(0, W, P)
        ]
        return self.proj(torch.stack(patches, dim=1))


CASES = [
    BlindCase(
        CHECK,
        "channel_last_patch",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), pixels first and channels last.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "I put the grid's column axis before its row axis, so the patches are read column "
        "by column.",
    ),
    BlindCase(
        CHECK,
        "patch_transposed",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I flattened columns before rows.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchNoPermute,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P), with no permute.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_without_transpose",
        PatchConvViewNoTranspose,
        "mistake",
        "Conv2d, then reshape(B, -1, D) on its (B, D, h, w) output, which mixes features and "
        "patches.",
    ),
    BlindCase(
        CHECK,
        "conv_features_first",
        PatchConvChannelsFirstOut,
        "mistake",
        "Conv2d then flatten(2), and I forgot the transpose: (B, D, N) comes back.",
    ),
    BlindCase(
        CHECK,
        "square_grid_assumed",
        PatchSquareGrid,
        "mistake",
        "I took the number of patches per side from the height only, as if images were square.",
    ),
    BlindCase(
        CHECK,
        "unfold_view_not_transpose",
        PatchUnfoldView,
        "mistake",
        "F.unfold gives (B, C*P*P, N), and I used view(B, N, C*P*P) instead of a transpose.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaledLikeTokens,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model), as the token embedding does.",
    ),
    BlindCase(
        CHECK,
        "conv_same_padding",
        PatchConvSamePadding,
        "mistake",
        "Conv2d with padding=P // 2, so the grid is shifted and has extra patches at the edges.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PatchOverlapping,
        "mistake",
        "Conv2d with stride P // 2, so neighbouring patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(..., bias=False): a patch embedding needs no bias, I thought.",
    ),
    BlindCase(
        CHECK,
        "layer_named_projection",
        PatchWrongLayerName,
        "mistake",
        "I called the layer self.projection instead of self.proj.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "nn.Conv2d with kernel and stride P, then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold_transpose",
        PatchUnfoldTranspose,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on the height and the width, permute, flatten, Linear.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        PatchLoop,
        "correct",
        "A loop over the patches, row by row, each sliced and flattened, stacked on dim 1.",
    ),
]
