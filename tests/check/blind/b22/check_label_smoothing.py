"""Blind set B22, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


class LsDivideByAllTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.sum() / target.numel()


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = (target != PAD_ID).float()
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)) * keep  # (B, T)
        per_sentence = loss.sum(dim=1) / keep.sum(dim=1).clamp(min=1)
        return per_sentence.mean()


class LsSpreadOverWrongTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(dim=-1)
        true = torch.full_like(logp, self.smoothing / (V - 1))
        true.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(true * logp).sum(dim=-1)
        keep = target != PAD_ID
        return loss[keep].sum() / keep.sum()


class LsWeightsSwapped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.mean(dim=-1)
        loss = (self.smoothing * nll + (1 - self.smoothing) * smooth) * keep
        return loss.sum() / keep.sum()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.sum() / keep.sum()


class LsSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.mean(dim=-1)
        return (((1 - self.smoothing) * nll + self.smoothing * smooth) * keep).sum()


class LsNoIgnoreIndex(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsKlDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(dim=-1)
        true = torch.full_like(logp, self.smoothing / V)
        true.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(logp[keep], true[keep], reduction="sum")
        return kl / keep.sum()


class LsSmoothedPrediction(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        p = logits.softmax(dim=-1)
        p_smooth = (1 - self.smoothing) * p + self.smoothing / V  # smooth the distribution
        keep = target != PAD_ID
        nll = -p_smooth.gather(-1, target.unsqueeze(-1)).squeeze(-1).log()
        return (nll * keep).sum() / keep.sum()


class LsUniformFromLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logits.mean(dim=-1)  # the average over the vocabulary
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.sum() / keep.sum()


class LsUniformTermUnmasked(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        nll = nll.masked_fill(~keep, 0.0)
        smooth = -logp.mean(dim=-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss.sum() / keep.sum()


class LsArgsSwapped(_Base):
    def forward(self, target: Tensor, logits: Tensor) -> Tensor:
        logp = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -logp.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.sum() / keep.sum()


# ---------------------------------------------------------------- correct variants


class LsTorchBuiltin(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = torch.log_softmax(logits, dim=-1)
        true = torch.full_like(logp, self.smoothing / V)
        true = true + (1 - self.smoothing) * F.one_hot(target, V).to(logp.dtype)
        loss = -(true * logp).sum(dim=-1)  # (B, T)
        keep = target.ne(PAD_ID)
        return loss.masked_select(keep).sum() / keep.sum().clamp(min=1)


class LsLogsumexp(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        right = torch.gather(logits, -1, target[..., None])[..., 0]
        nll = lse - right
        uniform = lse - logits.mean(dim=-1)
        eps = self.smoothing
        per_token = torch.lerp(nll, uniform, eps)  # (1 - eps) * nll + eps * uniform
        keep = (target != PAD_ID).to(per_token.dtype)
        return (per_token * keep).sum() / keep.sum().clamp(min=1)


class LsLoopOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        total = logits.new_zeros(())
        count = 0
        for row_logits, row_target in zip(logits, target, strict=True):
            keep = row_target != PAD_ID
            logp = row_logits[keep].log_softmax(-1)  # (n, V)
            ids = row_target[keep]
            nll = -logp[torch.arange(len(ids)), ids]
            total = total + ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)).sum()
            count += int(keep.sum())
        return total / max(count, 1)


CASES = [
    BlindCase(
        CHECK,
        "divide_by_all_positions",
        LsDivideByAllTokens,
        "mistake",
        "I zeroed the padding's loss but divided by target.numel(), padding included.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I used F.cross_entropy with ignore_index=PAD_ID and forgot to pass the smoothing.",
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
        "eps_over_v_minus_1",
        LsSpreadOverWrongTokens,
        "mistake",
        "My target puts 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I wrote eps * nll + (1 - eps) * uniform: the two weights the wrong way round.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, the positions, instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumNotMean,
        "mistake",
        "I returned the sum over the real tokens and forgot to divide by their number.",
    ),
    BlindCase(
        CHECK,
        "no_ignore_index",
        LsNoIgnoreIndex,
        "mistake",
        "I used F.cross_entropy(label_smoothing=eps) but left ignore_index at its default -100, "
        "so the padding is scored.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I built the smoothed target and took F.kl_div against it, as the Annotated "
        "Transformer does; the value lacks the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "smoothed_prediction",
        LsSmoothedPrediction,
        "mistake",
        "I mixed the model's probabilities with the uniform one and took -log of the right "
        "token's mixed probability.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_from_logits",
        LsUniformFromLogits,
        "mistake",
        "For the uniform part I averaged the raw logits instead of the log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_unmasked",
        LsUniformTermUnmasked,
        "mistake",
        "I masked the padding in the nll term only; the smoothing term still counts padding.",
    ),
    BlindCase(
        CHECK,
        "forward_arguments_swapped",
        LsArgsSwapped,
        "mistake",
        "I wrote forward(self, target, logits), the order of the loss functions I know.",
    ),
    BlindCase(
        CHECK,
        "torch_builtin",
        LsTorchBuiltin,
        "correct",
        "F.cross_entropy with ignore_index=PAD_ID and label_smoothing=eps on flattened tensors.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LsExplicitDistribution,
        "correct",
        "The smoothed target built with one_hot, the loss as -(q * log p).sum, masked_select.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_lerp",
        LsLogsumexp,
        "correct",
        "Log-probabilities written as logit - logsumexp, and the mix done with torch.lerp.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sentences",
        LsLoopOverSentences,
        "correct",
        "A loop over the sentences that drops the padding first and counts tokens itself.",
    ),
]
