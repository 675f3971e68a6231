"""Blind set B25, check_label_smoothing (chapter 14): the label-smoothed loss as readers write
it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_label_smoothing"

PAD_ID = 0


# ---------------------------------------------------------------- mistakes


class LSPaddingInMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)
        return (loss * (target != PAD_ID)).mean()  # padding zeroed out


class LSNoIgnoreIndex(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(logits.transpose(1, 2), target, label_smoothing=self.smoothing)


class LSSentenceMean(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)) * keep
        per_sentence = loss.sum(dim=1) / keep.sum(dim=1).clamp(min=1)
        return per_sentence.mean()


class LSWrongTokensOnly(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        V = logits.shape[-1]
        q = torch.full_like(log_probs, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(dim=-1)
        return loss[keep].mean()


class LSOverwrittenTarget(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        V = logits.shape[-1]
        q = torch.full_like(log_probs, self.smoothing / V)  # eps / V on every token
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # 1 - eps on the right one
        keep = target != PAD_ID
        loss = -(q * log_probs).sum(dim=-1)
        return (loss * keep).sum() / keep.sum()


class LSSwappedWeights(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (self.smoothing * nll + (1 - self.smoothing) * uniform) * keep
        return loss.sum() / keep.sum()


class LSUniformSum(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(dim=-1)  # the sum over all k of -log p_k
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class LSKLDivergence(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        V = logits.shape[-1]
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(q[..., :1], 1 - self.smoothing))
        keep = target != PAD_ID
        kl = F.kl_div(log_probs[keep], q[keep], reduction="sum")  # as the Annotated Transformer
        return kl / keep.sum()


class LSSoftmaxOverTime(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)) * keep
        return loss.sum() / keep.sum()


class LSUniformTermNotMasked(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = F.nll_loss(log_probs.transpose(1, 2), target, ignore_index=PAD_ID, reduction="sum")
        uniform = -log_probs.mean(dim=-1).sum()  # the smoothing term over every position
        return ((1 - self.smoothing) * nll + self.smoothing * uniform) / keep.sum()


class LSSummed(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


class LSPerToken(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)
        return loss * keep  # (B, T): the loss of every token


class LSPaperEpsilon(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = 0.1  # the paper's epsilon_ls

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)) * keep
        return loss.sum() / keep.sum()


# ---------------------------------------------------------------- correct variants


class LSPyTorch(nn.Module):
    def __init__(self, smoothing: float, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.loss = nn.CrossEntropyLoss(ignore_index=ignore_index, label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.flatten(0, -2), target.flatten())


class LSExplicitTarget(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        logits, target = logits[keep], target[keep]  # (N, V), (N,): the real tokens only
        V = logits.shape[-1]
        q = (1 - self.smoothing) * F.one_hot(target, V).to(logits.dtype) + self.smoothing / V
        return -(q * F.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


class LSLogSumExp(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.eps = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        right = torch.gather(logits, -1, target[..., None].clamp(min=0))[..., 0]
        loss = lse - (1 - self.eps) * right - self.eps * logits.mean(dim=-1)
        mask = target.ne(PAD_ID)
        loss = torch.where(mask, loss, torch.zeros_like(loss))
        return loss.sum() / mask.sum()


CASES = [
    BlindCase(
        CHECK,
        "mean_over_all_positions",
        LSPaddingInMean,
        "mistake",
        "I zeroed the loss at padding and then took .mean(), which divides by every position.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_no_ignore_index",
        LSNoIgnoreIndex,
        "mistake",
        "F.cross_entropy with label_smoothing, but I forgot ignore_index=PAD_ID, so padding is "
        "scored as token 0.",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        LSSentenceMean,
        "mistake",
        "I averaged each sentence over its own tokens and then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "eps_over_wrong_tokens",
        LSWrongTokensOnly,
        "mistake",
        "I built q with eps / (V - 1) on every token and 1 - eps on the right one.",
    ),
    BlindCase(
        CHECK,
        "scatter_overwrites_eps",
        LSOverwrittenTarget,
        "mistake",
        "I filled q with eps / V and then scattered 1 - eps onto the right token, which "
        "replaces its eps / V instead of adding to it.",
    ),
    BlindCase(
        CHECK,
        "weights_swapped",
        LSSwappedWeights,
        "mistake",
        "I put eps on the right token's term and 1 - eps on the uniform term.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        LSUniformSum,
        "mistake",
        "For the uniform term I summed -log p_k over the vocabulary and forgot the 1 / V.",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LSKLDivergence,
        "mistake",
        "I used F.kl_div against the smoothed target, as the Annotated Transformer does.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LSSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, the positions, instead of the vocabulary.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_over_padding",
        LSUniformTermNotMasked,
        "mistake",
        "nll_loss with ignore_index for the first term, but the smoothing term summed over "
        "every position, padding included.",
    ),
    BlindCase(
        CHECK,
        "reduction_sum",
        LSSummed,
        "mistake",
        "F.cross_entropy with ignore_index and label_smoothing, but reduction='sum'.",
    ),
    BlindCase(
        CHECK,
        "per_token_loss",
        LSPerToken,
        "mistake",
        "I returned the (B, T) loss of every token, padding zeroed, without reducing it.",
    ),
    BlindCase(
        CHECK,
        "paper_epsilon_hard_coded",
        LSPaperEpsilon,
        "mistake",
        "I set self.smoothing = 0.1, the paper's value, instead of the argument.",
    ),
    BlindCase(
        CHECK,
        "pytorch_cross_entropy",
        LSPyTorch,
        "correct",
        "nn.CrossEntropyLoss(ignore_index, label_smoothing) on the flattened tokens; an extra "
        "ignore_index argument.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_real_tokens",
        LSExplicitTarget,
        "correct",
        "Select the real tokens first, build q with one_hot, mean of -(q * log p).",
    ),
    BlindCase(
        CHECK,
        "logsumexp_form",
        LSLogSumExp,
        "correct",
        "logsumexp(logits) - (1 - eps) * logit_y - eps * mean(logits), masked with torch.where.",
    ),
]
