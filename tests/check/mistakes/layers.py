"""Mistakes in the causal mask, sinusoidal positions, LayerNorm, the feed-forward network and
the label-smoothed loss (chapters 10-12 and 14)."""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_tutorial import check
from transformer_tutorial.feedforward import PositionwiseFeedForward
from transformer_tutorial.masks import causal_mask
from transformer_tutorial.positional import sinusoidal_encoding
from transformer_tutorial.sequences import PAD_ID
from transformer_tutorial.training import LabelSmoothingLoss

from . import Correct, Mistake

# --- sinusoidal positions -------------------------------------------------------------------------


def table_by_loops(max_len, d_model):
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(0, d_model, 2):
            pe[i, j] = math.sin(i / 10000 ** (j / d_model))
            pe[i, j + 1] = math.cos(i / 10000 ** (j / d_model))
    return pe


def table_with(exponent=1.0, start=0, halves=False, second=torch.cos):
    def table(max_len, d_model):
        pos = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]
        w = 10000.0 ** (-exponent * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        sin, other = torch.sin(pos * w), second(pos * w)
        if halves:
            return torch.cat([sin, other], dim=1)
        return torch.stack([sin, other], dim=-1).flatten(1)

    return table


def table_per_column(max_len, d_model):
    """Each column c its own frequency 10000^(-c / d_model), as a loop over columns gives."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    w = 10000.0 ** (-torch.arange(d_model, dtype=torch.float64) / d_model)
    pe = torch.sin(pos * w)
    pe[:, 1::2] = torch.cos(pos * w[1::2])
    return pe


def table_base(base=None, scale=1.0, inverse=False):
    def table(max_len, d_model):
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]
        two_j = torch.arange(0, d_model, 2, dtype=torch.float64)
        if base is None:  # exp(-2j log10(10000) / d): the base-10 log where ln was meant
            w = torch.exp(-two_j * math.log10(10000.0) / d_model)
        else:
            w = base ** (-two_j / d_model)
        angle = scale * (pos / w if inverse else pos * w)
        return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(1)

    return table


def table_swapped(max_len, d_model):
    pe = sinusoidal_encoding(max_len, d_model)
    return torch.stack([pe[:, 1::2], pe[:, 0::2]], dim=-1).flatten(1)


def table_wrong_frequencies(max_len, d_model):
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(0, d_model, 2):
            w = 10000 ** (-j / 2 / d_model)  # j used as if it were the frequency index
            pe[i, j], pe[i, j + 1] = math.sin(i * w), math.cos(i * w)
    return pe


def table_by_log_space(max_len, d_model):
    """Correct, written differently: the frequencies through exp and log, in float32."""
    position = torch.arange(max_len).unsqueeze(1).float()
    div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)
    return pe


# --- LayerNorm ------------------------------------------------------------------------------------


def norm_over(axes, unbiased=False):
    def fn(x):
        mean = x.mean(axes, keepdim=True)
        return (x - mean) / torch.sqrt(x.var(axes, keepdim=True, unbiased=unbiased) + 1e-5)

    return fn


def layer_norm_into_float32_zeros(x):
    """Right maths, but the output built with torch.zeros(x.shape): float32 for float64 x."""
    y = torch.zeros(x.shape)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    y[:] = (x - mean) / torch.sqrt(var + 1e-5)
    return y


def layer_norm_eps_outside(x):
    mean, std = x.mean(-1, keepdim=True), x.std(-1, keepdim=True, unbiased=False)
    return (x - mean) / (std + 1e-5)


def layer_norm_torch_std(x):
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)


def layer_norm_no_eps(x):
    mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    return (x - mean) / var.sqrt()


def layer_norm_by_variance(x):
    mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    return (x - mean) / (var + 1e-5)


def layer_norm_no_centring(x):
    return x / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)


def layer_norm_asserts(x):
    B, T, D = x.shape
    assert D == 512
    return norm_over(-1)(x)


# --- the feed-forward network ---------------------------------------------------------------------


def ffn_with(body):
    class FFN(PositionwiseFeedForward):
        def forward(self, x):
            return body(self, x)

    return FFN


class FFNBySequential(nn.Module):
    """Correct, written differently: the layers kept by name, applied through F.relu."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(nn.functional.relu(self.linear1(x)))


class FFNWithoutLinear2(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.out = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.out(torch.relu(self.linear1(x)))


# --- the label-smoothed loss ---------------------------------------------------------------------


def loss_with(fn):
    class Loss(nn.Module):
        def __init__(self, smoothing):
            super().__init__()
            self.smoothing = smoothing

        def forward(self, logits, target):
            return fn(self.smoothing, logits, target)

    return Loss


def torch_loss(eps, logits, target):
    ce = nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=PAD_ID)
    return ce(logits.flatten(0, 1), target.flatten())


def per_token(eps, logits, target):
    log_p = torch.log_softmax(logits, -1)
    return -(1 - eps) * log_p.gather(-1, target[..., None]).squeeze(-1) - eps * log_p.mean(-1)


def float32_loss(eps, logits, target):
    """Correct maths in float32: the logits cast with .float()."""
    return per_token(eps, logits.float(), target)[target != PAD_ID].mean()


def spread_over_wrong_tokens(eps, logits, target):
    """The other convention: (1 - eps) on the right token, eps / (V - 1) on each wrong one."""
    log_p = torch.log_softmax(logits, -1)
    right = log_p.gather(-1, target[..., None]).squeeze(-1)
    loss = -(1 - eps) * right - eps / (logits.shape[-1] - 1) * (log_p.sum(-1) - right)
    return loss[target != PAD_ID].mean()


def kl_divergence(eps, logits, target):
    """The Annotated Transformer's way: KL divergence to the smoothed distribution."""
    V = logits.shape[-1]
    smooth = torch.full_like(logits, eps / V)
    smooth.scatter_(-1, target[..., None], 1 - eps + eps / V)
    kl = nn.KLDivLoss(reduction="none")(torch.log_softmax(logits, -1), smooth).sum(-1)
    return kl[target != PAD_ID].mean()


def without_log_softmax(eps, logits, target):
    real = target != PAD_ID
    right = logits.gather(-1, target[..., None]).squeeze(-1)
    return (-(1 - eps) * right - eps * logits.mean(-1))[real].mean()


def on_probabilities(eps, logits, target):
    p = torch.softmax(logits, -1)
    right = p.gather(-1, target[..., None]).squeeze(-1)
    return (-(1 - eps) * right - eps * p.mean(-1))[target != PAD_ID].mean()


def full_weight_on_target(eps, logits, target):
    log_p = torch.log_softmax(logits, -1)
    loss = -log_p.gather(-1, target[..., None]).squeeze(-1) - eps * log_p.mean(-1)
    return loss[target != PAD_ID].mean()


def padding_removed_from_the_total(eps, logits, target):
    """The right value, but the padding's loss is subtracted as a constant: it still gets
    gradients."""
    loss = per_token(eps, logits, target)
    pad = target == PAD_ID
    return (loss.sum() - loss[pad].detach().sum()) / (~pad).sum()


def layer_norm_by_range(x):
    """Each position divided by the spread of its features, max - min, for the deviation."""
    centred = x - x.mean(-1, keepdim=True)
    return centred / (x.amax(-1, keepdim=True) - x.amin(-1, keepdim=True) + 1e-5)


def layer_norm_median_centre(x):
    """Each position scaled right, but centred on its median feature, not its mean."""
    std = torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)
    return (x - x.median(-1, keepdim=True).values) / std


