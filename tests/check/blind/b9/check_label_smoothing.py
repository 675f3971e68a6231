"""Blind set B9, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

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
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        keep = target != PAD_ID
        return (loss * keep).sum() / target.numel()  # every position, padding included


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * -log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)  # (B,)
        return per_sentence.mean()


class LsWrongTokensOnly(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / (V - 1))
        true_dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(true_dist * log_probs).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsAnnotatedPadColumn(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / (V - 2))  # minus true and pad
        true_dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        true_dist[..., PAD_ID] = 0
        keep = target != PAD_ID
        loss = -(true_dist * log_probs).sum(-1)
        return (loss * keep).sum() / keep.sum()


class LsKlDiv(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / V)
        true_dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_probs[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(log_probs, true_dist, reduction="none").sum(-1)  # KL, not cross-entropy
        return (kl * keep).sum() / keep.sum()


class LsUniformOnLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logits.mean(-1)  # forgot the log-softmax here
        keep = target != PAD_ID
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        keep = target != PAD_ID
        loss = ((1 - self.smoothing) * nll + self.smoothing * -log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LsWeightsSwapped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        keep = target != PAD_ID
        loss = (self.smoothing * nll + (1 - self.smoothing) * -log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LsSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


class LsSmoothTermNotMasked(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = F.nll_loss(log_probs.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)
        smooth = -log_probs.mean(-1).sum() / keep.sum()  # over every position, padding too
        return (1 - self.smoothing) * nll + self.smoothing * smooth


class LsNanOnAllPadding(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * -log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()  # 0 / 0 when a batch is only padding


# ---------------------------------------------------------------- correct variants


class LsTorchSumOverCount(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        total = F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )
        return total / (target != PAD_ID).sum().clamp(min=1)


class LsExplicitDistribution(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = torch.log_softmax(logits.double(), dim=-1)
        true_dist = torch.full_like(log_probs, self.smoothing / V)
        true_dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_probs[..., :1], 1 - self.smoothing)
        )
        loss = -(true_dist * log_probs).sum(-1)  # (B, T)
        keep = target != PAD_ID
        loss = torch.where(keep, loss, torch.zeros_like(loss))
        return (loss.sum() / keep.sum().clamp(min=1)).to(logits.dtype)


class LsSelectRealTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        if not keep.any():
            return logits.sum() * 0.0
        lp = logits[keep].log_softmax(-1)  # (N, V): the real tokens only
        t = target[keep]
        nll = -lp[torch.arange(len(t)), t]
        return ((1 - self.smoothing) * nll - self.smoothing * lp.mean(-1)).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the padding positions but divided by target.numel(), so padding counts in "
        "the mean",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index=PAD_ID but forgot label_smoothing",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence over its real tokens, then averaged the sentences",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LsWrongTokensOnly,
        "mistake",
        "I spread smoothing / (V - 1) over the wrong tokens only and put 1 - smoothing on the "
        "right one",
    ),
    BlindCase(
        CHECK,
        "annotated_pad_column",
        LsAnnotatedPadColumn,
        "mistake",
        "as in the Annotated Transformer: smoothing / (V - 2) on the wrong tokens, zero on the "
        "PAD column, 1 - smoothing on the right token",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDiv,
        "mistake",
        "I used KL divergence against the smoothed target (as tutorials do) instead of "
        "cross-entropy, so the value is off by the target's entropy",
    ),
    BlindCase(
        CHECK,
        "uniform_on_raw_logits",
        LsUniformOnLogits,
        "mistake",
        "the uniform part is -logits.mean(-1): I forgot the log-softmax in that term",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "F.log_softmax(logits, dim=1): the softmax runs over the time axis, not the vocabulary",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I swapped the weights: smoothing on the right token's loss and 1 - smoothing on the "
        "uniform part",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumNotMean,
        "mistake",
        "F.cross_entropy with label_smoothing and ignore_index but reduction='sum': a sum over "
        "tokens, not divided by their number",
    ),
    BlindCase(
        CHECK,
        "smooth_term_not_masked",
        LsSmoothTermNotMasked,
        "mistake",
        "the NLL ignores padding, but the uniform term is summed over every position, padding "
        "included, so padding contributes and gets gradient",
    ),
    BlindCase(
        CHECK,
        "nan_on_all_padding",
        LsNanOnAllPadding,
        "mistake",
        "I divide by keep.sum() without a clamp, so a batch that is all padding gives 0/0 = NaN "
        "(right otherwise)",
    ),
    BlindCase(
        CHECK,
        "torch_sum_over_count",
        LsTorchSumOverCount,
        "correct",
        "F.cross_entropy(label_smoothing, ignore_index, reduction='sum') divided by the number "
        "of non-padding targets (at least 1)",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution_float64",
        LsExplicitDistribution,
        "correct",
        "I build the smoothed target distribution with scatter_add_ and compute in float64, "
        "then cast back",
    ),
    BlindCase(
        CHECK,
        "select_real_tokens",
        LsSelectRealTokens,
        "correct",
        "I select the real tokens with a boolean index first and take a plain mean over them",
    ),
]
