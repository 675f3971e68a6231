"""Blind set B23, check_feed_forward (chapter 11): the position-wise feed-forward network by readers."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _FFN(nn.Module):
    """The two layers as the chapter names them; the subclasses write ``forward``."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNNoRelu(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(x))


class FFNReluAtOutput(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNReluOnInput(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))


class FFNReluOnlyAtEnd(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.linear2(self.linear1(x)))


class FFNGelu(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFNNoBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNWithResidual(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # the sublayer's residual


class FFNPreNorm(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        x = F.layer_norm(x, x.shape[-1:])  # pre-norm, as in the figure
        return self.linear2(torch.relu(self.linear1(x)))


class FFNNoSecondLayer(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        self.linear2(hidden)
        return hidden


class FFNTimeFirstReshape(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # every position is one row
        out = self.linear2(torch.relu(self.linear1(flat)))
        return out.view(T, B, D).transpose(0, 1)  # back to (B, T, D)


class FFNSigmoidGate(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.sigmoid(self.linear1(x)))


class FFNSoftmaxHidden(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.softmax(self.linear1(x), dim=1))  # normalize the hidden layer


# ---------------------------------------------------------------- correct variants


class FFNSequentialShared(_FFN):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff)
        self.net = nn.Sequential(self.linear1, nn.ReLU(), self.linear2)  # the same two layers

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class FFNFunctionalClamp(_FFN):
    def forward(self, x: Tensor) -> Tensor:
        hidden = F.linear(x, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return hidden @ self.linear2.weight.T + self.linear2.bias


class FFNPositionLoop(_FFN):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        outs = []
        for t in range(x.shape[1]):  # one position at a time: nothing mixes them
            h = F.relu(self.linear1(x[:, t]), inplace=True)
            outs.append(self.linear2(self.dropout(h)))
        return torch.stack(outs, dim=1)


CASES = [
    BlindCase(CHECK, "no_relu", FFNNoRelu, "mistake", "I forgot the ReLU between the layers"),
    BlindCase(
        CHECK, "relu_at_output", FFNReluAtOutput, "mistake", "I put a ReLU after linear2 as well"
    ),
    BlindCase(
        CHECK, "relu_on_input", FFNReluOnInput, "mistake", "I applied the ReLU to x before linear1"
    ),
    BlindCase(
        CHECK,
        "relu_only_at_end",
        FFNReluOnlyAtEnd,
        "mistake",
        "I put the ReLU after linear2 instead of between the layers",
    ),
    BlindCase(CHECK, "gelu", FFNGelu, "mistake", "I used GELU instead of ReLU"),
    BlindCase(CHECK, "no_bias", FFNNoBias, "mistake", "I made both layers without a bias"),
    BlindCase(
        CHECK, "with_residual", FFNWithResidual, "mistake", "I added x to the output (the residual)"
    ),
    BlindCase(CHECK, "pre_norm", FFNPreNorm, "mistake", "I layer-normalized x before linear1"),
    BlindCase(
        CHECK,
        "no_second_layer",
        FFNNoSecondLayer,
        "mistake",
        "I returned the hidden layer instead of linear2's output",
    ),
    BlindCase(
        CHECK,
        "time_first_reshape",
        FFNTimeFirstReshape,
        "mistake",
        "I flattened (B, T) to rows and unflattened as (T, B) then transposed",
    ),
    BlindCase(CHECK, "sigmoid", FFNSigmoidGate, "mistake", "I used a sigmoid as the nonlinearity"),
    BlindCase(
        CHECK,
        "softmax_hidden",
        FFNSoftmaxHidden,
        "mistake",
        "I took a softmax of the hidden layer over dim=1",
    ),
    BlindCase(
        CHECK,
        "sequential_shared",
        FFNSequentialShared,
        "correct",
        "an nn.Sequential built from linear1, ReLU and linear2 themselves",
    ),
    BlindCase(
        CHECK,
        "functional_clamp",
        FFNFunctionalClamp,
        "correct",
        "F.linear and clamp(min=0), then a matrix product with linear2's weight",
    ),
    BlindCase(
        CHECK,
        "position_loop",
        FFNPositionLoop,
        "correct",
        "a loop over the positions, in-place ReLU, optional dropout (0 by default)",
    ),
]
