"""Blind set B10, check_label_smoothing (chapter 14): the label-smoothed loss as readers write
it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_label_smoothing"
PAD = 0  # chapter 1's PAD_ID


class _Base(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


# ---------------------------------------------------------------- mistakes


class LsPaddingInMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.mean()  # zero at padding, but the mean still counts those positions


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD).float()
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(dim=1) / keep.sum(dim=1).clamp(min=1)  # (B,)
        return per_sentence.mean()


class LsSpreadOverWrongTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # epsilon over the V-1 others
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(-1)
        keep = target != PAD
        return loss[keep].mean()


class LsAnnotatedKl(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1).reshape(-1, V)
        flat = target.reshape(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / (V - 2))
        true_dist.scatter_(1, flat.unsqueeze(1), 1 - self.smoothing)
        true_dist[:, PAD] = 0
        true_dist[flat == PAD] = 0
        kl = F.kl_div(log_probs, true_dist, reduction="sum")  # the Annotated Transformer's loss
        return kl / (flat != PAD).sum()


class LsLogitsAsLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # forgot log_softmax
        smooth = -logits.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss[keep].sum() / keep.sum()


class LsUniformSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.sum(-1)  # the sum over V: epsilon on every token, not epsilon / V
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss[keep].mean()


class LsWeightsSwapped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * smooth
        return loss[keep].mean()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # dim=1 as for (N, C) logits
        keep = target != PAD
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss[keep].mean()


class LsIgnoreMinus100(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # PyTorch's default ignore_index (-100) instead of PAD_ID
        loss = nn.CrossEntropyLoss(label_smoothing=self.smoothing)
        return loss(logits.reshape(-1, V), target.reshape(-1))


class LsSmoothTermKeepsPadding(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD
        n = keep.sum()
        nll = -(log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1) * keep).sum() / n
        smooth = -log_probs.mean(-1).sum() / n  # forgot the mask in this term
        return (1 - self.smoothing) * nll + self.smoothing * smooth


class LsReturnsPerToken(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss * keep  # (B, T): I left the mean to the training loop


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(_Base):
    """PyTorch's own loss, with PAD_ID as ignore_index."""

    def __init__(self, smoothing: float, ignore_index: int = PAD) -> None:
        super().__init__(smoothing)
        self.criterion = nn.CrossEntropyLoss(ignore_index=ignore_index, label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.criterion(logits.flatten(0, -2), target.flatten())


class LsExplicitDistribution(_Base):
    """The smoothed target q built as a tensor, then -sum(q log p), a masked mean."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
        q = torch.full_like(log_p, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_p[..., :1], 1 - self.smoothing)
        )
        per_token = -(q * log_p).sum(dim=-1)
        real = target.ne(PAD)
        return torch.where(real, per_token, torch.zeros_like(per_token)).sum() / real.sum().clamp(
            min=1
        )


class LsChannelsSecond(_Base):
    """F.cross_entropy on (B, V, T) logits, reduction='none', then the mean over real tokens."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        per_token = F.cross_entropy(
            logits.transpose(1, 2),
            target,
            reduction="none",
            label_smoothing=self.smoothing,
            ignore_index=PAD,
        )  # (B, T), zero at padding
        real = (target != PAD).sum().clamp(min=1)
        return per_token.sum() / real


class LsSelectedRows(_Base):
    """Picks the real positions first (boolean indexing), then the two terms on them only."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != PAD
        rows, ys = logits[real], target[real]  # (N, V), (N,)
        log_p = torch.log_softmax(rows, dim=1)
        eps = self.smoothing
        nll = -log_p[torch.arange(len(ys)), ys]
        return ((1 - eps) * nll).mean() + (eps * -log_p.mean(dim=1)).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the loss at padding but then took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index=PAD and forgot label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence over its tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong_tokens",
        LsSpreadOverWrongTokens,
        "mistake",
        "I gave 1 - eps to the right token and eps / (V - 1) to each of the others.",
    ),
    BlindCase(
        CHECK,
        "annotated_kl_v_minus_2",
        LsAnnotatedKl,
        "mistake",
        "I copied the Annotated Transformer: KL divergence against eps / (V - 2) with the "
        "padding column zeroed, summed and divided by the number of tokens.",
    ),
    BlindCase(
        CHECK,
        "logits_as_log_probs",
        LsLogitsAsLogProbs,
        "mistake",
        "I forgot the log_softmax and used the raw logits as log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LsUniformSummed,
        "mistake",
        "For the smoothing term I summed -log p over the vocabulary instead of averaging it.",
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
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I wrote log_softmax(logits, dim=1) as for (N, V) logits; with (B, T, V) that is the "
        "time axis.",
    ),
    BlindCase(
        CHECK,
        "ignore_minus_100",
        LsIgnoreMinus100,
        "mistake",
        "I used nn.CrossEntropyLoss(label_smoothing=...) with its default ignore_index=-100, so "
        "the padding (id 0) is scored.",
    ),
    BlindCase(
        CHECK,
        "smoothing_term_keeps_padding",
        LsSmoothTermKeepsPadding,
        "mistake",
        "I masked the padding in the -log p_y term but forgot the mask in the smoothing term.",
    ),
    BlindCase(
        CHECK,
        "returns_per_token",
        LsReturnsPerToken,
        "mistake",
        "I return the (B, T) loss per token (zero at padding) instead of its mean.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "nn.CrossEntropyLoss(ignore_index=PAD_ID, label_smoothing=smoothing) on flattened "
        "logits; an extra ignore_index argument with a default.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LsExplicitDistribution,
        "correct",
        "Builds q with scatter_add_, log p as logits - logsumexp, and torch.where for the mask.",
    ),
    BlindCase(
        CHECK,
        "channels_second",
        LsChannelsSecond,
        "correct",
        "F.cross_entropy on logits transposed to (B, V, T) with reduction='none', summed and "
        "divided by the number of real tokens.",
    ),
    BlindCase(
        CHECK,
        "selected_rows",
        LsSelectedRows,
        "correct",
        "Boolean indexing keeps the real positions first; the two terms are averaged "
        "separately over them.",
    ),
]
