"""Blind set B33, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_label_smoothing"

PAD_ID = 0  # the book's padding id (transformer_tutorial.sequences.PAD_ID)


class _Smoothed(nn.Module):
    """The constructor every answer below shares: it stores the smoothing."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


# ---------------------------------------------------------------- mistakes


class LSPaddingInMean(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * (target != PAD_ID)
        return loss.mean()  # padding positions are zero already


class LSNoSmoothing(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LSMeanOverSentences(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)  # (B,)
        return per_sentence.mean()


class LSOverWrongTokensOnly(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # the mass for the wrong ones
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(-1)
        return loss[keep].mean()


class LSAnnotatedKL(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_probs[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(log_probs, q, reduction="none").sum(-1)  # KL(q || p)
        return kl[keep].mean()


class LSPadAndTargetGetNothing(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 2))  # as the Annotated Transformer
        q[..., PAD_ID] = 0.0
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        return -(q * log_probs).sum(-1)[keep].mean()


class LSUniformSummed(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.sum(-1)  # the cross-entropy with the uniform distribution
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss[keep].mean()


class LSLogSoftmaxOverTime(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * keep).sum() / keep.sum()


class LSWeightsSwapped(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * -log_probs.mean(-1)
        return (loss * keep).sum() / keep.sum()


class LSDefaultIgnoreIndex(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.view(-1, V), target.view(-1), label_smoothing=self.smoothing
        )  # padding is ignored by cross_entropy


class LSPerTokenLoss(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss * keep  # (B, T), the padding zeroed


class LSMaskPolarity(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        pad = target == PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * pad).sum() / pad.sum().clamp(min=1)


class LSSumOverTokens(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss[keep].sum()


class LSNllOnlySmoothedAdditive(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = nll + self.smoothing * -log_probs.mean(-1)  # cross-entropy plus the smoothing
        return loss[keep].mean()


# ---------------------------------------------------------------- correct variants


class LSTorchCrossEntropy(nn.Module):
    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.loss = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=ignore_index)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.flatten(0, -2), target.flatten())


class LSExplicitDistribution(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        q = torch.full_like(logits, self.smoothing / V)
        q = q + (1 - self.smoothing) * F.one_hot(target, V).to(logits.dtype)
        loss = torch.sum(-q * F.log_softmax(logits, dim=-1), dim=-1)  # (B, T)
        real = (target != PAD_ID).to(logits.dtype)
        return (loss * real).sum() / real.sum()


class LSSelectFirst(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        chosen_logits, chosen_target = logits[keep], target[keep]  # (N, V), (N,)
        log_probs = torch.log_softmax(chosen_logits, dim=-1)
        nll = -log_probs[torch.arange(len(chosen_target)), chosen_target]
        uniform = -log_probs.mean(dim=-1)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform).mean()


class LSTwoCrossEntropies(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        flat, tgt = logits.reshape(-1, V), target.reshape(-1)
        nll = F.cross_entropy(flat, tgt, ignore_index=PAD_ID, reduction="none")  # (N,)
        uniform = -F.log_softmax(flat, dim=-1).mean(-1)  # (N,)
        real = tgt != PAD_ID
        loss = torch.where(real, (1 - self.smoothing) * nll + self.smoothing * uniform, 0.0)
        return loss.sum() / real.sum()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LSPaddingInMean,
        "mistake",
        "I zeroed the padding positions and then took loss.mean(), over all B * T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index=PAD_ID and forgot to pass the smoothing.",
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
        "smoothing_over_v_minus_1",
        LSOverWrongTokensOnly,
        "mistake",
        "I put smoothing / (V - 1) on every wrong token and 1 - smoothing on the right one.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LSAnnotatedKL,
        "mistake",
        "I computed KL(q || p) with F.kl_div, as the Annotated Transformer does.",
    ),
    BlindCase(
        CHECK,
        "annotated_v_minus_2",
        LSPadAndTargetGetNothing,
        "mistake",
        "I spread the smoothing over V - 2 tokens, none on padding, and set the right token to "
        "1 - smoothing.",
    ),
    BlindCase(
        CHECK,
        "uniform_summed_not_averaged",
        LSUniformSummed,
        "mistake",
        "For the uniform part I summed -log p over the vocabulary instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_dim1",
        LSLogSoftmaxOverTime,
        "mistake",
        "I wrote F.log_softmax(logits, dim=1).",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LSWeightsSwapped,
        "mistake",
        "I put the weight smoothing on the right token's term and 1 - smoothing on the uniform "
        "term.",
    ),
    BlindCase(
        CHECK,
        "default_ignore_index",
        LSDefaultIgnoreIndex,
        "mistake",
        "I used F.cross_entropy(label_smoothing=...) and relied on its default ignore_index.",
    ),
    BlindCase(
        CHECK,
        "returns_per_token",
        LSPerTokenLoss,
        "mistake",
        "I returned the loss of every position, (B, T), with the padding zeroed.",
    ),
    BlindCase(
        CHECK,
        "pad_mask_inverted",
        LSMaskPolarity,
        "mistake",
        "I built the mask as target == PAD_ID and used it as the positions to keep.",
    ),
    BlindCase(
        CHECK,
        "sum_over_tokens",
        LSSumOverTokens,
        "mistake",
        "I summed over the real tokens instead of averaging.",
    ),
    BlindCase(
        CHECK,
        "full_nll_plus_smoothing",
        LSNllOnlySmoothedAdditive,
        "mistake",
        "I kept the whole cross-entropy and added smoothing times the uniform term, without the "
        "factor 1 - smoothing.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy_loss",
        LSTorchCrossEntropy,
        "correct",
        "nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID) on the flattened "
        "logits; ignore_index as an extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LSExplicitDistribution,
        "correct",
        "I built q = smoothing / V + (1 - smoothing) * one_hot and took -sum(q log p), masked "
        "and averaged over the real tokens.",
    ),
    BlindCase(
        CHECK,
        "select_real_tokens_first",
        LSSelectFirst,
        "correct",
        "I picked the real positions with logits[keep] first and computed the loss only there.",
    ),
    BlindCase(
        CHECK,
        "two_cross_entropies",
        LSTwoCrossEntropies,
        "correct",
        "F.cross_entropy(reduction='none') for the right token plus the mean -log p, torch.where "
        "for the padding.",
    ),
]
