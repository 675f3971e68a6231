"""Blind set B20, check_label_smoothing (chapter 14): label-smoothed losses as readers write them."""

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
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return (loss * keep).mean()  # zeroed the padding, but divided by B * T


class LsNoSmoothing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, V), target.reshape(-1), ignore_index=PAD_ID)


class LsMeanOverSentences(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = (target != PAD_ID).float()
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)) * keep
        per_sentence = loss.sum(1) / keep.sum(1).clamp(min=1)
        return per_sentence.mean()  # mean of the sentence means


class LsOverVMinus1(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = F.log_softmax(logits, dim=-1)
        q = torch.full_like(logp, self.smoothing / (V - 1))  # eps over the wrong tokens only
        q.scatter_(-1, target.unsqueeze(-1), 1 - self.smoothing)
        keep = target != PAD_ID
        loss = -(q * logp).sum(-1)
        return loss[keep].mean()


class LsUniformNotMasked(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        n = keep.sum()
        nll = -(logp.gather(-1, target.unsqueeze(-1)).squeeze(-1) * keep).sum() / n
        smooth = -logp.mean(-1).sum() / n  # forgot the mask on this term
        return (1 - self.smoothing) * nll + self.smoothing * smooth


class LsSumOverV(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        uniform = -logp.sum(-1)  # the sum over the V tokens, not the mean
        loss = (1 - self.smoothing) * nll + self.smoothing * uniform
        return loss[keep].mean()


class LsSoftmaxOverTime(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=1)  # (B, T, V): normalized over T by mistake
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss[keep].mean()


class LsNoOneMinusEps(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = nll - self.smoothing * logp.mean(-1)  # the 1 - eps factor left out
        return loss[keep].mean()


class LsIgnoreMinus100(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        # PyTorch's default ignore_index, -100; our padding is PAD_ID
        return F.cross_entropy(
            logits.reshape(-1, V), target.reshape(-1), label_smoothing=self.smoothing
        )


class LsKlDivergence(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        q = torch.full_like(logp, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1 - self.smoothing))
        kl = F.kl_div(logp, q, reduction="none").sum(-1)  # as in the Annotated Transformer
        return kl[keep].mean()


class LsReturnsPerToken(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss * keep  # (B, T): forgot to average


class LsSumNotMean(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = (1 - self.smoothing) * nll - self.smoothing * logp.mean(-1)
        return loss[keep].sum()  # summed over the tokens


class LsProbsNotLogProbs(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        p = logits.softmax(-1)
        q = torch.full_like(p, self.smoothing / V)
        q.scatter_add_(-1, target.unsqueeze(-1), torch.full_like(p[..., :1], 1 - self.smoothing))
        keep = target != PAD_ID
        loss = -(q * p).sum(-1)  # forgot the log: cross-entropy with the probabilities
        return loss[keep].mean()


class LsSmoothOnlyWrong(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        logp = F.log_softmax(logits, dim=-1)
        keep = target != PAD_ID
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        # eps/V on every token, but the reference's share not added back: q_y = 1 - eps only
        V = logits.shape[-1]
        wrong = (-logp.sum(-1) - nll) / V
        loss = (1 - self.smoothing) * nll + self.smoothing * wrong
        return loss[keep].mean()


# ---------------------------------------------------------------- correct


class LsTorchCrossEntropy(_Base):
    def __init__(self, smoothing: float) -> None:
        super().__init__(smoothing)
        self.ce = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID)

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        if not (target != PAD_ID).any():
            return logits.sum() * 0.0
        return self.ce(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


class LsExplicitQ(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = torch.log_softmax(logits.double(), dim=-1)
        q = torch.full_like(logp, self.smoothing / V)
        q.scatter_add_(
            -1, target.unsqueeze(-1), torch.full_like(logp[..., :1], 1.0 - self.smoothing)
        )
        keep = (target != PAD_ID).to(logp.dtype)
        loss = -(q * logp).sum(-1) * keep
        return (loss.sum() / keep.sum().clamp(min=1)).to(logits.dtype)


class LsBooleanIndexing(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        keep = target != PAD_ID
        chosen, y = logits[keep], target[keep]  # (N, V), (N,): the real tokens only
        if len(y) == 0:
            return logits.sum() * 0.0
        logp = chosen - chosen.logsumexp(-1, keepdim=True)
        nll = -logp[torch.arange(len(y)), y]
        eps = self.smoothing
        return ((1 - eps) * nll + eps * -logp.mean(-1)).mean()


class LsEinsum(_Base):
    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        V = logits.shape[-1]
        logp = F.log_softmax(logits, dim=-1)
        q = F.one_hot(target, V).to(logp.dtype) * (1 - self.smoothing) + self.smoothing / V
        mask = (target != PAD_ID).to(logp.dtype)
        total = -torch.einsum("btv,btv,bt->", q, logp, mask)
        return total / mask.sum().clamp(min=1)


CASES = [
    BlindCase(
        CHECK,
        "mean_over_all",
        LsMeanOverAll,
        "mistake",
        "zeroed padding positions but took .mean() over all B*T",
    ),
    BlindCase(
        CHECK,
        "no_smoothing",
        LsNoSmoothing,
        "mistake",
        "F.cross_entropy with ignore_index only, smoothing never used",
    ),
    BlindCase(
        CHECK,
        "mean_over_sentences",
        LsMeanOverSentences,
        "mistake",
        "mean per sentence, then mean over the sentences",
    ),
    BlindCase(
        CHECK,
        "over_v_minus_1",
        LsOverVMinus1,
        "mistake",
        "eps / (V - 1) on each wrong token, 1 - eps on the right one",
    ),
    BlindCase(
        CHECK,
        "uniform_not_masked",
        LsUniformNotMasked,
        "mistake",
        "masked the nll term but not the uniform term",
    ),
    BlindCase(
        CHECK, "sum_over_v", LsSumOverV, "mistake", "uniform term as a sum over V, not a mean"
    ),
    BlindCase(
        CHECK,
        "softmax_over_time",
        LsSoftmaxOverTime,
        "mistake",
        "log_softmax(dim=1), over the time axis",
    ),
    BlindCase(
        CHECK, "no_one_minus_eps", LsNoOneMinusEps, "mistake", "nll not multiplied by 1 - eps"
    ),
    BlindCase(
        CHECK,
        "ignore_minus_100",
        LsIgnoreMinus100,
        "mistake",
        "F.cross_entropy(label_smoothing=...) with its default ignore_index -100, padding scored",
    ),
    BlindCase(
        CHECK,
        "kl_divergence",
        LsKlDivergence,
        "mistake",
        "KL divergence to the smoothed target instead of cross-entropy",
    ),
    BlindCase(
        CHECK,
        "returns_per_token",
        LsReturnsPerToken,
        "mistake",
        "returned the masked (B, T) loss, no average",
    ),
    BlindCase(CHECK, "sum_not_mean", LsSumNotMean, "mistake", "summed over the real tokens"),
    BlindCase(
        CHECK,
        "probs_not_log_probs",
        LsProbsNotLogProbs,
        "mistake",
        "-sum q * softmax: forgot the log",
    ),
    BlindCase(
        CHECK,
        "smooth_only_wrong",
        LsSmoothOnlyWrong,
        "mistake",
        "the eps/V term summed over the wrong tokens only (reference left out of the sum)",
    ),
    BlindCase(
        CHECK,
        "torch_cross_entropy",
        LsTorchCrossEntropy,
        "correct",
        "nn.CrossEntropyLoss(label_smoothing, ignore_index=PAD_ID) on flattened logits",
    ),
    BlindCase(
        CHECK,
        "explicit_q",
        LsExplicitQ,
        "correct",
        "built the smoothed target q with scatter_add, in float64",
    ),
    BlindCase(
        CHECK,
        "boolean_indexing",
        LsBooleanIndexing,
        "correct",
        "selected the real tokens with logits[keep], logsumexp by hand",
    ),
    BlindCase(CHECK, "einsum", LsEinsum, "correct", "one_hot target and one einsum"),
]
