"""Blind set B20, check_patch_embedding (chapter 19): ViT patch embeddings as readers write them."""

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


def _cut(images: Tensor, P: int, order: tuple[int, ...]) -> Tensor:
    B, C, H, W = images.shape
    x = images.reshape(B, C, H // P, P, W // P, P).permute(*order)
    return x.reshape(B, (H // P) * (W // P), C * P * P)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        # (B, h, w, P, P, C): each patch flattened pixel by pixel, channels last
        return self.proj(_cut(images, self.patch_size, (0, 2, 4, 3, 5, 1)))


class PatchColumnMajorGrid(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        # (B, w, h, C, P, P): the grid read column by column
        return self.proj(_cut(images, self.patch_size, (0, 4, 2, 1, 3, 5)))


class PatchRowsColsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        # (B, h, w, C, P_col, P_row): inside a patch, columns before rows
        return self.proj(_cut(images, self.patch_size, (0, 2, 4, 1, 5, 3)))


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        # stride left at its default of 1: overlapping patches
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(_cut(images, self.patch_size, (0, 2, 4, 1, 3, 5)))


class PatchReshapeOnly(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))  # no permute


class PatchUnfoldNoTranspose(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(cols.shape[0], cols.shape[2], cols.shape[1]))  # not .mT


class PatchConvReshape(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D, h, w = out.shape
        return out.reshape(B, h * w, D)  # reshape where a transpose is needed


class PatchGridFromHeight(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h = w = H // P  # square images assumed
        x = images[:, :, : h * P, : w * P].reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchWithCls(_LinearBase):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(_cut(images, self.patch_size, (0, 2, 4, 1, 3, 5)))
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)  # [CLS] prepended


class PatchConvPermuteWrong(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.permute(0, 3, 2, 1).flatten(1, 2)  # (B, w, h, D): column by column


class PatchPaddingOne(_ConvBase):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, padding=1
        )  # "same" padding habit from CNNs

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


# ---------------------------------------------------------------- correct


class PatchConv(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchUnfold(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))  # (B, N, C*P*P)


class PatchTensorUnfold(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


class PatchEinsum(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C, H, W = images.shape
        x = images.view(B, C, H // P, P, W // P, P)
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bchpwq,dcpq->bhwd", x, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        PatchChannelLast,
        "mistake",
        "each patch flattened channel-last (P, P, C)",
    ),
    BlindCase(
        CHECK,
        "column_major_grid",
        PatchColumnMajorGrid,
        "mistake",
        "patches ordered column by column",
    ),
    BlindCase(
        CHECK,
        "rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "inside a patch, columns before rows",
    ),
    BlindCase(
        CHECK,
        "overlapping",
        PatchOverlapping,
        "mistake",
        "Conv2d(kernel_size=P) with the default stride 1",
    ),
    BlindCase(CHECK, "no_bias", PatchNoBias, "mistake", "nn.Linear(..., bias=False)"),
    BlindCase(
        CHECK, "reshape_only", PatchReshapeOnly, "mistake", "reshape to (B, N, C*P*P), no permute"
    ),
    BlindCase(
        CHECK,
        "unfold_no_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold, then reshape to (B, N, C*P*P) instead of transposing",
    ),
    BlindCase(
        CHECK,
        "conv_reshape",
        PatchConvReshape,
        "mistake",
        "Conv2d output (B, D, h, w) reshaped to (B, N, D) instead of flatten + transpose",
    ),
    BlindCase(
        CHECK,
        "grid_from_height",
        PatchGridFromHeight,
        "mistake",
        "h = w = H // P, square images assumed",
    ),
    BlindCase(
        CHECK,
        "with_cls",
        PatchWithCls,
        "mistake",
        "prepended a [CLS] vector inside the patch embedding",
    ),
    BlindCase(
        CHECK,
        "conv_permute_wrong",
        PatchConvPermuteWrong,
        "mistake",
        "Conv2d output permuted to (B, w, h, D) before flattening",
    ),
    BlindCase(
        CHECK, "padding_one", PatchPaddingOne, "mistake", "Conv2d with padding=1 out of habit"
    ),
    BlindCase(
        CHECK, "conv", PatchConv, "correct", "Conv2d(kernel=P, stride=P), flatten(2).transpose"
    ),
    BlindCase(CHECK, "unfold", PatchUnfold, "correct", "F.unfold then transpose and nn.Linear"),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold twice, permute, nn.Linear",
    ),
    BlindCase(
        CHECK, "einsum", PatchEinsum, "correct", "einsum with proj.weight viewed as (D, C, P, P)"
    ),
]
