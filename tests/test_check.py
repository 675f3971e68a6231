"""The checker is itself checked: it accepts the package's implementation and a correct one
written differently, and rejects each typical mistake with the right diagnosis."""

from __future__ import annotations

import math
from functools import partial

import pytest
import torch

from transformer_tutorial import check
from transformer_tutorial.attention import attention, masked_softmax
from transformer_tutorial.masks import causal_mask
from transformer_tutorial.positional import sinusoidal_encoding

# Tiny tensors: one thread is as fast, and immune to a busy machine (see conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


def verdict_of(checker, fn, capsys):
    verdict = checker(fn)
    printed = capsys.readouterr().out
    assert printed.strip() == str(verdict)  # the reader sees exactly the verdict
    return verdict


# --- masked softmax ---------------------------------------------------------------------------


def softmax_by_hand(scores, mask):
    """Correct, written differently: subtract the row maximum, exponentiate, zero, divide."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.expand_as(scores)
    shifted = scores - scores.masked_fill(~mask, -1e300).amax(-1, keepdim=True).clamp_min(-1e300)
    e = torch.where(mask, shifted.clamp_max(0).exp(), torch.zeros_like(scores))
    total = e.sum(-1, keepdim=True)
    return torch.where(total > 0, e / total.clamp_min(1e-300), torch.zeros_like(e))


def softmax_wrong_axis(scores, mask):
    return (
        masked_softmax(scores.transpose(-1, -2), None).transpose(-1, -2)
        if mask is None
        else (torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-2).nan_to_num())
    )


def softmax_nan_rows(scores, mask):
    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, -math.inf), -1)


def softmax_flipped(scores, mask):
    return masked_softmax(scores, None if mask is None else ~mask)


def softmax_ignores_mask(scores, mask):
    return torch.softmax(scores, dim=-1)


@pytest.mark.parametrize("fn", [masked_softmax, softmax_by_hand], ids=["package", "by-hand"])
def test_masked_softmax_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_masked_softmax, fn, capsys).ok


@pytest.mark.parametrize(
    ("fn", "diagnosis"),
    [
        (softmax_wrong_axis, "softmax over the wrong axis"),
        (softmax_nan_rows, "NaN"),
        (softmax_flipped, "mask polarity"),
        (softmax_ignores_mask, "masked keys get weight above 0"),
    ],
)
def test_masked_softmax_names_the_mistake(fn, diagnosis, capsys):
    verdict = verdict_of(check.check_masked_softmax, fn, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- attention --------------------------------------------------------------------------------


def attention_by_hand(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / k.shape[-1] ** 0.5
    weights = softmax_by_hand(scores, mask)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def attention_unscaled(q, k, v, mask=None):
    return attention(q, k, v, mask=mask, scale=1.0)


def attention_wrong_axis(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = torch.softmax(scores, dim=-2).nan_to_num()
    return weights @ v, weights


def attention_flipped(q, k, v, mask=None):
    return attention(q, k, v, mask=None if mask is None else ~mask)


def attention_out_without_v(q, k, v, mask=None):
    out, weights = attention(q, k, v, mask=mask)
    return out * 2, weights


@pytest.mark.parametrize("fn", [attention, attention_by_hand], ids=["package", "by-hand"])
def test_attention_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_attention, fn, capsys).ok


@pytest.mark.parametrize(
    ("fn", "diagnosis"),
    [
        (attention_unscaled, "forgot to divide the scores by sqrt(d_k)"),
        (attention_wrong_axis, "softmax over the wrong axis"),
        (attention_flipped, "mask polarity"),
        (attention_out_without_v, "out = weights @ v"),
        (lambda q, k, v, mask=None: attention(q, k, v, mask)[0], "return a pair"),
    ],
)
def test_attention_names_the_mistake(fn, diagnosis, capsys):
    verdict = verdict_of(check.check_attention, fn, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- the causal mask --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [causal_mask, lambda T: torch.arange(T)[None, :] <= torch.arange(T)[:, None]],
    ids=["package", "by-comparison"],
)
def test_causal_mask_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_causal_mask, fn, capsys).ok


@pytest.mark.parametrize(
    ("fn", "diagnosis"),
    [
        (lambda T: ~causal_mask(T), "mask polarity"),
        (lambda T: torch.ones(T, T).tril(1).bool(), "off by one"),
        (lambda T: torch.ones(T, T).tril(-1).bool(), "does not see itself"),
        (lambda T: causal_mask(T).T, "transposed"),
        (lambda T: causal_mask(T).float(), "torch.bool"),
        (lambda T: causal_mask(T + 1), "shape"),
    ],
)
def test_causal_mask_names_the_mistake(fn, diagnosis, capsys):
    verdict = verdict_of(check.check_causal_mask, fn, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- sinusoidal positions -------------------------------------------------------------------------


def table_by_loops(max_len, d_model):
    pe = torch.zeros(max_len, d_model)
    for i in range(max_len):
        for j in range(0, d_model, 2):
            pe[i, j] = math.sin(i / 10000 ** (j / d_model))
            pe[i, j + 1] = math.cos(i / 10000 ** (j / d_model))
    return pe


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


@pytest.mark.parametrize("fn", [sinusoidal_encoding, table_by_loops], ids=["package", "loops"])
def test_sinusoidal_encoding_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_sinusoidal_encoding, fn, capsys).ok


@pytest.mark.parametrize(
    ("fn", "diagnosis"),
    [
        (table_swapped, "sin and cos are swapped"),
        (table_wrong_frequencies, "the frequencies differ"),
        (lambda n, d: torch.zeros(n, d), "cos(0) = 1"),
    ],
)
def test_sinusoidal_encoding_names_the_mistake(fn, diagnosis, capsys):
    verdict = verdict_of(check.check_sinusoidal_encoding, fn, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- LayerNorm ------------------------------------------------------------------------------------


def norm_over(axes, unbiased=False):
    def fn(x):
        mean = x.mean(axes, keepdim=True)
        return (x - mean) / torch.sqrt(x.var(axes, keepdim=True, unbiased=unbiased) + 1e-5)

    return fn


@pytest.mark.parametrize(
    "fn",
    [
        norm_over(-1),
        lambda x: torch.nn.LayerNorm(x.shape[-1], elementwise_affine=False).double()(x),
    ],
    ids=["by-hand", "nn.LayerNorm"],
)
def test_layer_norm_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_layer_norm, fn, capsys).ok


@pytest.mark.parametrize(
    ("fn", "diagnosis"),
    [
        (norm_over(0), "the batch axis"),
        (norm_over(1), "the time axis"),
        (norm_over((0, 1)), "batch and time"),
        (norm_over(-1, unbiased=True), "biased variance"),
        (lambda x: x - x.mean(-1, keepdim=True), "sqrt(var + eps)"),
    ],
)
def test_layer_norm_names_the_mistake(fn, diagnosis, capsys):
    verdict = verdict_of(check.check_layer_norm, fn, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


def test_code_that_raises_is_reported_not_raised(capsys):
    def broken(scores, mask):
        raise IndexError("dimension out of range")

    verdict = verdict_of(check.check_masked_softmax, broken, capsys)
    assert not verdict.ok and "IndexError: dimension out of range" in verdict.message


# --- multi-head attention ---------------------------------------------------------------------

from transformer_tutorial.lstm import LSTMCell  # noqa: E402
from transformer_tutorial.multihead import MultiHeadAttention  # noqa: E402


class HeadsReversed(MultiHeadAttention):
    def merge_heads(self, x):
        return super().merge_heads(x.flip(1))


class SplitDhFirst(MultiHeadAttention):
    def split_heads(self, x):
        B, T, D = x.shape
        return x.view(B, T, self.head_dim, self.num_heads).permute(0, 3, 1, 2)

    def merge_heads(self, x):
        B, H, T, Dh = x.shape
        return x.permute(0, 2, 3, 1).reshape(B, T, H * Dh)


class ScaledBySqrtD(MultiHeadAttention):
    def attend(self, query, k, v, mask=None, need_weights=False, fused=False):
        q = self.split_heads(self.q_proj(query)) * (self.head_dim / self.d_model) ** 0.5
        out, weights = attention(q, k, v, mask)
        return self.out_proj(self.merge_heads(out)), weights


class MaskFlipped(MultiHeadAttention):
    def forward(self, query, key, value, mask=None, **kwargs):
        return super().forward(query, key, value, mask=None if mask is None else ~mask)


class MultiHeadByLoop(torch.nn.Module):
    """Correct, written differently: one head at a time, then concatenate."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj, self.k_proj = (
            torch.nn.Linear(d_model, d_model),
            torch.nn.Linear(d_model, d_model),
        )
        self.v_proj, self.out_proj = (
            torch.nn.Linear(d_model, d_model),
            torch.nn.Linear(d_model, d_model),
        )

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        heads = []
        for h in range(self.h):
            cols = slice(h * self.dh, (h + 1) * self.dh)
            m = None if mask is None else mask[:, 0]  # (B, 1, T_k)
            heads.append(attention(q[..., cols], k[..., cols], v[..., cols], mask=m)[0])
        return self.out_proj(torch.cat(heads, dim=-1))


