"""Blind set B26, check_feed_forward (chapter 11): the position-wise feed-forward network as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_feed_forward"


class _Layers(nn.Module):
    """The two layers as the skeleton names them."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


# ---------------------------------------------------------------- mistakes


class FFNGelu(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(F.gelu(self.linear1(x)))  # what BERT and GPT use


class FFNReluTwice(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))  # a ReLU after each layer


class FFNNoSecondBias(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)  # the residual follows anyway

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class FFNDropout(_Layers):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class FFNWithResidual(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return x + self.linear2(torch.relu(self.linear1(x)))  # Add


class FFNAddNorm(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        y = x + self.linear2(torch.relu(self.linear1(x)))
        return F.layer_norm(y, y.shape[-1:])  # Add & Norm, as in the figure


class FFNNamesSwapped(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # d_ff -> d_model
        self.linear2 = nn.Linear(d_model, d_ff)  # d_model -> d_ff

    def forward(self, x: Tensor) -> Tensor:
        return self.linear1(torch.relu(self.linear2(x)))


class FFNFlattenedOutput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        rows = x.reshape(-1, x.shape[-1])  # every position as one row
        return self.linear2(torch.relu(self.linear1(rows)))


class FFNReturnsHidden(_Layers):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        hidden = torch.relu(self.linear1(x))
        return self.linear2(hidden), hidden  # the hidden layer too, to look at


class FFNReluOnInput(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.linear1(torch.relu(x)))  # max(0, x) W1 + b1, then W2


class FFNSharedLayer(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        hidden = torch.relu(self.linear1(x))
        return F.linear(hidden, self.linear1.weight.T, self.linear2.bias)  # tied weights


# ---------------------------------------------------------------- correct variants


class FFNFunctional(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = F.relu(F.linear(x, self.linear1.weight, self.linear1.bias))
        return F.linear(h, self.linear2.weight, self.linear2.bias)


class FFNInPlaceRelu(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=True)
        self.linear2 = nn.Linear(d_ff, d_model, bias=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.linear1(x)
        hidden.relu_()  # the hidden layer is ours to overwrite
        return self.linear2(self.dropout(hidden))


class FFNRowsThenBack(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])  # (B * T, D): positions are independent
        out = self.linear2(self.linear1(rows).clamp(min=0))
        return out.reshape(*shape[:-1], out.shape[-1])


class FFNEinsum(_Layers):
    def forward(self, x: Tensor) -> Tensor:
        h = torch.einsum("btd,fd->btf", x, self.linear1.weight) + self.linear1.bias
        h = torch.maximum(h, torch.zeros_like(h))
        return torch.einsum("btf,df->btd", h, self.linear2.weight) + self.linear2.bias


CASES = [
    BlindCase(
        CHECK,
        "gelu",
        FFNGelu,
        "mistake",
        "I used GELU, as BERT and GPT do, instead of ReLU.",
    ),
    BlindCase(
        CHECK,
        "relu_after_both_layers",
        FFNReluTwice,
        "mistake",
        "I put a ReLU after linear2 as well.",
    ),
    BlindCase(
        CHECK,
        "second_layer_without_bias",
        FFNNoSecondBias,
        "mistake",
        "I gave linear2 no bias.",
    ),
    BlindCase(
        CHECK,
        "dropout_point_one",
        FFNDropout,
        "mistake",
        "I added nn.Dropout(0.1) on the hidden layer, which is on in training mode.",
    ),
    BlindCase(
        CHECK,
        "residual_inside",
        FFNWithResidual,
        "mistake",
        "I added the residual x inside the feed-forward module.",
    ),
    BlindCase(
        CHECK,
        "add_and_norm_inside",
        FFNAddNorm,
        "mistake",
        "My module returns LayerNorm(x + FFN(x)), the whole sublayer with Add & Norm.",
    ),
    BlindCase(
        CHECK,
        "layer_names_swapped",
        FFNNamesSwapped,
        "mistake",
        "I named the d_ff -> d_model layer linear1 and the d_model -> d_ff layer linear2.",
    ),
    BlindCase(
        CHECK,
        "flattened_output",
        FFNFlattenedOutput,
        "mistake",
        "I flattened the positions to (B*T, D) and forgot to reshape the output back.",
    ),
    BlindCase(
        CHECK,
        "returns_hidden_too",
        FFNReturnsHidden,
        "mistake",
        "forward returns (out, hidden) instead of out.",
    ),
    BlindCase(
        CHECK,
        "relu_on_input",
        FFNReluOnInput,
        "mistake",
        "I read max(0, x W1 + b1) as max(0, x) W1 + b1 and put the ReLU on the input.",
    ),
    BlindCase(
        CHECK,
        "tied_weights",
        FFNSharedLayer,
        "mistake",
        "I reused linear1's weight, transposed, for the second product.",
    ),
    BlindCase(
        CHECK,
        "functional",
        FFNFunctional,
        "correct",
        "F.linear and F.relu on the two layers' weights and biases.",
    ),
    BlindCase(
        CHECK,
        "in_place_relu_with_dropout_option",
        FFNInPlaceRelu,
        "correct",
        "relu_ in place on the hidden activations; an extra dropout argument defaults to 0.",
    ),
    BlindCase(
        CHECK,
        "rows_then_back",
        FFNRowsThenBack,
        "correct",
        "The positions flattened to rows, clamp(min=0) as the ReLU, then reshaped back.",
    ),
    BlindCase(
        CHECK,
        "einsum",
        FFNEinsum,
        "correct",
        "Both layers written with einsum on their weights; torch.maximum with zeros as the ReLU.",
    ),
]
