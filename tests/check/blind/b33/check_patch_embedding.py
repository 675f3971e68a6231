"""Blind set B33, check_patch_embedding (chapter 19): ViT's patch embedding as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_patch_embedding"


class _LinearPatches(nn.Module):
    """The constructor every Linear-based answer below shares: ``proj = Linear(C * P * P, D)``."""

    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)


# ---------------------------------------------------------------- mistakes


class PatchChannelLast(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 3, 5, 1)  # (B, h, w, P, P, C)
        return self.proj(x.reshape(B, h * w, P * P * C))


class PatchColumnMajorGrid(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, h, P, w, P).permute(0, 4, 2, 1, 3, 5)  # (B, w, h, C, P, P)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchRowsColsSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 5, 3)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchConvNoStride(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, N, D)


class PatchNoBias(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size**2, d_model, bias=False)  # z = W x

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, -1, C * P * P))


class PatchReshapeOnly(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        N = (H // self.patch_size) * (W // self.patch_size)
        return self.proj(images.reshape(B, N, -1))


class PatchConvViewNotTranspose(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.d_model = d_model
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        out = self.proj(images)  # (B, D, h, w)
        return out.reshape(out.shape[0], -1, self.d_model)  # (B, N, D)


class PatchUnfoldNoTranspose(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N)
        return self.proj(cols.reshape(images.shape[0], -1, cols.shape[1]))


class PatchGridAndPatchSizeConfused(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = H // P, W // P
        x = images.reshape(B, C, P, h, P, w).permute(0, 3, 5, 1, 2, 4)  # (B, h, w, C, P, P)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchHeightWidthSwapped(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        h, w = W // P, H // P  # patches across, patches down
        x = images.reshape(B, C, h, P, w, P).permute(0, 2, 4, 1, 3, 5)
        return self.proj(x.reshape(B, h * w, C * P * P))


class PatchWithClsToken(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        tokens = self.proj(x.reshape(B, -1, C * P * P))
        return torch.cat([self.cls_token.expand(B, -1, -1), tokens], dim=1)  # [CLS] first


class PatchWithActivation(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return F.gelu(self.proj(x.reshape(B, -1, C * P * P)))


class PatchWithNorm(_LinearPatches):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__(in_channels, patch_size, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, images: Tensor) -> Tensor:
        B, C, H, W = images.shape
        P = self.patch_size
        x = images.reshape(B, C, H // P, P, W // P, P).permute(0, 2, 4, 1, 3, 5)
        return self.norm(self.proj(x.reshape(B, -1, C * P * P)))


# ---------------------------------------------------------------- correct variants


class PatchConv(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_channels, d_model, kernel_size=patch_size, stride=patch_size)

    def forward(self, images: Tensor) -> Tensor:
        return self.proj(images).flatten(2).transpose(1, 2)  # (B, D, h, w) -> (B, h*w, D)


class PatchFUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        cols = F.unfold(images, kernel_size=P, stride=P)  # (B, C*P*P, N), channel first
        return self.proj(cols.transpose(1, 2))


class PatchTensorUnfold(_LinearPatches):
    def forward(self, images: Tensor) -> Tensor:
        P = self.patch_size
        B, C = images.shape[:2]
        x = images.unfold(2, P, P).unfold(3, P, P)  # (B, C, h, w, P, P)
        x = x.permute(0, 2, 3, 1, 4, 5).contiguous().view(B, -1, C * P * P)
        return self.proj(x)


class PatchConvPermute(nn.Module):
    def __init__(self, in_channels: int, patch_size: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, patch_size)

    def forward(self, images: Tensor) -> Tensor:
        if images.shape[-1] % self.patch_size or images.shape[-2] % self.patch_size:
            raise ValueError("the image size must be a multiple of the patch size")
        feat = self.proj(images)  # (B, D, h, w)
        B, D = feat.shape[:2]
        return feat.permute(0, 2, 3, 1).reshape(B, -1, D)


CASES = [
    BlindCase(
        CHECK,
        "flattened_channel_last",
        PatchChannelLast,
        "mistake",
        "I flattened each patch as (P, P, C), channel last, like an RGB picture.",
    ),
    BlindCase(
        CHECK,
        "grid_column_by_column",
        PatchColumnMajorGrid,
        "mistake",
        "I permuted to (B, w, h, C, P, P), so the patches come column by column.",
    ),
    BlindCase(
        CHECK,
        "patch_rows_cols_swapped",
        PatchRowsColsSwapped,
        "mistake",
        "Inside a patch I put the columns before the rows (permute ..., 1, 5, 3).",
    ),
    BlindCase(
        CHECK,
        "conv_without_stride",
        PatchConvNoStride,
        "mistake",
        "I used nn.Conv2d(C, D, kernel_size=P) and forgot stride=P, so the patches overlap.",
    ),
    BlindCase(
        CHECK,
        "linear_without_bias",
        PatchNoBias,
        "mistake",
        "I wrote nn.Linear(C * P * P, D, bias=False), since the formula I remembered was W x.",
    ),
    BlindCase(
        CHECK,
        "reshape_without_permute",
        PatchReshapeOnly,
        "mistake",
        "I reshaped the images straight to (B, N, C * P * P), without a permute.",
    ),
    BlindCase(
        CHECK,
        "conv_reshape_instead_of_transpose",
        PatchConvViewNotTranspose,
        "mistake",
        "After the strided conv I reshaped (B, D, h, w) to (B, -1, D) instead of flattening and "
        "transposing.",
    ),
    BlindCase(
        CHECK,
        "unfold_reshape_not_transpose",
        PatchUnfoldNoTranspose,
        "mistake",
        "F.unfold gives (B, C*P*P, N); I reshaped it to (B, N, C*P*P) instead of transposing.",
    ),
    BlindCase(
        CHECK,
        "grid_and_patch_size_confused",
        PatchGridAndPatchSizeConfused,
        "mistake",
        "I reshaped to (B, C, P, h, P, w), putting the patch size before the number of patches.",
    ),
    BlindCase(
        CHECK,
        "height_width_counts_swapped",
        PatchHeightWidthSwapped,
        "mistake",
        "I computed the number of patches down from W and across from H.",
    ),
    BlindCase(
        CHECK,
        "cls_token_prepended",
        PatchWithClsToken,
        "mistake",
        "I put the [CLS] token in front inside the patch embedding, so it returns N + 1 vectors.",
    ),
    BlindCase(
        CHECK,
        "gelu_after_projection",
        PatchWithActivation,
        "mistake",
        "I added a GELU after the projection, as in the MLP blocks.",
    ),
    BlindCase(
        CHECK,
        "layernorm_after_projection",
        PatchWithNorm,
        "mistake",
        "I normalized the patch vectors with a LayerNorm after the projection.",
    ),
    BlindCase(
        CHECK,
        "strided_conv",
        PatchConv,
        "correct",
        "nn.Conv2d with kernel and stride P, then flatten(2).transpose(1, 2).",
    ),
    BlindCase(
        CHECK,
        "functional_unfold",
        PatchFUnfold,
        "correct",
        "F.unfold with kernel and stride P (channel-first columns), transposed, then the Linear.",
    ),
    BlindCase(
        CHECK,
        "tensor_unfold",
        PatchTensorUnfold,
        "correct",
        "Tensor.unfold on the height and then the width, permuted to (B, h, w, C, P, P) and "
        "flattened.",
    ),
    BlindCase(
        CHECK,
        "conv_permute_reshape",
        PatchConvPermute,
        "correct",
        "A strided Conv2d given positionally, then permute(0, 2, 3, 1) and reshape, with a check "
        "that P divides the image.",
    ),
]