@pytest.mark.parametrize("cls", [MultiHeadAttention, MultiHeadByLoop], ids=["package", "loop"])
def test_multihead_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_multihead, cls, capsys).ok


@pytest.mark.parametrize(
    ("cls", "diagnosis"),
    [
        (HeadsReversed, "concatenated in the wrong order"),
        (SplitDhFirst, "(Dh, H) instead of (H, Dh)"),
        (ScaledBySqrtD, "sqrt(D), not sqrt(Dh)"),
        (MaskFlipped, "mask polarity"),
    ],
)
def test_multihead_names_the_mistake(cls, diagnosis, capsys):
    verdict = verdict_of(check.check_multihead, cls, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- the LSTM cell --------------------------------------------------------------------------------


def lstm_cell_with(update):
    class Cell(LSTMCell):
        def forward(self, x, state):
            h, c = state
            i, f, g, o = (self.in_proj(x) + self.state_proj(h)).chunk(4, dim=-1)
            return update(torch.sigmoid, i, f, g, o, c)

    return Cell


RIGHT = lambda sig, i, f, g, o, c: (  # noqa: E731
    sig(o) * torch.tanh(sig(f) * c + sig(i) * torch.tanh(g)),
    sig(f) * c + sig(i) * torch.tanh(g),
)


@pytest.mark.parametrize("cls", [LSTMCell, lstm_cell_with(RIGHT)], ids=["package", "by-hand"])
def test_lstm_cell_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_lstm_cell, cls, capsys).ok


