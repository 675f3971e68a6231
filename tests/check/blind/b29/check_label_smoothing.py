"""Blind set B29, check_label_smoothing (chapter 14): the label-smoothed loss as readers write
it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_label_smoothing"

PAD_ID = 0  # chapter 1's padding id


def _parts(logits: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """-log p of the right token, the mean of -log p over the vocabulary, and the real-token
    mask; shared by the mistakes whose slip is elsewhere."""
    log_probs = F.log_softmax(logits, dim=-1)
    keep = target != PAD_ID
    nll = -log_probs.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return nll, -log_probs.mean(dim=-1), keep


# ---------------------------------------------------------------- mistakes


class LsMeanOverAll(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        nll, uniform, keep = _parts(logits, target)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.mean()  # padding is zero, so the mean is fine


class LsCrossEntropyNoIgnore(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.loss = nn.CrossEntropyLoss(label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


class LsNoSmoothing(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanPerSentence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        nll, uniform, keep = _parts(logits, target)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        per_sentence = loss.sum(dim=1) / keep.sum(dim=1).clamp(min=1)
        return per_sentence.mean()


class LsWrongTokensOnly(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = F.log_softmax(logits, dim=-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsUniformSum(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.sum(dim=-1)  # epsilon times the sum of -log p_k
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        return loss[keep].mean()


class LsSmoothingSwapped(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        nll, uniform, keep = _parts(logits, target)
        loss = self.smoothing * nll + (1 - self.smoothing) * uniform
        return (loss * keep).sum() / keep.sum()


class LsUnpermutedCrossEntropy(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits, target, ignore_index=PAD_ID, label_smoothing=self.smoothing
        )  # (B, T, V) passed as it is


class LsTargetNotRenormalized(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        one_hot = F.one_hot(target, V).to(logits.dtype)
        q = one_hot + self.smoothing / V  # smoothing added on top of the one-hot
        loss = -(q * F.log_softmax(logits, dim=-1)).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsKlDivergence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        q = torch.full_like(logits, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing))
        kl = F.kl_div(F.log_softmax(logits, dim=-1), q, reduction="none").sum(-1)
        keep = target != PAD_ID
        return kl[keep].sum() / keep.sum()


class LsLogSoftmaxOverTime(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)  # (B, T, V): the softmax over dim 1
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        return (loss * keep).sum() / keep.sum()


class LsSumNotMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        nll, uniform, keep = _parts(logits, target)
        return (((1 - self.smoothing) * nll + self.smoothing * uniform) * keep).sum()


class LsPerTokenReturned(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        nll, uniform, keep = _parts(logits, target)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep  # (B, T)


class LsHardcodedEpsilon(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        nll, uniform, keep = _parts(logits, target)
        loss = (0.9 * nll + 0.1 * uniform) * keep  # the paper's epsilon_ls = 0.1
        return loss.sum() / keep.sum()


# ---------------------------------------------------------------- correct variants


class LsTorchFlat(nn.Module):
    """PyTorch's own loss on flattened views."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.criterion = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        if not (target != PAD_ID).any():
            return logits.sum() * 0.0
        return self.criterion(logits.reshape(-1, logits.size(-1)), target.reshape(-1))


