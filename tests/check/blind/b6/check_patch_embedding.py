"""Blind set B6, check_patch_embedding (chapter 19): ViT patch embeddings as readers write
them."""

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
        self.in_channels, self.patch_size, self.d_model = in_channels, patch_size, d_model
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _Conv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size, self.d_model = patch_size, d_model
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class VitPytorchRearrange(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        # 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', as in vit-pytorch
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 3, 5, 1)
        return self.proj(x.reshape(B, h * w, P * P * C))


class UnfoldThenView(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        patches = cols.view(B, -1, cols.shape[1])  # view instead of transpose(1, 2)
        return self.proj(patches)


class ConvNoStride(_Conv):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class ConvViewNotTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.view(x.shape[0], -1, self.d_model)  # (B, N, D) by view, channels not moved


class GridSizesSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, w, P, h, P)  # h and w the wrong way round
        x = x.permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class ExtraLayerNorm(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.norm = nn.LayerNorm(d_model)  # vit-pytorch normalises the patch vectors

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.norm(self.proj(x.reshape(B, h * w, C * P * P)))


class WithClsToken(_Conv):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)  # (B, 1 + N, D)


class ScaledBySqrtD(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)
        return x * math.sqrt(self.d_model)  # as chapter 13's token embeddings


class RowsColumnsInPatchSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 5, 3)  # a patch's columns first
        return self.proj(x.reshape(B, h * w, C * P * P))


# ---------------------------------------------------------------- correct variants


class StridedConv(nn.Module):
    """nn.Conv2d with kernel and stride P, the feature map flattened row by row."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)  # (B, N, D)


class UnfoldTranspose(nn.Module):
    """F.unfold cuts the patches (channel-first, row-major); transpose and a Linear."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size**2, d_model)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class TensorUnfoldTwice(nn.Module):
    """Tensor.unfold on the height and then the width, a permute, a reshape."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


CASES = [
    BlindCase(
        CHECK,
        "vit_pytorch_rearrange",
        VitPytorchRearrange,
        "mistake",
        "I copied vit-pytorch's rearrange 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', which "
        "flattens each patch channel-last, not channel-first as the Linear of the book.",
    ),
    BlindCase(
        CHECK,
        "unfold_then_view",
        UnfoldThenView,
        "mistake",
        "I cut the patches with F.unfold, (B, C*P*P, N), and reshaped with view(B, -1, C*P*P) "
        "instead of transposing, which scrambles the values.",
    ),
    BlindCase(
        CHECK,
        "conv_without_stride",
        ConvNoStride,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) without stride=P, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "conv_view_not_transpose",
        ConvViewNotTranspose,
        "mistake",
        "After the strided Conv2d I reshape (B, D, h, w) to (B, N, D) with view, without "
        "moving the channel axis last.",
    ),
    BlindCase(
        CHECK,
        "grid_sizes_swapped",
        GridSizesSwapped,
        "mistake",
        "I reshaped to (B, C, w, P, h, P), the grid's width and height the wrong way round; "
        "it only works for square images.",
    ),
    BlindCase(
        CHECK,
        "extra_layer_norm",
        ExtraLayerNorm,
        "mistake",
        "As vit-pytorch does, I put a LayerNorm after the projection.",
    ),
    BlindCase(
        CHECK,
        "with_cls_token",
        WithClsToken,
        "mistake",
        "I put the [CLS] token in front inside the patch embedding, so it returns N + 1 vectors.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        ScaledBySqrtD,
        "mistake",
        "I multiply the patch vectors by sqrt(d_model), as chapter 13 does with token embeddings.",
    ),
    BlindCase(
        CHECK,
        "patch_columns_first",
        RowsColumnsInPatchSwapped,
        "mistake",
        "In the permute I put a patch's columns before its rows, (C, P_w, P_h), so every "
        "patch is flattened transposed.",
    ),
    BlindCase(
        CHECK,
        "strided_conv",
        StridedConv,
        "correct",
        "nn.Conv2d with kernel and stride P, then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold_transpose",
        UnfoldTranspose,
        "correct",
        "F.unfold with kernel and stride P, transpose(1, 2), then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_twice",
        TensorUnfoldTwice,
        "correct",
        "Tensor.unfold on the height and on the width, permute to (B, h, w, C, P, P), reshape, "
        "then the Linear.",
    ),
]