@pytest.mark.parametrize(
    ("update", "diagnosis"),
    [
        (
            lambda sig, i, f, g, o, c: RIGHT(sig, f, i, g, o, c),
            "input and forget gates are swapped",
        ),
        (
            lambda sig, i, f, g, o, c: (
                sig(o) * torch.tanh(sig(f) * c + sig(i) * sig(g)),
                sig(f) * c + sig(i) * sig(g),
            ),
            "tanh, not sigmoid",
        ),  # fmt: skip
        (
            lambda sig, i, f, g, o, c: (
                sig(o) * torch.tanh(c + sig(i) * torch.tanh(g)),
                c + sig(i) * torch.tanh(g),
            ),
            "forget gate",
        ),  # fmt: skip
        (
            lambda sig, i, f, g, o, c: (
                sig(o) * (sig(f) * c + sig(i) * torch.tanh(g)),
                sig(f) * c + sig(i) * torch.tanh(g),
            ),
            "left out the tanh",
        ),  # fmt: skip
    ],
    ids=["gates-swapped", "sigmoid-candidate", "no-forget", "no-tanh-on-c"],
)
def test_lstm_cell_names_the_mistake(update, diagnosis, capsys):
    verdict = verdict_of(check.check_lstm_cell, lstm_cell_with(update), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- the RNN cell and the feed-forward network -------------------------------------------------

from transformer_tutorial.feedforward import PositionwiseFeedForward  # noqa: E402
from transformer_tutorial.rnn import RNNCell  # noqa: E402


def rnn_cell_with(update):
    class Cell(RNNCell):
        def forward(self, x, s_prev=None):
            return update(self.in_proj(x), self.state_proj(s_prev))

    return Cell


@pytest.mark.parametrize(
    "cls", [RNNCell, rnn_cell_with(lambda a, b: torch.tanh(b + a))], ids=["package", "by-hand"]
)
def test_rnn_cell_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_rnn_cell, cls, capsys).ok


