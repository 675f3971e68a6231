"""Blind set B6, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


# ---------------------------------------------------------------- mistakes


class ScatterOverwrites(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        q = torch.full_like(logits, self.smoothing / V)
        # scatter_ overwrites: the right token gets 1 - eps instead of 1 - eps + eps / V
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * logits.log_softmax(-1)).sum(-1)  # (B, T)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class DefaultIgnoreIndex(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # PyTorch's ignore_index is -100 by default; our padding is PAD_ID, so it is scored
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class MeanPerSentence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)  # (B, T)
        keep = (target != PAD_ID).float()
        per_sentence = (loss * keep).sum(1) / keep.sum(1)  # the mean of each sentence ...
        return per_sentence.mean()  # ... then the mean over sentences


class AnnotatedKLDiv(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.criterion = nn.KLDivLoss(reduction="sum")

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        x = logits.log_softmax(-1).reshape(-1, V)
        t = target.reshape(-1)
        true_dist = torch.full_like(x, self.smoothing / (V - 2))  # as the Annotated Transformer
        true_dist.scatter_(1, t.unsqueeze(1), 1.0 - self.smoothing)
        true_dist[:, PAD_ID] = 0
        true_dist[t == PAD_ID] = 0
        return self.criterion(x, true_dist.detach()) / (t != PAD_ID).sum()


class UniformTermOnLogits(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = F.log_softmax(logits, dim=-1)
        nll = -log_p.gather(-1, target[..., None])[..., 0]
        uniform = -logits.mean(-1)  # forgot the log-softmax in the smoothing term
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        keep = target != PAD_ID
        return loss[keep].mean()


class LogSoftmaxOverTime(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = F.log_softmax(logits, dim=1)  # dim=1, the class axis of (N, C) habits
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class HardCodedEpsilon(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        eps = 0.1  # the paper's value, typed in while testing
        log_p = logits.log_softmax(-1)
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - eps) * nll - eps * log_p.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class SumOverTokens(nn.Module):
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
            reduction="sum",  # "the paper sums the loss"
        )


class SmoothingOnProbabilities(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # smoothed the model's distribution instead of the target: p' = (1 - eps) p + eps / V
        p = (1 - self.smoothing) * logits.softmax(-1) + self.smoothing / V
        nll = -p.log().gather(-1, target.unsqueeze(-1)).squeeze(-1)
        keep = target != PAD_ID
        return nll[keep].mean()


class PaddingZeroedAfterMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)  # (B, T)
        loss = loss.masked_fill(target == PAD_ID, 0.0)
        return loss.mean()  # the padding positions are zero, but they still count in the mean


# ---------------------------------------------------------------- correct variants


class CrossEntropyClassAxis(nn.Module):
    """PyTorch's own loss, with the class axis moved to dim 1 and ignore_index=PAD_ID."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.transpose(1, 2),  # (B, V, T)
            target,
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class ExplicitTargetDistribution(nn.Module):
    """The smoothed target q built as a tensor, then -sum(q log p) over the real tokens."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        one_hot = F.one_hot(target, V).to(logits.dtype)
        q = (1 - self.smoothing) * one_hot + self.smoothing / V
        per_token = -(q * torch.log_softmax(logits, dim=-1)).sum(dim=-1)  # (B, T)
        real = target != PAD_ID
        return per_token[real].sum() / real.sum()


class LogSumExpForm(nn.Module):
    """-log p_k = logsumexp - logit_k, so both terms come from one logsumexp."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.eps = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = logits.logsumexp(-1)  # (B, T)
        right = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        per_token = lse - (1 - self.eps) * right - self.eps * logits.mean(-1)
        weight = (target != PAD_ID).to(logits.dtype)
        return (per_token * weight).sum() / weight.sum()


CASES = [
    BlindCase(
        CHECK,
        "scatter_overwrites",
        ScatterOverwrites,
        "mistake",
        "I filled q with eps / V and then used scatter_ to write 1 - eps on the right token, "
        "which overwrites its eps / V instead of adding to it.",
    ),
    BlindCase(
        CHECK,
        "default_ignore_index",
        DefaultIgnoreIndex,
        "mistake",
        "I used F.cross_entropy with label_smoothing but kept the default ignore_index=-100, "
        "so the padding positions are scored and counted in the mean.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        MeanPerSentence,
        "mistake",
        "I averaged the loss over each sentence's real tokens and then over the sentences, "
        "instead of over all real tokens of the batch.",
    ),
    BlindCase(
        CHECK,
        "annotated_kl_div",
        AnnotatedKLDiv,
        "mistake",
        "I followed the Annotated Transformer: KL divergence with eps / (V - 2) on every token "
        "but the right one and the padding column, divided by the number of real tokens.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_on_logits",
        UniformTermOnLogits,
        "mistake",
        "In the smoothing term I averaged the raw logits, -logits.mean(-1), instead of the "
        "log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LogSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, which is the time axis of (B, T, V) logits, not the "
        "vocabulary.",
    ),
    BlindCase(
        CHECK,
        "hard_coded_epsilon",
        HardCodedEpsilon,
        "mistake",
        "I wrote eps = 0.1 in forward and never use self.smoothing.",
    ),
    BlindCase(
        CHECK,
        "sum_over_tokens",
        SumOverTokens,
        "mistake",
        "I return the sum over the real tokens (reduction='sum') instead of their mean.",
    ),
    BlindCase(
        CHECK,
        "smoothing_on_probabilities",
        SmoothingOnProbabilities,
        "mistake",
        "I smoothed the model's distribution, p' = (1 - eps) p + eps / V, and took the NLL "
        "of the right token under it, instead of smoothing the target.",
    ),
    BlindCase(
        CHECK,
        "padding_zeroed_then_mean",
        PaddingZeroedAfterMean,
        "mistake",
        "I set the padding positions' loss to zero and then took .mean() over all B * T "
        "positions, so padding still counts in the denominator.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_class_axis",
        CrossEntropyClassAxis,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index=PAD_ID, on logits transposed "
        "to (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        ExplicitTargetDistribution,
        "correct",
        "The smoothed target q = (1 - eps) one_hot + eps / V as a tensor, -sum(q log p) per "
        "token, summed over the real tokens and divided by their count.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_form",
        LogSumExpForm,
        "correct",
        "Written with logsumexp: loss = lse - (1 - eps) logit_y - eps mean(logits), averaged "
        "with 0/1 weights over the real tokens.",
    ),
]
