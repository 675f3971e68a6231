"""Blind set B14, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Lin(nn.Module):
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


class PeChannelLast(_Lin):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(
            0, 2, 4, 3, 5, 1
        )  # (B, h, w, P, P, C): "b c (h p1) (w p2) -> b (h w) (p1 p2 c)"
        return self.proj(x.reshape(B, -1, P * P * C))


class PeColumnMajorGrid(_Lin):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, ...)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeRowsColsSwapped(_Lin):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)  # (C, cols, rows)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PeReshapeNoPermute(_Lin):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class PeConvViewNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # straight to (B, N, D)


class PeConvPermuteWrongOrder(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        return x.permute(0, 3, 2, 1).flatten(1, 2)  # (B, w, h, D) -> column by column


class PeGridSidesSwapped(_Lin):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = W // P, H // P  # mixed up which side is which
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PeUnfoldWrongTranspose(_Lin):
    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)  # (B, CPP, N)
        B, CPP, N = cols.shape
        return self.proj(cols.reshape(B, N, CPP))  # reshape where a transpose was needed


# ---------------------------------------------------------------- correct variants


class PeConv(_Conv):
    """Conv2d with kernel and stride P, then flatten(2).transpose(1, 2)."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PeUnfold(_Lin):
    """F.unfold (channel-first patches, row-major) and a Linear."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        return self.proj(F.unfold(images, kernel_size=P, stride=P).transpose(1, 2))


class PeTensorUnfold(_Lin):
    """Tensor.unfold twice, then a permute; also a helper that counts patches."""

    def num_patches(self, H: int, W: int) -> int:
        return (H // self.patch_size) * (W // self.patch_size)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C, H, W = images.shape
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()
        return self.proj(x.view(B, self.num_patches(H, W), C * P * P))


class PeConvEinsumStyle(_Conv):
    """Conv2d, then permute to (B, h, w, D) and reshape."""

    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images).permute(0, 2, 3, 1)
        return x.reshape(x.shape[0], -1, x.shape[-1])


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PeChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, as in the einops recipe.",
    ),
    BlindCase(
        CHECK,
        "grid_column_major",
        PeColumnMajorGrid,
        "mistake",
        "My permute puts the grid's column index before its row index.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PeRowsColsSwapped,
        "mistake",
        "Inside a patch I put the columns before the rows.",
    ),
    BlindCase(
        CHECK,
        "overlapping_conv",
        PeOverlapping,
        "mistake",
        "Conv2d with kernel P but I forgot stride=P.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PeNoBias,
        "mistake",
        "nn.Linear(..., bias=False), as I thought a bias was not needed.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PeReshapeNoPermute,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P), without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_not_transpose",
        PeConvViewNoTranspose,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, N, D) without a transpose.",
    ),
    BlindCase(
        CHECK,
        "conv_permute_wrong_order",
        PeConvPermuteWrongOrder,
        "mistake",
        "After the Conv2d I permuted to (B, w, h, D), reading the grid column by column.",
    ),
    BlindCase(
        CHECK,
        "grid_sides_swapped",
        PeGridSidesSwapped,
        "mistake",
        "I computed h from W and w from H.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PeUnfoldWrongTranspose,
        "mistake",
        "After F.unfold I reshaped (B, C*P*P, N) to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PeConv,
        "correct",
        "proj is Conv2d(kernel=stride=P), then flatten(2).transpose(1, 2).",
    ),
    BlindCase(CHECK, "functional_unfold", PeUnfold, "correct", "F.unfold then a Linear."),
    BlindCase(
        CHECK,
        "tensor_unfold_helper",
        PeTensorUnfold,
        "correct",
        "Tensor.unfold on both axes, a permute, and a num_patches helper method.",
    ),
    BlindCase(
        CHECK,
        "conv_permute_reshape",
        PeConvEinsumStyle,
        "correct",
        "Conv2d, then permute(0, 2, 3, 1) and reshape.",
    ),
]