@pytest.mark.parametrize(
    ("update", "diagnosis"),
    [
        (lambda a, b: a + b, "left out the tanh"),
        (lambda a, b: torch.tanh(a), "previous state is not used"),
        (lambda a, b: torch.tanh(b), "input is not used"),
    ],
)
def test_rnn_cell_names_the_mistake(update, diagnosis, capsys):
    verdict = verdict_of(check.check_rnn_cell, rnn_cell_with(update), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


def ffn_with(body):
    class FFN(PositionwiseFeedForward):
        def forward(self, x):
            return body(self, x)

    return FFN


@pytest.mark.parametrize(
    "cls",
    [PositionwiseFeedForward, ffn_with(lambda m, x: m.linear2(m.linear1(x).clamp_min(0)))],
    ids=["package", "clamp"],
)
def test_feed_forward_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_feed_forward, cls, capsys).ok


@pytest.mark.parametrize(
    ("body", "diagnosis"),
    [
        (lambda m, x: m.linear2(m.linear1(x)), "no ReLU"),
        (lambda m, x: torch.relu(m.linear2(m.linear1(x))), "after linear2"),
        (
            lambda m, x: m.linear2(torch.relu(m.linear1(x))) + x - x.mean(1, keepdim=True),
            "other positions",
        ),
    ],
    ids=["no-relu", "relu-after", "mixes-positions"],
)
def test_feed_forward_names_the_mistake(body, diagnosis, capsys):
    verdict = verdict_of(check.check_feed_forward, ffn_with(body), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- additive attention ---------------------------------------------------------------------------

from transformer_tutorial.attention import AdditiveAttention  # noqa: E402


def additive_with(score):
    class Additive(AdditiveAttention):
        def forward(self, queries, keys, values, mask=None, projected_keys=None):
            pre = self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3)
            weights = score(self, pre, mask)
            return weights @ values, weights

    return Additive


def RIGHT_ADDITIVE(m, pre, mask):  # noqa: N802 (a constant-like name for the right rule)
    return masked_softmax(m.w_v(torch.tanh(pre)).squeeze(-1), mask)


@pytest.mark.parametrize(
    "cls", [AdditiveAttention, additive_with(RIGHT_ADDITIVE)], ids=["package", "by-hand"]
)
def test_additive_attention_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_additive_attention, cls, capsys).ok


@pytest.mark.parametrize(
    ("score", "diagnosis"),
    [
        (lambda m, pre, mask: masked_softmax(m.w_v(pre).squeeze(-1), mask), "no tanh"),
        (
            lambda m, pre, mask: masked_softmax(
                m.w_v(torch.tanh(pre)).squeeze(-1), None if mask is None else ~mask
            ),
            "mask polarity",
        ),  # fmt: skip
        (
            lambda m, pre, mask: torch.softmax(m.w_v(torch.tanh(pre)).squeeze(-1), dim=-2),
            "wrong axis",
        ),  # fmt: skip
    ],
    ids=["no-tanh", "mask-flipped", "wrong-axis"],
)
def test_additive_attention_names_the_mistake(score, diagnosis, capsys):
    verdict = verdict_of(check.check_additive_attention, additive_with(score), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- the label-smoothed loss ---------------------------------------------------------------------

from transformer_tutorial.sequences import PAD_ID  # noqa: E402
from transformer_tutorial.training import LabelSmoothingLoss  # noqa: E402


def loss_with(fn):
    class Loss(torch.nn.Module):
        def __init__(self, smoothing):
            super().__init__()
            self.smoothing = smoothing

        def forward(self, logits, target):
            return fn(self.smoothing, logits, target)

    return Loss


def torch_loss(eps, logits, target):
    ce = torch.nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=PAD_ID)
    return ce(logits.flatten(0, 1), target.flatten())


def per_token(eps, logits, target):
    log_p = torch.log_softmax(logits, -1)
    return -(1 - eps) * log_p.gather(-1, target[..., None]).squeeze(-1) - eps * log_p.mean(-1)


