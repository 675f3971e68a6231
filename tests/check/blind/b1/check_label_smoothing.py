"""Blind cases for check_label_smoothing (chapter 14)."""

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


class LSPaddingCounted(_Base):
    def forward(self, logits, target):
        logp = F.log_softmax(logits, -1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss.mean()  # every position, padding included


class LSSpreadOverWrong(_Base):
    def forward(self, logits, target):
        V = logits.shape[-1]
        dist = torch.full_like(logits, self.smoothing / (V - 1))
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(dist * F.log_softmax(logits, -1)).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LSMeanOverSentences(_Base):
    def forward(self, logits, target):
        logp = F.log_softmax(logits, -1)
        keep = (target != PAD_ID).float()
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)) * keep
        return (loss.sum(1) / keep.sum(1)).mean()


class LSSumUniform(_Base):
    def forward(self, logits, target):
        logp = F.log_softmax(logits, -1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.sum(-1)  # sum, not mean over V
        return loss[keep].mean()


class LSNoSmoothingUsed(_Base):
    def forward(self, logits, target):
        return F.cross_entropy(logits.transpose(1, 2), target, ignore_index=PAD_ID)


class LSLogOfSoftmaxOfSmoothedLogits(_Base):
    def forward(self, logits, target):
        V = logits.shape[-1]
        one_hot = F.one_hot(target, V).to(logits.dtype)
        smoothed = (1 - self.smoothing) * one_hot + self.smoothing / V
        probs = torch.softmax(logits, -1)
        loss = -(smoothed * torch.log(probs + 1e-9)).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum() / logits.shape[0]  # divided by B once more


class LSNoGatherMaskGrad(_Base):
    def forward(self, logits, target):
        V = logits.shape[-1]
        logp = F.log_softmax(logits, -1)
        keep = target != PAD_ID
        dist = torch.full_like(logp, self.smoothing / V)
        dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing)
        )
        loss = -(dist * logp).sum(-1)
        n = keep.sum()
        return (
            loss.sum() / n - (loss * ~keep).sum().detach() / n
        )  # value right, padding still gets gradient


class LSSmoothingOnCorrectOnly(_Base):
    def forward(self, logits, target):
        logp = F.log_softmax(logits, -1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        return ((1 - self.smoothing) * nll)[keep].mean()  # dropped the uniform term


class LSArgsSwapped(_Base):
    def forward(self, target, logits):  # arguments in the order of a metric (y_true, y_pred)
        return F.cross_entropy(
            logits.transpose(1, 2), target, ignore_index=PAD_ID, label_smoothing=self.smoothing
        )


class LSTorchBuiltin(nn.Module):
    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.loss = nn.CrossEntropyLoss(ignore_index=ignore_index, label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


class LSOneHotDistribution(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        keep = target.ne(PAD_ID)
        logits, target = logits[keep], target[keep]  # (N, V), (N,)
        q = torch.full_like(logits, self.smoothing / V)
        q[torch.arange(len(target)), target] += 1 - self.smoothing
        return torch.sum(-q * torch.log_softmax(logits, dim=-1)) / len(target)


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LSPaddingCounted,
        "mistake",
        "averages the smoothed loss over every position, padding included",
    ),
    BlindCase(
        CHECK,
        "spread_over_v_minus_1",
        LSSpreadOverWrong,
        "mistake",
        "puts smoothing / (V - 1) on the wrong tokens and 1 - smoothing on the right one",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LSMeanOverSentences,
        "mistake",
        "averages each sentence's tokens first, then the sentences",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LSSumUniform,
        "mistake",
        "sums the log-probabilities over V for the uniform part instead of averaging them",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothingUsed,
        "mistake",
        "stores smoothing but returns the plain cross-entropy",
    ),
    BlindCase(
        CHECK,
        "extra_division_by_batch",
        LSLogOfSoftmaxOfSmoothedLogits,
        "mistake",
        "builds the smoothed one-hot target right but divides the token mean by the batch size again",
    ),
    BlindCase(
        CHECK,
        "padding_gets_gradient",
        LSNoGatherMaskGrad,
        "mistake",
        "subtracts the padding's loss detached, so the value is right but padding positions still get a gradient",
    ),
    BlindCase(
        CHECK,
        "uniform_term_dropped",
        LSSmoothingOnCorrectOnly,
        "mistake",
        "scales the true token's loss by (1 - smoothing) and leaves out the smoothing term",
    ),
    BlindCase(
        CHECK,
        "slip_forward_target_first",
        LSArgsSwapped,
        "mistake",
        "writes forward(target, logits), the arguments in the other order",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_label_smoothing",
        LSTorchBuiltin,
        "correct",
        "wraps nn.CrossEntropyLoss(ignore_index=PAD_ID, label_smoothing=smoothing) on flattened tensors",
    ),
    BlindCase(
        CHECK,
        "select_real_then_distribution",
        LSOneHotDistribution,
        "correct",
        "selects the real positions first, builds the smoothed distribution by indexing, and divides by their count",
    ),
]
