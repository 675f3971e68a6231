"""Blind set B32, check_label_smoothing (chapter 14): the label-smoothed loss over real tokens."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_label_smoothing"
PAD_ID = 0


class _Base(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


# ---------------------------------------------------------------- mistakes


class LSPaddingInMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.mean()  # over all B * T positions


class LSNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LSMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)  # (B,)
        return per_sentence.mean()


class LSOverWrongTokensOnly(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LSGradientToPadding(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return loss.sum() / keep.sum()  # divided by the real tokens; padding still summed


class LSScatterOverwrites(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # the eps / V is lost there
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(-1)
        return (loss * keep).sum() / keep.sum()


class LSForgotOneMinusEps(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LSUniformSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.sum(-1)) * keep  # no / V
        return loss.sum() / keep.sum()


class LSKLDivergence(_Base):
    """The Annotated Transformer's KL divergence, with our smoothed target."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing))
        keep = target != PAD_ID
        kl = F.kl_div(log_probs, q, reduction="none").sum(-1)  # (B, T)
        return (kl * keep).sum() / keep.sum()


class LSHardCodedSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID, label_smoothing=0.1
        )


class LSDefaultIgnoreIndex(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(  # ignore_index left at its default, -100
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LSLogSoftmaxWrongDim(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(1)  # dim 1 of (B, T, V)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)) * keep
        return loss.sum() / keep.sum()


class LSSumReduction(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


class LSUniformOfProbabilities(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        probs = logits.softmax(-1)
        keep = target != PAD_ID
        nll = -probs.gather(-1, target.unsqueeze(-1)).squeeze(-1).log()
        uniform = -probs.mean(-1).log()  # the mean probability, then the log
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LSMixesLabelsAndLogits(_Base):
    """Smooths the one-hot target then uses F.cross_entropy with probabilities, without
    removing padding from the targets' mean."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        q = F.one_hot(target, V).float().to(logits.dtype) * (1 - self.smoothing)
        q = q + self.smoothing / V
        keep = (target != PAD_ID).to(logits.dtype)
        q = q * keep[..., None]  # padding rows all zero
        return F.cross_entropy(logits.reshape(-1, V), q.reshape(-1, V))  # mean over B * T


# ---------------------------------------------------------------- correct variants


class LSCrossEntropyBuiltin(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LSExplicitDistribution(_Base):
    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = torch.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q = q + (1 - self.smoothing) * F.one_hot(target, V).to(log_probs.dtype)
        per_token = -(q * log_probs).sum(dim=-1)  # (B, T)
        real = target != self.pad_id
        return per_token[real].mean()


class LSFloat64Loop(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lp = logits.double().log_softmax(-1)
        total, count = lp.new_zeros(()), 0
        B, T, V = logits.shape
        for b in range(B):
            for t in range(T):
                y = int(target[b, t])
                if y == PAD_ID:
                    continue
                total = total - (1 - self.smoothing) * lp[b, t, y]
                total = total - self.smoothing * lp[b, t].sum() / V
                count += 1
        return (total / max(count, 1)).to(logits.dtype)


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LSPaddingInMean,
        "mistake",
        "I zeroed the padding positions' loss but took .mean() over all B * T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothing,
        "mistake",
        "I stored smoothing but called F.cross_entropy without label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LSMeanOverSentences,
        "mistake",
        "I averaged each sentence over its tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "eps_over_wrong_tokens",
        LSOverWrongTokensOnly,
        "mistake",
        "I put 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "padding_summed_not_counted",
        LSGradientToPadding,
        "mistake",
        "I divided by the number of real tokens but forgot to zero the padding positions' "
        "loss, so padding is summed and gets a gradient.",
    ),
    BlindCase(
        CHECK,
        "scatter_overwrites_eps",
        LSScatterOverwrites,
        "mistake",
        "I filled q with eps / V and scatter_-ed 1 - eps on the right token, which replaces "
        "its eps / V instead of adding to it.",
    ),
    BlindCase(
        CHECK,
        "forgot_one_minus_eps",
        LSForgotOneMinusEps,
        "mistake",
        "I wrote nll + eps * uniform, forgetting the factor (1 - eps) on the nll.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LSUniformSummed,
        "mistake",
        "The smoothing term is eps times the sum of -log p over the vocabulary; I forgot the "
        "1 / V.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LSKLDivergence,
        "mistake",
        "I used KL divergence to the smoothed target as the Annotated Transformer does, which "
        "differs from the cross-entropy by the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "smoothing_hard_coded",
        LSHardCodedSmoothing,
        "mistake",
        "I wrote label_smoothing=0.1, the paper's value, instead of self.smoothing.",
    ),
    BlindCase(
        CHECK,
        "default_ignore_index",
        LSDefaultIgnoreIndex,
        "mistake",
        "I called F.cross_entropy with label_smoothing but without ignore_index=PAD_ID; its "
        "default is -100, so padding is scored.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LSLogSoftmaxWrongDim,
        "mistake",
        "I took log_softmax over dim=1, the time axis, instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "sum_reduction",
        LSSumReduction,
        "mistake",
        "I used reduction='sum', thinking the optimizer would not mind the scale.",
    ),
    BlindCase(
        CHECK,
        "log_of_mean_probability",
        LSUniformOfProbabilities,
        "mistake",
        "For the uniform term I took -log of the mean probability instead of the mean of "
        "-log p (which makes the term a constant, log V).",
    ),
    BlindCase(
        CHECK,
        "soft_targets_mean_over_all",
        LSMixesLabelsAndLogits,
        "mistake",
        "I built the smoothed target myself, zeroed it at padding and passed it to "
        "F.cross_entropy as probabilities; its mean divides by every position, padding "
        "included.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_builtin",
        LSCrossEntropyBuiltin,
        "correct",
        "F.cross_entropy on the flattened logits with ignore_index=PAD_ID and "
        "label_smoothing=self.smoothing.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LSExplicitDistribution,
        "correct",
        "The target distribution built with one_hot, the loss as -(q * log p).sum, the mean "
        "over real tokens by boolean indexing; pad_id as an optional argument.",
    ),
    BlindCase(
        CHECK,
        "float64_loop",
        LSFloat64Loop,
        "correct",
        "A loop over every position in float64, skipping padding, cast back at the end.",
    ),
]