def spread_over_wrong_tokens(eps, logits, target):
    """The other convention: (1 - eps) on the right token, eps / (V - 1) on each wrong one."""
    log_p = torch.log_softmax(logits, -1)
    right = log_p.gather(-1, target[..., None]).squeeze(-1)
    loss = -(1 - eps) * right - eps / (logits.shape[-1] - 1) * (log_p.sum(-1) - right)
    return loss[target != PAD_ID].mean()


@pytest.mark.parametrize(
    "cls", [LabelSmoothingLoss, loss_with(torch_loss)], ids=["package", "torch"]
)
def test_label_smoothing_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_label_smoothing, cls, capsys).ok


@pytest.mark.parametrize(
    ("fn", "diagnosis"),
    [
        (lambda eps, x, y: per_token(eps, x, y).mean(), "padding positions count"),
        (lambda eps, x, y: torch_loss(0.0, x, y), "no smoothing"),
        (lambda eps, x, y: per_token(eps, x, y)[y != PAD_ID].sum() / y.shape[0], "sentences"),
        (lambda eps, x, y: per_token(eps, x, y)[y != PAD_ID].mean().expand(1), "one number"),
        (lambda eps, x, y: spread_over_wrong_tokens(eps, x, y), "V - 1 wrong tokens"),
    ],
    ids=["pad-in-mean", "no-smoothing", "per-sentence", "not-a-scalar", "eps-over-V-1"],
)
def test_label_smoothing_names_the_mistake(fn, diagnosis, capsys):
    verdict = verdict_of(check.check_label_smoothing, loss_with(fn), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- encoder and decoder blocks -------------------------------------------------------------------

from transformer_tutorial.transformer import DecoderLayer, EncoderLayer, residual  # noqa: E402


def run_block(x, steps, norm_first):
    """The sub-layers ``steps`` (function, LayerNorm) in order, each with its residual."""
    for sublayer, norm in steps:
        x = residual(x, sublayer, norm, torch.nn.Identity(), norm_first)
    return x


def encoder_sublayers(m, mask):
    return [(attend(m.self_attn, mask), m.norm1), (m.feed_forward, m.norm2)]


def attend(mha, mask, memory=None):
    """A sub-layer: ``mha`` attends from its input to ``memory`` (to itself if ``None``)."""
    return lambda h: mha(h, *[h if memory is None else memory] * 2, mask=mask)[0]


class EncoderByHand(torch.nn.Module):
    """Correct, written differently: heads one at a time, the two cases written out."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadByLoop(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.norm_first = norm_first

    def forward(self, x, src_mask):
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.self_attn(h, h, h, src_mask)
            return x + self.feed_forward(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, x, x, src_mask))
        return self.norm2(x + self.feed_forward(x))


def encoder_with(body):
    class Layer(EncoderLayer):
        def forward(self, x, src_mask=None):
            return body(self, x, src_mask)

    return Layer


@pytest.mark.parametrize("cls", [EncoderLayer, EncoderByHand], ids=["package", "by-hand"])
def test_encoder_layer_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_encoder_layer, cls, capsys).ok


@pytest.mark.parametrize(
    ("body", "diagnosis"),
    [
        (
            lambda m, x, mask: m.norm2(m.feed_forward(m.norm1(m.self_attn(x, x, x, mask)[0]))),
            "residual connection is missing",
        ),
        (
            lambda m, x, mask: run_block(x, encoder_sublayers(m, mask), True),
            "norm_first=False asks for post-norm",
        ),
        (
            lambda m, x, mask: run_block(x, encoder_sublayers(m, mask), False),
            "norm_first=True asks for pre-norm",
        ),
        (lambda m, x, mask: EncoderLayer.forward(m, x, None), "padding mask is not used"),
        (lambda m, x, mask: EncoderLayer.forward(m, x, ~mask), "mask polarity"),
        (
            lambda m, x, mask: run_block(x, encoder_sublayers(m, mask)[::-1], m.norm_first),
            "yours runs the feed-forward network, then self-attention",
        ),
    ],
    ids=[
        "no-residual",
        "always-pre-norm",
        "always-post-norm",
        "mask-ignored",
        "mask-flipped",
        "ffn-first",
    ],
)
def test_encoder_layer_names_the_mistake(body, diagnosis, capsys):
    verdict = verdict_of(check.check_encoder_layer, encoder_with(body), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


class DecoderByHand(torch.nn.Module):
    """Correct, written differently: heads one at a time, a loop over the three sub-layers."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadByLoop(d_model, num_heads)
        self.cross_attn = MultiHeadByLoop(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (torch.nn.LayerNorm(d_model) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x, memory, tgt_mask, src_mask):
        sublayers = [
            (lambda h: self.self_attn(h, h, h, tgt_mask), self.norm1),
            (lambda h: self.cross_attn(h, memory, memory, src_mask), self.norm2),
            (self.feed_forward, self.norm3),
        ]
        for sublayer, norm in sublayers:
            x = x + sublayer(norm(x)) if self.norm_first else norm(x + sublayer(x))
        return x


def decoder_with(sublayers):
    """The book's decoder block running the (function, LayerNorm) pairs that
    ``sublayers(m, memory, tgt_mask, src_mask)`` returns."""

    class Layer(DecoderLayer):
        def forward(self, x, memory, tgt_mask=None, src_mask=None, cache=None, weights=None):
            return run_block(x, sublayers(self, memory, tgt_mask, src_mask), self.norm_first)

    return Layer


def decoder_sublayers(m, memory, tgt_mask, src_mask):
    return [
        (attend(m.self_attn, tgt_mask), m.norm1),
        (attend(m.cross_attn, src_mask, memory), m.norm2),
        (m.feed_forward, m.norm3),
    ]


def naive_attention(mha, blocked):
    """Attention that fills the *blocked* keys with -inf (the opposite polarity) and has no NaN
    guard: a query that may see no key gets NaN."""

    def sublayer(h, kv=None):
        kv = h if kv is None else kv
        B, T, D = h.shape
        split = lambda x: x.view(B, x.shape[1], mha.num_heads, -1).transpose(1, 2)  # noqa: E731
        q, k, v = split(mha.q_proj(h)), split(mha.k_proj(kv)), split(mha.v_proj(kv))
        scores = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(blocked, -math.inf)
        return mha.out_proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D))

    return sublayer


