"""Blind set B30, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


# ---------------------------------------------------------------- mistakes


class LSMeanOverAll(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * keep).mean()  # padding zeroed, then the mean


class LSNoSmoothing(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LSDefaultIgnoreIndex(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.loss = nn.CrossEntropyLoss(label_smoothing=smoothing)  # ignores -100, not PAD

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.flatten(0, 1), target.flatten())


class LSMeanPerSentence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LSSpreadOverWrong(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        true_dist = torch.full_like(logits, self.smoothing / (V - 1))
        true_dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(true_dist * logits.log_softmax(-1)).sum(-1)
        return loss[keep].mean()


class LSSumOverPadding(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss.sum() / (target != PAD_ID).sum()  # divide by the real tokens


class LSNoLogSoftmax(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # logits as log-probs
        loss = (1 - self.smoothing) * nll - self.smoothing * logits.mean(-1)
        return loss[keep].mean()


class LSKLDiv(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        smooth = torch.full_like(logits, self.smoothing / V)
        smooth.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(smooth[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(logits.log_softmax(-1), smooth, reduction="none").sum(-1)
        return kl[keep].mean()


class LSSwappedWeights(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = self.smoothing * nll - (1 - self.smoothing) * log_probs.mean(-1)
        return loss[keep].mean()


class LSTargetNotNormalised(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        dist = F.one_hot(target, V).to(logits.dtype) + self.smoothing / V  # 1 + eps/V on the word
        keep = target != PAD_ID
        loss = -(dist * logits.log_softmax(-1)).sum(-1)
        return loss[keep].mean()


class LSLogSoftmaxTimeAxis(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss[keep].mean()


class LSSum(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss[keep].sum()  # the loss of the batch


# ---------------------------------------------------------------- correct variants


class LSBuiltin(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.transpose(1, 2),  # (B, V, T), the class axis second
            target,
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LSExplicitDistribution(nn.Module):
    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != self.pad_id
        one_hot = F.one_hot(target.masked_fill(~keep, 0), V).to(logits.dtype)
        dist = (1 - self.smoothing) * one_hot + self.smoothing / V
        per_token = -(dist * F.log_softmax(logits, dim=-1)).sum(-1)
        per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
        return per_token.sum() / keep.sum().clamp(min=1)


class LSFlatSelect(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        flat_logits, flat_target = logits.reshape(-1, V), target.reshape(-1)
        real = flat_target != PAD_ID
        lp = torch.log_softmax(flat_logits[real], dim=-1)  # (N_real, V)
        picked = lp[torch.arange(len(lp)), flat_target[real]]
        eps = self.smoothing
        return -((1 - eps) * picked + eps * lp.sum(-1) / V).mean()


CASES = [
    BlindCase(
        CHECK,
        "mean_over_all_positions",
        LSMeanOverAll,
        "mistake",
        "I zeroed the padding's loss and then took .mean(), which still divides by every position.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index and forgot to pass the smoothing.",
    ),
    BlindCase(
        CHECK,
        "builtin_default_ignore_index",
        LSDefaultIgnoreIndex,
        "mistake",
        "I used nn.CrossEntropyLoss(label_smoothing=...) and kept its default ignore_index "
        "(-100), so the padding is scored.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        LSMeanPerSentence,
        "mistake",
        "I averaged the tokens of each sentence, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong_tokens",
        LSSpreadOverWrong,
        "mistake",
        "I built the smoothed target with smoothing / (V - 1) on the other tokens and "
        "1 - smoothing on the right one.",
    ),
    BlindCase(
        CHECK,
        "padding_in_numerator",
        LSSumOverPadding,
        "mistake",
        "I summed the loss over every position and divided by the number of real tokens.",
    ),
    BlindCase(
        CHECK,
        "no_log_softmax",
        LSNoLogSoftmax,
        "mistake",
        "I took the logits as if they were already log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LSKLDiv,
        "mistake",
        "I computed the KL divergence to the smoothed target (as nn.KLDivLoss does) rather than "
        "the cross-entropy.",
    ),
    BlindCase(
        CHECK,
        "swapped_weights",
        LSSwappedWeights,
        "mistake",
        "I put the weight smoothing on the right token and 1 - smoothing on the uniform part.",
    ),
    BlindCase(
        CHECK,
        "target_not_normalised",
        LSTargetNotNormalised,
        "mistake",
        "I added smoothing / V to the one-hot target without taking smoothing off the right token.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LSLogSoftmaxTimeAxis,
        "mistake",
        "I wrote F.log_softmax(logits, dim=1), over the positions instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LSSum,
        "mistake",
        "I returned the sum over the real tokens instead of their mean.",
    ),
    BlindCase(
        CHECK,
        "builtin_cross_entropy",
        LSBuiltin,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index=PAD_ID, the vocabulary moved to "
        "axis 1.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LSExplicitDistribution,
        "correct",
        "The smoothed target distribution built with one_hot, cross-entropy summed over the "
        "vocabulary; an extra pad_id argument that defaults to PAD_ID.",
    ),
    BlindCase(
        CHECK,
        "flatten_select_real",
        LSFlatSelect,
        "correct",
        "Flattened to (B*T, V), the real tokens selected by boolean indexing before the "
        "log-softmax.",
    ),
]
