"""Blind set B13, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

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


class LSPaddingInMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        safe = target.clamp(min=0)
        nll = -logp.gather(-1, safe[..., None]).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        loss = loss * (target != PAD_ID)
        return loss.mean()  # mean over every position


class LSNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LSMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target[..., None]).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()


class LSSpreadOverWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / (V - 1))
        dist.scatter_(-1, target[..., None], 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(dist * logp).sum(-1)
        return loss[keep].mean()


class LSSmoothProbabilities(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        probs = logits.softmax(-1)
        p_true = probs.gather(-1, target[..., None]).squeeze(-1)
        smoothed = (1 - self.smoothing) * p_true + self.smoothing / V  # smooth the probability
        keep = target != PAD_ID
        return -(smoothed.log() * keep).sum() / keep.sum()


class LSSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target[..., None]).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return (loss * keep).sum()


class LSSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target[..., None]).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss[keep].mean()


class LSUniformSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target[..., None]).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.sum(-1)  # sum over V
        return loss[keep].mean()


class LSNoPadColumn(_Base):
    """The Annotated Transformer's target: nothing on the PAD column, eps over V - 2."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / (V - 2))
        dist.scatter_(-1, target[..., None], 1 - self.smoothing)
        dist[..., PAD_ID] = 0
        keep = target != PAD_ID
        return -(dist * logp).sum(-1)[keep].mean()


class LSKLDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = logits.log_softmax(-1)
        dist = torch.full_like(logp, self.smoothing / V)
        dist.scatter_add_(-1, target[..., None], torch.full_like(logp[..., :1], 1 - self.smoothing))
        keep = target != PAD_ID
        kl = F.kl_div(logp, dist, reduction="none").sum(-1)  # KL instead of cross-entropy
        return kl[keep].mean()


class LSRawLogits(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        true = logits.gather(-1, target[..., None]).squeeze(-1)
        loss = -(1 - self.smoothing) * true - self.smoothing * logits.mean(-1)  # no log_softmax
        return loss[keep].mean()


class LSSmoothingReversed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target[..., None]).squeeze(-1)
        loss = self.smoothing * nll - (1 - self.smoothing) * logp.mean(-1)  # weights swapped
        return loss[keep].mean()


# ---------------------------------------------------------------- correct variants


class LSTorchBuiltin(_Base):
    """PyTorch's own label_smoothing argument."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LSExplicitDistribution(_Base):
    """A full smoothed target distribution built with scatter_add, then -sum(q log p)."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = torch.log_softmax(logits, dim=-1)
        with torch.no_grad():
            q = torch.full_like(logp, self.smoothing / V)
            q.scatter_add_(
                -1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing)
            )
        per_token = -(q * logp).sum(-1)
        mask = target.ne(PAD_ID)
        return per_token.masked_select(mask).mean()


class LSLogSumExp(_Base):
    """The log-softmax written with logsumexp; padding removed by indexing first."""

    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__(smoothing)
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != self.ignore_index
        z, y = logits[keep], target[keep]  # (N, V), (N,)
        lse = torch.logsumexp(z, dim=-1)
        nll = lse - z.gather(1, y[:, None]).squeeze(1)
        uniform = lse - z.mean(dim=-1)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform).sum() / y.numel()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LSPaddingInMean,
        "mistake",
        "I zeroed the padding's loss but took the mean over every position.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LSNoSmoothing,
        "mistake",
        "I used plain cross_entropy with ignore_index and forgot the smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LSMeanOverSentences,
        "mistake",
        "I averaged each sentence's tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "spread_over_v_minus_1",
        LSSpreadOverWrong,
        "mistake",
        "I put eps/(V-1) on each wrong token and 1-eps on the right one.",
    ),
    BlindCase(
        CHECK,
        "smooth_the_probability",
        LSSmoothProbabilities,
        "mistake",
        "I smoothed the model's probability of the right token and took -log of that.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LSSumNotMean,
        "mistake",
        "I summed the loss over the real tokens without dividing by their number.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_time",
        LSSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, which is time, not the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LSUniformSummed,
        "mistake",
        "For the uniform part I summed -log p over V instead of averaging.",
    ),
    BlindCase(
        CHECK,
        "no_mass_on_pad_column",
        LSNoPadColumn,
        "mistake",
        "Like the Annotated Transformer I put 0 on the PAD column and eps/(V-2) elsewhere.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LSKLDivergence,
        "mistake",
        "I used KL divergence to the smoothed target instead of the cross-entropy.",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        LSRawLogits,
        "mistake",
        "I used the logits directly as log-probabilities, without log_softmax.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LSSmoothingReversed,
        "mistake",
        "I weighted the right token by eps and the uniform part by 1 - eps.",
    ),
    BlindCase(
        CHECK,
        "torch_label_smoothing",
        LSTorchBuiltin,
        "correct",
        "F.cross_entropy with ignore_index=PAD_ID and label_smoothing=smoothing.",
    ),
    BlindCase(
        CHECK,
        "explicit_distribution",
        LSExplicitDistribution,
        "correct",
        "I built the smoothed distribution q with scatter_add and took -sum(q log p).",
    ),
    BlindCase(
        CHECK,
        "logsumexp_indexed",
        LSLogSumExp,
        "correct",
        "Padding removed by boolean indexing first, log-softmax via logsumexp.",
    ),
]