def decoder_flipped_naively(m, mem, tgt, src):
    cross = naive_attention(m.cross_attn, src)
    return [
        (naive_attention(m.self_attn, tgt), m.norm1),
        (lambda h: cross(h, mem), m.norm2),
        (m.feed_forward, m.norm3),
    ]


@pytest.mark.parametrize(
    "cls", [DecoderLayer, DecoderByHand, decoder_with(decoder_sublayers)],
    ids=["package", "by-hand", "steps"],
)  # fmt: skip
def test_decoder_layer_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_decoder_layer, cls, capsys).ok


@pytest.mark.parametrize(
    ("sublayers", "diagnosis"),
    [
        (lambda m, mem, tgt, src: decoder_sublayers(m, mem, None, src), "sees the future"),
        (
            lambda m, mem, tgt, src: [
                (attend(m.self_attn, tgt), m.norm1),
                (attend(m.cross_attn, tgt), m.norm2),
                (m.feed_forward, m.norm3),
            ],
            "keys and values from memory",
        ),
        (
            lambda m, mem, tgt, src: [
                (attend(m.self_attn, tgt), m.norm1),
                (attend(m.cross_attn, src), m.norm2),
                (m.feed_forward, m.norm3),
            ],
            "keys and values from memory",
        ),
        (lambda m, mem, tgt, src: decoder_sublayers(m, mem, tgt, None), "source padding mask"),
        (
            lambda m, mem, tgt, src: [decoder_sublayers(m, mem, tgt, src)[i] for i in (1, 0, 2)],
            "yours runs cross-attention, then self-attention",
        ),
        (lambda m, mem, tgt, src: decoder_sublayers(m, mem, ~tgt, ~src), "mask polarity"),
        (decoder_flipped_naively, "mask polarity"),
    ],
    ids=[
        "no-causal",
        "cross-on-self",
        "cross-on-self-src-mask",
        "src-padding",
        "order",
        "flip",
        "flip-with-nan",
    ],
)
def test_decoder_layer_names_the_mistake(sublayers, diagnosis, capsys):
    verdict = verdict_of(check.check_decoder_layer, decoder_with(sublayers), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- greedy search and beam search ------------------------------------------------------------

from transformer_tutorial.decoding import beam_search, greedy_decode  # noqa: E402


@torch.no_grad()
def greedy_by_hand(model, src, max_len, bos_id, eos_id, mistake=None):
    """Correct without ``mistake``, written differently: no cache, the whole prefix at every
    step, finished sentences kept in the batch and fed PAD."""
    model.eval()
    memory = model.encode(src)
    pad = model.config.pad_id
    tokens = torch.full((src.shape[0], 1), bos_id)  # (B, 1)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len + (mistake == "one-more") - (mistake == "one-less")):
        logits = model.decode(tokens, memory, src)[:, -1]  # (B, V)
        if mistake != "pad-as-word":
            logits[:, pad] = -math.inf
        step = logits.argmax(-1).masked_fill(done, pad)  # (B,)
        tokens = torch.cat([tokens, step[:, None]], dim=1)
        if mistake != "no-stop":
            done |= step == eos_id
        if done.all() or (mistake == "first-stop" and done.any()):
            break
    return tokens if mistake == "with-bos" else tokens[:, 1:]


def greedy_with(mistake):
    return lambda *args: greedy_by_hand(*args, mistake=mistake)


@pytest.mark.parametrize("fn", [greedy_decode, greedy_with(None)], ids=["package", "by-hand"])
def test_greedy_decode_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_greedy_decode, fn, capsys).ok


