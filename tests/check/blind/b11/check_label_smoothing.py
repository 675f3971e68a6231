"""Blind set B11, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


class LsPaddingInMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        loss = loss * (target != PAD_ID)
        return loss.mean()  # the mean over every position of the batch


class LsNoIgnore(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = (target != PAD_ID).float()
        per_sentence = (loss * keep).sum(1) / keep.sum(1)  # (B,)
        return per_sentence.mean()


class LsOverWrongTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        q = torch.full_like(logits, self.smoothing / (V - 1))  # epsilon over the V - 1 others
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * logits.log_softmax(-1)).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsProbsNotLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        q = torch.full_like(logits, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logits[..., :1], 1 - self.smoothing)
        )
        p = logits.softmax(-1)
        loss = -(q * p).sum(-1)  # cross-entropy: -sum q p
        keep = target != PAD_ID
        return loss[keep].mean()


class LsUniformSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        nll = -logp.gather(-1, target[..., None])[..., 0]
        smooth = -logp.sum(-1)  # the uniform part
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        keep = target != PAD_ID
        return loss[keep].sum() / keep.sum()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)  # (B, T, V): normalised along dim 1
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsSmoothTermUnmasked(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        nll = F.nll_loss(logp.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)
        smooth = -logp.mean(-1).mean()  # over every position
        return (1 - self.smoothing) * nll + self.smoothing * smooth


class LsNoOneMinusEps(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = nll - self.smoothing * logp.mean(-1)  # cross-entropy plus the smoothing term
        keep = target != PAD_ID
        return loss[keep].mean()


class LsKlDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        q = torch.full_like(logits, self.smoothing / V)
        q = q + (1 - self.smoothing) * F.one_hot(target, V).to(logits.dtype)
        kl = F.kl_div(logits.log_softmax(-1), q, reduction="none").sum(-1)  # as in the Annotated
        keep = target != PAD_ID
        return kl[keep].mean()


class LsSumReduction(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


# ---------------------------------------------------------------- correct variants


class LsPyTorch(_Base):
    """PyTorch's own label smoothing, which has the same definition."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitTarget(nn.Module):
    """The smoothed target distribution built with one_hot; an extra pad_id argument."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.eps = smoothing
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        q = (1 - self.eps) * F.one_hot(target, V).to(logits.dtype) + self.eps / V
        per_token = torch.sum(-q * torch.log_softmax(logits, dim=-1), dim=-1)  # (B, T)
        keep = target.ne(self.pad_id)
        return torch.where(keep, per_token, torch.zeros_like(per_token)).sum() / keep.sum()


class LsLogSumExp(_Base):
    """-log p_k = logsumexp(z) - z_k, written out; the mean over the kept tokens by indexing."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        z = logits[keep]  # (N, V): only the real tokens
        y = target[keep]  # (N,)
        lse = torch.logsumexp(z, dim=-1)  # (N,)
        nll = lse - z[torch.arange(len(y)), y]
        uniform = lse - z.mean(dim=-1)
        return ((1.0 - self.smoothing) * nll + self.smoothing * uniform).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the padding's loss but then took .mean() over every position, padding counted.",
    ),
    BlindCase(
        CHECK,
        "padding_not_ignored",
        LsNoIgnore,
        "mistake",
        "I used F.cross_entropy with label_smoothing but forgot ignore_index, so padding is "
        "scored as a target.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I stored smoothing but computed plain cross-entropy with ignore_index.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence over its tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong_tokens",
        LsOverWrongTokens,
        "mistake",
        "I put 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "probabilities_not_log",
        LsProbsNotLogProbs,
        "mistake",
        "I built the smoothed target right but multiplied it with softmax probabilities "
        "instead of log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LsUniformSumNotMean,
        "mistake",
        "The uniform part sums -log p over the vocabulary instead of averaging it (missing 1/V).",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, the time axis of (B, T, V), instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "smoothing_term_over_padding",
        LsSmoothTermUnmasked,
        "mistake",
        "nll_loss ignores the padding, but I averaged the smoothing term over every position, "
        "padding included (and it sends gradient to the padding).",
    ),
    BlindCase(
        CHECK,
        "no_one_minus_eps",
        LsNoOneMinusEps,
        "mistake",
        "I added eps times the uniform cross-entropy to the full cross-entropy, without the "
        "(1 - eps) weight.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I used a KL divergence against the smoothed target, as in the Annotated Transformer; it "
        "is off by the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumReduction,
        "mistake",
        "reduction='sum': the total over the tokens, not the mean.",
    ),
    BlindCase(
        CHECK,
        "pytorch_label_smoothing",
        LsPyTorch,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index on flattened tensors.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LsExplicitTarget,
        "correct",
        "The smoothed target q built with one_hot, -sum q log p, torch.where for the padding; an "
        "extra pad_id argument with a default.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_indexing",
        LsLogSumExp,
        "correct",
        "Only the real tokens selected by boolean indexing; -log p written as logsumexp - logit.",
    ),
]
