"""Blind set B8, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


# ---------------------------------------------------------------- mistakes


class LsMeanOverAllPositions(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.mean()  # zeroes the padding, but still divides by B * T


class LsLibraryDefaultIgnore(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # F.cross_entropy ignores -100 by default, which I assumed was the padding
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsSpreadOverWrongTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        dist = torch.full_like(log_probs, self.smoothing / (V - 1))
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(dist * log_probs).sum(-1)
        return loss[keep].mean()


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        per_sentence = (loss * keep).sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LsSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(dim=-1)  # forgot the / V: eps on *every* token
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LsKlDiv(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        dist = torch.full_like(log_probs, self.smoothing / V)
        dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(dist[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        # as in the Annotated Transformer: KL divergence to the smoothed target
        kl = F.kl_div(log_probs[keep], dist[keep], reduction="sum")
        return kl / keep.sum()


class LsUniformTermUnmasked(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        nll_term = (nll * keep).sum() / keep.sum()
        smooth_term = -log_probs.mean(dim=-1).mean()  # over every position, padding included
        return (1 - self.smoothing) * nll_term + self.smoothing * smooth_term


class LsMassLost(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        one_hot = F.one_hot(target, V).to(log_probs.dtype)
        # (1 - eps) on the right token, eps / V on the others: the true token misses its eps / V
        dist = one_hot * (1 - self.smoothing) + (1 - one_hot) * self.smoothing / V
        keep = target != PAD_ID
        return -(dist * log_probs).sum(-1)[keep].mean()


class LsSumOverBatch(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        loss = F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )
        return loss / target.shape[0]  # divided by the number of sentences


class LsProbsNotLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        probs = logits.softmax(dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -probs.mean(dim=-1)  # used the probabilities in the smoothing term
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


# ---------------------------------------------------------------- correct variants


class LsCrossEntropy(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.transpose(1, 2),  # (B, V, T), the layout cross_entropy wants
            target,
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != PAD_ID
        log_probs = torch.log_softmax(logits[keep], dim=-1)  # (N, V): real tokens only
        dist = torch.full_like(log_probs, self.smoothing / V)
        dist += (1 - self.smoothing) * F.one_hot(target[keep], V).to(dist.dtype)
        return -(dist * log_probs).sum(dim=-1).mean()


class LsFloat64(_Base):
    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lp = logits.double().log_softmax(-1)
        keep = (target != self.pad_id).double()
        idx = target.clamp(min=0).unsqueeze(-1)
        per_token = -(1 - self.smoothing) * lp.gather(-1, idx).squeeze(-1)
        per_token = per_token - self.smoothing * lp.sum(-1) / lp.shape[-1]
        return ((per_token * keep).sum() / keep.sum()).to(logits.dtype)


class LsTwoLosses(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        flat, tgt = logits.reshape(-1, V), target.reshape(-1)
        nll = F.nll_loss(F.log_softmax(flat, -1), tgt, ignore_index=PAD_ID)
        real = tgt != PAD_ID
        uniform = -F.log_softmax(flat[real], -1).mean()
        return (1 - self.smoothing) * nll + self.smoothing * uniform


def _case(name: str, code: type, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "zeroed_padding_mean_over_all",
        LsMeanOverAllPositions,
        "mistake",
        "I multiplied the per-token loss by the padding mask but then took .mean(), which "
        "divides by every position, padding included.",
    ),
    _case(
        "cross_entropy_default_ignore_index",
        LsLibraryDefaultIgnore,
        "mistake",
        "F.cross_entropy with label_smoothing but without ignore_index=PAD_ID: its default -100 "
        "is not our padding id, so padding targets are scored.",
    ),
    _case(
        "smoothing_argument_unused",
        LsNoSmoothing,
        "mistake",
        "I stored self.smoothing but call cross_entropy without label_smoothing, so the loss is "
        "plain cross-entropy.",
    ),
    _case(
        "eps_over_v_minus_1",
        LsSpreadOverWrongTokens,
        "mistake",
        "I built the target as 1 - eps on the right token and eps / (V - 1) on each of the other "
        "tokens, as in the Annotated Transformer, instead of eps / V on every token.",
    ),
    _case(
        "mean_per_sentence",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence's loss over its own tokens, then averaged the sentences, so "
        "short sentences weigh more.",
    ),
    _case(
        "uniform_term_summed",
        LsSumNotMean,
        "mistake",
        "The smoothing term uses -log_probs.sum(-1) instead of the mean over the vocabulary: "
        "eps is put on every token, V * eps in all.",
    ),
    _case(
        "kl_divergence_value",
        LsKlDiv,
        "mistake",
        "I used KLDivLoss against the smoothed distribution (eps / V everywhere, 1 - eps added on "
        "the right token); its gradient is right but its value is lower by the target's entropy.",
    ),
    _case(
        "uniform_term_over_padding",
        LsUniformTermUnmasked,
        "mistake",
        "Only the NLL term is masked; the smoothing term is a mean over all positions, padding "
        "included, so the padding's logits get a gradient.",
    ),
    _case(
        "true_token_misses_eps_over_v",
        LsMassLost,
        "mistake",
        "My target has 1 - eps on the right token and eps / V only on the other tokens, so it "
        "sums to 1 - eps / V.",
    ),
    _case(
        "sum_divided_by_batch",
        LsSumOverBatch,
        "mistake",
        "I summed the smoothed loss over the tokens and divided by the number of sentences, "
        "not by the number of real tokens.",
    ),
    _case(
        "probabilities_in_smoothing_term",
        LsProbsNotLogProbs,
        "mistake",
        "In the smoothing term I averaged the probabilities (softmax) instead of the "
        "log-probabilities.",
    ),
    _case(
        "cross_entropy_transposed",
        LsCrossEntropy,
        "correct",
        "F.cross_entropy on logits transposed to (B, V, T), with ignore_index=PAD_ID and "
        "label_smoothing.",
    ),
    _case(
        "explicit_distribution_real_tokens",
        LsExplicitDistribution,
        "correct",
        "Selects the real tokens first with a boolean index, then the full smoothed target "
        "distribution, its cross-entropy and the mean.",
    ),
    _case(
        "float64_extra_pad_arg",
        LsFloat64,
        "correct",
        "Computes in float64 and casts back; the padding id is an extra argument defaulting to "
        "PAD_ID.",
    ),
    _case(
        "nll_loss_plus_uniform",
        LsTwoLosses,
        "correct",
        "F.nll_loss with ignore_index for the right-token term plus the mean -log p over the "
        "real tokens' vocabulary, weighted 1 - eps and eps.",
    ),
]
