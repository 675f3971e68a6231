"""Blind cases for check_patch_embedding (chapter 19)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.P = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def grid(self, images):
        B, C, H, W = images.shape
        P = self.P
        return images.reshape(B, C, H // P, P, W // P, P)  # (B, C, h, P, w, P)


class PEChannelLast(_Linear):
    def forward(self, images):
        g = self.grid(images).permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): channel last
        return self.proj(g.reshape(g.shape[0], -1, self.proj.in_features))


class PEColumnMajor(_Linear):
    def forward(self, images):
        g = self.grid(images).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): column by column
        return self.proj(g.reshape(g.shape[0], -1, self.proj.in_features))


class PERowsColsSwapped(_Linear):
    def forward(self, images):
        g = self.grid(images).permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P_col, P_row)
        return self.proj(g.reshape(g.shape[0], -1, self.proj.in_features))


class PEConvNoStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)  # stride left at 1

    def forward(self, images):
        return self.proj(images).flatten(2).transpose(1, 2)


class PENoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size, bias=False)

    def forward(self, images):
        return self.proj(images).flatten(2).transpose(1, 2)


class PEReshapeNoPermute(_Linear):
    def forward(self, images):
        B = images.shape[0]
        return self.proj(images.reshape(B, -1, self.proj.in_features))  # reshape straight away


class PEConvReshapeNotTranspose(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size)

    def forward(self, images):
        y = self.proj(images)  # (B, D, h, w)
        B, D = y.shape[:2]
        return y.reshape(B, -1, D)  # reshape instead of transpose


class PEPermuteHW(_Linear):
    def forward(self, images):
        g = self.grid(images).permute(0, 2, 4, 1, 3, 5)
        out = self.proj(g.reshape(g.shape[0], -1, self.proj.in_features))
        return out.transpose(1, 2)  # returns (B, D, N)


class PEForwardMisnamed(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size)

    def embed(self, images):  # named embed, so the module has no forward
        return self.proj(images).flatten(2).transpose(1, 2)


class PEConv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D), row by row


class PEUnfold(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size**2, d_model)

    def forward(self, images: Tensor) -> Tensor:
        cols = F.unfold(
            images, kernel_size=self.patch_size, stride=self.patch_size
        )  # (B, C*P*P, N)
        return self.proj(cols.transpose(1, 2))


class PETensorUnfold(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.P
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).flatten(3)  # (B, h, w, C*P*P)
        return self.proj(x.flatten(1, 2))


CASES = [
    BlindCase(
        CHECK,
        "flattened_channel_last",
        PEChannelLast,
        "mistake",
        "flattens each patch channel-last (rows, columns, then C) instead of channel-first",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PEColumnMajor,
        "mistake",
        "orders the patches column by column instead of row by row",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PERowsColsSwapped,
        "mistake",
        "swaps a patch's rows and columns when flattening it",
    ),
    BlindCase(
        CHECK,
        "conv_without_stride",
        PEConvNoStride,
        "mistake",
        "uses nn.Conv2d with kernel_size=P but forgets stride=P, so the patches overlap",
    ),
    BlindCase(
        CHECK,
        "conv_without_bias",
        PENoBias,
        "mistake",
        "creates the Conv2d projection with bias=False",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PEReshapeNoPermute,
        "mistake",
        "reshapes the images straight to (B, N, C*P*P) without moving the axes",
    ),
    BlindCase(
        CHECK,
        "conv_map_reshaped_not_transposed",
        PEConvReshapeNotTranspose,
        "mistake",
        "reshapes the conv output (B, D, h, w) to (B, N, D) instead of flattening and transposing it",
    ),
    BlindCase(
        CHECK,
        "returns_d_before_n",
        PEPermuteHW,
        "mistake",
        "returns the embeddings transposed, as (B, D, N)",
    ),
    BlindCase(
        CHECK,
        "slip_forward_named_embed",
        PEForwardMisnamed,
        "mistake",
        "names the method embed instead of forward, so calling the module fails",
    ),
    BlindCase(
        CHECK,
        "conv2d_flatten_transpose",
        PEConv,
        "correct",
        "uses nn.Conv2d with kernel and stride P, then flatten(2).transpose(1, 2)",
    ),
    BlindCase(
        CHECK,
        "F_unfold_linear",
        PEUnfold,
        "correct",
        "cuts the patches with F.unfold and applies nn.Linear",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold_twice",
        PETensorUnfold,
        "correct",
        "cuts the patches with Tensor.unfold on the height and width axes, then permutes and flattens",
    ),
]
