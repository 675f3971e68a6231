"""Blind cases for check_label_smoothing (chapter 14), written from the chapter's text only."""

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


class PaddingInMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -log_probs.mean(dim=-1)
        return loss.mean()


class SpreadOverWrongTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(dim=-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class MeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * -log_probs.mean(dim=-1)) * keep
        per_sentence = loss.sum(dim=1) / keep.sum(dim=1).clamp(min=1)
        return per_sentence.mean()


class LogSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # slip: dim=1 of (B, T, V) is T
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * -log_probs.mean(dim=-1)) * keep
        return loss.sum() / keep.sum()


class UniformSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.sum(dim=-1)  # epsilon on every token instead of epsilon / V
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.sum() / keep.sum()


class AnnotatedTransformerKL(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 2))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        q[..., PAD_ID] = 0
        keep = target != PAD_ID
        kl = F.kl_div(log_probs, q, reduction="none").sum(dim=-1)
        return (kl * keep).sum() / keep.sum()


class MaskAfterNormalizing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        ce = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            target.reshape(-1),
            label_smoothing=self.smoothing,
        )  # averaged over every position, padding included
        return ce * keep.numel() / keep.sum()


class SmoothingIgnored(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits.transpose(1, 2), target, ignore_index=PAD_ID)


class PyTorchBuiltin(_Base):
    """Correct: PyTorch's cross-entropy with label_smoothing and ignore_index."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=self.ignore_index,
            label_smoothing=self.smoothing,
        )


class ExplicitTargetDistribution(_Base):
    """Correct: the smoothed target built as a tensor, padding removed by boolean indexing."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != PAD_ID
        log_probs = torch.log_softmax(logits[keep], dim=-1)  # (N, V)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(
            1, target[keep].unsqueeze(1), torch.full_like(log_probs[:, :1], 1 - self.smoothing)
        )
        return -(q * log_probs).sum(dim=1).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        PaddingInMean,
        "mistake",
        "I averaged the loss over every position, padding included",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong_tokens",
        SpreadOverWrongTokens,
        "mistake",
        "I gave epsilon / (V - 1) to each wrong token and nothing extra to the right one",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        MeanOverSentences,
        "mistake",
        "I took the mean over each sentence's tokens, then the mean over the sentences",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LogSoftmaxOverTime,
        "mistake",
        "I wrote log_softmax(logits, dim=1), which on (B, T, V) normalizes over time",
    ),
    BlindCase(
        CHECK,
        "uniform_summed",
        UniformSummed,
        "mistake",
        "for the smoothing term I summed -log p over the vocabulary instead of averaging",
    ),
    BlindCase(
        CHECK,
        "annotated_transformer_kl",
        AnnotatedTransformerKL,
        "mistake",
        "I followed the Annotated Transformer: epsilon / (V - 2), padding column zeroed, "
        "KL divergence",
    ),
    BlindCase(
        CHECK,
        "mask_after_normalizing",
        MaskAfterNormalizing,
        "mistake",
        "I let cross_entropy average over all positions and rescaled by all / real count, "
        "so padding still gets a loss and a gradient",
    ),
    BlindCase(
        CHECK,
        "smoothing_ignored",
        SmoothingIgnored,
        "mistake",
        "I stored smoothing but called cross_entropy without label_smoothing",
    ),
    BlindCase(
        CHECK,
        "pytorch_builtin",
        PyTorchBuiltin,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index, an optional ignore_index argument",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        ExplicitTargetDistribution,
        "correct",
        "the smoothed target built with full_like and scatter_add_ on the real tokens only",
    ),
]
