"""Blind cases for check_label_smoothing (chapter 14), written from the chapter's text only."""

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


class MeanOverAllPositions(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.mean()  # zeroed the padding, but the mean is over all B*T positions


class DefaultIgnoreIndex(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )  # ignore_index left at its default, -100


class SumOverAllDividedByRealTokens(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        uniform = -log_probs.mean(-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        n_real = (target != PAD_ID).sum()
        return loss.sum() / n_real  # divided by the real tokens, but padding still summed


class SmoothingOverWrongTokensOnly(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(-1)
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class MeanPerSentence(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        per_sentence = loss.sum(1) / keep.sum(1)  # (B,): the mean of each sentence
        return per_sentence.mean()


class NoSmoothing(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.view(-1, V), target.view(-1), ignore_index=PAD_ID)


class LogitsAsLogProbs(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # forgot the log_softmax
        uniform = -logits.mean(-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class UniformTermSummed(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(-1)  # the 1/V of eps/V left out
        loss = ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep
        return loss.sum() / keep.sum()


class ReturnsPerTokenLoss(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(-1)
        return ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep  # (B, T)


# ---------------------------------------------------------------- correct variants


class CrossEntropyBuiltIn(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class ExplicitTargetDistribution(nn.Module):
    def __init__(self, smoothing: float = 0.1, pad_id: int = PAD_ID) -> None:
        super().__init__()
        self.smoothing, self.pad_id = smoothing, pad_id

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        keep = target != self.pad_id
        log_probs = logits[keep].log_softmax(-1)  # (N, V): only the real tokens
        q = torch.full_like(log_probs, self.smoothing / V)
        q[torch.arange(len(q)), target[keep]] += 1 - self.smoothing
        return -(q * log_probs).sum(-1).mean()


class LogSumExpForm(_Loss):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        # -log p_k = logsumexp - z_k, so the loss is logsumexp - (1-eps) z_y - eps * mean(z)
        lse = logits.logsumexp(-1)
        z_y = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = lse - (1 - self.smoothing) * z_y - self.smoothing * logits.mean(-1)
        keep = target.ne(PAD_ID)
        return torch.where(keep, loss, torch.zeros_like(loss)).sum() / keep.sum()


CASES = [
    BlindCase(
        CHECK,
        "mean_over_all_positions",
        MeanOverAllPositions,
        "mistake",
        "I zeroed the padding's loss but took .mean() over all B*T positions, so padding "
        "counts in the denominator",
    ),
    BlindCase(
        CHECK,
        "default_ignore_index",
        DefaultIgnoreIndex,
        "mistake",
        "I used F.cross_entropy with label_smoothing but left ignore_index at its default "
        "-100, so the padding (id 0) is scored like a real token",
    ),
    BlindCase(
        CHECK,
        "sum_over_all_divided_by_real_tokens",
        SumOverAllDividedByRealTokens,
        "mistake",
        "I divided by the number of real tokens but summed the loss of every position, "
        "padding included",
    ),
    BlindCase(
        CHECK,
        "smoothing_over_wrong_tokens_only",
        SmoothingOverWrongTokensOnly,
        "mistake",
        "I gave 1 - eps to the right token and eps / (V - 1) to each of the other tokens, "
        "instead of eps / V to every token",
    ),
    BlindCase(
        CHECK,
        "mean_per_sentence",
        MeanPerSentence,
        "mistake",
        "I averaged each sentence over its real tokens and then took the mean of the "
        "sentences, not the mean over all real tokens",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        NoSmoothing,
        "mistake",
        "I called F.cross_entropy with ignore_index=PAD_ID but forgot label_smoothing: the "
        "smoothing is stored and never used",
    ),
    BlindCase(
        CHECK,
        "logits_as_log_probs",
        LogitsAsLogProbs,
        "mistake",
        "I forgot the log_softmax and used the raw logits as log-probabilities",
    ),
    BlindCase(
        CHECK,
        "uniform_term_summed",
        UniformTermSummed,
        "mistake",
        "the smoothing term sums -log p_k over the vocabulary instead of averaging it: "
        "eps on every token rather than eps / V",
    ),
    BlindCase(
        CHECK,
        "returns_per_token_loss",
        ReturnsPerTokenLoss,
        "mistake",
        "my forward returns the (B, T) loss of every token (padding zeroed) instead of "
        "its mean, a 0-d tensor",
    ),
    BlindCase(
        CHECK,
        "cross_entropy_built_in",
        CrossEntropyBuiltIn,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index=PAD_ID on the flattened batch",
    ),
    BlindCase(
        CHECK,
        "explicit_target_distribution",
        ExplicitTargetDistribution,
        "correct",
        "the real tokens selected with a boolean index, the smoothed target q built "
        "explicitly; extra pad_id argument and a default smoothing",
    ),
    BlindCase(
        CHECK,
        "logsumexp_form",
        LogSumExpForm,
        "correct",
        "the loss written with logsumexp: lse - (1 - eps) z_y - eps mean(z), padding "
        "removed with torch.where",
    ),
]
