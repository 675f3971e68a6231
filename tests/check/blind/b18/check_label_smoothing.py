"""Blind set B18, check_label_smoothing (chapter 14): the label-smoothed loss as readers write
it."""

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
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)) * keep
        return loss.mean()  # over every position of the batch


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = (target != PAD_ID).to(log_p.dtype)
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)) * keep  # (B, T)
        per_sentence = loss.sum(1) / keep.sum(1)  # each sentence's mean
        return per_sentence.mean()


class LsWrongTokensOnly(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / (V - 1))  # epsilon over the wrong tokens
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * log_p).sum(-1)
        return loss[keep].mean()


class LsForgotOneMinusEps(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = nll - self.smoothing * log_p.mean(-1)  # the smoothing term added on top
        return loss[keep].mean()


class LsSumInsteadOfMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_p.sum(-1)  # epsilon on every token
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss[keep].mean()


class LsKlDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_p[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(log_p[keep], q[keep], reduction="sum")  # KLDivLoss, as the Annotated one
        return kl / keep.sum()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)
        return loss[keep].mean()


class LsRawLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # logits are log-probs
        loss = (1 - self.smoothing) * nll - self.smoothing * logits.mean(-1)
        return loss[keep].mean()


class LsKeepInverted(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        pad = target == PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)).masked_fill(pad, 0)
        return loss.sum() / pad.sum().clamp(min=1)  # divided by the padding count


class LsReturnsPerToken(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        return ((1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)) * keep  # (B, T)


class LsSmoothingPadGradient(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        nll = F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID, reduction="sum"
        )
        uniform = -logits.log_softmax(-1).mean(-1).sum()  # every position: padding too
        n = (target != PAD_ID).sum()
        return ((1 - self.smoothing) * nll + self.smoothing * uniform) / n


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(nn.Module):
    """PyTorch's own loss, which has the same definition."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.loss = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.flatten(0, -2), target.flatten())


class LsExplicitDistribution(_Base):
    """Builds the smoothed target q and takes -sum(q log p); extra arguments with defaults."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID, reduction: str = "mean") -> None:
        super().__init__(smoothing)
        self.pad_id, self.reduction = pad_id, reduction

    def smoothed_target(self, target: Tensor, V: int, dtype: torch.dtype) -> Tensor:
        q = F.one_hot(target, V).to(dtype) * (1 - self.smoothing)
        return q + self.smoothing / V

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        q = self.smoothed_target(target, logits.shape[-1], logits.dtype)
        per_token = -(q * torch.log(torch.softmax(logits, dim=-1))).sum(-1)  # (B, T)
        real = target != self.pad_id
        per_token = torch.where(real, per_token, torch.zeros_like(per_token))
        if self.reduction == "sum":
            return per_token.sum()
        return per_token.sum() / real.sum()


class LsBooleanIndexing(_Base):
    """Selects the real positions first, then a plain mean over them."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != PAD_ID
        log_p = F.log_softmax(logits[real], dim=-1)  # (N, V)
        y = target[real]
        nll = F.nll_loss(log_p, y, reduction="none")
        smooth = -log_p.sum(-1) / logits.shape[-1]
        return ((1.0 - self.smoothing) * nll + self.smoothing * smooth).mean()


class LsLogSumExp(_Base):
    """-log p_k written as logsumexp(z) - z_k."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        z_y = torch.gather(logits, -1, target[..., None])[..., 0]
        nll = lse - z_y
        uniform = lse - logits.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        weight = (target != PAD_ID).to(loss.dtype)
        return (loss * weight).sum() / weight.sum()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the padding's loss but took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I stored smoothing but used plain F.cross_entropy with ignore_index, without it.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence over its real tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "epsilon_over_wrong_tokens",
        LsWrongTokensOnly,
        "mistake",
        "I built q with epsilon / (V - 1) on every wrong token and 1 - epsilon on the right one.",
    ),
    BlindCase(
        CHECK,
        "forgot_one_minus_epsilon",
        LsForgotOneMinusEps,
        "mistake",
        "I added epsilon times the uniform term to the full NLL, without the (1 - epsilon).",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsSumInsteadOfMean,
        "mistake",
        "I used the sum of -log p over the vocabulary for the smoothing term instead of its "
        "mean (epsilon per token, not epsilon / V).",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I used the KL divergence to the smoothed target, as the Annotated Transformer does; "
        "it is the cross-entropy minus the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, the time axis, instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_as_log_probs",
        LsRawLogits,
        "mistake",
        "I used the logits directly as log-probabilities, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "divide_by_padding_count",
        LsKeepInverted,
        "mistake",
        "I counted the tokens with target == PAD_ID for the mean, the wrong polarity.",
    ),
    BlindCase(
        CHECK,
        "returns_per_token",
        LsReturnsPerToken,
        "mistake",
        "I return the (B, T) loss of every token, masked, without reducing it to a number.",
    ),
    BlindCase(
        CHECK,
        "smoothing_term_over_padding",
        LsSmoothingPadGradient,
        "mistake",
        "The NLL ignores the padding through ignore_index, but my smoothing term sums over "
        "every position, padding included.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "nn.CrossEntropyLoss(label_smoothing=..., ignore_index=PAD_ID) on flattened inputs.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LsExplicitDistribution,
        "correct",
        "The smoothed target q built with one_hot, loss -sum(q log softmax); pad_id and "
        "reduction as extra arguments with defaults.",
    ),
    BlindCase(
        CHECK,
        "boolean_indexing",
        LsBooleanIndexing,
        "correct",
        "Selects the real positions with a boolean index first, then nll_loss and a mean.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        LsLogSumExp,
        "correct",
        "-log p written as logsumexp(z) - z, weighted by a float mask.",
    ),
]
