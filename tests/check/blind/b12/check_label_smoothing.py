"""Blind set B12, check_label_smoothing (chapter 14): label-smoothed loss as readers write it."""

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


class LsPadInMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss.mean()  # mean over every position, padding included


class LsPadZeroedButCounted(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = target != PAD_ID
        return (loss * keep).mean()  # zeroed the padding, but divided by B * T


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=PAD_ID)


class LsVMinusOne(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / (V - 1))  # eps over the wrong tokens only
        dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(dist * logp).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        keep = (target != PAD_ID).float()
        per_sentence = (loss * keep).sum(1) / keep.sum(1)
        return per_sentence.mean()  # mean of the sentence means


class LsSumOverVocab(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.sum(-1)  # forgot to divide by V
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        keep = target != PAD_ID
        return loss[keep].mean()


class LsRawLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        dist = torch.full_like(logits, self.smoothing / V)
        dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logits[..., :1], 1 - self.smoothing)
        )
        loss = -(dist * logits).sum(-1)  # used the logits as if they were log-probabilities
        keep = target != PAD_ID
        return loss[keep].mean()


class LsKlNoDetach(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / V)
        dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing)
        )
        # KL divergence as in the Annotated Transformer, summed over tokens, divided by batch
        loss = F.kl_div(logp, dist, reduction="none").sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / target.shape[0]


class LsPadWithoutMaskingGrad(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logp.mean(-1)
        # padding masked only in the NLL; the smoothing term still covers every position
        loss = (1 - self.smoothing) * (nll * keep) + self.smoothing * uniform
        return loss.sum() / keep.sum()


class LsSwappedWeights(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * (-logp.mean(-1))
        keep = target != PAD_ID
        return loss[keep].mean()


# ---------------------------------------------------------------- correct variants


class LsTorchBuiltin(_Base):
    """PyTorch's own label_smoothing, which uses the same definition."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(_Base):
    """The smoothed target built as a tensor, the loss as -(dist * log p).sum()."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = torch.log_softmax(logits, dim=-1)
        keep = target != self.ignore_index
        dist = F.one_hot(target.clamp(min=0), V).to(logp.dtype) * (1 - self.smoothing)
        dist = dist + self.smoothing / V
        loss = -(dist * logp).sum(-1)
        return torch.where(keep, loss, torch.zeros_like(loss)).sum() / keep.sum()


class LsSelectFirst(_Base):
    """Select the real tokens first, then compute the loss on them only."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        x, y = logits[keep], target[keep]  # (N, V), (N,)
        logp = x - x.logsumexp(-1, keepdim=True)
        nll = -logp[torch.arange(len(y)), y]
        return ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPadInMean,
        "mistake",
        "I took .mean() over all positions, padding included.",
    ),
    BlindCase(
        CHECK,
        "zeroed_padding_divided_by_all",
        LsPadZeroedButCounted,
        "mistake",
        "I zeroed the padding's loss but still divided by B * T.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I used plain cross-entropy with ignore_index and forgot the smoothing.",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LsVMinusOne,
        "mistake",
        "I spread epsilon over the V - 1 wrong tokens only, as some papers do.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence's tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsSumOverVocab,
        "mistake",
        "For the uniform part I summed -log p over the vocabulary instead of averaging.",
    ),
    BlindCase(
        CHECK,
        "logits_as_log_probs",
        LsRawLogits,
        "mistake",
        "I multiplied the smoothed target with the raw logits, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "kl_div_per_sentence",
        LsKlNoDetach,
        "mistake",
        "I used KL divergence summed over tokens and divided by the batch size, as in the "
        "Annotated Transformer.",
    ),
    BlindCase(
        CHECK,
        "smoothing_term_on_padding",
        LsPadWithoutMaskingGrad,
        "mistake",
        "I masked the padding in the NLL term but not in the smoothing term.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsSwappedWeights,
        "mistake",
        "I put epsilon on the true token's NLL and 1 - epsilon on the uniform part.",
    ),
    BlindCase(
        CHECK,
        "torch_label_smoothing",
        LsTorchBuiltin,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index=PAD_ID.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LsExplicitDistribution,
        "correct",
        "The smoothed distribution built with one_hot; an extra ignore_index argument.",
    ),
    BlindCase(
        CHECK,
        "select_real_tokens_first",
        LsSelectFirst,
        "correct",
        "Boolean indexing picks the real tokens first; log-softmax via logsumexp.",
    ),
]
