"""Blind set B28, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_tutorial.sequences import PAD_ID

from .. import BlindCase

CHECK = "check_label_smoothing"


class _Smoothed(nn.Module):
    def __init__(self, smoothing: float) -> None:
        super().__init__()
        self.smoothing = smoothing


# ---------------------------------------------------------------- mistakes


class LsPaddingInMean(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)
        loss = loss.masked_fill(target == PAD_ID, 0.0)
        return loss.mean()  # over all B * T positions


class LsNoSmoothing(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)  # (B, T)
        real = (target != PAD_ID).float()
        per_sentence = (loss * real).sum(dim=1) / real.sum(dim=1).clamp(min=1)
        return per_sentence.mean()


class LsWrongTokensOnly(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(dim=-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # spread over the wrong tokens
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(dim=-1)
        real = target != PAD_ID
        return loss[real].mean()


class LsUniformOverPadding(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(dim=-1)
        nll = F.nll_loss(log_probs.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)
        uniform = -log_probs.mean(dim=-1).mean()  # the second term, over every position
        return (1 - self.smoothing) * nll + self.smoothing * uniform


class LsTrueTokenNotSmoothed(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(dim=-1)
        q = torch.full_like(log_probs, self.smoothing / V)
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)  # overwrites eps / V there
        loss = -(q * log_probs).sum(dim=-1)
        keep = (target != PAD_ID).to(loss.dtype)
        return (loss * keep).sum() / keep.sum()


class LsSoftmaxOverTime(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)
        keep = (target != PAD_ID).to(loss.dtype)
        return (loss * keep).sum() / keep.sum()


class LsPerTokenReturned(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(dim=-1)
        return loss * (target != PAD_ID)  # (B, T): zero at the padding


class LsAnnotatedKL(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(dim=-1).reshape(-1, V)
        flat = target.reshape(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 2))
        q.scatter_(1, flat.unsqueeze(1), 1.0 - self.smoothing)
        q[:, PAD_ID] = 0.0
        q[flat == PAD_ID] = 0.0
        kl = F.kl_div(log_probs, q, reduction="sum")
        return kl / (flat != PAD_ID).sum()


class LsEpsilonOnTrueToken(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        # epsilon stays on the right word, the rest is spread
        loss = self.smoothing * nll - (1 - self.smoothing) * log_probs.mean(dim=-1)
        keep = (target != PAD_ID).to(loss.dtype)
        return (loss * keep).sum() / keep.sum()


class LsCrossEntropyNoIgnore(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsClassesInDim1(_Smoothed):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits, target, ignore_index=PAD_ID, label_smoothing=self.smoothing
        )  # (B, T, V) passed as it is


# ---------------------------------------------------------------- correct variants


class LsTorchCrossEntropy(_Smoothed):
    """PyTorch's own label smoothing, on the flattened batch."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.flatten(0, -2),
            target.flatten(),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsExplicitTarget(nn.Module):
    """The smoothed target q built as a tensor; the padding id is an argument with a default."""

    def __init__(self, smoothing: float, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing = smoothing
        self.pad_id = pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        log_p = torch.log_softmax(logits, dim=-1)
        one_hot = F.one_hot(target, V).to(log_p.dtype)
        q = (1.0 - self.smoothing) * one_hot + self.smoothing / V
        per_token = -(q * log_p).sum(dim=-1)  # (B, T)
        real = target != self.pad_id
        return torch.where(real, per_token, torch.zeros_like(per_token)).sum() / real.sum()


class LsSelectRealFirst(_Smoothed):
    """The real tokens picked out first; log-probabilities through logsumexp."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        real = target != PAD_ID
        z = logits[real]  # (N, V)
        y = target[real]  # (N,)
        lse = torch.logsumexp(z, dim=-1)
        nll = lse - z.gather(1, y[:, None]).squeeze(1)
        uniform = lse - z.mean(dim=-1)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform).mean()


CASES = [
    BlindCase(
        CHECK,
        "padding_in_mean",
        LsPaddingInMean,
        "mistake",
        "I zeroed the loss at the padding, but then took .mean() over all B * T positions.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "F.cross_entropy with ignore_index=PAD_ID, but I forgot to pass label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged each sentence over its real tokens, then averaged the sentences.",
    ),
    BlindCase(
        CHECK,
        "eps_over_wrong_tokens",
        LsWrongTokensOnly,
        "mistake",
        "My target puts 1 - eps on the right token and eps / (V - 1) on each of the others.",
    ),
    BlindCase(
        CHECK,
        "uniform_term_over_padding",
        LsUniformOverPadding,
        "mistake",
        "The cross-entropy part ignores the padding, but I averaged the uniform part over every "
        "position, padding included.",
    ),
    BlindCase(
        CHECK,
        "true_token_not_smoothed",
        LsTrueTokenNotSmoothed,
        "mistake",
        "I filled q with eps / V and then scattered 1 - eps onto the right token, which "
        "overwrites its eps / V instead of adding to it.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I wrote F.log_softmax(logits, dim=1), which is the time axis of (B, T, V).",
    ),
    BlindCase(
        CHECK,
        "per_token_returned",
        LsPerTokenReturned,
        "mistake",
        "I return the (B, T) loss of every token, zero at the padding, not its mean.",
    ),
    BlindCase(
        CHECK,
        "annotated_kl_divergence",
        LsAnnotatedKL,
        "mistake",
        "I followed the Annotated Transformer: KL divergence against a target with eps / (V - 2) "
        "and nothing on padding, summed and divided by the number of real tokens.",
    ),
    BlindCase(
        CHECK,
        "eps_and_one_minus_eps_swapped",
        LsEpsilonOnTrueToken,
        "mistake",
        "I put eps on the right token's term and 1 - eps on the uniform term.",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_without_ignore_index",
        LsCrossEntropyNoIgnore,
        "mistake",
        "F.cross_entropy with label_smoothing, but without ignore_index=PAD_ID, so the padding "
        "is scored as the token 0.",
    ),
    BlindCase(
        CHECK,
        "logits_unflattened",
        LsClassesInDim1,
        "mistake",
        "I gave F.cross_entropy the (B, T, V) logits as they are; it reads dimension 1 as the "
        "classes.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index on the flattened batch.",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        LsExplicitTarget,
        "correct",
        "The smoothed target q built with one_hot, -(q * log p) summed; pad_id an extra "
        "argument with a default.",
    ),
    BlindCase(
        CHECK,
        "real_tokens_first",
        LsSelectRealFirst,
        "correct",
        "Boolean indexing picks the real tokens first; log-probabilities via logsumexp.",
    ),
]
