"""Blind set B26, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _Linear(nn.Module):
    """``proj = nn.Linear(C * P * P, D)``, as the "Your turn" cell allows."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


class _Conv(nn.Module):
    """``proj = nn.Conv2d(C, D, kernel_size=P, stride=P)``."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 3, 5, 1)  # (B,h,w,P,P,C)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchColumnMajor(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 4, 2, 1, 3, 5)  # (B,w,h,C,P,P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchConvReshape(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        x = self.proj(images)  # (B, D, h, w)
        B, D = x.shape[:2]
        return x.reshape(B, -1, D)  # (B, N, D)


class PatchConvNoTranspose(_Conv):
    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2)  # (B, N, D) after flattening the grid


class PatchUnfoldNoTranspose(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(images.shape[0], -1, cols.shape[1]))


class PatchGridSwapped(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = W // P, H // P  # patches across, patches down
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchConvSamePadding(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(
            in_channels, d_model, kernel_size=patch_size, stride=patch_size, padding=patch_size // 2
        )  # "same" padding, so the border pixels are not lost

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchScaled(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        out = self.proj(x.reshape(B, -1, C * P * P))
        return out * math.sqrt(out.shape[-1])  # scaled like the token embeddings


class PatchWithCls(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return torch.cat([self.cls_token.expand(B, -1, -1), x], dim=1)  # [CLS] first, as ViT


class PatchWithPositions(_Linear):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(1, 1024, d_model))  # learned, as in ViT

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        x = self.proj(x.reshape(B, -1, C * P * P))
        return x + self.pos[:, : x.shape[1]]


class PatchViewNoContiguous(_Linear):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.view(B, C, H // P, P, W // P, P)
        x = x.transpose(1, 2).transpose(2, 4)  # (B, h, w, P, C, P)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        # a patch is a linear map of pixels: no bias needed
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model, bias=False)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


# ---------------------------------------------------------------- correct variants


class PatchConvFlatten(_Conv):
    """The convolution, then the grid flattened row by row and moved before the channels."""

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)


class PatchFUnfold(_Linear):
    """F.unfold cuts the patches, each flattened channel-first; then the Linear."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        patches = F.unfold(images, kernel_size=P, stride=P).transpose(1, 2)  # (B, N, C*P*P)
        return self.proj(patches)


class PatchTensorUnfold(_Linear):
    """Tensor.unfold along the rows and then the columns."""

    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous()  # (B, h, w, C, P, P)
        return self.proj(x.view(x.shape[0], -1, x[0, 0, 0].numel()))


class PatchEinsum(_Linear):
    """The Linear's weight seen as (D, C, P, P) and applied with einsum."""

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        grid = images.reshape(B, C, H // P, P, W // P, P)
        weight = self.proj.weight.view(-1, C, P, P)
        out = torch.einsum("bchpwq,dcpq->bhwd", grid, weight) + self.proj.bias
        return out.reshape(B, -1, weight.shape[0])


CASES = [
    BlindCase(
        CHECK,
        "patch_flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "I permuted to (B, h, w, P, P, C), so each patch is flattened pixel by pixel, channels "
        "last.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajor,
        "mistake",
        "I put the grid's column index before the row index, so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "conv_output_reshaped",
        PatchConvReshape,
        "mistake",
        "After the Conv2d I reshaped (B, D, h, w) straight to (B, N, D), without moving D last.",
    ),
    BlindCase(
        CHECK,
        "conv_output_not_transposed",
        PatchConvNoTranspose,
        "mistake",
        "I flattened the Conv2d's output to (B, D, N) and returned it without the transpose.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshaped_not_transposed",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "grid_height_width_swapped",
        PatchGridSwapped,
        "mistake",
        "I computed h = W // P and w = H // P, which only works for square images.",
    ),
    BlindCase(
        CHECK,
        "conv_same_padding",
        PatchConvSamePadding,
        "mistake",
        "I gave the Conv2d padding=P // 2 so that no border pixels are lost.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_sqrt_d",
        PatchScaled,
        "mistake",
        "I multiplied the patch vectors by sqrt(D), as the token embeddings are.",
    ),
    BlindCase(
        CHECK,
        "cls_token_prepended",
        PatchWithCls,
        "mistake",
        "I put the [CLS] token in front inside the patch embedding, so N + 1 vectors come out.",
    ),
    BlindCase(
        CHECK,
        "positions_added",
        PatchWithPositions,
        "mistake",
        "I added a learned position embedding inside the patch embedding.",
    ),
    BlindCase(
        CHECK,
        "two_transposes",
        PatchViewNoContiguous,
        "mistake",
        "Two transposes instead of a permute: I ended with (B, h, w, P, C, P), a patch's "
        "channels and rows out of order.",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "nn.Linear(C * P * P, D, bias=False): I thought a patch is a purely linear map.",
    ),
    BlindCase(
        CHECK,
        "conv_flatten_transpose",
        PatchConvFlatten,
        "correct",
        "proj is nn.Conv2d(C, D, P, stride=P); output flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "functional_unfold",
        PatchFUnfold,
        "correct",
        "F.unfold(images, P, stride=P).transpose(1, 2), then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "images.unfold(2, P, P).unfold(3, P, P), permute to (B, h, w, C, P, P), view.",
    ),
    BlindCase(
        CHECK,
        "einsum_with_linear_weight",
        PatchEinsum,
        "correct",
        "The Linear's weight viewed as (D, C, P, P) and applied with einsum, plus the bias.",
    ),
]
