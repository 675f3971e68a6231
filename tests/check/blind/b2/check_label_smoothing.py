"""Blind cases for check_label_smoothing (chapter 14), written from the chapter's text only."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


class _Base(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


def _parts(logits: Tensor, target: Tensor):
    logp = F.log_softmax(logits, dim=-1)
    keep = target != PAD_ID
    nll = -logp.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    uniform = -logp.mean(dim=-1)
    return logp, keep, nll, uniform


# ---- mistakes -------------------------------------------------------------------------------


class PaddingCounted(_Base):
    def forward(self, logits, target):
        _, _, nll, uniform = _parts(logits, target)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform).mean()


class CrossEntropyDefaultIgnoreIndex(_Base):
    def forward(self, logits, target):
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class NoSmoothing(_Base):
    def forward(self, logits, target):
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class MeanOverSentences(_Base):
    def forward(self, logits, target):
        _, keep, nll, uniform = _parts(logits, target)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return (loss.sum(1) / keep.sum(1).clamp(min=1)).mean()


class SpreadOverWrongTokensOnly(_Base):
    def forward(self, logits, target):
        logp, keep, _, _ = _parts(logits, target)
        V = logits.shape[-1]
        q = torch.full_like(logp, self.smoothing / (V - 1))
        q.scatter_(-1, target.clamp(min=0).unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * logp).sum(-1)
        return loss[keep].mean()


class SumNotMean(_Base):
    def forward(self, logits, target):
        _, keep, nll, uniform = _parts(logits, target)
        return (((1 - self.smoothing) * nll + self.smoothing * uniform) * keep).sum()


class LogSoftmaxOverTime(_Base):
    def forward(self, logits, target):
        logp = F.log_softmax(logits, dim=1)  # as for (N, V) logits
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * (-logp.mean(-1))
        return (loss * keep).sum() / keep.sum()


class RightTokenMissesItsShare(_Base):
    def forward(self, logits, target):
        logp, keep, _, _ = _parts(logits, target)
        V = logits.shape[-1]
        q = torch.full_like(logp, self.smoothing / V)
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # overwrote its eps/V share
        loss = -(q * logp).sum(-1)
        return (loss * keep).sum() / keep.sum()


class NormalizedByAllPositionsMasked(_Base):
    def forward(self, logits, target):
        _, keep, nll, uniform = _parts(logits, target)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.mean()  # zeros at padding, but still divided by B * T


# ---- reader's slip ------------------------------------------------------------------------------


def label_smoothing_function(logits: Tensor, target: Tensor, smoothing: float = 0.1) -> Tensor:
    V = logits.shape[-1]
    return F.cross_entropy(
        logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID, label_smoothing=smoothing
    )


# ---- correct variants ---------------------------------------------------------------------------


class TorchCrossEntropy(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class SmoothedDistribution(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        real = target.ne(PAD_ID)
        q = torch.full_like(logits, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logits[..., :1], 1 - self.smoothing)
        )
        per_token = -(q * logits.log_softmax(-1)).sum(-1)
        return per_token.masked_select(real).sum() / real.sum()


class SelectRealRowsFirst(nn.Module):
    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.eps = smoothing
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != self.ignore_index
        logp = torch.log_softmax(logits[real], dim=-1)  # (N, V), padding rows dropped
        y = target[real]
        nll = -logp[torch.arange(len(y)), y]
        return ((1 - self.eps) * nll - self.eps * logp.mean(-1)).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_counted",
        PaddingCounted,
        "mistake",
        "I averaged the per-token loss over every position, padding included",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_default_ignore_index",
        CrossEntropyDefaultIgnoreIndex,
        "mistake",
        "I used F.cross_entropy with label_smoothing but kept its default ignore_index=-100, so PAD_ID is scored",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        NoSmoothing,
        "mistake",
        "I stored smoothing but computed the plain cross-entropy",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        MeanOverSentences,
        "mistake",
        "I averaged each sentence over its real tokens and then averaged the sentences",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong_tokens_only",
        SpreadOverWrongTokensOnly,
        "mistake",
        "I gave eps / (V - 1) to each wrong token and 1 - eps to the right one",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        SumNotMean,
        "mistake",
        "I summed the loss over the real tokens and did not divide by their number",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LogSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim 1 as for 2-D logits, which is the time axis of (B, T, V)",
    ),
    BlindCase(
        CHECK,
        "right_token_misses_its_share",
        RightTokenMissesItsShare,
        "mistake",
        "I filled eps / V everywhere and then overwrote the right token with 1 - eps, losing its eps / V",
    ),
    BlindCase(
        CHECK,
        "normalized_by_all_positions_masked",
        NormalizedByAllPositionsMasked,
        "mistake",
        "I zeroed the padding but took .mean(), dividing by all B * T positions",
    ),
    BlindCase(
        CHECK,
        "label_smoothing_function",
        label_smoothing_function,
        "mistake",
        "I wrote a function loss(logits, target, smoothing) instead of an nn.Module class",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        TorchCrossEntropy,
        "correct",
        "I called F.cross_entropy with ignore_index=PAD_ID and label_smoothing",
    ),
    BlindCase(
        CHECK,
        "smoothed_distribution",
        SmoothedDistribution,
        "correct",
        "I built the smoothed target distribution with scatter_add_ and averaged -(q * log p) over the real tokens",
    ),
    BlindCase(
        CHECK,
        "select_real_rows_first",
        SelectRealRowsFirst,
        "correct",
        "I dropped the padded positions first and averaged over the remaining rows, with an ignore_index argument",
    ),
]
