"""Blind set B27, check_feed_forward (chapter 11): the position-wise feed-forward network as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _FFN(nn.Module):
    """The two layers under the chapter's names; the mistakes differ in forward."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNGelu(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFNReluAtTheEnd(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNResidualInside(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add


class FFNNormInside(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # Add & Norm


class FFNFunctionalDropout(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.dropout(torch.relu(self.linear1(x)), p=0.1)  # dropout as in the paper
        return self.linear2(hidden)


class FFNSizesSwapped(nn.Module):
    def __init__(self, d_ff: int, d_model: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNReturnsHiddenToo(_FFN):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden  # the activations, to look at


class FFNPreActivationPassed(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        torch.relu(h)  # max(0, h)
        return self.linear2(h)


class FFNNoBiasInForward(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(x @ self.linear1.weight.T)  # max(0, x W_1) W_2
        return hidden @ self.linear2.weight.T


class FFNSoftmaxHidden(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.softmax(self.linear1(x), dim=-1))  # the hidden units compete


class FFNFlattenedTimeFirst(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.transpose(0, 1).reshape(-1, D)  # every position of every sentence, (B * T, D)
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.view(B, T, D)


class FFNChannelsFirst(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        x = x.transpose(1, 2)  # (B, D, T), channels first as for a 1x1 convolution
        out = self.linear2(torch.relu(self.linear1(x)))
        return out.transpose(1, 2)


# ---------------------------------------------------------------- correct variants


class FFNMatmul(_FFN):
    """The paper's formula with the layers' weights: max(0, x W1^T + b1) W2^T + b2."""

    def forward(self, x: Tensor) -> Tensor:
        hidden = (x @ self.linear1.weight.T + self.linear1.bias).clamp(min=0)
        return hidden @ self.linear2.weight.T + self.linear2.bias


class FFNFlattenPositions(nn.Module):
    """Positions flattened into one batch of vectors; in-place ReLU; dropout argument, 0."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=True)
        self.linear2 = nn.Linear(d_ff, d_model, bias=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        h = self.linear1(x.reshape(B * T, D))
        h = F.relu(h, inplace=True)
        return self.linear2(self.dropout(h)).reshape(B, T, D)


class FFNLoopOverPositions(_FFN):
    """The same MLP applied to one position at a time."""

    def forward(self, x: Tensor) -> Tensor:
        outs = [self.linear2(torch.relu(self.linear1(x[:, t]))) for t in range(x.shape[1])]
        return torch.stack(outs, dim=1)


CASES = [
    BlindCase(
        CHECK,
        "gelu",
        FFNGelu,
        "mistake",
        "I used GELU between the layers instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "relu_after_second_layer",
        FFNReluAtTheEnd,
        "mistake",
        "I put a ReLU after linear2 as well.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNResidualInside,
        "mistake",
        "I added the input back inside the module, x + FFN(x).",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNNormInside,
        "mistake",
        "I put the whole sublayer in the module, LayerNorm(x + FFN(x)).",
    ),
    BlindCase(
        CHECK,
        "functional_dropout_always_on",
        FFNFunctionalDropout,
        "mistake",
        "I used F.dropout(h, p=0.1), whose training flag defaults to True, so it drops units "
        "even in eval mode.",
    ),
    BlindCase(
        CHECK,
        "constructor_sizes_swapped",
        FFNSizesSwapped,
        "mistake",
        "My __init__ takes (d_ff, d_model) in that order.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden_too",
        FFNReturnsHiddenToo,
        "mistake",
        "My forward returns (output, hidden activations) instead of the output alone.",
    ),
    BlindCase(
        CHECK,
        "relu_result_not_assigned",
        FFNPreActivationPassed,
        "mistake",
        "I called torch.relu(h) without assigning the result, as if it worked in place.",
    ),
    BlindCase(
        CHECK,
        "biases_left_out",
        FFNNoBiasInForward,
        "mistake",
        "I wrote max(0, x W1) W2 with the weights only, leaving out b1 and b2.",
    ),
    BlindCase(
        CHECK,
        "softmax_hidden",
        FFNSoftmaxHidden,
        "mistake",
        "I used a softmax over the hidden units instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "flattened_time_first",
        FFNFlattenedTimeFirst,
        "mistake",
        "I flattened the positions after a transpose(0, 1) but reshaped back with view(B, T, D), "
        "so the outputs land at the wrong positions and sentences.",
    ),
    BlindCase(
        CHECK,
        "channels_first_like_conv",
        FFNChannelsFirst,
        "mistake",
        "I transposed x to (B, D, T), channels first as for a 1x1 convolution, before the "
        "linear layers.",
    ),
    BlindCase(
        CHECK,
        "matmul_formula",
        FFNMatmul,
        "correct",
        "max(0, x W1^T + b1) W2^T + b2 written with the layers' weights and clamp(min=0).",
    ),
    BlindCase(
        CHECK,
        "flatten_positions_inplace_relu",
        FFNFlattenPositions,
        "correct",
        "(B * T, D) reshape, in-place ReLU, an optional dropout argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "loop_over_positions",
        FFNLoopOverPositions,
        "correct",
        "The MLP applied to one position at a time and the results stacked.",
    ),
]
