"""Blind set B15, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


class LsPadCounted(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * keep).mean()  # zeroed the padding, then the mean over every position


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1)  # (B,)
        return per_sentence.mean()


class LsSpreadOverWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        dist = torch.full_like(log_probs, self.smoothing / (V - 1))
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(dist * log_probs).sum(-1)
        return loss[keep].mean()


class LsSmoothingOnWrongTerm(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * uniform  # eps on the true token
        return loss[keep].mean()


class LsSumOverVocab(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(-1)  # eps on every token: forgot the / V
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


class LsMaskInverted(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        probs = logits.softmax(-1)
        dist = torch.full_like(probs, self.smoothing / V)
        dist += F.one_hot(target, V) * (1 - self.smoothing)
        pad = target == PAD_ID
        loss = -(dist * torch.log(probs)).sum(-1)
        return loss.masked_fill(~pad, 0.0).sum() / (~pad).sum()  # masked_fill hides where False


class LsKlDivSum(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        dist = torch.full_like(logits, self.smoothing / V)
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing + self.smoothing / V)
        keep = target != PAD_ID
        # KL divergence as in the Annotated Transformer: differs by the target's entropy
        return F.kl_div(logits[keep].log_softmax(-1), dist[keep], reduction="batchmean")


class LsLogitsNotLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        dist = torch.full_like(logits, self.smoothing / V)
        dist.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(logits, 1 - self.smoothing))
        keep = target != PAD_ID
        loss = -(dist * logits).sum(-1)  # forgot the log_softmax
        return loss[keep].mean()


class LsPadGradient(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        # smoothing term over all positions, the nll term over the real ones only
        uniform = -log_probs.mean(-1).sum() / keep.sum()
        return (1 - self.smoothing) * nll[keep].mean() + self.smoothing * uniform


class LsBatchFirstMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits, target, ignore_index=PAD_ID, label_smoothing=self.smoothing
        )  # logits (B, T, V): cross_entropy reads dim 1 as the classes


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(_Base):
    """The smoothed target built as a tensor, the padding positions selected with a boolean
    index; extra constructor argument with a default."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != self.pad_id
        lp = torch.log_softmax(logits[keep], dim=-1)  # (N, V)
        V = lp.shape[-1]
        dist = torch.full_like(lp, self.smoothing / V)
        dist[torch.arange(len(dist)), target[keep]] += 1 - self.smoothing
        return -(dist * lp).sum() / keep.sum()


class LsLogsumexp(_Base):
    """log-probabilities as logits - logsumexp, einsum with the mask."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        true = logits.gather(-1, target[..., None])[..., 0]
        nll = lse - true
        smooth = lse - logits.mean(-1)
        mask = target.ne(PAD_ID).to(logits.dtype)
        per_token = (1.0 - self.smoothing) * nll + self.smoothing * smooth
        return torch.einsum("bt,bt->", per_token, mask) / mask.sum()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPadCounted,
        "mistake",
        "I zeroed the padding's loss but then took .mean() over all positions, padding included.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index but forgot label_smoothing.",
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
        LsSpreadOverWrong,
        "mistake",
        "I put smoothing / (V - 1) on each wrong token and 1 - smoothing on the right one.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsSmoothingOnWrongTerm,
        "mistake",
        "I weighted the true token's term by smoothing and the uniform term by 1 - smoothing.",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsSumOverVocab,
        "mistake",
        "For the smoothing term I summed -log p over the vocabulary instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "pad_mask_inverted",
        LsMaskInverted,
        "mistake",
        "I built pad = target == PAD_ID and called masked_fill(~pad, 0), which zeroes the real "
        "tokens and keeps the padding.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivSum,
        "mistake",
        "I used F.kl_div against the smoothed distribution as the Annotated Transformer does, "
        "with 1 - eps + eps/V on the true token, so the value is off by the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "logits_not_log_probs",
        LsLogitsNotLogProbs,
        "mistake",
        "I multiplied the smoothed target with the raw logits; I forgot log_softmax.",
    ),
    BlindCase(
        CHECK,
        "smoothing_term_on_padding",
        LsPadGradient,
        "mistake",
        "I dropped the padding from the nll term but summed the smoothing term over every "
        "position, so the padding gets a gradient.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_on_3d",
        LsBatchFirstMean,
        "mistake",
        "I passed the (B, T, V) logits to F.cross_entropy directly, which takes dim 1 as classes.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy on flattened logits with ignore_index and label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LsExplicitDistribution,
        "correct",
        "Builds the smoothed target distribution for the real tokens only; pad_id as an extra "
        "constructor argument with a default.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_einsum",
        LsLogsumexp,
        "correct",
        "log p written as logits - logsumexp; the masked sum as an einsum.",
    ),
]
