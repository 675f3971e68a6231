"""Blind set B23, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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
        uniform = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.mean()  # mean over B * T positions, padding included


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # cross_entropy with ignore_index, but I forgot to pass label_smoothing
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1)  # the mean of each sentence ...
        return per_sentence.mean()  # ... then the mean of the sentences


class LsWrongTokensOnly(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # eps over the V - 1 others
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(-1)
        return loss[keep].mean()


class LsUniformSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(dim=-1)  # forgot the 1 / V
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].sum() / keep.sum()


class LsWeightsSwapped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * uniform  # the two weights swapped
        return loss[keep].mean()


class LsKlDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing))
        keep = target != PAD_ID
        # KL(q || p), as the Annotated Transformer does, instead of the cross-entropy
        kl = F.kl_div(log_probs, q, reduction="none").sum(-1)
        return kl[keep].mean()


class LsDefaultIgnoreIndex(_Base):
    def __init__(self, smoothing: float) -> None:
        super().__init__(smoothing)
        self.ce = nn.CrossEntropyLoss(label_smoothing=smoothing)  # ignore_index left at -100

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.ce(logits.flatten(0, 1), target.flatten())


class LsLogSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # dim=1: the time axis of (B, T, V)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


class LsSumOverTokensMeanOverBatch(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / logits.shape[0]  # divided by the number of sentences


class LsUniformOverPaddingToo(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        nll = (nll * keep).sum() / keep.sum()
        uniform = -log_probs.mean(dim=-1).mean()  # this mean still runs over the padding
        return (1 - self.smoothing) * nll + self.smoothing * uniform


class LsSmoothedOneHotOffByOneHot(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # overwrote the eps/V there
        keep = target != PAD_ID
        return -(q * log_probs).sum(-1)[keep].mean()


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(nn.Module):
    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing, self.ignore_index = smoothing, ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.view(-1, V),
            target.view(-1),
            ignore_index=self.ignore_index,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != PAD_ID
        log_probs = logits[keep].log_softmax(-1)  # (N, V): the real tokens only
        q = torch.full_like(log_probs, self.smoothing / V)
        q[torch.arange(len(q)), target[keep]] += 1 - self.smoothing
        if len(q) == 0:
            return logits.sum() * 0.0  # no real token: zero loss, zero gradient
        return -(q * log_probs).sum(-1).mean()


class LsLogsumexp(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        safe = target.clamp(min=0)
        right = logits.gather(-1, safe[..., None]).squeeze(-1)
        nll = lse - right
        uniform = lse - logits.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        keep = target.ne(PAD_ID)
        loss = torch.where(keep, loss, torch.zeros_like(loss))
        return loss.sum() / keep.sum().clamp(min=1)  # 0, not NaN, for an all-padding batch


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsMeanOverAllPositions,
        "mistake",
        "I zeroed the padding's loss but then took .mean() over all B*T positions",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "F.cross_entropy with ignore_index=PAD_ID, but I never passed label_smoothing",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged within each sentence and then over the sentences",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LsWrongTokensOnly,
        "mistake",
        "my target puts eps / (V - 1) on every wrong token and 1 - eps on the right one",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsUniformSumNotMean,
        "mistake",
        "the uniform term is -log_probs.sum(-1): I forgot to divide it by V",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I weighted the right token's loss by eps and the uniform term by 1 - eps",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I used F.kl_div against the smoothed target instead of the cross-entropy",
    ),
    BlindCase(
        CHECK,
        "default_ignore_index",
        LsDefaultIgnoreIndex,
        "mistake",
        "nn.CrossEntropyLoss(label_smoothing=...) without ignore_index: padding (0) is scored",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsLogSoftmaxOverTime,
        "mistake",
        "log_softmax(logits, dim=1): over the time axis instead of the vocabulary",
    ),
    BlindCase(
        CHECK,
        "divide_by_batch_size",
        LsSumOverTokensMeanOverBatch,
        "mistake",
        "I summed the token losses and divided by the batch size B",
    ),
    BlindCase(
        CHECK,
        "uniform_term_over_padding",
        LsUniformOverPaddingToo,
        "mistake",
        "I masked the right-token term, but the uniform term's mean ran over padding too",
    ),
    BlindCase(
        CHECK,
        "right_token_loses_eps_over_v",
        LsSmoothedOneHotOffByOneHot,
        "mistake",
        "q = eps/V everywhere, then scatter_ of 1 - eps overwrote the right token's eps/V",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index; an extra ignore_index argument",
    ),
    BlindCase(
        CHECK,
        "explicit_q_on_real_tokens",
        LsExplicitDistribution,
        "correct",
        "I selected the real tokens with a boolean index and built q explicitly",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        LsLogsumexp,
        "correct",
        "written with logsumexp: nll = lse - logit_y, uniform = lse - mean logit",
    ),
]