@pytest.mark.parametrize(
    ("mistake", "diagnosis"),
    [
        ("with-bos", "starts with BOS"),
        ("no-stop", "goes on after its EOS"),
        ("pad-as-word", "padding is not a word"),
        ("first-stop", "differently in the batch"),
        ("one-more", "off by one"),
        ("one-less", "off by one"),
    ],
)
def test_greedy_decode_names_the_mistake(mistake, diagnosis, capsys):
    verdict = verdict_of(check.check_greedy_decode, greedy_with(mistake), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


@torch.no_grad()
def beam_by_hand(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty, mistake=None):
    """Correct without ``mistake``, written differently: no cache, a (B, K, t) tensor of
    hypotheses, finished ones extended by PAD at no cost."""
    model.eval()
    B, K, V, pad = src.shape[0], beam_size, model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)  # (B*K, S)
    hyps = torch.full((B, K, 1), bos_id)  # (B, K, t)
    score = torch.zeros(B, K)  # log P
    if mistake != "copies":
        score[:, 1:] = -math.inf
    length = torch.zeros(B, K)
    ended = torch.zeros(B, K, dtype=torch.bool)
    alpha = 0.0 if mistake == "no-penalty" else length_penalty
    for t in range(1, max_len + 1):
        logits = model.decode(hyps.view(B * K, -1), memory, src_k)[:, -1]  # (B*K, V)
        logp = logits.log_softmax(dim=0 if mistake == "softmax-over-batch" else -1).view(B, K, V)
        logp[..., pad] = -math.inf
        if mistake == "drop-finished":
            logp[..., eos_id] = -math.inf
        if mistake != "extend-finished":
            logp[ended] = torch.where(torch.arange(V) == pad, 0.0, -math.inf)
        new_len = torch.where(ended, length, torch.tensor(float(t)))  # (B, K)
        total = score[..., None] + logp  # (B, K, V)
        ranked = total / ((5 + new_len[..., None]) / 6) ** alpha
        best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
        beam, token = best // V, best % V
        score = total.view(B, K * V).gather(1, best)
        length = new_len.gather(1, beam)
        ended = ended.gather(1, beam) | (token == eos_id)
        hyps = torch.cat([hyps.gather(1, beam[..., None].expand_as(hyps)), token[..., None]], 2)
        if ended.all():
            break
    final = score / ((5 + length) / 6) ** alpha  # (B, K)
    pick = final.argmax(dim=1)  # (B,)
    return hyps[torch.arange(B), pick, 1:]  # (B, t)


def beam_with(mistake):
    return partial(beam_by_hand, mistake=mistake)


