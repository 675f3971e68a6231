"""Blind set B34, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


# ---------------------------------------------------------------- mistakes


class LsPaddingCounted(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsNoSmoothing(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = (target != PAD_ID).float()
        per_sentence = (loss * keep).sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LsOverWrongTokens(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        q = torch.full_like(logp, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * logp).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsKlDivergence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        q = torch.full_like(logp, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing))
        kl = F.kl_div(logp, q, reduction="none").sum(-1)  # as in the Annotated Transformer
        keep = target != PAD_ID
        return kl[keep].sum() / keep.sum()


class LsNoLogSoftmax(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits  # the model's output is already a log-probability
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsWeightsSwapped(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = self.smoothing * nll - (1 - self.smoothing) * logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsUniformSumNotMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsLogSoftmaxOverTime(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsDivideByAllPositions(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)) * (target != PAD_ID)
        return loss.mean()  # the padded positions are zero already


class LsSumReduction(nn.Module):
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
            reduction="sum",
        )


class LsPadGetsNoSmoothing(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        q = torch.full_like(logp, self.smoothing / (V - 1))
        q[..., PAD_ID] = 0.0  # padding is never a right answer, so it gets no mass
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * logp).sum(-1)
        keep = target != PAD_ID
        return loss[keep].sum() / keep.sum()


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(nn.Module):
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


class LsClassAxisSecond(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.criterion = nn.CrossEntropyLoss(ignore_index=PAD_ID, label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.criterion(logits.transpose(1, 2), target)  # (B, V, T), as PyTorch wants


class LsExplicitTarget(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != PAD_ID
        logp = F.log_softmax(logits.float(), dim=-1)
        with torch.no_grad():
            q = torch.full_like(logp, self.smoothing / V)
            q.scatter_add_(
                -1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing)
            )
        per_token = -(q * logp).sum(-1)
        return torch.where(keep, per_token, torch.zeros_like(per_token)).sum() / keep.sum()


class LsEinsumMaskedSelect(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        logp = logits[keep].log_softmax(-1)  # (N, V): only the real tokens
        t = target[keep]
        V = logp.shape[-1]
        q = F.one_hot(t, V).to(logp.dtype) * (1 - self.smoothing) + self.smoothing / V
        return -torch.einsum("nv,nv->", q, logp) / len(t)


CASES = [
    BlindCase(
        CHECK,
        "padding_counted",
        LsPaddingCounted,
        "mistake",
        "I used F.cross_entropy with label_smoothing but forgot ignore_index",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I stored smoothing but never passed it to cross_entropy",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence over its tokens, then averaged the sentences",
    ),
    BlindCase(
        CHECK,
        "over_wrong_tokens",
        LsOverWrongTokens,
        "mistake",
        "I put eps / (V - 1) on the wrong tokens and 1 - eps on the right one",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I used KL divergence to the smoothed target like the Annotated Transformer",
    ),
    BlindCase(
        CHECK,
        "no_log_softmax",
        LsNoLogSoftmax,
        "mistake",
        "I used the logits directly as log-probabilities",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I put eps on the right token's term and 1 - eps on the uniform term",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsUniformSumNotMean,
        "mistake",
        "for the uniform part I summed -log p over the vocabulary instead of averaging",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsLogSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, which is the time axis",
    ),
    BlindCase(
        CHECK,
        "divide_by_all_positions",
        LsDivideByAllPositions,
        "mistake",
        "I zeroed the padding, then took .mean() over every position",
    ),
    BlindCase(
        CHECK,
        "sum_reduction",
        LsSumReduction,
        "mistake",
        "I used reduction='sum' so long batches count more",
    ),
    BlindCase(
        CHECK,
        "pad_gets_no_smoothing",
        LsPadGetsNoSmoothing,
        "mistake",
        "I gave the PAD column no smoothing mass and spread eps over the other V - 1",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy with ignore_index=PAD_ID and label_smoothing",
    ),
    BlindCase(
        CHECK,
        "class_axis_second",
        LsClassAxisSecond,
        "correct",
        "nn.CrossEntropyLoss on logits transposed to (B, V, T)",
    ),
    BlindCase(
        CHECK,
        "explicit_target",
        LsExplicitTarget,
        "correct",
        "I built the smoothed target distribution and took the masked mean",
    ),
    BlindCase(
        CHECK,
        "einsum_masked_select",
        LsEinsumMaskedSelect,
        "correct",
        "I selected the real tokens first and used einsum for the cross-entropy",
    ),
]
