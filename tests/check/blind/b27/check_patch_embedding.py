"""Blind set B27, check_patch_embedding (chapter 19): the ViT's patch embedding as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    """``proj`` as the book's ``nn.Linear(C * P * P, D)``; each case cuts the patches."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): a patch's pixels, then channels
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnByColumn(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        N = (H // P) * (W // P)
        return self.proj(images.reshape(B, N, C * P * P))  # N patches of C*P*P values


class PatchConvStrideOne(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        # a patch embedding is a pure linear map W x_n
        self.proj = nn.Linear(in_channels * patch_size**2, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(B, h * w, C * P * P)
        return self.proj(x)


class PatchConvReshape(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.d_model = d_model
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        feature_map = self.proj(images)  # (B, D, h, w)
        return feature_map.reshape(images.shape[0], -1, self.d_model)  # (B, N, D)


class PatchGridSidesSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, w, P, h, P)  # w patches across, h down
        x = x.permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchWithCls(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return torch.cat([self.cls_token.expand(B, -1, -1), x], dim=1)  # [CLS] first, as ViT


class PatchGridNotFlattened(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).permute(0, 2, 3, 1)  # (B, h, w, D): the patches on their grid


class PatchOwnName(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.conv(images).flatten(2).transpose(1, 2)


class PatchLinearPerChannel(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(patch_size * patch_size, d_model)  # one P x P patch -> D

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = x.reshape(B, -1, C, P * P)
        return self.proj(x).sum(dim=2)  # add up the channels


class PatchUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        B = images.shape[0]
        return self.proj(cols.reshape(B, -1, cols.shape[1]))


# ---------------------------------------------------------------- correct variants


class PatchConv(nn.Module):
    """A strided Conv2d, then flatten the grid and move D last."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(start_dim=2).transpose(1, 2)


class PatchUnfoldTwice(_Linear):
    """Tensor.unfold on the height, then the width; permute to put the channels first."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        tiles = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w, _, _ = tiles.shape
        tiles = tiles.permute(0, 2, 3, 1, 4, 5).contiguous().view(B, h * w, C * P * P)
        return self.proj(tiles)


class PatchFUnfold(_Linear):
    """F.unfold (im2col), whose columns are already channel-first patches, transposed."""

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))


class PatchEinsum(_Linear):
    """The linear layer's weight seen as a (D, C, P, P) kernel, applied with einsum."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        D = self.proj.out_features
        x = images.view(B, C, H // P, P, W // P, P)
        kernel = self.proj.weight.view(D, C, P, P)
        out = torch.einsum("bcipjq,dcpq->bijd", x, kernel) + self.proj.bias
        return out.reshape(B, -1, D)


CASES = [
    BlindCase(
        CHECK,
        "channel_last",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channels last, like an image array.",
    ),
    BlindCase(
        CHECK,
        "column_by_column",
        PatchColumnByColumn,
        "mistake",
        "My permute puts the grid's columns before its rows, so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "rows_cols_swapped_in_patch",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I flattened the columns before the rows.",
    ),
    BlindCase(
        CHECK,
        "reshape_only",
        PatchReshapeOnly,
        "mistake",
        "I reshaped the images straight to (B, N, C*P*P) without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_stride_one",
        PatchConvStrideOne,
        "mistake",
        "I made proj a Conv2d with kernel_size=P and forgot stride=P, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "I wrote the formula's W x_n literally: nn.Linear without a bias.",
    ),
    BlindCase(
        CHECK,
        "conv_then_reshape",
        PatchConvReshape,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) to (B, -1, D) instead of flattening and "
        "transposing.",
    ),
    BlindCase(
        CHECK,
        "grid_sides_swapped",
        PatchGridSidesSwapped,
        "mistake",
        "In the reshape I wrote (B, C, w, P, h, P), the grid's width where its height goes.",
    ),
    BlindCase(
        CHECK,
        "adds_cls_token",
        PatchWithCls,
        "mistake",
        "I put a learned [CLS] vector in front of the patches, as the ViT does.",
    ),
    BlindCase(
        CHECK,
        "grid_not_flattened",
        PatchGridNotFlattened,
        "mistake",
        "I return the patches on their grid, (B, h, w, D), not flattened to (B, N, D).",
    ),
    BlindCase(
        CHECK,
        "own_layer_name",
        PatchOwnName,
        "mistake",
        "I called the convolution self.conv instead of self.proj.",
    ),
    BlindCase(
        CHECK,
        "linear_per_channel",
        PatchLinearPerChannel,
        "mistake",
        "One nn.Linear(P * P, D) for a channel's patch, applied to every channel and summed.",
    ),
    BlindCase(
        CHECK,
        "unfold_without_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "I used F.unfold and reshaped its (B, C*P*P, N) output to (B, N, C*P*P) instead of "
        "transposing it.",
    ),
    BlindCase(
        CHECK,
        "strided_conv",
        PatchConv,
        "correct",
        "proj is nn.Conv2d(C, D, kernel_size=P, stride=P); flatten(2) and transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchUnfoldTwice,
        "correct",
        "Tensor.unfold on the height and the width, a permute, .contiguous().view.",
    ),
    BlindCase(
        CHECK,
        "f_unfold",
        PatchFUnfold,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the Linear.",
    ),
    BlindCase(
        CHECK,
        "einsum_kernel",
        PatchEinsum,
        "correct",
        "The Linear's weight viewed as a (D, C, P, P) kernel and applied with einsum, plus the "
        "bias.",
    ),
]
