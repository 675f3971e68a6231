"""Blind set B21, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

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


class LsPaddingCounted(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss.mean()  # every position, padding included


class LsCrossEntropyNoIgnore(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # label_smoothing given, ignore_index left at its default -100
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return (loss.sum(1) / keep.sum(1).clamp(min=1)).mean()  # per sentence, then the batch


class LsSpreadOverWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        dist = torch.full_like(log_probs, self.smoothing / (V - 1))  # the wrong tokens only
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(dist * log_probs).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsUniformSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(-1)  # sum over V where the mean (smoothing / V each) was meant
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LsKeepsOnlyPadding(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target == PAD_ID  # the comparison the wrong way round
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum().clamp(min=1)


class LsUnmaskedNumerator(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss.sum() / keep.sum()  # divided by the real tokens, but padding still summed


class LsWeightsSwapped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (self.smoothing * nll - (1 - self.smoothing) * log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LsUniformOnLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logits.mean(-1)  # the raw logits here, not the log-probabilities
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=1)  # dim=1 of (B, T, V): over the positions
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LsReturnsFloat(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        loss = F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )
        return loss.item()  # a Python number to print


class LsArgsSwapped(_Base):
    def forward(self, target: Tensor, logits: Tensor) -> Tensor:  # target first
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


# ---------------------------------------------------------------- correct variants


class LsCrossEntropy(_Base):
    """PyTorch's own cross_entropy with label_smoothing and ignore_index."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(_Base):
    """The smoothed target distribution built with scatter, then -sum(q log p)."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q = q.scatter_add(
            -1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1.0 - self.smoothing)
        )
        per_token = -(q * log_probs).sum(dim=-1)
        keep = (target != PAD_ID).to(per_token.dtype)
        return (per_token * keep).sum() / keep.sum().clamp(min=1)


class LsSelectFirst(_Base):
    """The real positions picked by boolean indexing first, then a plain mean."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != PAD_ID
        lp = torch.log_softmax(logits[real], dim=-1)  # (N, V)
        t = target[real]
        nll = -lp[torch.arange(len(t)), t]
        smooth = -lp.sum(-1) / lp.shape[-1]
        per_token = (1.0 - self.smoothing) * nll + self.smoothing * smooth
        return per_token.sum() / max(len(t), 1)


CASES = [
    BlindCase(
        CHECK,
        "padding_counted",
        LsPaddingCounted,
        "mistake",
        "I took loss.mean() over all positions, padding included",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_no_ignore",
        LsCrossEntropyNoIgnore,
        "mistake",
        "F.cross_entropy with label_smoothing but no ignore_index=PAD_ID",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I stored smoothing but computed plain cross-entropy",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "mean over each sentence's tokens, then mean over sentences",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong",
        LsSpreadOverWrong,
        "mistake",
        "smoothing / (V - 1) on every wrong token, 1 - smoothing on the right one",
    ),
    BlindCase(
        CHECK,
        "uniform_summed",
        LsUniformSummed,
        "mistake",
        "smoothing times the sum of -log p over V, not the mean",
    ),
    BlindCase(
        CHECK,
        "keeps_only_padding",
        LsKeepsOnlyPadding,
        "mistake",
        "my mask was target == PAD_ID, so only padding is scored",
    ),
    BlindCase(
        CHECK,
        "unmasked_numerator",
        LsUnmaskedNumerator,
        "mistake",
        "divided by the number of real tokens but forgot to zero the padding's losses",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "smoothing on the true token and 1 - smoothing on the uniform part",
    ),
    BlindCase(
        CHECK,
        "uniform_on_logits",
        LsUniformOnLogits,
        "mistake",
        "the uniform term used -logits.mean(-1) instead of the log-probabilities",
    ),
    BlindCase(
        CHECK,
        "softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "log_softmax(dim=1), which is the time axis of (B, T, V)",
    ),
    BlindCase(
        CHECK, "returns_float", LsReturnsFloat, "mistake", "I returned loss.item(), a Python float"
    ),
    BlindCase(
        CHECK, "forward_args_swapped", LsArgsSwapped, "mistake", "my forward takes (target, logits)"
    ),
    BlindCase(
        CHECK,
        "cross_entropy_builtin",
        LsCrossEntropy,
        "correct",
        "F.cross_entropy(label_smoothing=..., ignore_index=PAD_ID) on flattened tensors",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LsExplicitDistribution,
        "correct",
        "the smoothed target built with scatter_add, then -sum(q * log p)",
    ),
    BlindCase(
        CHECK,
        "select_real_first",
        LsSelectFirst,
        "correct",
        "boolean-indexed the real positions first, then a plain mean",
    ),
]
