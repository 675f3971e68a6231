"""Blind set B30, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """A right constructor, shared by the mistakes that are in ``forward``."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _ConvPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels with their channels
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColumnsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, bias=False
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchConvPadded(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, padding=1
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchConvStrideOne(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left out

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, D, N)


class PatchConvView(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D, h, w = out.shape
        return out.reshape(B, h * w, D)  # straight into (B, N, D)


class PatchScaled(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images).flatten(2).transpose(1, 2)
        return out * math.sqrt(out.shape[-1])  # as the token embedding does


class PatchWithNorm(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.norm(self.proj(x.reshape(B, -1, C * P * P)))


class PatchWithClassToken(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images).flatten(2).transpose(1, 2)
        return torch.cat([self.cls_token.expand(len(out), -1, -1), out], dim=1)


# ---------------------------------------------------------------- correct variants


class PatchConv(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)  # (B, N, D)


class PatchUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel-first
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfoldEinsum(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(B, h * w, C * P * P)
        return torch.einsum("bnk,dk->bnd", x, self.proj.weight) + self.proj.bias


CASES = [
    BlindCase(
        CHECK,
        "flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "I flattened each patch pixel by pixel with its channels last, (P, P, C).",
    ),
    BlindCase(
        CHECK,
        "grid_column_major",
        PatchColumnMajorGrid,
        "mistake",
        "I put the patch-column axis before the patch-row axis, so the patches come column by "
        "column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_columns_swapped",
        PatchRowsColumnsSwapped,
        "mistake",
        "Inside a patch I permuted the pixel axes in the wrong order (columns, then rows).",
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
        "conv_no_bias",
        PatchNoBias,
        "mistake",
        "I gave the Conv2d bias=False, since a LayerNorm comes later anyway.",
    ),
    BlindCase(
        CHECK,
        "conv_padding_one",
        PatchConvPadded,
        "mistake",
        "I kept padding=1 in the Conv2d out of habit from CNNs.",
    ),
    BlindCase(
        CHECK,
        "conv_stride_missing",
        PatchConvStrideOne,
        "mistake",
        "I gave the Conv2d kernel_size=P but forgot stride=P, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "conv_no_transpose",
        PatchNoTranspose,
        "mistake",
        "I flattened the Conv2d output and forgot .transpose(1, 2), returning (B, D, N).",
    ),
    BlindCase(
        CHECK,
        "conv_output_reshaped",
        PatchConvView,
        "mistake",
        "I reshaped the Conv2d output (B, D, h, w) straight into (B, h*w, D).",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaled,
        "mistake",
        "I multiplied the patch vectors by sqrt(d_model), as TokenEmbedding does.",
    ),
    BlindCase(
        CHECK,
        "layernorm_after_proj",
        PatchWithNorm,
        "mistake",
        "I put a LayerNorm after proj, as some ViT code does.",
    ),
    BlindCase(
        CHECK,
        "class_token_prepended",
        PatchWithClassToken,
        "mistake",
        "I prepended the [CLS] token in the patch embedding, returning N + 1 vectors.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "proj is nn.Conv2d(C, D, kernel_size=P, stride=P); the map flattened and transposed.",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PatchUnfold,
        "correct",
        "F.unfold cuts the patches (channel-first already), then proj is a Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_einsum",
        PatchTensorUnfoldEinsum,
        "correct",
        "Tensor.unfold twice for the grid, and the Linear's weight and bias applied with einsum.",
    ),
]
