"""Blind set B19, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


# ---------------------------------------------------------------- mistakes


class LSPaddingInMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.mean()  # mean over every position


class LSNoSmoothing(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LSMeanOverSentences(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).to(logits.dtype)
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        per_sentence = (loss * keep).sum(1) / keep.sum(1)  # each sentence's mean
        return per_sentence.mean()


class LSEpsOverWrongTokens(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        dist = torch.full_like(log_probs, self.smoothing / (V - 1))  # eps over the others
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(dist * log_probs).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LSKLDivergence(nn.Module):
    """As in the Annotated Transformer: KL divergence to the smoothed target."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        dist = torch.full_like(log_probs, self.smoothing / V)
        dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_probs[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(log_probs[keep], dist[keep], reduction="sum")
        return kl / keep.sum()


class LSSumOverVocab(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.sum(dim=-1)  # smoothing term over all tokens
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.sum() / keep.sum()


class LSNoLogSoftmax(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # logits used as log-probs
        uniform = -logits.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LSDefaultIgnoreIndex(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # PyTorch's default ignore_index (-100) is not our PAD_ID
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LSSumNotMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.sum()  # the total, not divided by the number of tokens


class LSSoftmaxOverTime(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # dim=1 is T, not V, for (B, T, V)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LSMutatesTarget(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        target[target == PAD_ID] = -100  # PyTorch's ignore_index (writes into the caller's tensor)
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LSPadGradient(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (1 - self.smoothing) * nll * keep + self.smoothing * uniform  # forgot keep here
        return loss.sum() / keep.sum()


# ---------------------------------------------------------------- correct variants


class LSCrossEntropy(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LSExplicitDistribution(nn.Module):
    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != self.ignore_index
        logits, target = logits[keep], target[keep]  # (N, V), (N,)
        dist = torch.full_like(logits, self.smoothing / V)
        dist[torch.arange(len(target)), target] += 1 - self.smoothing
        return -(dist * logits.log_softmax(-1)).sum(-1).mean()


class LSTorchWhere(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.eps = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
        one_hot = F.one_hot(target, V).to(logits.dtype)
        soft = one_hot * (1 - self.eps) + self.eps / V
        per_token = -(soft * log_probs).sum(-1)
        keep = target != PAD_ID
        per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
        return per_token.sum() / keep.sum()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LSPaddingInMean,
        "mistake",
        "I zeroed the padding's loss but then took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothing,
        "mistake",
        "I used plain F.cross_entropy with ignore_index and forgot the smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LSMeanOverSentences,
        "mistake",
        "I averaged each sentence's tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LSEpsOverWrongTokens,
        "mistake",
        "I put 1 - eps on the right token and eps / (V - 1) on each wrong one.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LSKLDivergence,
        "mistake",
        "I used F.kl_div against the smoothed target, as the Annotated Transformer does, "
        "so the value is off by the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "eps_on_every_token_sum",
        LSSumOverVocab,
        "mistake",
        "For the smoothing term I summed -log p over the vocabulary instead of averaging.",
    ),
    BlindCase(
        CHECK,
        "no_log_softmax",
        LSNoLogSoftmax,
        "mistake",
        "I forgot the log_softmax and used the raw logits as log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "default_ignore_index",
        LSDefaultIgnoreIndex,
        "mistake",
        "I used F.cross_entropy(label_smoothing=eps) without ignore_index=PAD_ID, so the "
        "padding is scored as token 0.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LSSumNotMean,
        "mistake",
        "I returned the sum over the real tokens, not divided by their number.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LSSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, which is T for (B, T, V).",
    ),
    BlindCase(
        CHECK,
        "mutates_target",
        LSMutatesTarget,
        "mistake",
        "I set the padding positions of target to -100 in place so that F.cross_entropy "
        "ignores them, which changes the caller's target tensor.",
    ),
    BlindCase(
        CHECK,
        "smoothing_term_on_padding",
        LSPadGradient,
        "mistake",
        "I multiplied only the nll term by the padding mask; the smoothing term of the "
        "padding positions still counts.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_label_smoothing",
        LSCrossEntropy,
        "correct",
        "F.cross_entropy with ignore_index=PAD_ID and label_smoothing on flattened logits.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LSExplicitDistribution,
        "correct",
        "Select the real positions by boolean indexing, build the smoothed distribution "
        "explicitly; an extra ignore_index argument with a default.",
    ),
    BlindCase(
        CHECK,
        "one_hot_logsumexp",
        LSTorchWhere,
        "correct",
        "One-hot target mixed with eps / V, log-probs via logsumexp, torch.where for pad.",
    ),
]
