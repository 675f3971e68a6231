"""The label-smoothed loss check (chapter 14): the value, its gradients, and which of the usual
mistakes gives the reader's loss."""

from __future__ import annotations

import torch
from torch import Tensor

from ..sequences import PAD_ID
from ..training import LabelSmoothingLoss
from .diagnoses import GRADIENTS, counts, loss_described, normalisation_named
from .diagnoses import MISTAKES as LOSS_MISTAKES
from .engine import check
from .tensors import NAMES as TENSOR_NAMES
from .tensors import backward, close, expect_kept, randn, tolerance
from .verdict import Verdict, Wrong

MISTAKES = {
    "loss-no-smoothing": "no smoothing: with ε = {eps} the right token's target is {target} and "
    "every token gets ε / V = {share:.4f} on top.",
    "loss-no-log-softmax": "the logits go in as if they were log-probabilities: take "
    "log_softmax of them first.",
    "loss-on-probabilities": "you use the probabilities, not their logarithm: the cross-entropy "
    "takes log_softmax(logits).",
    "loss-full-weight-on-target": "the right token's target is 1 - ε = {target}, not 1: it gives "
    "ε away to the smoothing.",
    "loss-uniform-summed": "the smoothing term sums log p over the V tokens; it is their mean "
    "(ε / V on each token): -(1 - ε) log p[target] - ε mean(log p).",
    "loss-uniform-dropped": "the smoothing term -ε mean(log p) is missing: you keep only "
    "(1 - ε) times the cross-entropy of the right token.",
    "loss-kl-divergence": "you compute the KL divergence to the smoothed target (nn.KLDivLoss); "
    "the book's loss is the cross-entropy, which is larger by the target's entropy, a constant "
    "{entropy:.4f} here.",
    "loss-smoothing-fixed": "built with smoothing={other}, your loss is the one of "
    "smoothing={eps}: the smoothing is fixed in your code instead of taken from the argument "
    "(self.smoothing = smoothing in __init__, used in forward).",
    "loss-uniform-on-logits": "the smoothing term averages the raw logits: it is the mean of "
    "the log-probabilities, -ε mean(log_softmax(logits)), like the target term.",
    "loss-smoothed-prediction": "you smooth the model's distribution, (1 - ε) p + ε / V, and "
    "take its -log p[target]: label smoothing smooths the *target*, so the loss is "
    "-(1 - ε) log p[target] - ε mean(log p).",
    "loss-smoothing-swapped": "the two weights are swapped: the target's log-probability gets "
    "ε = {eps} and the uniform part 1 - ε = {target}. The target gets 1 - ε, the uniform "
    "part ε.",
    "loss-target-share-overwritten": "the target token gets 1 - ε = {target} without its share "
    "ε / V = {share:.4g} of the uniform part: filling every class with ε / V and then writing "
    "1 - ε over the target (scatter_) drops it. The target's weight is 1 - ε + ε / V (add, "
    "with scatter_add_, or weigh -log p[target] by 1 - ε and the mean of -log p by ε).",
    "loss-pad-column-dropped": "the padding column is left out of the uniform part, which is "
    "still divided by V: the book spreads ε / V over all V classes, PAD included, and leaves "
    "out only the padding positions.",
    "loss-other-pad-id": "you leave out the targets equal to {k}, not the padding: padding "
    "(PAD_ID = {pad}) is scored and the real tokens {k} are dropped. Ignore PAD_ID (from "
    "transformer_tutorial.sequences), e.g. ignore_index=PAD_ID.",
    "loss-log-softmax-axis": "the log-softmax runs over axis {axis} of the logits {shape}, not "
    "over the vocabulary: each position's distribution is over the V tokens, "
    "log_softmax(logits, dim=-1).",
    "loss-spread-without-pad": "ε is spread as the Annotated Transformer does, ε / (V - 2) over "
    "the tokens other than the right one and PAD (and the loss is the KL divergence or its "
    "sum). This book, like PyTorch's label_smoothing, puts ε / V = {eps} / {V} on every token, "
    "the right one included, and averages the cross-entropy over the real tokens.",
    "loss-uniform-over-padding": "the smoothing term is averaged over every position, the "
    "padding included, while the target term leaves the padding out: both terms belong to the "
    "real tokens only, -(1 - ε) log p[target] - ε mean(log p), averaged over them.",
    "loss-uniform-padding-in-sum": "the smoothing term is summed over every position, the "
    "padding included, while the target term leaves the padding out (both are then divided by "
    "the number of real tokens): both terms belong to the real tokens only, -(1 - ε) "
    "log p[target] - ε mean(log p), summed over them and divided by their number.",
    "loss-uniform-on-probabilities": "the smoothing term averages the probabilities, not their "
    "logarithms: it is -ε mean(log p), the cross-entropy with the uniform distribution.",
    "loss-not-a-scalar": "the loss should be one number (a 0-dimensional tensor), the mean.",
    "loss-padding-gradient": "padding positions get a gradient: they must not count at all.",
}

