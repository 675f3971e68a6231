"""Blind set B16, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


class _Smoothing(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


# ---------------------------------------------------------------- mistakes


class LsMeanOverAllPositions(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        loss = loss.masked_fill(target == PAD_ID, 0.0)
        return loss.mean()  # padding zeroed, but still counted in the mean


class LsNoSmoothing(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        per_sentence = (loss * keep).sum(1) / keep.sum(1)  # each sentence's mean ...
        return per_sentence.mean()  # ... then the mean over the batch


class LsSpreadOverWrongTokens(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # the wrong tokens share eps
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsNoIgnoreIndex(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        criterion = nn.CrossEntropyLoss(label_smoothing=self.smoothing)
        return criterion(logits.flatten(0, 1), target.flatten())


class LsKlDivergence(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing))
        kl = F.kl_div(log_probs, q, reduction="none").sum(-1)  # as the Annotated Transformer
        keep = target != PAD_ID
        return kl[keep].sum() / keep.sum()


class LsLogSoftmaxOverTime(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # dim=1, as for (N, C) logits
        keep = target != PAD_ID
        nll = -log_probs.gather(2, target.unsqueeze(2)).squeeze(2)
        uniform = -log_probs.mean(2)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


class LsWeightsSwapped(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * uniform
        return loss[keep].mean()


class LsUniformSummed(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.sum(-1)  # eps over all tokens: I forgot the 1/V
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return (loss * keep).sum() / keep.sum()


class LsFixedSmoothing(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        criterion = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=PAD_ID)  # the paper's
        return criterion(logits.view(-1, V), target.view(-1))


class LsSumNotMean(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss[keep].sum()


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.transpose(1, 2),  # (B, V, T): the classes on dim 1
            target,
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsSmoothedTarget(nn.Module):
    """The target distribution q written out; ignore_index as an extra argument."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing, self.ignore_index = smoothing, ignore_index

    def smoothed_target(self, target: Tensor, V: int, like: Tensor) -> Tensor:
        q = like.new_full((*target.shape, V), self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), like.new_full((*target.shape, 1), 1 - self.smoothing)
        )
        return q

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != self.ignore_index
        log_p = logits[keep].log_softmax(-1)  # (N, V): the real tokens only
        q = self.smoothed_target(target[keep], logits.shape[-1], log_p)
        return -(q * log_p).sum(-1).mean()


class LsWhereNllLoss(_Smoothing):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = torch.log(torch.softmax(logits, dim=-1)).reshape(-1, V)
        flat = target.reshape(-1)
        nll = F.nll_loss(log_p, flat, ignore_index=PAD_ID, reduction="sum")
        real = flat != PAD_ID
        uniform = torch.where(real, -log_p.mean(dim=1), torch.zeros_like(flat, dtype=log_p.dtype))
        total = (1.0 - self.smoothing) * nll + self.smoothing * uniform.sum()
        return total / real.sum()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_the_mean",
        LsMeanOverAllPositions,
        "mistake",
        "I zeroed the loss at padding but took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index and forgot the smoothing altogether.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence's tokens and then averaged over the sentences.",
    ),
    BlindCase(
        CHECK,
        "eps_over_wrong_tokens",
        LsSpreadOverWrongTokens,
        "mistake",
        "I gave eps / (V - 1) to each wrong token and 1 - eps to the right one.",
    ),
    BlindCase(
        CHECK,
        "no_ignore_index",
        LsNoIgnoreIndex,
        "mistake",
        "I used nn.CrossEntropyLoss(label_smoothing=...) but forgot ignore_index=PAD_ID, so "
        "padding is scored as a target.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I returned the KL divergence to the smoothed target, as the Annotated Transformer "
        "does, instead of the cross-entropy.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsLogSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, which is the time axis of (B, T, V) logits.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I put eps on the right token's term and 1 - eps on the uniform term.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LsUniformSummed,
        "mistake",
        "The smoothing term sums -log p over the V tokens instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "smoothing_hard_coded",
        LsFixedSmoothing,
        "mistake",
        "I wrote the paper's 0.1 into the loss and ignored the smoothing argument.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumNotMean,
        "mistake",
        "I summed the loss over the real tokens and forgot to divide by their number.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_transposed",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy on logits.transpose(1, 2) with ignore_index and label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LsSmoothedTarget,
        "correct",
        "The smoothed target q built with scatter_add_ and -(q * log p) summed, on the real "
        "tokens only (boolean indexing); ignore_index an extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "nll_loss_sum_plus_uniform",
        LsWhereNllLoss,
        "correct",
        "log(softmax), F.nll_loss with reduction='sum' for the right tokens, the uniform term "
        "with torch.where, both divided by the number of real tokens.",
    ),
]
