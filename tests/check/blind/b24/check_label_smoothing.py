"""Blind set B24, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.mean()  # over every position of the batch


class LsNoSmoothing(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        per_sentence = (loss * keep).sum(1) / keep.sum(1).clamp(min=1)  # (B,)
        return per_sentence.mean()


class LsSpreadOverWrongTokens(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # the wrong tokens share eps
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(-1)
        return loss[keep].sum() / keep.sum()


class LsUniformNotMasked(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1) * keep
        smooth = -log_probs.mean(dim=-1)  # the smoothing term: same for every position
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss.sum() / keep.sum()


class LsWeightsSwapped(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (self.smoothing * nll + (1 - self.smoothing) * uniform) * keep
        return loss.sum() / keep.sum()


class LsUniformSumNotMean(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(dim=-1)  # forgot the 1 / V
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LsKlDivergence(_Loss):
    """The Annotated Transformer's way: KL divergence to the smoothed target."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing))
        kl = F.kl_div(log_probs, q, reduction="none").sum(-1)  # (B, T)
        keep = target != PAD_ID
        return (kl * keep).sum() / keep.sum()


class LsNoIgnoreIndex(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsTargetOverwritten(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # the right token: 1 - eps
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(-1)
        return (loss * keep).sum() / keep.sum()


class LsSoftmaxOverTime(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LsOneMinusEpsDropped(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (nll + self.smoothing * uniform) * keep  # plain CE plus the smoothing term
        return loss.sum() / keep.sum()


class LsSumNotMean(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


class LsSmoothingKeyword(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        loss_fn = nn.CrossEntropyLoss(ignore_index=PAD_ID, smoothing=self.smoothing)
        return loss_fn(logits.view(-1, V), target.view(-1))


# ---------------------------------------------------------------- correct variants


class LsCrossEntropyTransposed(nn.Module):
    """PyTorch's loss with the classes moved to dim 1, mean by hand over the real tokens."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        total = F.cross_entropy(
            logits.transpose(1, 2),  # (B, V, T)
            target,
            ignore_index=self.ignore_index,
            label_smoothing=self.smoothing,
            reduction="sum",
        )
        return total / (target != self.ignore_index).sum().clamp(min=1)


class LsExplicitDistribution(_Loss):
    """The smoothed target q built as a tensor, then -sum q log p over the real tokens."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != PAD_ID
        log_p = torch.log_softmax(logits[keep], dim=-1)  # (N, V): real tokens only
        q = torch.full_like(log_p, self.smoothing / V)
        q[torch.arange(len(q)), target[keep]] += 1 - self.smoothing
        return -(q * log_p).sum() / max(int(keep.sum()), 1)


class LsFloat64Einsum(_Loss):
    """Computed in float64 with an einsum for the uniform term, returned in the input dtype."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.double().log_softmax(-1)
        mask = target.ne(PAD_ID).double()
        uniform = torch.einsum("btv,v->bt", log_p, torch.full((V,), 1.0 / V, dtype=log_p.dtype))
        picked = torch.where(
            target.ne(PAD_ID), log_p.gather(-1, target.clamp(min=0)[..., None]).squeeze(-1), 0.0
        )
        loss = -((1 - self.smoothing) * picked + self.smoothing * uniform) * mask
        return (loss.sum() / mask.sum().clamp(min=1)).to(logits.dtype)


class LsLoopOverTokens(_Loss):
    """A Python loop over the positions, summing each real token's loss."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        B, T, V = logits.shape
        total = logits.new_zeros(())
        count = 0
        for b in range(B):
            for t in range(T):
                y = int(target[b, t])
                if y == PAD_ID:
                    continue
                log_p = logits[b, t].log_softmax(0)
                total = total - (1 - self.smoothing) * log_p[y] - self.smoothing * log_p.mean()
                count += 1
        return total / max(count, 1)


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
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "F.cross_entropy with ignore_index, but I never passed the smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "Each sentence's mean over its real tokens, then the mean of the sentences.",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LsSpreadOverWrongTokens,
        "mistake",
        "q puts 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_not_masked",
        LsUniformNotMasked,
        "mistake",
        "Only the NLL term is masked; the smoothing term of the padding stays in the sum.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "eps on the NLL and 1 - eps on the uniform term.",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsUniformSumNotMean,
        "mistake",
        "The uniform term as -log_probs.sum(-1): I forgot to divide by V.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "KL divergence to the smoothed target, as the Annotated Transformer does, instead of "
        "the cross-entropy.",
    ),
    BlindCase(
        CHECK,
        "no_ignore_index",
        LsNoIgnoreIndex,
        "mistake",
        "F.cross_entropy(label_smoothing=eps) without ignore_index: padding is scored as token 0.",
    ),
    BlindCase(
        CHECK,
        "right_token_overwritten",
        LsTargetOverwritten,
        "mistake",
        "q = eps / V everywhere, then scatter_ wrote 1 - eps over the right token's eps / V.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "log_softmax(logits, dim=1): over the positions instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "one_minus_eps_dropped",
        LsOneMinusEpsDropped,
        "mistake",
        "The NLL term kept at weight 1 and eps times the uniform term added to it.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumNotMean,
        "mistake",
        "reduction='sum': the total over the real tokens, not their mean.",
    ),
    BlindCase(
        CHECK,
        "smoothing_wrong_keyword",
        LsSmoothingKeyword,
        "mistake",
        "nn.CrossEntropyLoss(ignore_index=PAD_ID, smoothing=eps): the keyword is label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_classes_dim1",
        LsCrossEntropyTransposed,
        "correct",
        "F.cross_entropy on logits.transpose(1, 2), summed and divided by the real tokens; "
        "ignore_index as an optional argument.",
    ),
    BlindCase(
        CHECK,
        "explicit_q_real_tokens_only",
        LsExplicitDistribution,
        "correct",
        "Selected the real tokens with a boolean index, built q as a tensor, -sum(q log p).",
    ),
    BlindCase(
        CHECK,
        "float64_einsum",
        LsFloat64Einsum,
        "correct",
        "In float64 with an einsum against the uniform vector, cast back to the input dtype.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        LsLoopOverTokens,
        "correct",
        "A loop over every (b, t), skipping PAD and averaging over the tokens counted.",
    ),
]