MESSAGES = {
    "loss-a-float": "return the loss as a tensor, not a Python {kind}: a .item() or float() "
    "cuts it from the graph, and loss.backward() can no longer train the model.",
    "loss-spread-over-wrong": "ε is spread over the V - 1 wrong tokens; this book (like "
    "PyTorch's label_smoothing) spreads ε / V over all V tokens.",
    "loss-gradients-differ": "the value is right but the gradients differ from the reference.",
}


# --- the label-smoothed loss ---------------------------------------------------------------------


def _smoothed(log_p: Tensor, target: Tensor, eps: float, right: float | None = None) -> Tensor:
    """Per token: ``-(1 - eps) log p[target] - eps mean(log p)`` (``right`` replaces 1 - eps)."""
    on_target = log_p.gather(-1, target[..., None]).squeeze(-1)
    return -(1 - eps if right is None else right) * on_target - eps * log_p.mean(-1)


def _diagnose_smoothing(got: Tensor, expected: Tensor, logits: Tensor, target: Tensor,
                        eps: float) -> None:  # fmt: skip
    """Raise the mistake (or the difference) that gives the reader's loss ``got``."""
    V = logits.shape[-1]
    log_p = torch.log_softmax(logits, -1)
    per_token = _smoothed(log_p, target, eps)
    real = target != PAD_ID
    smooth = torch.full_like(log_p, eps / V) + (1 - eps) * torch.nn.functional.one_hot(target, V)
    entropy = (smooth * smooth.log()).sum(-1)[real].mean()
    named = normalisation_named(got, per_token, real)
    if named:
        raise Wrong.named(LOSS_MISTAKES, named, ratio=got.item() / expected.item(), **counts(real))
    mistakes = _smoothing_mistakes(logits, log_p, target, eps) | {
        "loss-kl-divergence": per_token[real].mean() + entropy
    }
    for key, wrong in mistakes.items():
        if close(got, wrong):
            raise Wrong.named(MISTAKES, key, eps=eps, target=1 - eps, share=eps / V,
                              entropy=-float(entropy))  # fmt: skip
    for k in target.unique().tolist():  # another id ignored in PAD_ID's place (fairseq's is 1)
        if k != PAD_ID and close(got, per_token[target != k].mean()):
            raise Wrong.named(MISTAKES, "loss-other-pad-id", k=k, pad=PAD_ID)
    _smoothing_axes_and_spread(got, logits, log_p, target, eps)
    raise Wrong(loss_described(got.item(), expected.item(), real))


def _smoothing_mistakes(logits: Tensor, log_p: Tensor, target: Tensor, eps: float) -> dict:
    """The loss each mistake of the label-smoothed loss gives, per mistake id."""
    V, real = logits.shape[-1], target != PAD_ID
    on_target = log_p.gather(-1, target[..., None]).squeeze(-1)
    others = log_p.sum(-1) - on_target  # the summed log-probabilities of every other class
    return {
        "loss-no-smoothing": LabelSmoothingLoss(0.0)(logits, target),
        "loss-no-log-softmax": _smoothed(logits, target, eps)[real].mean(),
        "loss-on-probabilities": _smoothed(log_p.exp(), target, eps)[real].mean(),
        "loss-full-weight-on-target": _smoothed(log_p, target, eps, right=1.0)[real].mean(),
        "loss-uniform-summed": (-(1 - eps) * on_target - eps * log_p.sum(-1))[real].mean(),
        "loss-uniform-dropped": (-(1 - eps) * on_target)[real].mean(),
        "loss-smoothing-swapped": _smoothed(log_p, target, 1 - eps)[real].mean(),
        "loss-uniform-on-logits": (-(1 - eps) * on_target - eps * logits.mean(-1))[real].mean(),
        "loss-smoothed-prediction": -(
            ((1 - eps) * log_p.exp() + eps / V).log().gather(-1, target[..., None])[..., 0]
        )[real].mean(),
        "loss-target-share-overwritten": (-(1 - eps) * on_target - eps / V * others)[real].mean(),
        "loss-pad-column-dropped": (
            -(1 - eps) * on_target - eps / V * (log_p.sum(-1) - log_p[..., PAD_ID])
        )[real].mean(),
        "loss-uniform-over-padding": (-(1 - eps) * on_target)[real].mean()
        - eps * log_p.mean(-1).mean(),
        "loss-uniform-padding-in-sum": (
            -(1 - eps) * on_target[real].sum() - eps * log_p.mean(-1).sum()
        )
        / real.sum(),
        "loss-uniform-on-probabilities": (-(1 - eps) * on_target - eps * log_p.exp().mean(-1))[
            real
        ].mean(),
    }


