"""Blind set B19, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

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
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (.., P, P, C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnByColumn(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, ..)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)  # (.., C, Pw, Ph)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride forgotten

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


class PatchReshapeOnly(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))  # one reshape, no permute


class PatchConvReshape(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D, h, w = out.shape
        return out.reshape(B, h * w, D)  # reshape instead of transpose


class PatchUnfoldReshape(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B, CPP, N = cols.shape
        return self.proj(cols.reshape(B, N, CPP))


class PatchConvColumnMajor(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.transpose(2, 3).flatten(2).transpose(1, 2)  # (B, N, D), w outer


class PatchStridedPixels(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, P, h, P, w).permute(0, 3, 5, 1, 2, 4)  # P and h in wrong order
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchWithClsToken(_ConvBase):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)
        return torch.cat([self.cls_token.expand(len(x), -1, -1), x], dim=1)  # ViT's [CLS]


class PatchConvFlattenNoTranspose(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, D, N)


# ---------------------------------------------------------------- correct variants


class PatchConv(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)


class PatchFUnfold(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))  # (B, N, C*P*P)


class PatchTensorUnfold(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int, dropout: float = 0.0):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)
        self.dropout = nn.Dropout(dropout)

    def num_patches(self, height: int, width: int) -> int:
        return (height // self.patch_size) * (width // self.patch_size)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).flatten(3).flatten(1, 2)  # (B, h*w, C*P*P)
        return self.dropout(self.proj(x))


class PatchEinsumConvWeights(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.view(B, C, H // P, P, W // P, P)
        out = torch.einsum("bchpwq,dcpq->bhwd", x, self.proj.weight) + self.proj.bias
        return out.reshape(B, -1, out.shape[-1])


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, as the ViT paper's picture.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "My permute put the grid's column axis before its row axis, so patches are read "
        "column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside each patch I put the column axis before the row axis.",
    ),
    BlindCase(
        CHECK,
        "conv_no_stride",
        PatchOverlapping,
        "mistake",
        "I wrote nn.Conv2d(C, D, kernel_size=P) and forgot stride=P: overlapping patches.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "I made proj with bias=False, as patch embeddings sometimes are.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P) with no permute.",
    ),
    BlindCase(
        CHECK,
        "conv_output_reshaped",
        PatchConvReshape,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, h*w, D) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshaped",
        PatchUnfoldReshape,
        "mistake",
        "I used F.unfold and reshaped its (B, C*P*P, N) output to (B, N, C*P*P).",
    ),
    BlindCase(
        CHECK,
        "conv_column_major",
        PatchConvColumnMajor,
        "mistake",
        "After the Conv2d I transposed h and w before flattening, reading the grid by columns.",
    ),
    BlindCase(
        CHECK,
        "strided_pixels",
        PatchStridedPixels,
        "mistake",
        "I reshaped to (B, C, P, h, P, w) instead of (B, C, h, P, w, P), so a 'patch' "
        "collects pixels strided across the image.",
    ),
    BlindCase(
        CHECK,
        "prepends_cls_token",
        PatchWithClsToken,
        "mistake",
        "I prepended ViT's [CLS] token inside the patch embedding, returning N + 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "conv_no_transpose",
        PatchConvFlattenNoTranspose,
        "mistake",
        "I returned conv(images).flatten(2), which is (B, D, N), not (B, N, D).",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "nn.Conv2d with kernel and stride P, flatten(2) and transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PatchFUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed, then the Linear layer.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_extra_dropout",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold twice, permute and flatten; an extra dropout argument defaulting "
        "to 0 and a helper method.",
    ),
    BlindCase(
        CHECK,
        "einsum_conv_weights",
        PatchEinsumConvWeights,
        "correct",
        "A Conv2d's weight and bias applied with einsum on the (B, C, h, P, w, P) view.",
    ),
]
