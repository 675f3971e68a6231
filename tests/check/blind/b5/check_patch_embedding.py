"""Blind set B5, check_patch_embedding (chapter 19): ViT patch embeddings as readers write them."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels, self.patch_size, self.d_model = in_channels, patch_size, d_model
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _ConvPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchUnfoldNoTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(cols.shape[0], -1, cols.shape[1]))  # reshaped, not transposed


class PatchConvNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, D, N): the transpose to (B, N, D) forgotten


class PatchConvView(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.reshape(out.shape[0], -1, out.shape[1])  # (B, N, D) by reshape alone


class PatchLayerNormOnPatches(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.norm = nn.LayerNorm(in_channels * patch_size * patch_size)  # as some ViT variants

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = x.reshape(B, -1, C * P * P)
        return self.proj(self.norm(x))


class PatchWithClsToken(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))  # the [CLS] of the ViT, put here

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return torch.cat([self.cls.expand(B, -1, -1), x], dim=1)  # (B, 1 + N, D)


class PatchConvPadded(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        # padding P // 2 "to keep the borders", as for a 3x3 convolution
        self.proj = nn.Conv2d(
            in_channels,
            d_model,
            kernel_size=patch_size,
            stride=patch_size,
            padding=patch_size // 2,
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchAxisSplitReversed(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        # H split as (P, H / P) instead of (H / P, P): every patch takes strided pixels
        x = images.reshape(B, C, P, H // P, P, W // P).permute(0, 3, 5, 1, 2, 4)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchScaledBySqrtD(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return x * math.sqrt(self.d_model)  # scaled by sqrt(D) like chapter 13's embeddings


class PatchArgsOrder(nn.Module):
    def __init__(self, patch_size: int, in_channels: int, d_model: int) -> None:  # order swapped
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchTensorUnfold(_LinearPatches):
    """Two ``Tensor.unfold`` calls make the grid; one permute puts the channels first."""

    def forward(self, images: Tensor) -> Tensor:
        B, C = images.shape[:2]
        P = self.patch_size
        grid = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        grid = grid.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(grid.view(B, -1, C * P * P))


class PatchEinsum(_LinearPatches):
    """The linear layer's weight viewed as a (D, C, P, P) kernel, applied by einsum."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        patches = images.reshape(B, C, H // P, P, W // P, P)
        kernel = self.proj.weight.view(self.d_model, C, P, P)
        out = torch.einsum("bcipjq,dcpq->bijd", patches, kernel) + self.proj.bias
        return out.reshape(B, -1, self.d_model)


class PatchStrideOneSubsampled(nn.Module):
    """A kernel-P convolution at stride 1, read at every P-th position: the same numbers as
    stride P, at more cost."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        full = F.conv2d(images, self.proj.weight, self.proj.bias, stride=1)
        picked = full[:, :, ::P, ::P]  # (B, D, h, w)
        return picked.permute(0, 2, 3, 1).flatten(1, 2)


CASES = [
    BlindCase(
        CHECK,
        "unfold_reshaped_not_transposed",
        PatchUnfoldNoTranspose,
        "mistake",
        "I reshaped F.unfold's (B, C*P*P, N) output to (B, N, C*P*P) instead of transposing it.",
    ),
    BlindCase(
        CHECK,
        "conv_without_transpose",
        PatchConvNoTranspose,
        "mistake",
        "After the Conv2d I flattened to (B, D, N) and forgot the transpose to (B, N, D).",
    ),
    BlindCase(
        CHECK,
        "conv_output_reshaped",
        PatchConvView,
        "mistake",
        "I turned the Conv2d's (B, D, h, w) output into (B, N, D) with one reshape, no permute.",
    ),
    BlindCase(
        CHECK,
        "layernorm_on_patches",
        PatchLayerNormOnPatches,
        "mistake",
        "I put a LayerNorm on the flattened patches before proj, as some ViT variants do.",
    ),
    BlindCase(
        CHECK,
        "cls_token_prepended",
        PatchWithClsToken,
        "mistake",
        "I prepended the [CLS] token inside the patch embedding, so it returns N + 1 vectors.",
    ),
    BlindCase(
        CHECK,
        "conv_padding_half_patch",
        PatchConvPadded,
        "mistake",
        "I gave the Conv2d padding=P // 2 to keep the borders, which shifts the grid of patches.",
    ),
    BlindCase(
        CHECK,
        "height_split_p_first",
        PatchAxisSplitReversed,
        "mistake",
        "I reshaped H into (P, H / P) instead of (H / P, P), so a patch takes every "
        "(H / P)-th pixel instead of a P x P square.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaledBySqrtD,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model) as chapter 13 does for token embeddings.",
    ),
    BlindCase(
        CHECK,
        "init_args_swapped",
        PatchArgsOrder,
        "mistake",
        "I wrote __init__(self, patch_size, in_channels, d_model), the first two "
        "arguments in the wrong order.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_permute",
        PatchTensorUnfold,
        "correct",
        "images.unfold twice to get the grid, one permute to put channels before the "
        "pixels, then proj.",
    ),
    BlindCase(
        CHECK,
        "einsum_kernel",
        PatchEinsum,
        "correct",
        "proj is a Linear whose weight I view as a (D, C, P, P) kernel and apply with "
        "einsum, adding its bias.",
    ),
    BlindCase(
        CHECK,
        "stride_one_subsampled",
        PatchStrideOneSubsampled,
        "correct",
        "proj is a Conv2d; I run its weights at stride 1 and keep every P-th output in "
        "each direction.",
    ),
]
