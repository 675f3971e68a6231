"""Blind set B27, check_label_smoothing (chapter 14): the label-smoothed loss as readers write it."""

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


class LsMeanOverAllPositions(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(dim=-1)
        loss = ((1 - self.smoothing) * nll + self.smoothing * smooth) * keep
        return loss.mean()  # padding is zeroed, so the mean is fine


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        keep = (target != PAD_ID).float()
        nll = -log_probs.gather(-1, target[..., None])[..., 0]
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        per_sentence = (loss * keep).sum(1) / keep.sum(1)  # each sentence's mean loss
        return per_sentence.mean()


class LsSpreadOverWrongTokens(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1)
        q = torch.full_like(log_probs, self.smoothing / (V - 1))  # the other V - 1 tokens
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        loss = -(q * log_probs).sum(-1)
        keep = target != PAD_ID
        return loss[keep].mean()


class LsPaddingInNumerator(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = logits.log_softmax(-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * log_probs.mean(-1)
        n_tokens = (target != PAD_ID).sum()
        return loss.sum() / n_tokens  # divide by the real tokens only


class LsTorchDefaultIgnore(_Base):
    def __init__(self, smoothing: float) -> None:
        super().__init__(smoothing)
        self.loss = nn.CrossEntropyLoss(label_smoothing=smoothing)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return self.loss(logits.flatten(0, 1), target.flatten())


class LsUniformSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.sum(dim=-1)  # the sum over k of -log p_k
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsWeightsFlipped(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = self.smoothing * nll + (1 - self.smoothing) * uniform
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsKlAnnotated(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        log_probs = logits.log_softmax(-1).reshape(-1, V)
        flat = target.reshape(-1)
        true_dist = torch.full_like(log_probs, self.smoothing / (V - 2))
        true_dist.scatter_(1, flat.unsqueeze(1), 1 - self.smoothing)
        true_dist[:, PAD_ID] = 0
        true_dist[flat == PAD_ID] = 0
        kl = F.kl_div(log_probs, true_dist, reduction="sum")
        return kl / (flat != PAD_ID).sum()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        keep = target != PAD_ID
        return (loss * keep).sum() / keep.sum()


class LsPerTokenReturned(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        log_probs = F.log_softmax(logits, dim=-1)
        nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -log_probs.mean(dim=-1)
        keep = target != PAD_ID
        return ((1 - self.smoothing) * nll + self.smoothing * uniform) * keep  # (B, T)


class LsSummed(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
            reduction="sum",
        )


class LsInPlaceLogSoftmax(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logits -= logits.logsumexp(-1, keepdim=True)  # log-softmax without a copy
        nll = -logits.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logits.mean(-1)
        keep = target != PAD_ID
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


class LsNoSuperInit(nn.Module):
    def __init__(self, smoothing: float) -> None:
        self.smoothing = smoothing

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(
            logits.reshape(-1, V),
            target.reshape(-1),
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsProbsNotLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        probs = logits.softmax(-1)
        V = logits.shape[-1]
        q = torch.full_like(probs, self.smoothing / V)
        q = q + (1 - self.smoothing) * F.one_hot(target, V)
        loss = -(q * probs.log1p()).sum(-1)  # log1p for stability near p = 0
        keep = target != PAD_ID
        return loss[keep].mean()


# ---------------------------------------------------------------- correct variants


class LsExplicitTarget(_Base):
    """The smoothed target distribution built explicitly with one_hot; boolean indexing."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.size(-1)
        log_p = torch.log_softmax(logits, dim=-1)
        q = (1 - self.smoothing) * F.one_hot(target, V).to(log_p.dtype) + self.smoothing / V
        per_token = -(q * log_p).sum(dim=-1)  # (B, T)
        real = target.ne(PAD_ID)
        return per_token[real].mean()


class LsTorchCrossEntropy(_Base):
    """PyTorch's own cross-entropy with label_smoothing and ignore_index, logits as (B, V, T)."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            logits.transpose(1, 2),
            target,
            ignore_index=PAD_ID,
            label_smoothing=self.smoothing,
        )


class LsLogsumexp(nn.Module):
    """Written with logsumexp; smoothing, ignore_index and a pad id as arguments with defaults."""

    def __init__(self, smoothing: float = 0.1, ignore_index: int = PAD_ID) -> None:
        super().__init__()
        self.eps = smoothing
        self.ignore_index = ignore_index

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        lse = torch.logsumexp(logits, dim=-1)  # (B, T)
        real = target != self.ignore_index
        safe = torch.where(real, target, torch.zeros_like(target))
        picked = torch.gather(logits, -1, safe[..., None]).squeeze(-1)
        nll = lse - picked
        uniform = lse - logits.mean(dim=-1)
        loss = nll + self.eps * (uniform - nll)
        loss = torch.where(real, loss, torch.zeros_like(loss))
        return loss.sum() / real.sum()


class LsLoopOverSentences(_Base):
    """A loop over the sentences, adding up token losses and counting tokens."""

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        total = logits.new_zeros(())
        count = 0
        for row_logits, row_target in zip(logits, target):
            real = row_target != PAD_ID
            if not real.any():
                continue
            lp = row_logits[real].log_softmax(-1)
            y = row_target[real]
            nll = -lp[torch.arange(len(y)), y]
            total = total + ((1 - self.smoothing) * nll - self.smoothing * lp.mean(-1)).sum()
            count += int(real.sum())
        return total / count


CASES = [
    BlindCase(
        CHECK,
        "mean_over_all_positions",
        LsMeanOverAllPositions,
        "mistake",
        "I zeroed the padding's loss and then took .mean(), so the padding still counts in the "
        "denominator.",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "I stored the smoothing but called F.cross_entropy without label_smoothing.",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "I averaged within each sentence and then over the sentences.",
    ),
    BlindCase(
        CHECK,
        "spread_over_wrong_tokens",
        LsSpreadOverWrongTokens,
        "mistake",
        "My target puts eps / (V - 1) on the other tokens and 1 - eps on the right one.",
    ),
    BlindCase(
        CHECK,
        "padding_in_numerator",
        LsPaddingInNumerator,
        "mistake",
        "I summed the loss of every position, padding included, and divided by the number of "
        "real tokens.",
    ),
    BlindCase(
        CHECK,
        "torch_default_ignore_index",
        LsTorchDefaultIgnore,
        "mistake",
        "I used nn.CrossEntropyLoss(label_smoothing=...) and forgot ignore_index, whose default "
        "-100 is not our PAD_ID.",
    ),
    BlindCase(
        CHECK,
        "uniform_summed",
        LsUniformSummed,
        "mistake",
        "For the smoothing term I summed -log p_k over the vocabulary instead of averaging it.",
    ),
    BlindCase(
        CHECK,
        "weights_flipped",
        LsWeightsFlipped,
        "mistake",
        "I put eps on the right token's term and 1 - eps on the uniform term.",
    ),
    BlindCase(
        CHECK,
        "kl_annotated_transformer",
        LsKlAnnotated,
        "mistake",
        "I wrote the Annotated Transformer's version: KL divergence to a target with eps over "
        "V - 2 tokens, nothing on padding.",
    ),
    BlindCase(
        CHECK,
        "log_softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "I took log_softmax over dim=1, the time axis of (B, T, V).",
    ),
    BlindCase(
        CHECK,
        "per_token_returned",
        LsPerTokenReturned,
        "mistake",
        "I return the (B, T) tensor of token losses, not their mean.",
    ),
    BlindCase(
        CHECK,
        "summed_not_averaged",
        LsSummed,
        "mistake",
        "I used reduction='sum', so the loss is the total over the tokens.",
    ),
    BlindCase(
        CHECK,
        "in_place_log_softmax",
        LsInPlaceLogSoftmax,
        "mistake",
        "I subtracted logsumexp from the logits in place to save memory.",
    ),
    BlindCase(
        CHECK,
        "no_super_init",
        LsNoSuperInit,
        "mistake",
        "I forgot super().__init__() in my nn.Module.",
    ),
    BlindCase(
        CHECK,
        "probs_not_log_probs",
        LsProbsNotLogProbs,
        "mistake",
        "I took softmax and then log1p of the probabilities instead of log_softmax.",
    ),
    BlindCase(
        CHECK,
        "explicit_target",
        LsExplicitTarget,
        "correct",
        "The smoothed target built with one_hot, the loss -sum(q log p), the mean over the real "
        "positions by boolean indexing.",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "F.cross_entropy with label_smoothing and ignore_index=PAD_ID, logits moved to (B, V, T).",
    ),
    BlindCase(
        CHECK,
        "logsumexp_with_defaults",
        LsLogsumexp,
        "correct",
        "Written with logsumexp as nll + eps * (uniform - nll); smoothing and ignore_index have "
        "defaults.",
    ),
    BlindCase(
        CHECK,
        "loop_over_sentences",
        LsLoopOverSentences,
        "correct",
        "A loop over the sentences that sums the token losses and counts the real tokens.",
    ),
]
