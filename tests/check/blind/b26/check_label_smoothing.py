"""Blind set B26, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


class LsMeanOverAll(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -logp.mean(-1)
        keep = target != PAD_ID
        return (loss * keep).mean()  # zeroed the padding, then the mean


class LsSpreadOverWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        q = torch.full_like(logp, self.smoothing / (V - 1))  # the rest goes to the other tokens
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * logp).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logp.sum(-1)  # the cross-entropy with the uniform target
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        keep = target != PAD_ID
        return loss[keep].mean()


class LsWeightsSwapped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * -logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsSentenceMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -logp.mean(-1)
        keep = (target != PAD_ID).float()
        per_sentence = (loss * keep).sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LsHardcodedEps(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        eps = 0.1  # the paper's value
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - eps) * nll + eps * -logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsCrossEntropyDefaultIgnore(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsCrossEntropyUnflattened(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits, target, ignore_index=PAD_ID, label_smoothing=self.smoothing
        )  # (B, T, V) straight in


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsKlAnnotated(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        q = torch.full_like(logp, self.smoothing / (V - 2))  # not the reference, not padding
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        q[..., PAD_ID] = 0.0
        keep = target != PAD_ID
        kl = F.kl_div(logp, q, reduction="none").sum(-1)
        return kl[keep].mean()


class LsPerTokenReturned(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -logp.mean(-1)
        return loss * (target != PAD_ID)  # (B, T): the caller takes the mean


class LsShiftInPlace(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logits -= logits.max(-1, keepdim=True).values.detach()  # for stability
        logp = logits - logits.exp().sum(-1, keepdim=True).log()
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * -logp.mean(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


def label_smoothing_loss(logits: Tensor, target: Tensor, smoothing: float = 0.1) -> Tensor:
    logp = logits.log_softmax(-1)
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    loss = (1 - smoothing) * nll + smoothing * -logp.mean(-1)
    keep = target != PAD_ID
    return loss[keep].mean()


class LsUniformOverReal(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)[keep].mean()
        uniform = -logp.mean(-1).mean()  # the smoothing term over every position
        return (1 - self.smoothing) * nll + self.smoothing * uniform


# ---------------------------------------------------------------- correct variants


class LsCrossEntropyFlat(nn.Module):
    """PyTorch's cross-entropy on the flattened batch, padding ignored."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing, self.ignore_index = smoothing, ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=self.ignore_index,
            label_smoothing=self.smoothing,
        )


class LsTargetDistribution(_Base):
    """The target distribution q built explicitly, -sum q log p, mean over the real tokens."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        q = torch.full_like(logits, self.smoothing / V)
        q = q.scatter_add(
            -1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1.0 - self.smoothing)
        )
        per_token = -(q * F.log_softmax(logits, dim=-1)).sum(dim=-1)
        real = target.ne(PAD_ID)
        return per_token.masked_select(real).sum() / real.sum()


class LsLogsumexp(_Base):
    """log p written with logsumexp; the real positions picked first with a boolean index."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != PAD_ID
        z, y = logits[real], target[real]  # (N, V), (N,)
        lse = torch.logsumexp(z, dim=-1)
        nll = lse - z.gather(1, y[:, None]).squeeze(1)
        uniform = lse - z.mean(dim=-1)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform).mean()


class LsTokenLoop(_Base):
    """A loop over the sentences, the real tokens of each added up, one division at the end."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        eps = self.smoothing
        total, count = logits.new_zeros(()), 0
        for row_logits, row_target in zip(logits, target, strict=True):
            real = row_target != PAD_ID
            logp = torch.log_softmax(row_logits[real], dim=-1)
            picked = logp[torch.arange(len(logp)), row_target[real]]
            total = total - ((1 - eps) * picked + eps * logp.mean(-1)).sum()
            count += int(real.sum())
        return total / max(count, 1)


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsMeanOverAll,
        "mistake",
        "I zeroed the padding positions but then took .mean() over all B*T positions.",
    ),
    BlindCase(
        CHECK,
        "eps_over_v_minus_1",
        LsSpreadOverWrong,
        "mistake",
        "My target puts 1 - eps on the right token and eps / (V - 1) on each other token.",
    ),
    BlindCase(
        CHECK,
        "uniform_sum_not_mean",
        LsSumNotMean,
        "mistake",
        "For the uniform term I summed -log p over the vocabulary and forgot to divide by V.",
    ),
    BlindCase(
        CHECK,
        "eps_weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I weighted the right token's term by eps and the uniform term by 1 - eps.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        LsSentenceMean,
        "mistake",
        "I averaged each sentence over its real tokens and then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "smoothing_hardcoded",
        LsHardcodedEps,
        "mistake",
        "I stored self.smoothing but wrote the paper's 0.1 in forward.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_no_ignore_index",
        LsCrossEntropyDefaultIgnore,
        "mistake",
        "F.cross_entropy with label_smoothing on the flattened batch, but I did not pass "
        "ignore_index=PAD_ID.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_not_flattened",
        LsCrossEntropyUnflattened,
        "mistake",
        "I passed the (B, T, V) logits to F.cross_entropy as they are, without flattening.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I wrote log_softmax(logits, dim=1), which is the time axis, not the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "kl_annotated_transformer",
        LsKlAnnotated,
        "mistake",
        "I wrote the Annotated Transformer's version: KL divergence, eps / (V - 2), nothing on "
        "padding.",
    ),
    BlindCase(
        CHECK,
        "returns_per_token",
        LsPerTokenReturned,
        "mistake",
        "forward returns the (B, T) losses with padding zeroed, not their mean.",
    ),
    BlindCase(
        CHECK,
        "max_subtracted_in_place",
        LsShiftInPlace,
        "mistake",
        "I subtracted the row maximum from the logits in place (logits -= ...) for stability.",
    ),
    BlindCase(
        CHECK,
        "function_not_class",
        label_smoothing_loss,
        "mistake",
        "I wrote a function loss(logits, target, smoothing) instead of the nn.Module class.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_over_padding",
        LsUniformOverReal,
        "mistake",
        "The right-token term is averaged over the real tokens, but the uniform term over every "
        "position, padding included.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_flattened",
        LsCrossEntropyFlat,
        "correct",
        "F.cross_entropy on flatten(0, -2) logits with ignore_index and label_smoothing; "
        "ignore_index as an extra argument.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LsTargetDistribution,
        "correct",
        "The smoothed target q built with full_like and scatter_add, then -sum(q log p).",
    ),
    BlindCase(
        CHECK,
        "logsumexp_real_positions",
        LsLogsumexp,
        "correct",
        "Only the real positions picked with a boolean index; log p via logsumexp.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sentences",
        LsTokenLoop,
        "correct",
        "A loop over the sentences adding up the real tokens, divided once by their number.",
    ),
]
