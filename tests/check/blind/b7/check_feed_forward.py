"""Blind set B7, check_feed_forward (chapter 11): linear2(relu(linear1(x))) at every position."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Base(nn.Module):
    """The two layers under the chapter's names."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNGelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # GELU, as in BERT and GPT


class FFNReluOnOutputToo(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNResidualInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add is part of the sublayer


class FFNLayerNormInside(_Base):
    def forward(self, x: Tensor) -> Tensor:
        y = self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(x + y, x.shape[-1:])  # Add & Norm


class FFNNoBiasLinear1(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)  # the ReLU does the shifting
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNLeakyRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.leaky_relu(self.linear1(x)))  # no dead units


class FFNReluOnInput(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNReturnsHidden(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        self.linear2(hidden)
        return hidden


class FFNRelu6(_Base):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.relu6(self.linear1(x)))  # a bounded ReLU, for stability


class FFNCastsToFloat32(_Base):
    def forward(self, x: Tensor) -> Tensor:
        x = x.float()  # make sure the input is float
        return self.linear2(torch.relu(self.linear1.float()(x)))


class FFNMeanOverSequence(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        hidden = hidden - hidden.mean(dim=1, keepdim=True)  # center the hidden features
        return self.linear2(hidden)


class FFNDropoutFunctional(_Base):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # the paper's dropout
        return self.linear2(hidden)


# ---------------------------------------------------------------- correct variants


class FFNClampAndFLinear(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNSequentialAliases(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.net = nn.Sequential(
            self.linear1, nn.ReLU(inplace=True), nn.Dropout(dropout), self.linear2
        )  # the same two layers, shared

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class FFNFlattenPositions(_Base):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # every position is an independent example
        return self.linear2(F.relu(self.linear1(flat))).view(B, T, D)


class FFNEinsumMaskRelu(_Base):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = h * (h > 0)  # ReLU as a mask
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(
        check=CHECK,
        name="gelu_not_relu",
        code=FFNGelu,
        kind="mistake",
        what="I used GELU between the layers, as BERT and GPT do, instead of ReLU.",
    ),
    BlindCase(
        check=CHECK,
        name="relu_after_linear2_too",
        code=FFNReluOnOutputToo,
        kind="mistake",
        what="I put a ReLU after linear2 as well, so the output cannot be negative.",
    ),
    BlindCase(
        check=CHECK,
        name="residual_inside",
        code=FFNResidualInside,
        kind="mistake",
        what="I added the residual x + FFN(x) inside the feed-forward module.",
    ),
    BlindCase(
        check=CHECK,
        name="add_and_norm_inside",
        code=FFNLayerNormInside,
        kind="mistake",
        what="I did the whole 'Add & Norm' inside the module: layer_norm(x + FFN(x)).",
    ),
    BlindCase(
        check=CHECK,
        name="linear1_without_bias",
        code=FFNNoBiasLinear1,
        kind="mistake",
        what="I made linear1 bias-free, although both layers should have a bias.",
    ),
    BlindCase(
        check=CHECK,
        name="leaky_relu",
        code=FFNLeakyRelu,
        kind="mistake",
        what="I used leaky_relu (slope 0.01) instead of ReLU to avoid dead units.",
    ),
    BlindCase(
        check=CHECK,
        name="relu_before_linear1",
        code=FFNReluOnInput,
        kind="mistake",
        what="I applied the ReLU to the input, before linear1, instead of between the layers.",
    ),
    BlindCase(
        check=CHECK,
        name="returns_hidden_layer",
        code=FFNReturnsHidden,
        kind="mistake",
        what="I called linear2 but returned the hidden activations (d_ff wide) instead of its "
        "result.",
    ),
    BlindCase(
        check=CHECK,
        name="relu6",
        code=FFNRelu6,
        kind="mistake",
        what="I used F.relu6, which also caps the hidden units at 6; it only differs where a "
        "hidden value exceeds 6.",
    ),
    BlindCase(
        check=CHECK,
        name="casts_to_float32",
        code=FFNCastsToFloat32,
        kind="mistake",
        what="I cast the input and linear1 to float32 'to be safe' (linear1.float() converts "
        "the module in place), so a float64 input comes back at float32 precision or the "
        "dtypes clash.",
    ),
    BlindCase(
        check=CHECK,
        name="hidden_centered_over_positions",
        code=FFNMeanOverSequence,
        kind="mistake",
        what="I subtracted the mean over the sequence from the hidden features, so each "
        "position's output depends on the other positions.",
    ),
    BlindCase(
        check=CHECK,
        name="functional_dropout_always_on",
        code=FFNDropoutFunctional,
        kind="mistake",
        what="I added F.dropout(p=0.1) on the hidden layer without training=self.training, so "
        "it drops units in eval mode too.",
    ),
    BlindCase(
        check=CHECK,
        name="f_linear_and_clamp",
        code=FFNClampAndFLinear,
        kind="correct",
        what="I called F.linear with the layers' weights and wrote ReLU as clamp(min=0).",
    ),
    BlindCase(
        check=CHECK,
        name="sequential_sharing_layers",
        code=FFNSequentialAliases,
        kind="correct",
        what="I put the same linear1 and linear2 in an nn.Sequential with an in-place ReLU and "
        "an optional dropout (default 0).",
    ),
    BlindCase(
        check=CHECK,
        name="positions_flattened",
        code=FFNFlattenPositions,
        kind="correct",
        what="I flattened (B, T, D) to (B*T, D), applied the MLP and reshaped back.",
    ),
    BlindCase(
        check=CHECK,
        name="einsum_and_mask_relu",
        code=FFNEinsumMaskRelu,
        kind="correct",
        what="I wrote both layers with einsum on their weights and the ReLU as h * (h > 0).",
    ),
]
