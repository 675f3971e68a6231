"""Diagnoses shared by every check whose block contains the same step.

A loss over padded target tokens is averaged in one right way and several wrong ones; every loss
check (the seq2seq loss with teacher forcing, the label-smoothed loss) asks the same questions of
a wrong value, here: which normalisation gives it, and, when none does, which tell-tale relation
it has to the right value (a negative loss, a ratio equal to tokens / sentences).
"""

from __future__ import annotations

from torch import Tensor

from .tensors import close
from .verdict import say

MISTAKES = {
    "loss-per-sentence": "you divide the summed loss by the number of sentences ({sentences}); "
    "divide by the number of real target tokens ({tokens}) -- yours is {tokens} / {sentences} "
    "= {ratio:.2f} times the mean.",
    "loss-mean-of-sentence-means": "you average each sentence's tokens, then the sentences: "
    "a short sentence then weighs as much as a long one. Average over all real target tokens "
    "at once ({tokens} here).",
    "loss-sum": "you sum over the {tokens} real target tokens; the loss is their mean, so that "
    "the step size does not grow with the batch.",
    "loss-pad-in-mean": "padding positions count in the mean: average over the real target "
    "tokens only ({tokens} of {positions} here; ignore_index=PAD_ID).",
    "loss-twice-divided": "you divide the mean over the real tokens by the number of sentences "
    "({sentences}) once more.",
}

MESSAGES = {
    "loss-negative": "the loss is {got:.6f}, negative: a cross-entropy -log p is never below "
    "0. Did the raw logits go into nll_loss (it expects log-probabilities: log_softmax first)?",
    "loss-ratio": "the loss is {got:.6f}, expected {want:.6f}: {ratio:.3f} times the right "
    "value{relation}.",
    "relation-tokens": ", the number of real tokens over the number of sentences ({tokens} / "
    "{sentences}) -- how is the sum divided?",
    "relation-positions": ", all positions over the real tokens ({positions} / {tokens}) -- is "
    "padding in the mean?",
}


def loss_normalisations(per_token: Tensor, real: Tensor) -> dict[str, list[Tensor]]:
    """The values each normalisation of ``MISTAKES`` gives, from the right per-token losses
    ``(B, T)`` (padding positions with their own loss) and the real-token mask ``(B, T)``."""
    B = per_token.shape[0]
    zeroed = per_token.masked_fill(~real, 0)
    return {
        "loss-per-sentence": [zeroed.sum() / B],
        "loss-mean-of-sentence-means": [(zeroed.sum(1) / real.sum(1)).mean()],
        "loss-sum": [zeroed.sum()],
        "loss-pad-in-mean": [zeroed.mean(), per_token.mean()],  # zeroed, or not even that
        "loss-twice-divided": [zeroed.sum() / real.sum() / B],
    }


def counts(real: Tensor) -> dict[str, int]:
    """The numbers the loss messages quote: tokens, sentences and positions."""
    tokens, sentences = int(real.sum()), real.shape[0]
    return {"tokens": tokens, "sentences": sentences, "positions": real.numel()}


def normalisation_named(got: Tensor, per_token: Tensor, real: Tensor) -> str | None:
    """The id of the one normalisation that gives ``got`` (None if none does, or several)."""
    found = [
        key
        for key, values in loss_normalisations(per_token, real).items()
        if any(close(got, value) for value in values)
    ]
    return found[0] if len(found) == 1 else None


def loss_described(got: float, want: float, real: Tensor) -> str:
    """A wrong loss value told by its relation to the right one: negative, or a ratio that
    equals one of the batch's counts (tokens / sentences, positions / tokens)."""
    n = counts(real)
    if got < 0:
        return say(MESSAGES, "loss-negative", got=got)
    ratio = got / want if want else float("inf")
    relation = ""
    for key, value in (
        ("relation-tokens", n["tokens"] / n["sentences"]),
        ("relation-positions", n["positions"] / n["tokens"]),
    ):
        if min(abs(ratio - value), abs(1 / ratio - value)) < 1e-4 * value:
            relation = say(MESSAGES, key, **n)
    return say(MESSAGES, "loss-ratio", got=got, want=want, ratio=ratio, relation=relation)
