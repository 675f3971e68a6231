"""Blind set B15, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _Conv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PeChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (.., P, P, C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeColumnMajorGrid(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # w before h
        return self.proj(x.reshape(B, -1, C * P * P))


class PeRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeNoPermute(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class PeOverlapping(_Conv):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeNoBias(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(x.transpose(1, 2))


class PeConvNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.reshape(x.shape[0], -1, x.shape[1])  # (B, N, D) by reshape


class PeConvFlattenWrong(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.transpose(2, 3).flatten(2).transpose(1, 2)  # columns first


class PeUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(x.reshape(x.shape[0], x.shape[2], x.shape[1]))


class PeTensorUnfoldOrder(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C = images.shape[:2]
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))  # C not moved after h, w


# ---------------------------------------------------------------- correct variants


class PeConv(_Conv):
    """Conv2d with kernel and stride P, flatten(2) and transpose."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeUnfold(_Linear):
    """F.unfold gives the patches channel-first, row by row."""

    def forward(self, images: Tensor) -> Tensor:
        patches = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(patches.transpose(1, 2))


class PeTensorUnfold(_Linear):
    """Tensor.unfold twice, then permute the channel behind the grid; einops-style helper."""

    def patches(self, images: Tensor) -> Tensor:
        B, C = images.shape[:2]
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        return x.permute(0, 2, 3, 1, 4, 5).reshape(B, -1, C * P * P)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(self.patches(images))


class PeEinsumConvWeight(_Conv):
    """Conv2d layer as proj, but applied with an einsum over the patches."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.view(B, C, H // P, P, W // P, P)
        out = torch.einsum("bchpwq,dcpq->bhwd", x, self.proj.weight) + self.proj.bias
        return out.reshape(B, -1, out.shape[-1])


CASES = [
    BlindCase(
        CHECK,
        "channel_last_patch",
        PeChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel-last, as images are stored in files.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PeColumnMajorGrid,
        "mistake",
        "My permute put the w axis before h, so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PeRowsColsSwapped,
        "mistake",
        "Inside each patch I put the columns before the rows.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PeNoPermute,
        "mistake",
        "I reshaped (B, C, H, W) straight into (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PeOverlapping,
        "mistake",
        "I gave the Conv2d kernel_size=P but left stride at 1, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PeNoBias,
        "mistake",
        "I made proj a Linear with bias=False.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PeConvNoTranspose,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, N, D) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_columns_first",
        PeConvFlattenWrong,
        "mistake",
        "After the Conv2d I swapped h and w before flattening the grid.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PeUnfoldNoTranspose,
        "mistake",
        "I reshaped F.unfold's (B, C*P*P, N) to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_no_permute",
        PeTensorUnfoldOrder,
        "mistake",
        "After images.unfold twice I reshaped (B, C, h, w, P, P) directly, C still first.",
    ),
    BlindCase(CHECK, "conv2d", PeConv, "correct", "A Conv2d proj, flatten(2).transpose(1, 2)."),
    BlindCase(CHECK, "f_unfold", PeUnfold, "correct", "F.unfold and a Linear proj."),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PeTensorUnfold,
        "correct",
        "Tensor.unfold twice and a permute in a helper method.",
    ),
    BlindCase(
        CHECK,
        "einsum_conv_weight",
        PeEinsumConvWeight,
        "correct",
        "A Conv2d as proj but applied through an einsum over a view of the patches.",
    ),
]