class LsExplicitTarget(nn.Module):
    """The smoothed target distribution q built explicitly, -sum q log p, boolean indexing."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != self.pad_id
        if not real.any():
            return logits.sum() * 0.0
        lp = torch.log_softmax(logits[real], dim=-1)  # (N, V): the real tokens only
        V = lp.shape[-1]
        q = torch.full_like(lp, self.smoothing / V)
        q[torch.arange(len(lp)), target[real]] += 1.0 - self.smoothing
        return -(q * lp).sum(dim=-1).mean()


class LsPermutedFunctional(nn.Module):
    """F.cross_entropy on (B, V, T) logits, the class axis moved to dim 1."""

    def __init__(self, smoothing: float = 0.1) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        per_token = F.cross_entropy(
            logits.permute(0, 2, 1),
            target,
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="none",
        )  # (B, T), zero at padding
        return per_token.sum() / (target != PAD_ID).sum().clamp(min=1)


class LsLogsumexp(nn.Module):
    """-log p written as logsumexp minus the logit."""

    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.eps = float(smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # (B, T, 1)
        neg_log_p = lse - logits  # (B, T, V)
        right = torch.gather(neg_log_p, -1, target.clamp(min=0)[..., None])[..., 0]
        per_token = (1.0 - self.eps) * right + self.eps * neg_log_p.mean(-1)
        mask = (target != PAD_ID).to(logits.dtype)
        return (per_token * mask).sum() / mask.sum().clamp(min=1.0)


CASES = [
    BlindCase(
        CHECK,
        "mean_over_all_positions",
        LsMeanOverAll,
        "mistake",
        "I zeroed the padding's loss and then took .mean(), which still divides by the padding "
        "positions.",
    ),
    BlindCase(
        CHECK,
        "crossentropy_no_ignore_index",
        LsCrossEntropyNoIgnore,
        "mistake",
        "I used nn.CrossEntropyLoss(label_smoothing=...) but forgot ignore_index=PAD_ID.",
    ),
    BlindCase(
        CHECK,
        "smoothing_ignored",
        LsNoSmoothing,
        "mistake",
        "I stored the smoothing but computed plain cross-entropy with ignore_index.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        LsMeanPerSentence,
        "mistake",
        "I averaged each sentence over its real tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "epsilon_over_wrong_tokens",
        LsWrongTokensOnly,
        "mistake",
        "My target puts 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LsUniformSum,
        "mistake",
        "For the second term I summed -log p_k over the vocabulary and forgot the 1 / V.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LsSmoothingSwapped,
        "mistake",
        "I put eps on the right token's term and 1 - eps on the uniform term.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_unpermuted",
        LsUnpermutedCrossEntropy,
        "mistake",
        "I called F.cross_entropy on the (B, T, V) logits as they are, without moving the "
        "vocabulary to dim 1 or flattening.",
    ),
    BlindCase(
        CHECK,
        "target_not_renormalized",
        LsTargetNotRenormalized,
        "mistake",
        "I built q as one_hot + eps / V, forgetting to take eps away from the right token.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "I used F.kl_div against the smoothed target, as in the Annotated Transformer, so the "
        "value is off by the target's entropy.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsLogSoftmaxOverTime,
        "mistake",
        "I wrote log_softmax(logits, dim=1), which for (B, T, V) normalizes over the positions.",
    ),
    BlindCase(
        CHECK,
        "sum_not_mean",
        LsSumNotMean,
        "mistake",
        "I returned the sum of the per-token losses, not their mean.",
    ),
    BlindCase(
        CHECK,
        "per_token_returned",
        LsPerTokenReturned,
        "mistake",
        "I returned the (B, T) per-token losses and forgot to reduce them to one number.",
    ),
    BlindCase(
        CHECK,
        "epsilon_hardcoded",
        LsHardcodedEpsilon,
        "mistake",
        "I wrote the paper's 0.9 and 0.1 into forward instead of using self.smoothing.",
    ),
    BlindCase(
        CHECK,
        "torch_loss_flattened",
        LsTorchFlat,
        "correct",
        "nn.CrossEntropyLoss(label_smoothing, ignore_index=PAD_ID) on (B*T, V) and (B*T,) views.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LsExplicitTarget,
        "correct",
        "Only the real tokens selected by boolean indexing, the smoothed q built as a tensor, "
        "-(q * log p).sum(-1) averaged; pad_id an extra argument with a default.",
    ),
    BlindCase(
        CHECK,
        "permuted_functional",
        LsPermutedFunctional,
        "correct",
        "F.cross_entropy with the logits permuted to (B, V, T), reduction='none', then summed and "
        "divided by the real tokens; a default for smoothing.",
    ),
    BlindCase(
        CHECK,
        "logsumexp",
        LsLogsumexp,
        "correct",
        "-log p_k written as logsumexp(logits) - logits, a float mask for the mean.",
    ),
]
