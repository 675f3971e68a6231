"""Blind set B31, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


class _Loss(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


# ---------------------------------------------------------------- mistakes


class LsPaddingInMean(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -log_p.mean(-1)
        return (loss * keep).mean()  # mean over all B * T positions


class LsNoIgnoreIndex(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        criterion = nn.CrossEntropyLoss(label_smoothing=self.smoothing)
        return criterion(logits.reshape(-1, V), target.reshape(-1))


class LsNoSmoothing(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsOverWrongTokens(_Loss):
    """epsilon / (V - 1) on every token but the right one."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_p).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsMeanOverSentences(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * -log_p.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LsRightTokenNoShare(_Loss):
    """1 - eps on the right token and eps / V on each of the others (mass 1 - eps / V)."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / V)
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_p).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsSoftmaxWrongAxis(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = F.log_softmax(logits, dim=1)  # (B, T, V): dim 1 looked like the classes
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -log_p.mean(-1)
        return (loss * keep).sum() / keep.sum()


class LsUniformSumNotMean(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -log_p.sum(-1)
        return (loss * keep).sum() / keep.sum()


class LsKlDivergence(_Loss):
    """The Annotated Transformer's KL divergence, with eps / V on every token."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_p[..., :1], 1 - self.smoothing)
        )
        kl = F.kl_div(log_p, q, reduction="none").sum(-1)
        keep = target != PAD_ID
        return kl[keep].sum() / keep.sum()


class LsWeightsSwapped(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * -log_p.mean(-1)
        return (loss * keep).sum() / keep.sum()


class LsUniformNotMasked(_Loss):
    """Only the right-token term is masked; the uniform term still counts the padding."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1) * keep
        loss = (1 - self.smoothing) * nll + self.smoothing * -log_p.mean(-1)
        return loss.sum() / keep.sum()


class LsTargetChangedInPlace(_Loss):
    """Padding turned into -100 for F.cross_entropy, written into the caller's target."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        target[target == PAD_ID] = -100
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsHardCodedSmoothing(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID, label_smoothing=0.1
        )


class LsSumReduction(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


# ---------------------------------------------------------------- correct variants


class LsTorchBuiltin(_Loss):
    def __init__(self, smoothing: float) -> None:
        super().__init__(smoothing)
        self.criterion = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.criterion(logits.flatten(0, 1), target.flatten())


class LsExplicitDistribution(_Loss):
    """The target distribution q built as a tensor, then -sum q log p, on the real tokens only."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != PAD_ID
        log_p = logits[keep].log_softmax(-1)  # (N, V)
        q = torch.full_like(log_p, self.smoothing / V)
        q[torch.arange(len(q)), target[keep]] += 1 - self.smoothing
        return -(q * log_p).sum(-1).mean()


class LsFloat64Inside(_Loss):
    """Computed in float64 with logsumexp, cast back to the logits' dtype."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        z = logits.double()
        lse = torch.logsumexp(z, dim=-1)  # (B, T)
        right = z.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        nll = lse - right
        uniform = lse - z.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        keep = target != self.pad_id
        total = torch.where(keep, loss, torch.zeros_like(loss)).sum()
        return (total / keep.sum()).to(logits.dtype)


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the padding's loss but took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "crossentropy_without_ignore_index",
        LsNoIgnoreIndex,
        "mistake",
        "nn.CrossEntropyLoss(label_smoothing=...) without ignore_index=PAD_ID: padding is scored.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "Plain cross-entropy with ignore_index; I stored smoothing but never used it.",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LsOverWrongTokens,
        "mistake",
        "I spread epsilon over the V - 1 wrong tokens and gave the right one 1 - epsilon.",
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
        "right_token_without_its_share",
        LsRightTokenNoShare,
        "mistake",
        "q is eps/V everywhere but the right token, which gets exactly 1 - eps (not + eps/V).",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxWrongAxis,
        "mistake",
        "I took log_softmax over dim=1, which is the time axis of (B, T, V).",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsUniformSumNotMean,
        "mistake",
        "The uniform term summed -log p_k over the vocabulary instead of averaging (no 1/V).",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I used F.kl_div against the smoothed target, as the Annotated Transformer does.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I weighted the right-token term by eps and the uniform term by 1 - eps.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_not_masked",
        LsUniformNotMasked,
        "mistake",
        "I masked the padding in the -log p_y term only; the uniform term counts padding.",
    ),
    BlindCase(
        CHECK,
        "target_modified_in_place",
        LsTargetChangedInPlace,
        "mistake",
        "I set target[target == PAD_ID] = -100 on the caller's tensor, for F.cross_entropy.",
    ),
    BlindCase(
        CHECK,
        "smoothing_hard_coded",
        LsHardCodedSmoothing,
        "mistake",
        "I wrote label_smoothing=0.1, the paper's value, instead of self.smoothing.",
    ),
    BlindCase(
        CHECK,
        "sum_reduction",
        LsSumReduction,
        "mistake",
        "reduction='sum': the total over the real tokens, not their mean.",
    ),
    BlindCase(
        CHECK,
        "torch_builtin",
        LsTorchBuiltin,
        "correct",
        "nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=PAD_ID) on flattened inputs.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LsExplicitDistribution,
        "correct",
        "Keep only the real tokens first, build q as a tensor, then -(q * log p).sum(-1).mean().",
    ),
    BlindCase(
        CHECK,
        "float64_logsumexp",
        LsFloat64Inside,
        "correct",
        "logsumexp in float64, with an optional pad_id argument; cast back at the end.",
    ),
]