def layer_norm_in_place(x):
    """Right values, but the caller's x is overwritten."""
    x -= x.mean(-1, keepdim=True)
    x /= torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)
    return x


MASK, TABLE, NORM, FFN, LOSS = (
    check.check_causal_mask,
    check.check_sinusoidal_encoding,
    check.check_layer_norm,
    check.check_feed_forward,
    check.check_label_smoothing,
)

MISTAKES = [
    Mistake(NORM, "norm-in-place", layer_norm_in_place, "changed its input x in place"),
    Mistake(MASK, "causal-flipped", lambda T: ~causal_mask(T), "mask polarity"),
    Mistake(MASK, "causal-off-by-one", lambda T: torch.ones(T, T).tril(1).bool(), "off by one"),
    Mistake(
        MASK, "causal-no-self", lambda T: torch.ones(T, T).tril(-1).bool(), "does not see itself"
    ),
    Mistake(MASK, "causal-transposed", lambda T: causal_mask(T).T, "transposed"),
    Mistake(MASK, "causal-float", lambda T: causal_mask(T).float(), "use torch.bool"),
    Mistake(
        MASK,
        "causal-one-too-large",
        lambda T: causal_mask(T + 1),
        "one row and column too many",
        mistake="causal-size-off-by-one",
    ),
    Mistake(
        MASK,
        "causal-additive",
        lambda T: torch.zeros(T, T).masked_fill(~causal_mask(T), float("-inf")),
        "additive mask",
    ),  # fmt: skip
    Mistake(
        MASK, "causal-all-true", lambda T: torch.ones(T, T, dtype=torch.bool), "nothing is masked"
    ),
    Mistake(
        MASK, "causal-with-batch-axis", lambda T: causal_mask(T)[None], "the model broadcasts it"
    ),  # fmt: skip
    Mistake(TABLE, "table-swapped", table_swapped, "sin and cos are swapped"),
    Mistake(TABLE, "table-half-exponent", table_wrong_frequencies, "exponent is half"),
    Mistake(TABLE, "table-double-exponent", table_with(exponent=2.0), "exponent is twice"),
    Mistake(
        TABLE,
        "table-growing-frequencies",
        table_with(exponent=-1.0),
        "frequencies grow along the columns",
    ),  # fmt: skip
    Mistake(TABLE, "table-zeros", lambda n, d: torch.zeros(n, d), "cos(0) = 1"),
    Mistake(TABLE, "table-frequency-per-column", table_per_column, "each column has its own"),
    Mistake(TABLE, "table-two-pi", table_base(10000.0, scale=2 * math.pi), "2 pi i w_j"),
    Mistake(
        TABLE,
        "table-divided-by-w",
        table_base(10000.0, inverse=True),
        "frequencies grow",
        mistake="table-growing-frequencies",
    ),
    Mistake(TABLE, "table-base", table_base(1000.0), "the base 1000 instead of 10000"),
    Mistake(TABLE, "table-log10", table_base(None), "natural one", mistake="table-base"),
    Mistake(TABLE, "table-halves", table_with(halves=True), "the book interleaves them"),
    Mistake(TABLE, "table-from-position-1", table_with(start=1), "positions start at 0"),
    Mistake(TABLE, "table-all-sines", table_with(second=torch.sin), "every column holds a sine"),
    Mistake(
        TABLE, "table-transposed", lambda n, d: sinusoidal_encoding(n, d).T, "one row per position"
    ),  # fmt: skip
    Mistake(NORM, "norm-over-batch", norm_over(0), "the batch axis"),
    Mistake(NORM, "norm-over-time", norm_over(1), "the time axis"),
    Mistake(NORM, "norm-over-batch-and-time", norm_over((0, 1)), "batch and time"),
    Mistake(NORM, "norm-over-everything", norm_over((0, 1, 2)), "the whole tensor"),
    Mistake(NORM, "norm-over-time-and-features", norm_over((1, 2)), "time and feature axes"),
    Mistake(NORM, "norm-unbiased", norm_over(-1, unbiased=True), "biased variance"),
    Mistake(
        NORM,
        "norm-no-division",
        lambda x: x - x.mean(-1, keepdim=True),
        "do not divide by sqrt(var + eps)",
    ),  # fmt: skip
    Mistake(NORM, "norm-eps-outside", layer_norm_eps_outside, "eps goes inside the square root"),
    Mistake(NORM, "norm-torch-std", layer_norm_torch_std, "x.std() is unbiased"),
    Mistake(NORM, "norm-no-eps", layer_norm_no_eps, "eps is missing"),
    Mistake(NORM, "norm-by-variance", layer_norm_by_variance, "divide by the variance"),
    Mistake(NORM, "norm-no-centring", layer_norm_no_centring, "the mean is not subtracted"),
    Mistake(NORM, "norm-empty-assert", layer_norm_asserts, "(`assert D == 512`)"),
    Mistake(NORM, "norm-row-scale", layer_norm_by_range, "divided by one number of its own"),
    Mistake(NORM, "norm-other-centre", layer_norm_median_centre, "is not its mean"),
    Mistake(
        FFN,
        "dropout-in-eval",
        ffn_with(lambda m, x: m.linear2(nn.functional.dropout(torch.relu(m.linear1(x)), 0.1))),
        "dropout is still on",
    ),
    Mistake(FFN, "ffn-no-relu", ffn_with(lambda m, x: m.linear2(m.linear1(x))), "no ReLU"),
    Mistake(
        FFN,
        "ffn-relu-twice",
        ffn_with(lambda m, x: torch.relu(m.linear2(torch.relu(m.linear1(x))))),
        "a ReLU follows linear2 as well",
    ),  # fmt: skip
    Mistake(
        FFN,
        "ffn-clamp-max",
        ffn_with(lambda m, x: m.linear2(m.linear1(x).clamp(max=0))),
        "clamp(min=0)",
    ),  # fmt: skip
    Mistake(
        FFN,
        "ffn-relu-after",
        ffn_with(lambda m, x: torch.relu(m.linear2(m.linear1(x)))),
        "after linear2",
    ),  # fmt: skip
    Mistake(
        FFN,
        "ffn-mixes-positions",
        ffn_with(lambda m, x: m.linear2(torch.relu(m.linear1(x))) + x - x.mean(1, keepdim=True)),
        "other positions",
    ),  # fmt: skip
    Mistake(
        FFN, "ffn-gelu", ffn_with(lambda m, x: m.linear2(nn.functional.gelu(m.linear1(x)))), "GELU"
    ),  # fmt: skip
    Mistake(
        FFN,
        "ffn-relu-on-input",
        ffn_with(lambda m, x: m.linear2(m.linear1(x.relu()))),
        "applied to the input x",
    ),  # fmt: skip
    Mistake(
        FFN,
        "ffn-with-residual",
        ffn_with(lambda m, x: x + m.linear2(torch.relu(m.linear1(x)))),
        "you add the input x back",
    ),
    Mistake(FFN, "ffn-renamed-layer", FFNWithoutLinear2, "needs a linear layer `linear2`"),
    Mistake(
        LOSS,
        "loss-pad-in-mean",
        loss_with(lambda eps, x, y: per_token(eps, x, y).mean()),
        "padding positions count",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-no-smoothing",
        loss_with(lambda eps, x, y: torch_loss(0.0, x, y)),
        "no smoothing",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-per-sentence",
        loss_with(lambda eps, x, y: per_token(eps, x, y)[y != PAD_ID].sum() / y.shape[0]),
        "number of sentences",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-sum",
        loss_with(lambda eps, x, y: per_token(eps, x, y)[y != PAD_ID].sum()),
        "the loss is their mean",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-not-a-scalar",
        loss_with(lambda eps, x, y: per_token(eps, x, y)[y != PAD_ID].mean().expand(1)),
        "one number",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-mean-of-sentence-means",
        loss_with(
            lambda eps, x, y: (
                (per_token(eps, x, y) * (y != PAD_ID)).sum(1).div((y != PAD_ID).sum(1)).mean()
            )
        ),
        "then the sentences",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-twice-divided",
        loss_with(lambda eps, x, y: per_token(eps, x, y)[y != PAD_ID].mean() / y.shape[0]),
        "once more",
    ),  # fmt: skip
    Mistake(LOSS, "loss-eps-over-V-1", loss_with(spread_over_wrong_tokens), "V - 1 wrong tokens"),
    Mistake(LOSS, "loss-kl-divergence", loss_with(kl_divergence), "KL divergence"),
    Mistake(
        LOSS,
        "loss-no-log-softmax",
        loss_with(without_log_softmax),
        "as if they were log-probabilities",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-on-probabilities",
        loss_with(on_probabilities),
        "probabilities, not their logarithm",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-uniform-summed",
        loss_with(
            lambda eps, x, y: (
                -(1 - eps) * x.log_softmax(-1).gather(-1, y[..., None]).squeeze(-1)
                - eps * x.log_softmax(-1).sum(-1)
            )[y != PAD_ID].mean()
        ),
        "it is their mean",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-uniform-dropped",
        loss_with(
            lambda eps, x, y: (-(1 - eps) * x.log_softmax(-1).gather(-1, y[..., None]).squeeze(-1))[
                y != PAD_ID
            ].mean()
        ),
        "smoothing term -ε mean(log p) is missing",
    ),  # fmt: skip
    Mistake(LOSS, "loss-full-weight-on-target", loss_with(full_weight_on_target), "not 1"),
    Mistake(
        LOSS,
        "loss-padding-gradient",
        loss_with(padding_removed_from_the_total),
        "padding positions get a gradient",
    ),  # fmt: skip
    Mistake(
        LOSS,
        "loss-through-item",
        loss_with(lambda eps, x, y: torch.tensor(per_token(eps, x, y)[y != PAD_ID].mean().item())),
        "no gradient flows back through the loss",
    ),  # fmt: skip
    Mistake(LOSS, "loss-instance", LabelSmoothingLoss(0.1), "pass `LabelSmoothingLoss`"),
]