@pytest.mark.parametrize("fn", [beam_search, beam_with(None)], ids=["package", "by-hand"])
def test_beam_search_accepts_correct_implementations(fn, capsys):
    assert verdict_of(check.check_beam_search, fn, capsys).ok


@pytest.mark.parametrize(
    ("mistake", "diagnosis"),
    [
        ("copies", "copies of one hypothesis"),
        ("no-penalty", "length penalty is not applied"),
        ("extend-finished", "goes on after its EOS"),
        ("drop-finished", "not be dropped"),
        ("softmax-over-batch", "with beam_size = 1 beam search is greedy search"),
    ],
)
def test_beam_search_names_the_mistake(mistake, diagnosis, capsys):
    verdict = verdict_of(check.check_beam_search, beam_with(mistake), capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


# --- the key/value cache ------------------------------------------------------------------------

from transformer_tutorial.transformer import LayerCache  # noqa: E402


def cat_cache(axis=2, history=True, reorder_axis=0, window=None):
    """A cache that joins the new keys and values to the old with ``torch.cat`` (correct with
    the defaults, written differently from the book's preallocated buffers). ``window``: keep
    only the last ``window`` positions, as local attention would."""

    class Cache:
        def __init__(self):
            self.k = self.v = None

        def append_self(self, k, v):
            if self.k is None:
                self.k, self.v = k, v
            else:
                self.k, self.v = torch.cat([self.k, k], axis), torch.cat([self.v, v], axis)
            if window is not None:
                self.k, self.v = self.k[:, :, -window:], self.v[:, :, -window:]
            return (self.k, self.v) if history else (k, v)

        def reorder(self, index):
            if reorder_axis is not None:
                self.k = self.k.index_select(reorder_axis, index)
                self.v = self.v.index_select(reorder_axis, index)

    return Cache


@pytest.mark.parametrize("cls", [LayerCache, cat_cache()], ids=["package", "torch.cat"])
def test_kv_cache_accepts_correct_implementations(cls, capsys):
    assert verdict_of(check.check_kv_cache, cls, capsys).ok


@pytest.mark.parametrize(
    ("cls", "diagnosis"),
    [
        (cat_cache(axis=1), "appended along the heads axis (dim 1)"),
        (cat_cache(axis=0), "appended along the batch axis (dim 0)"),
        (cat_cache(history=False), "returns only the new keys"),
        (cat_cache(reorder_axis=None), "left the cached keys as they were"),
        (cat_cache(reorder_axis=1), "along the heads axis (dim 1), but it must keep batch rows"),
        (cat_cache(reorder_axis=2), "along the positions axis (dim 2), but it must keep batch"),
        (cat_cache(window=5), "the logits of step 5 (the token at position 5) differ"),
    ],
    ids=[
        "heads-axis",
        "batch-axis",
        "no-history",
        "no-reorder",
        "reorder-heads",
        "reorder-T",
        "window",
    ],
)
def test_kv_cache_names_the_mistake(cls, diagnosis, capsys):
    verdict = verdict_of(check.check_kv_cache, cls, capsys)
    assert not verdict.ok and diagnosis in verdict.message, verdict.message


class CacheThatCopiesOnlyKeys(LayerCache):
    """Right alone, wrong in the decoder: the returned values are the keys."""

    def append_self(self, k, v):
        keys, _ = super().append_self(k, v)
        return keys, keys


def test_kv_cache_values_are_checked_too(capsys):
    verdict = verdict_of(check.check_kv_cache, CacheThatCopiesOnlyKeys, capsys)
    assert not verdict.ok and "the values returned should be" in verdict.message, verdict.message


# --- a "Your turn" skeleton, not yet filled in ------------------------------------------------


def test_an_unwritten_skeleton_is_told_to_fill_it_in(capsys):
    def my_attention(q, k, v, mask=None):
        raise NotImplementedError

    class MyFeedForward(torch.nn.Module):
        def __init__(self, d_model, d_ff):
            super().__init__()
            raise NotImplementedError

    for checker, implementation in [
        (check.check_attention, my_attention),
        (check.check_feed_forward, MyFeedForward),
    ]:
        verdict = verdict_of(checker, implementation, capsys)
        assert not verdict.ok
        assert "not written yet" in verdict.message
        assert "raise NotImplementedError" in verdict.message
