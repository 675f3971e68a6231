"""Blind set B31, check_patch_embedding (chapter 19): the ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
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
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # C last
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # w before h
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 5, 3)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(_ConvPatches):
    """Conv2d with stride P // 2: patches that overlap by half."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=max(1, patch_size // 2)
        )

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


class PatchReshapeNoPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, (H // P) * (W // P), C * P * P))


class PatchConvNoTranspose(_ConvPatches):
    """Conv2d output (B, D, h, w) reshaped to (B, N, D) without moving D last."""

    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)
        B, D = out.shape[:2]
        return out.reshape(B, -1, D)


class PatchConvColumnMajor(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        B, D = out.shape[:2]
        return out.permute(0, 3, 2, 1).reshape(B, -1, D)  # (B, w, h, D): columns first


class PatchUnfoldNoTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(images.shape[0], -1, cols.shape[1]))


class PatchGreyOnly(nn.Module):
    """Built for the chapter's grey digits: in_channels ignored, one channel assumed."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, H // P, P, W // P, P).permute(0, 1, 3, 2, 4)
        return self.proj(x.reshape(B, -1, P * P))


class PatchStridedReshape(_LinearPatches):
    """reshape(B, C, P, h, P, w): the patch index inner, so a 'patch' is a strided grid."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, P, h, P, w).permute(0, 3, 5, 1, 2, 4)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchSquareGrid(_LinearPatches):
    """The grid taken as square: h = w = H // P."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        n = H // P
        x = images[:, :, : n * P, : n * P].reshape(B, C, n, P, n, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, n * n, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConv(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchUnfoldLinear(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel-first
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_LinearPatches):
    """Tensor.unfold twice, then the patch axes moved to the end."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(B, -1, C * P * P))


class PatchLoop(_LinearPatches):
    """A loop over the grid, row by row, each patch flattened and projected."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C, H, W = images.shape
        tokens = []
        for i in range(0, H, P):
            for j in range(0, W, P):
                patch = images[:, :, i : i + P, j : j + P].reshape(B, -1)  # (B, C*P*P)
                tokens.append(self.proj(patch))
        return torch.stack(tokens, dim=1)


CASES = [
    BlindCase(
        CHECK,
        "channel_last_flatten",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, as images are stored in NumPy.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajorGrid,
        "mistake",
        "I permuted the grid axes as (w, h), so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I put the columns before the rows (a transposed patch).",
    ),
    BlindCase(
        CHECK,
        "overlapping_patches",
        PatchOverlapping,
        "mistake",
        "Conv2d with stride P // 2, so neighbouring patches overlap.",
    ),
    BlindCase(
        CHECK,
        "no_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(..., bias=False), as for the tied output layer of chapter 13.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeNoPermute,
        "mistake",
        "images.reshape(B, N, C*P*P) straight away, with no permute.",
    ),
    BlindCase(
        CHECK,
        "conv_output_not_transposed",
        PatchConvNoTranspose,
        "mistake",
        "Conv2d output (B, D, h, w) reshaped to (B, N, D) without moving D to the end.",
    ),
    BlindCase(
        CHECK,
        "conv_grid_column_major",
        PatchConvColumnMajor,
        "mistake",
        "Conv2d, then permute(0, 3, 2, 1): the tokens come column by column.",
    ),
    BlindCase(
        CHECK,
        "unfold_not_transposed",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "one_channel_assumed",
        PatchGreyOnly,
        "mistake",
        "Written for the grey digits: the layer takes P*P inputs and ignores in_channels.",
    ),
    BlindCase(
        CHECK,
        "strided_reshape",
        PatchStridedReshape,
        "mistake",
        "reshape(B, C, P, h, P, w): the in-patch and grid axes in the wrong order.",
    ),
    BlindCase(
        CHECK,
        "square_grid_assumed",
        PatchSquareGrid,
        "mistake",
        "I used h = w = H // P, since the chapter's images are square.",
    ),
    BlindCase(
        CHECK,
        "conv2d",
        PatchConv,
        "correct",
        "proj is nn.Conv2d(C, D, P, stride=P); flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "f_unfold_linear",
        PatchUnfoldLinear,
        "correct",
        "F.unfold with kernel and stride P, transposed, then the linear layer.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on height and width, permute to (B, h, w, C, P, P), view, linear.",
    ),
    BlindCase(
        CHECK,
        "python_loop_over_patches",
        PatchLoop,
        "correct",
        "A loop over the grid row by row, each patch flattened and projected, then stacked.",
    ),
]