MISTAKES += [  # correct until B31: since then a result keeps its inputs' float dtype
    Mistake(NORM, "norm-float32-zeros", layer_norm_into_float32_zeros, "torch.zeros(shape)",
            mistake="dtype-lowered"),
    Mistake(NORM, "norm-bfloat16", lambda x: norm_over(-1)(x).bfloat16(), "has dtype bfloat16",
            mistake="dtype-lowered"),
]  # fmt: skip

CORRECT = [
    Correct(MASK, "causal-package", causal_mask),
    Correct(
        MASK, "causal-by-comparison", lambda T: torch.arange(T)[None, :] <= torch.arange(T)[:, None]
    ),  # fmt: skip
    Correct(TABLE, "table-package", sinusoidal_encoding),
    Correct(TABLE, "table-loops", table_by_loops),
    Correct(TABLE, "table-log-space", table_by_log_space),
    Correct(NORM, "norm-by-hand", norm_over(-1)),
    Correct(
        NORM,
        "norm-nn-layernorm",
        lambda x: nn.LayerNorm(x.shape[-1], elementwise_affine=False).double()(x),
    ),  # fmt: skip
    Correct(FFN, "ffn-package", PositionwiseFeedForward),
    Correct(FFN, "ffn-clamp", ffn_with(lambda m, x: m.linear2(m.linear1(x).clamp_min(0)))),
    Correct(FFN, "ffn-functional", FFNBySequential),
    Correct(LOSS, "loss-package", LabelSmoothingLoss),
    Correct(LOSS, "loss-torch", loss_with(torch_loss)),
    Correct(LOSS, "loss-float32", loss_with(float32_loss)),
]
