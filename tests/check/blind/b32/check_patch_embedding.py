"""Blind set B32, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """A Linear ``proj`` on flattened patches; subclasses change only how patches are cut."""

    bias = True

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=self.bias)

    def patches(self, images: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(self.patches(images))


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (.., P, P, C)
        return x.reshape(B, -1, C * P * P)


class PatchColumnByColumn(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, ..)
        return x.reshape(B, -1, C * P * P)


class PatchRowsColsSwapped(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return x.reshape(B, -1, C * P * P)


class PatchNoPermute(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return images.reshape(B, (H // P) * (W // P), C * P * P)


class PatchSplitInnerOuter(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, P, h, P, w).permute(0, 3, 5, 1, 2, 4)  # P before h: strided
        return x.reshape(B, h * w, C * P * P)


class PatchUnfoldNoTranspose(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return cols.reshape(B, -1, cols.shape[1])  # reshape instead of transpose


class PatchImageTransposed(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        images = images.transpose(2, 3)  # thought images were (B, C, W, H)
        B, C, W, H = images.shape
        P = self.patch_size
        x = images.reshape(B, C, W // P, P, H // P, P).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(B, -1, C * P * P)


class PatchHardCodedFour(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = 4  # the chapter's patch size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(B, -1, C * P * P)


class PatchScaledPixels(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        images = images / 255.0  # pixels to [0, 1]
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(B, -1, C * P * P)


class PatchNoBias(_LinearPatches):
    bias = False

    def patches(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(B, -1, C * P * P)


class PatchConvOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        stride = max(1, patch_size // 2)  # half-overlapping patches, to share context
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=stride)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchConvViewNoTranspose(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # (B, N, D)? the numbers are not moved


class PatchConvWithCls(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)  # ViT's [CLS] first


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchConvPermute(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).permute(0, 2, 3, 1)  # (B, h, w, D)
        return x.reshape(x.shape[0], -1, x.shape[-1])


class PatchUnfoldLinear(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        P = self.patch_size
        return F.unfold(images, kernel_size=P, stride=P).transpose(1, 2)  # (B, N, C*P*P)


class PatchLoop(_LinearPatches):
    def patches(self, images: Tensor) -> Tensor:
        P = self.patch_size
        H, W = images.shape[2:]
        rows = []
        for i in range(0, H, P):
            for j in range(0, W, P):
                rows.append(images[:, :, i : i + P, j : j + P].flatten(1))  # (B, C*P*P)
        return torch.stack(rows, dim=1)


class PatchEinsumWeight(_LinearPatches):
    """The weight applied by einsum on the 6-D view, without a permute."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bchpwq,dcpq->bhwd", x, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, as images are stored in numpy.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "I permuted to (B, w, h, C, P, P), so the patches are listed column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I put the columns before the rows (permute(0, 2, 4, 1, 5, 3)).",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchNoPermute,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "split_p_outer",
        PatchSplitInnerOuter,
        "mistake",
        "I split H as (P, H/P) instead of (H/P, P), so a 'patch' takes every (H/P)-th pixel.",
    ),
    BlindCase(
        CHECK,
        "unfold_no_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "I used F.unfold, which gives (B, C*P*P, N), and reshaped it to (B, N, C*P*P) instead "
        "of transposing.",
    ),
    BlindCase(
        CHECK,
        "image_axes_transposed",
        PatchImageTransposed,
        "mistake",
        "I thought the images were (B, C, W, H) and transposed them first.",
    ),
    BlindCase(
        CHECK,
        "patch_size_hard_coded",
        PatchHardCodedFour,
        "mistake",
        "I wrote P = 4 in forward, the chapter's patch size, instead of self.patch_size.",
    ),
    BlindCase(
        CHECK,
        "pixels_divided_by_255",
        PatchScaledPixels,
        "mistake",
        "I divided the pixels by 255 before the projection, to bring them to [0, 1].",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "I made proj with bias=False, as the projection of the attention heads.",
    ),
    BlindCase(
        CHECK,
        "conv_overlapping",
        PatchConvOverlapping,
        "mistake",
        "I used a Conv2d with stride P // 2, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_no_transpose",
        PatchConvViewNoTranspose,
        "mistake",
        "I reshaped the Conv2d output (B, D, h, w) to (B, N, D) directly, without moving D last.",
    ),
    BlindCase(
        CHECK,
        "cls_token_prepended",
        PatchConvWithCls,
        "mistake",
        "I put ViT's [CLS] vector in front of the patches inside the embedding, so N + 1 "
        "vectors come out.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "proj is a Conv2d with kernel and stride P, then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "conv_permute_reshape",
        PatchConvPermute,
        "correct",
        "proj is a Conv2d, its output permuted to (B, h, w, D) and reshaped.",
    ),
    BlindCase(
        CHECK,
        "unfold_linear",
        PatchUnfoldLinear,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the Linear.",
    ),
    BlindCase(
        CHECK,
        "loop_over_patches",
        PatchLoop,
        "correct",
        "A double loop over the grid, row by row, each patch flattened and stacked.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_linear_weight",
        PatchEinsumWeight,
        "correct",
        "proj is a Linear, but applied by einsum on the (B, C, h, P, w, P) view with its "
        "weight viewed as (D, C, P, P).",
    ),
]
