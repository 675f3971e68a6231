"""Blind set B24, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
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
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnByColumn(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left out

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))


class PatchConvViewNoTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D, h, w = out.shape
        return out.reshape(B, h * w, D)


class PatchUnfoldNoTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B, CPP, N = cols.shape
        return self.proj(cols.view(B, N, CPP))


class PatchGridSidesSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = W // P, H // P  # typo: the two sides the wrong way round
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchTensorUnfoldNoPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchConvFlattenWrongAxes(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.transpose(2, 3).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchKernelNotPatch(_ConvPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        # one patch is P x P pixels, so I slide a P x P window by P pixels... and pad the edge
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, padding=1
        )

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_ConvPatches):
    """Conv2d with kernel and stride P, then flatten(2).transpose(1, 2)."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchUnfoldLinear(_LinearPatches):
    """F.unfold (channel-first patches, row by row), transposed, then the linear layer."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfoldPermute(_LinearPatches):
    """Tensor.unfold twice, the channel axis moved behind the grid, contiguous and view."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, (H // P) * (W // P), C * P * P))


class PatchLinearEinsum(_LinearPatches):
    """The patches kept as (B, h, w, C, P, P) and the weight applied with an einsum."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.view(B, C, H // P, P, W // P, P)
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P), channel-first
        out = torch.einsum("bcipjq,dcpq->bijd", x, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


CASES = [
    BlindCase(
        CHECK,
        "patch_flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "permute(0, 2, 4, 3, 5, 1): each patch flattened rows, columns, then channels.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnByColumn,
        "mistake",
        "I put the grid's column axis before its row axis, so patches go down the columns.",
    ),
    BlindCase(
        CHECK,
        "rows_and_columns_of_patch_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch the pixel columns come before its rows: permute(0, 2, 4, 1, 5, 3).",
    ),
    BlindCase(
        CHECK,
        "conv_stride_forgotten",
        PatchOverlapping,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) without stride=P: overlapping patches.",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(C*P*P, D, bias=False).",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "images.reshape(B, N, C*P*P) straight away, no permute.",
    ),
    BlindCase(
        CHECK,
        "conv_output_reshaped_not_transposed",
        PatchConvViewNoTranspose,
        "mistake",
        "The conv's (B, D, h, w) reshaped to (B, h*w, D) without moving D last first.",
    ),
    BlindCase(
        CHECK,
        "unfold_viewed_not_transposed",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I .view-ed it as (B, N, C*P*P).",
    ),
    BlindCase(
        CHECK,
        "grid_sides_swapped",
        PatchGridSidesSwapped,
        "mistake",
        "h = W // P and w = H // P: wrong for a grid that is not square.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_without_permute",
        PatchTensorUnfoldNoPermute,
        "mistake",
        "Two Tensor.unfold calls give (B, C, h, w, P, P); I reshaped without moving C.",
    ),
    BlindCase(
        CHECK,
        "conv_flattened_column_major",
        PatchConvFlattenWrongAxes,
        "mistake",
        "I transposed h and w of the conv output before flattening.",
    ),
    BlindCase(
        CHECK,
        "conv_with_padding",
        PatchKernelNotPatch,
        "mistake",
        "Conv2d(kernel_size=P, stride=P, padding=1): patches shifted by a pixel of padding.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "proj is Conv2d(C, D, kernel_size=P, stride=P); flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "functional_unfold",
        PatchUnfoldLinear,
        "correct",
        "F.unfold with kernel and stride P, transpose(1, 2), then nn.Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_permute",
        PatchTensorUnfoldPermute,
        "correct",
        "Tensor.unfold on both spatial axes, permute (B, h, w, C, P, P), then view.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_linear_weight",
        PatchLinearEinsum,
        "correct",
        "proj is nn.Linear, but I apply its weight as (D, C, P, P) with an einsum.",
    ),
]