def _smoothing_axes_and_spread(got, logits, log_p, target, eps) -> None:
    """Raise the mistake when the reader's loss is a log-softmax over another axis, or the
    Annotated Transformer's spread of eps over V - 2 classes."""
    V, real = logits.shape[-1], target != PAD_ID
    on_target = log_p.gather(-1, target[..., None]).squeeze(-1)
    for axis in range(log_p.dim() - 1):  # the log-softmax over the batch or the time axis
        if close(got, _smoothed(torch.log_softmax(logits, axis), target, eps)[real].mean()):
            raise Wrong.named(
                MISTAKES, "loss-log-softmax-axis", axis=axis, shape=tuple(logits.shape)
            )
    spread = torch.full_like(log_p, eps / (V - 2)).scatter(-1, target[..., None], 1 - eps)
    spread[..., PAD_ID] = 0.0  # the Annotated Transformer's target: eps / (V - 2), PAD left out
    cross = -(spread * log_p).sum(-1)  # (B, T)
    kl = cross + (spread * spread.clamp_min(1e-300).log()).sum(-1)
    if any(
        close(got, value[real].mean()) or close(got, value[real].sum()) for value in (cross, kl)
    ):
        raise Wrong.named(MISTAKES, "loss-spread-without-pad", eps=eps, V=V)
    off_true = -(1 - eps) * on_target - eps / (V - 1) * (log_p.sum(-1) - on_target)
    if close(got, off_true[real].mean()):
        raise Wrong.differs(MESSAGES, "loss-spread-over-wrong")


@check("label-smoothed loss", build="cls(smoothing)", call="loss(logits, target)")
def check_label_smoothing(cls: type) -> Verdict:
    """``cls(smoothing)``: label-smoothed cross-entropy, averaged over the non-padding targets;
    called as ``loss(logits, target)``; value and gradients, padding gets none."""
    B, T, V, eps = 3, 4, 9, 0.1  # V is not the 7 real tokens: a sum over V shows
    logits = randn(B, T, V)
    target = torch.randint(1, V, (B, T), generator=torch.Generator().manual_seed(3))
    target[0, 2:], target[2, 1:] = PAD_ID, PAD_ID  # padding of different lengths
    mine = cls(eps)
    given = {"logits": logits.clone(), "target": target.clone()}  # the caller's, kept as they are
    got = mine(given["logits"], given["target"])
    expect_kept(given, {"logits": logits, "target": target})
    if isinstance(got, (float, int)):  # a plain number: .item() cut the graph
        raise Wrong.differs(MESSAGES, "loss-a-float", kind=type(got).__name__)
    if not isinstance(got, Tensor) or got.dim() != 0:
        raise Wrong.named(MISTAKES, "loss-not-a-scalar")
    expected = LabelSmoothingLoss(eps)(logits, target)
    if close(got, expected, 1e-8):
        x, y = logits.clone().requires_grad_(), logits.clone().requires_grad_()
        mine_loss = mine(x, target.clone())
        backward(mine_loss, "the loss")
        LabelSmoothingLoss(eps)(y, target).backward()
        if x.grad is None:
            raise Wrong.named(GRADIENTS, "gradient-detached", name=TENSOR_NAMES["logits"])
        if (x.grad[target == PAD_ID].abs() > 0).any():
            raise Wrong.named(MISTAKES, "loss-padding-gradient")
        if not close(x.grad, y.grad, tolerance(mine_loss)):
            raise Wrong.differs(MESSAGES, "loss-gradients-differ")
        other = 0.25  # another smoothing: the module must use the one it is built with
        got = cls(other)(logits, target)
        if isinstance(got, Tensor) and close(got, expected, 1e-8):
            raise Wrong.named(MISTAKES, "loss-smoothing-fixed", other=other, eps=eps)
        if not (isinstance(got, Tensor) and close(got, LabelSmoothingLoss(other)(logits, target))):
            _diagnose_smoothing(got, LabelSmoothingLoss(other)(logits, target), logits, target,
                                other)  # fmt: skip
        return "smoothing, padding and the mean over real tokens are right."
    _diagnose_smoothing(got, expected, logits, target, eps)
