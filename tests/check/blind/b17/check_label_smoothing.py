"""Blind set B17, check_label_smoothing (chapter 14): the label-smoothed loss as readers write
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


class LSCrossEntropyNoIgnore(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )  # ignore_index left at its default -100, but PAD_ID is 0


class LSZeroedButAllCounted(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_p.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        loss = loss * (target != PAD_ID)
        return loss.mean()  # mean over all B*T positions


class LSNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        return nll[keep].mean()  # plain cross-entropy; self.smoothing never used


class LSMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)  # each sentence's mean ...
        return per_sentence.mean()  # ... then the mean over sentences


class LSSpreadOverWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / (V - 1))  # epsilon over the V - 1 others
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_p).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LSUniformTermUnmasked(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        nll_loss = nll[keep].mean()
        smooth_loss = -log_p.mean(-1).mean()  # over every position, padding too
        return (1 - self.smoothing) * nll_loss + self.smoothing * smooth_loss


class LSUniformSum(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_p.sum(-1)  # sum over the vocabulary instead of the mean
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


class LSProbsNotLog(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        p = logits.softmax(-1)  # forgot the log
        q = torch.full_like(p, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(p[..., :1], 1 - self.smoothing))
        loss = -(q * p).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LSSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = F.log_softmax(logits, dim=1)  # dim=1, which I took for the vocabulary
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)
        return (loss * keep).sum() / keep.sum()


class LSAnnotatedKL(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / (V - 2))  # as the Annotated Transformer
        q[..., PAD_ID] = 0.0
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        kl = F.kl_div(log_p[keep], q[keep], reduction="sum")
        return kl / keep.sum()


class LSFixedEpsilon(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2), target.flatten(), ignore_index=PAD_ID, label_smoothing=0.1
        )  # the paper's 0.1, written in


# ---------------------------------------------------------------- correct variants


class LSTorchCrossEntropy(nn.Module):
    """PyTorch's own loss, with PAD_ID ignored; extra arguments with defaults."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.criterion = nn.CrossEntropyLoss(ignore_index=ignore_index, label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.criterion(logits.reshape(-1, logits.size(-1)), target.reshape(-1))


class LSExplicitDistribution(_Base):
    """Builds the smoothed target distribution q and takes -sum q log p over the real tokens
    only (boolean indexing first)."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        lg, tg = logits[keep], target[keep]  # (N, V), (N,)
        V = lg.shape[-1]
        q = torch.full_like(lg, self.smoothing / V)
        q[torch.arange(len(tg)), tg] += 1 - self.smoothing
        return -(q * torch.log_softmax(lg, dim=-1)).sum(dim=-1).mean()


class LSLogsumexp(_Base):
    """Log-probabilities written as logits - logsumexp; the sums done with einsum-free
    weighted sums and torch.where."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        right = logits.gather(-1, target[..., None])[..., 0]  # (B, T)
        nll = lse - right
        uniform = lse - logits.mean(dim=-1)
        per_token = (1.0 - self.smoothing) * nll + self.smoothing * uniform
        real = target.ne(PAD_ID)
        total = torch.where(real, per_token, torch.zeros_like(per_token)).sum()
        return total / real.sum()


CASES = [
    BlindCase(
        CHECK,
        "cross_entropy_pad_counted",
        LSCrossEntropyNoIgnore,
        "mistake",
        "I used F.cross_entropy with label_smoothing but forgot ignore_index=PAD_ID, so padding "
        "is scored and counted.",
    ),
    BlindCase(
        CHECK,
        "zeroed_but_mean_over_all",
        LSZeroedButAllCounted,
        "mistake",
        "I zeroed the loss at padding but then took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothing,
        "mistake",
        "I computed plain cross-entropy over the real tokens and never used smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LSMeanOverSentences,
        "mistake",
        "I averaged each sentence over its tokens and then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "spread_over_v_minus_1",
        LSSpreadOverWrong,
        "mistake",
        "I put 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_includes_padding",
        LSUniformTermUnmasked,
        "mistake",
        "I masked the cross-entropy term, but averaged the uniform (smoothing) term over every "
        "position, padding included.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_sum",
        LSUniformSum,
        "mistake",
        "For the smoothing term I summed -log p over the vocabulary instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "probabilities_not_log",
        LSProbsNotLog,
        "mistake",
        "I took -sum q * softmax(logits), forgetting the log.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_dim1",
        LSSoftmaxOverTime,
        "mistake",
        "I wrote log_softmax(logits, dim=1), which is the time axis for (B, T, V) logits.",
    ),
    BlindCase(
        CHECK,
        "annotated_kl",
        LSAnnotatedKL,
        "mistake",
        "I copied the Annotated Transformer: a KL divergence against eps / (V - 2) on all but "
        "the right token and padding.",
    ),
    BlindCase(
        CHECK,
        "smoothing_hard_coded",
        LSFixedEpsilon,
        "mistake",
        "I wrote label_smoothing=0.1 into the call instead of using self.smoothing.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LSTorchCrossEntropy,
        "correct",
        "nn.CrossEntropyLoss(ignore_index=PAD_ID, label_smoothing=smoothing) on flattened "
        "logits; an extra ignore_index argument with a default.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LSExplicitDistribution,
        "correct",
        "Selects the real positions first, builds q explicitly and takes -sum q log p.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        LSLogsumexp,
        "correct",
        "log p written as logits - logsumexp; padding removed with torch.where.",
    ),
]
