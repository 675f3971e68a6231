"""Blind set B14, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return (loss * keep).mean()  # zeroed the padding, but mean over every position


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits.transpose(1, 2), target, ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1)  # the mean of each sentence
        return per_sentence.mean()


class LsSpreadOverWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / (V - 1))  # eps over the V - 1 wrong ones
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(dist * logp).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsNoPaddingMask(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsLogitsAsLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # forgot the log-softmax
        loss = (1 - self.smoothing) * nll - self.smoothing * logits.mean(-1)
        return loss[keep].mean()


class LsSumOverVocab(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.sum(-1)  # sum, not mean
        return loss[keep].mean()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)  # dim=1 of (B, T, V)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss[keep].mean()


class LsSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss[keep].sum()


class LsKlDiv(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / V)
        dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = nn.KLDivLoss(reduction="sum")(logp[keep], dist[keep])  # as the Annotated Transformer
        return kl / keep.sum()


class LsPytorchIgnoreDefault(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        # ignore_index left at PyTorch's default -100, so the padding is scored
        return nn.CrossEntropyLoss(label_smoothing=self.smoothing)(
            logits.flatten(0, 1), target.flatten()
        )


class LsEpsOnTrueOnly(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll  # the eps part is "the rest", left out
        return loss[keep].mean()


# ---------------------------------------------------------------- correct variants


class LsTorchBuiltin(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.reshape(-1, logits.size(-1)),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsTrueDist(nn.Module):
    """The smoothed target built as a distribution, then selected rows; extra keyword args."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.eps, self.pad_id = smoothing, pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != self.pad_id
        logp = torch.log_softmax(logits[keep], dim=-1)  # (N, V) real tokens only
        dist = torch.full_like(logp, self.eps / V)
        dist[torch.arange(len(dist)), target[keep]] += 1 - self.eps
        return -(dist * logp).sum(-1).mean()


class LsLogsumexp(_Base):
    """log p written as logit - logsumexp, masked with where, divided by the count."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        true = logits.gather(-1, target[..., None])[..., 0]
        nll = lse - true
        uniform = lse - logits.mean(-1)
        per_token = nll + self.smoothing * (uniform - nll)
        mask = target.ne(PAD_ID)
        total = torch.where(mask, per_token, torch.zeros_like(per_token)).sum()
        return total / mask.sum()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the padding's loss but took .mean() over all positions.",
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
        "spread_over_wrong_only",
        LsSpreadOverWrong,
        "mistake",
        "I put eps / (V - 1) on the wrong tokens only, nothing extra on the right one.",
    ),
    BlindCase(
        CHECK,
        "no_padding_mask",
        LsNoPaddingMask,
        "mistake",
        "I flattened and called cross_entropy with smoothing but no ignore_index.",
    ),
    BlindCase(
        CHECK,
        "logits_as_log_probs",
        LsLogitsAsLogProbs,
        "mistake",
        "I used the logits directly as log-probabilities, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "sum_over_vocab",
        LsSumOverVocab,
        "mistake",
        "The smoothing term sums -log p over the vocabulary instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, which is the time axis of (B, T, V).",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumNotMean,
        "mistake",
        "I returned the sum over the real tokens, not their mean.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDiv,
        "mistake",
        "I used KLDivLoss against the smoothed target (as in the Annotated Transformer).",
    ),
    BlindCase(
        CHECK,
        "ignore_index_default",
        LsPytorchIgnoreDefault,
        "mistake",
        "nn.CrossEntropyLoss(label_smoothing=...) with ignore_index left at -100.",
    ),
    BlindCase(
        CHECK,
        "eps_term_dropped",
        LsEpsOnTrueOnly,
        "mistake",
        "I scaled the NLL by (1 - eps) but left out the eps-weighted uniform term.",
    ),
    BlindCase(
        CHECK,
        "torch_builtin",
        LsTorchBuiltin,
        "correct",
        "F.cross_entropy with ignore_index=PAD_ID and label_smoothing on flattened inputs.",
    ),
    BlindCase(
        CHECK,
        "true_distribution_selected",
        LsTrueDist,
        "correct",
        "Selects the real tokens first and builds the smoothed target; extra pad_id arg.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_where",
        LsLogsumexp,
        "correct",
        "log p as logit - logsumexp, padding removed with torch.where, sum / count.",
    ),
]
