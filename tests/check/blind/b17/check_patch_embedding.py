"""Blind set B17, check_patch_embedding (chapter 19): ViT's patch embedding as readers write
it."""

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
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): pixels with their colours
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): the grid column by column
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeNoPermute(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))  # straight into patches


class PatchSplitOrderWrong(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, P, H // P, P, W // P)  # (B, C, P, h, P, w)
        x = x.permute(0, 3, 5, 1, 2, 4)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, bias=False
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchConvNoTranspose(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # (B, N, D), I thought


class PatchConvHeightWidthSwapped(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.permute(0, 3, 2, 1).flatten(1, 2)  # (B, w, h, D) -> (B, N, D)


class PatchOverlapping(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=max(P // 2, 1))  # half-overlapping
        return self.proj(cols.transpose(1, 2))


class PatchLinearTransposedImage(_LinearBase):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.transpose(2, 3)  # to (B, C, W, H), "x before y"
        x = x.reshape(B, C, W // P, P, H // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchConvOutChannelsFirst(_ConvBase):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, D, N): forgot the transpose


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_ConvBase):
    """Conv2d with kernel and stride P, then flatten(2).transpose(1, 2)."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchUnfold(_LinearBase):
    """F.unfold cuts the patches (channel-first, row by row) for the linear layer."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))  # (B, N, C*P*P) -> (B, N, D)


class PatchTensorUnfold(_LinearBase):
    """Tensor.unfold along height and width, then a permute; extra num_patches helper."""

    def num_patches(self, height: int, width: int) -> int:
        return (height // self.patch_size) * (width // self.patch_size)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C, H, W = images.shape
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, self.num_patches(H, W), C * P * P))


class PatchConvEinsum(_ConvBase):
    """Conv2d, the feature map moved to channel-last with einsum and reshaped."""

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D, h, w = x.shape
        return torch.einsum("bdhw->bhwd", x).reshape(B, h * w, D)


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I flattened each patch channel-last, (P, P, C), as in numpy images.",
    ),
    BlindCase(
        CHECK,
        "grid_column_major",
        PatchColumnMajorGrid,
        "mistake",
        "I put the grid's column index before its row index, so patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I flattened columns before rows (permute ... 5, 3).",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeNoPermute,
        "mistake",
        "I reshaped (B, C, H, W) straight into (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "split_p_before_grid",
        PatchSplitOrderWrong,
        "mistake",
        "I split H into (P, H/P) instead of (H/P, P), so each 'patch' takes every h-th pixel.",
    ),
    BlindCase(
        CHECK,
        "conv_without_bias",
        PatchNoBias,
        "mistake",
        "I made the Conv2d with bias=False, thinking positions would add the offset.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_no_transpose",
        PatchConvNoTranspose,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, -1, D) without moving D last.",
    ),
    BlindCase(
        CHECK,
        "conv_map_transposed",
        PatchConvHeightWidthSwapped,
        "mistake",
        "I moved D last with permute(0, 3, 2, 1), which also swaps the grid's height and width.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PatchOverlapping,
        "mistake",
        "I cut the patches with F.unfold and a stride of P // 2, so they overlap.",
    ),
    BlindCase(
        CHECK,
        "image_transposed_first",
        PatchLinearTransposedImage,
        "mistake",
        "I transposed the image to (B, C, W, H) first, so x comes before y everywhere.",
    ),
    BlindCase(
        CHECK,
        "conv_output_d_first",
        PatchConvOutChannelsFirst,
        "mistake",
        "I returned conv(images).flatten(2), which is (B, D, N), not (B, N, D).",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "Conv2d(C, D, P, stride=P), then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold_linear",
        PatchUnfold,
        "correct",
        "F.unfold with kernel and stride P (channel-first patches, row by row) and a Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_linear",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold along height and width, a permute and a view; a num_patches helper.",
    ),
    BlindCase(
        CHECK,
        "conv_einsum",
        PatchConvEinsum,
        "correct",
        "Conv2d, then einsum('bdhw->bhwd') and a reshape.",
    ),
]
