"""Blind set B8, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """``proj`` as the book's ``nn.Linear(C * P * P, D)``; each case writes ``forward``."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _ConvPatches(nn.Module):
    """``proj`` as ``nn.Conv2d(C, D, kernel_size=P, stride=P)``; each case writes ``forward``."""

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
        x = x.permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C): channels innermost
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajorGrid(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P): the grid column by column
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 1, 5, 3)  # inside a patch: columns before rows
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchNoPermute(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        return self.proj(images.reshape(B, -1, C * P * P))  # just reshaped


class PatchStridedPixels(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, P, h, P, w)  # grid and in-patch axes in the wrong order
        x = x.permute(0, 3, 5, 1, 2, 4)  # (B, h, w, C, P, P): "patches" of strided pixels
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchUnfoldView(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B = images.shape[0]
        P = self.patch_size
        cols = nn.functional.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(B, -1, cols.shape[1]))  # view instead of transpose


class PatchConvViewNotTranspose(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        feats = self.proj(images)  # (B, D, h, w)
        B, D = feats.shape[:2]
        return feats.reshape(B, -1, D)  # (B, N, D) by shape only


class PatchConvColumnMajor(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        feats = self.proj(images)  # (B, D, h, w)
        B, D = feats.shape[:2]
        return feats.permute(0, 3, 2, 1).reshape(B, -1, D)  # (B, w, h, D): columns first


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchOverlapping(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        # stride left at its default 1: patches overlap
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchTransposedImage(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        images = images.transpose(2, 3)  # to (B, C, W, H), "x before y"
        B, C, Wd, Ht = images.shape
        P = self.patch_size
        x = images.reshape(B, C, Wd // P, P, Ht // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchUnfoldTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        cols = nn.functional.unfold(images, kernel_size=self.patch_size, stride=self.patch_size)
        return self.proj(cols.transpose(1, 2))  # (B, N, C*P*P), channel-first in each patch


class PatchConvFlatten(_ConvPatches):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, h*w, D), row by row


class PatchTensorUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        B, C, h, w = x.shape[:4]
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(B, h * w, C * P * P)
        return self.proj(x)


class PatchEinsum(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P)
        weight = self.proj.weight.view(-1, C, P, P)  # (D, C, P, P)
        out = torch.einsum("bciyjx,dcyx->bijd", x, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


def _case(name: str, code: type, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "patch_flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "I permuted to (B, h, w, P, P, C), so each patch is flattened with the channel as the "
        "fastest axis instead of channel-first.",
    ),
    _case(
        "grid_column_by_column",
        PatchColumnMajorGrid,
        "mistake",
        "My permute puts the grid's w axis before h, so the patches come column by column.",
    ),
    _case(
        "patch_rows_and_columns_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside each patch I put the P columns before the P rows (permute ..., 1, 5, 3).",
    ),
    _case(
        "reshape_without_permute",
        PatchNoPermute,
        "mistake",
        "I reshaped the image straight to (B, N, C*P*P) without any permute, so a 'patch' is a "
        "run of consecutive pixels.",
    ),
    _case(
        "grid_and_patch_axes_swapped",
        PatchStridedPixels,
        "mistake",
        "I split H as (P, H/P) instead of (H/P, P), so each 'patch' gathers pixels P apart "
        "across the image.",
    ),
    _case(
        "unfold_reshaped_not_transposed",
        PatchUnfoldView,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    _case(
        "conv_output_reshaped",
        PatchConvViewNotTranspose,
        "mistake",
        "Conv2d with kernel and stride P, then reshape(B, -1, D) of the (B, D, h, w) output "
        "instead of flatten(2).transpose(1, 2).",
    ),
    _case(
        "conv_output_columns_first",
        PatchConvColumnMajor,
        "mistake",
        "After the Conv2d I permuted to (B, w, h, D) before flattening, so the tokens go column "
        "by column.",
    ),
    _case(
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(C*P*P, D, bias=False): ViT's patch projection has a bias.",
    ),
    _case(
        "conv_stride_one",
        PatchOverlapping,
        "mistake",
        "nn.Conv2d(C, D, kernel_size=P) without stride=P, so the patches overlap and there are "
        "far more of them.",
    ),
    _case(
        "image_transposed_first",
        PatchTransposedImage,
        "mistake",
        "I transposed the image to (B, C, W, H) first, thinking in (x, y); the grid and each "
        "patch come out transposed.",
    ),
    _case(
        "functional_unfold_transpose",
        PatchUnfoldTranspose,
        "correct",
        "F.unfold with kernel and stride P, transposed to (B, N, C*P*P), then the Linear.",
    ),
    _case(
        "conv2d_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "proj = Conv2d(C, D, kernel_size=P, stride=P), then flatten(2).transpose(1, 2).",
    ),
    _case(
        "tensor_unfold_twice",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on H then W to (B, C, h, w, P, P), permute to (B, h, w, C, P, P), reshape.",
    ),
    _case(
        "einsum_with_linear_weight",
        PatchEinsum,
        "correct",
        "The Linear's weight viewed as (D, C, P, P) and applied with einsum, plus the bias.",
    ),
]
