"""Blind set B7, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


class LsPaddingInDenominator(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * keep).mean()  # zeroed the padding, then took the mean over all positions


class LsPaddingNotIgnored(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsOverWrongTokensOnly(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        smooth = torch.full_like(log_probs, self.smoothing / (V - 1))
        smooth.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(smooth * log_probs).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LsUniformTermForgotten(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll  # took mass from the right token, gave it to nobody
        return loss[keep].sum() / keep.sum().clamp(min=1)


class LsUniformSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(-1)  # epsilon on every token, not epsilon / V
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].sum() / keep.sum().clamp(min=1)


class LsUniformOnRawLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logits.mean(-1)  # the uniform part on the logits, not the log-probabilities
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].sum() / keep.sum().clamp(min=1)


class LsKlDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / V)
        true_dist.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(log_probs[..., :1], 1 - self.smoothing)
        )
        keep = target != PAD_ID
        kl = F.kl_div(log_probs, true_dist, reduction="none").sum(-1)  # as the Annotated one
        return kl[keep].sum() / keep.sum().clamp(min=1)


class LsAnnotatedPadColumn(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / (V - 2))
        true_dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        true_dist[..., PAD_ID] = 0  # padding is never a target, so no mass on it
        keep = target != PAD_ID
        loss = -(true_dist * log_probs).sum(-1)
        return loss[keep].sum() / keep.sum().clamp(min=1)


class LsScatterOverwrites(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / V)
        true_dist.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # should add, not set
        keep = target != PAD_ID
        loss = -(true_dist * log_probs).sum(-1)
        return loss[keep].sum() / keep.sum().clamp(min=1)


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # dim=1 as in my (N, V) examples
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss[keep].sum() / keep.sum().clamp(min=1)


class LsNanOnAllPadding(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * keep).sum() / keep.sum()  # 0 / 0 when every target is padding


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        if not (target != PAD_ID).any():
            return logits.sum() * 0.0  # nothing to score
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(nn.Module):
    """The smoothed target built as a tensor; an extra pad_id argument with the book's default."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing, self.pad_id = smoothing, pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = torch.log_softmax(logits, dim=-1)
        keep = target != self.pad_id
        safe = torch.where(keep, target, torch.zeros_like(target))
        dist = torch.full_like(log_probs, self.smoothing / V)
        dist.scatter_add_(
            -1, safe.unsqueeze(-1), torch.full_like(dist[..., :1], 1 - self.smoothing)
        )
        per_token = -(dist * log_probs).sum(-1)
        return per_token.masked_fill(~keep, 0.0).sum() / keep.sum().clamp(min=1)


class LsFloat64Selected(_Base):
    """Only the real positions selected with a boolean index, the sums in float64."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        if not keep.any():
            return logits.sum() * 0.0
        lp = logits[keep].double().log_softmax(-1)  # (N, V)
        t = target[keep]
        nll = -lp[torch.arange(len(t)), t]
        uniform = -lp.mean(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform).mean()
        return loss.to(logits.dtype)


CASES = [
    BlindCase(
        CHECK,
        "padding_in_denominator",
        LsPaddingInDenominator,
        "mistake",
        "I zeroed the padding positions' loss but then took .mean() over all B*T positions, so "
        "padding counts in the denominator.",
    ),
    BlindCase(
        CHECK,
        "padding_not_ignored",
        LsPaddingNotIgnored,
        "mistake",
        "I used F.cross_entropy with label_smoothing but forgot ignore_index=PAD_ID, so padding "
        "positions are scored like targets.",
    ),
    BlindCase(
        CHECK,
        "spread_over_v_minus_1",
        LsOverWrongTokensOnly,
        "mistake",
        "I put 1 - eps on the right token and eps / (V - 1) on each of the other tokens, "
        "instead of eps / V on every token.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged the loss within each sentence and then over the sentences, instead of one "
        "mean over all real tokens.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_forgotten",
        LsUniformTermForgotten,
        "mistake",
        "I scaled the right token's term by 1 - eps but forgot to add the eps * uniform term.",
    ),
    BlindCase(
        CHECK,
        "uniform_summed_not_averaged",
        LsUniformSumNotMean,
        "mistake",
        "For the uniform part I summed -log p over the vocabulary instead of averaging it, "
        "i.e. eps on every token instead of eps / V.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_on_raw_logits",
        LsUniformOnRawLogits,
        "mistake",
        "The uniform term uses -logits.mean(-1) instead of -log_softmax(logits).mean(-1).",
    ),
    BlindCase(
        CHECK,
        "kl_divergence_not_cross_entropy",
        LsKlDivergence,
        "mistake",
        "I computed the KL divergence to the smoothed target (as with nn.KLDivLoss), which is "
        "the cross-entropy minus the target's entropy: same gradient, different value.",
    ),
    BlindCase(
        CHECK,
        "annotated_pad_column_zeroed",
        LsAnnotatedPadColumn,
        "mistake",
        "As in the Annotated Transformer I spread eps / (V - 2) and set the padding column of "
        "the smoothed target to zero.",
    ),
    BlindCase(
        CHECK,
        "scatter_overwrites_true_token",
        LsScatterOverwrites,
        "mistake",
        "I filled eps / V everywhere and then scatter_ (not scatter_add_) 1 - eps on the right "
        "token, so it gets 1 - eps instead of 1 - eps + eps / V.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I wrote log_softmax(logits, dim=1) as for (N, V) logits; with (B, T, V) that is over "
        "the time axis, so the padding's logits enter every position's loss.",
    ),
    BlindCase(
        CHECK,
        "nan_when_all_padding",
        LsNanOnAllPadding,
        "mistake",
        "I divide by keep.sum() without a clamp: a batch whose targets are all padding gives "
        "nan instead of 0.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy with ignore_index=PAD_ID and label_smoothing, plus a 0 for a batch "
        "with no real target.",
    ),
    BlindCase(
        CHECK,
        "explicit_smoothed_distribution",
        LsExplicitDistribution,
        "correct",
        "The smoothed target as a tensor (eps / V everywhere, scatter_add_ 1 - eps), "
        "cross-entropy as -(dist * log p).sum(-1), masked mean; an extra pad_id argument.",
    ),
    BlindCase(
        CHECK,
        "float64_boolean_index",
        LsFloat64Selected,
        "correct",
        "Real positions selected with logits[keep], loss computed in float64 and cast back.",
    ),
]
