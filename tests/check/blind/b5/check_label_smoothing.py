"""Blind set B5, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


# ---------------------------------------------------------------- mistakes


class LsKlDivergence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / V)
        right = torch.full_like(log_p[..., :1], 1 - self.smoothing)
        q.scatter_add_(-1, target.unsqueeze(-1), right)
        keep = target != PAD_ID
        # KL(q || p), as the Annotated Transformer computes it
        kl = F.kl_div(log_p, q, reduction="none").sum(-1)
        return (kl * keep).sum() / keep.sum()


class LsUniformSummed(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        uniform = -log_p.sum(-1)  # summed over the vocabulary instead of averaged
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return (loss * keep).sum() / keep.sum()


class LsScatterOverwrites(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        q = torch.full_like(log_p, self.smoothing / V)
        # scatter_ overwrites: the right token gets 1 - eps, not 1 - eps + eps / V
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * log_p).sum(-1)
        return loss[keep].mean()


class LsTimeAxisSoftmax(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = torch.log_softmax(logits, dim=1)  # dim=1 is T for (B, T, V), not the vocabulary
        keep = target != PAD_ID
        nll = -log_p.gather(2, target.unsqueeze(2)).squeeze(2)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(2)
        return loss[keep].sum() / keep.sum()


class LsFairseqPad(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.pad = 1  # fairseq's padding index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            target.reshape(-1),
            ignore_index=self.pad,
            label_smoothing=self.smoothing,
        )


class LsWeightsSwapped(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_p.mean(-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * uniform  # the two weights swapped
        return (loss * keep).sum() / keep.sum()


class LsRawLogits(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        # forgot log_softmax: the "log-probabilities" are the raw logits
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logits.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return (loss * keep).sum() / keep.sum()


class LsMaskedLogitsOnly(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        # smoothing spread over the real tokens' log-probs, but the padding column left out
        # of the uniform part, as the Annotated Transformer does
        others = torch.cat([log_p[..., :PAD_ID], log_p[..., PAD_ID + 1 :]], dim=-1)
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -others.sum(-1) / V
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return (loss * keep).sum() / keep.sum()


class LsPerTokenLosses(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_p = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_p.mean(-1)
        return loss * keep  # (B, T): the per-token losses, never reduced


# ---------------------------------------------------------------- correct variants


class LsCrossEntropyTransposed(nn.Module):
    """PyTorch's own cross-entropy, with the vocabulary moved to axis 1."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing, self.pad_id = smoothing, pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.transpose(1, 2),
            target,
            ignore_index=self.pad_id,
            label_smoothing=self.smoothing,
        )


class LsExplicitDistribution(nn.Module):
    """The smoothed target q built in full, then -sum q log p, averaged with a boolean index."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        real = target != PAD_ID
        log_p = F.log_softmax(logits[real], dim=-1)  # (N, V): the real tokens only
        q = F.one_hot(target[real], V).to(log_p.dtype) * (1 - self.smoothing)
        q = q + self.smoothing / V
        return -(q * log_p).sum(-1).mean()


CASES = [
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I computed KL(q || p) with F.kl_div, as the Annotated Transformer does, which "
        "differs from the cross-entropy by the entropy of q.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LsUniformSummed,
        "mistake",
        "For the uniform part I summed -log p over the vocabulary instead of averaging it, "
        "so the smoothing term is V times too big.",
    ),
    BlindCase(
        CHECK,
        "scatter_overwrites_eps_over_v",
        LsScatterOverwrites,
        "mistake",
        "I filled q with eps / V and then scatter_-ed 1 - eps onto the right token, which "
        "overwrites its eps / V share instead of adding to it.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsTimeAxisSoftmax,
        "mistake",
        "I took log_softmax over dim=1, the time axis of (B, T, V), instead of over the "
        "vocabulary.",
    ),
    BlindCase(
        CHECK,
        "pad_id_one",
        LsFairseqPad,
        "mistake",
        "I used padding index 1 as in fairseq, so the book's PAD (0) is scored and UNK is ignored.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsWeightsSwapped,
        "mistake",
        "I weighted the true-token term by eps and the uniform term by 1 - eps, the wrong "
        "way round.",
    ),
    BlindCase(
        CHECK,
        "no_log_softmax",
        LsRawLogits,
        "mistake",
        "I used the raw logits as if they were log-probabilities and never applied log_softmax.",
    ),
    BlindCase(
        CHECK,
        "pad_column_left_out",
        LsMaskedLogitsOnly,
        "mistake",
        "I left the padding column out of the uniform term but still divided by V, so the "
        "smoothed target puts nothing on PAD.",
    ),
    BlindCase(
        CHECK,
        "returns_per_token_losses",
        LsPerTokenLosses,
        "mistake",
        "forward returns the (B, T) tensor of per-token losses with padding zeroed, not "
        "their mean.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_transposed",
        LsCrossEntropyTransposed,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index, logits transposed to "
        "(B, V, T); pad_id is an optional argument.",
    ),
    BlindCase(
        CHECK,
        "explicit_q_on_real_tokens",
        LsExplicitDistribution,
        "correct",
        "I select the real tokens first with a boolean index, build q with one_hot and "
        "take -sum q log p, then the mean.",
    ),
]
