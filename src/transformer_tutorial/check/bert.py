"""BERT checks: the masking rule of the masked language model (chapter 17)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..bert import IGNORE_INDEX, BertVocab
from .engine import check
from .verdict import Verdict, Wrong

# A vocabulary of 40 ids: 0-3 the book's specials (<pad> <unk> <bos> <eos>), 4-36 ordinary
# subwords, 37-39 [CLS] [SEP] [MASK].
_VOCAB = BertVocab(
    vocab_size=40, pad_id=0, cls_id=37, sep_id=38, mask_id=39, special_ids=(0, 1, 2, 3, 37, 38, 39)
)
_ORDINARY = torch.arange(4, 37)
_NAMES = {0: "padding", 1: "<unk>", 2: "<bos>", 3: "<eos>", 37: "[CLS]", 38: "[SEP]", 39: "[MASK]"}
_SIGMAS = 5.0  # a share further than this many standard deviations from its target is wrong


def _sentences(n: int, max_words: int = 12, seed: int = 0) -> Tensor:
    """``[CLS] words [SEP]`` rows of 1 to ``max_words`` ordinary words, right-padded with 0."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, max_words + 1, (n, 1), generator=g)  # (n, 1)
    words = _ORDINARY[torch.randint(len(_ORDINARY), (n, max_words + 2), generator=g)]
    position = torch.arange(max_words + 2)  # (T,)
    rows = torch.where((position >= 1) & (position <= lengths), words, _VOCAB.pad_id)  # (n, T)
    rows[:, 0] = _VOCAB.cls_id
    return rows.scatter(1, lengths + 1, _VOCAB.sep_id)  # [SEP] after the last word


def _special(tokens: Tensor) -> Tensor:
    """True where ``tokens`` holds one of the vocabulary's special ids."""
    table = torch.zeros(_VOCAB.vocab_size, dtype=torch.bool)
    table[list(_VOCAB.special_ids)] = True
    return table[tokens.clamp(0, _VOCAB.vocab_size - 1)]


def _call(fn: Callable, tokens: Tensor, seed: int, **probs: float) -> tuple[Tensor, Tensor]:
    """Call the reader's function on a copy of ``tokens``; check the form of what comes back."""
    given = tokens.clone()
    result = fn(given, _VOCAB, torch.Generator().manual_seed(seed), **probs)
    if not torch.equal(given, tokens):
        raise Wrong(
            "your function changed the tokens you passed in (in place): build `inputs` as a new "
            "tensor (torch.where, or tokens.clone()), since the caller still needs the originals."
        )
    if not (isinstance(result, tuple | list) and len(result) == 2):
        raise Wrong("return two tensors, `(inputs, labels)`, each of the shape of `tokens`.")
    inputs, labels = result
    for name, t in (("inputs", inputs), ("labels", labels)):
        if not isinstance(t, Tensor):
            raise Wrong(f"`{name}` should be a tensor, got {type(t).__name__}.")
        if tuple(t.shape) != tuple(tokens.shape):
            raise Wrong(f"`{name}` has shape {tuple(t.shape)}; it must be (B, T) = "
                        f"{tuple(tokens.shape)}, the shape of `tokens`.")  # fmt: skip
        if t.dtype not in (torch.int64, torch.int32):
            raise Wrong(f"`{name}` has dtype {t.dtype}; token ids and labels are integers "
                        "(torch.long).")  # fmt: skip
    return inputs.long(), labels.long()


def _off(count: int, n: int, p: float) -> bool:
    """Is ``count`` of ``n`` trials further than ``_SIGMAS`` standard deviations from ``n p``?"""
    return abs(count - n * p) > _SIGMAS * math.sqrt(max(n * p * (1 - p), 1e-12))


def _positions(tokens: Tensor, inputs: Tensor, labels: Tensor) -> Tensor:
    """Check where labels are set and what was changed; return the chosen positions."""
    special = _special(tokens)  # (B, T)
    real = ~special
    labelled = labels != IGNORE_INDEX
    if ((labels == _VOCAB.pad_id) & real).float().sum() > 0.3 * real.sum():
        raise Wrong(
            f"the positions not chosen have label {_VOCAB.pad_id}; use IGNORE_INDEX = "
            f"{IGNORE_INDEX}, the value F.cross_entropy skips -- {_VOCAB.pad_id} is a real id "
            "(<pad>), so the loss would ask the model to predict it there."
        )
    if labelled[real].all():
        raise Wrong(
            "every real token has a label: the loss would count all positions. Set the label to "
            f"IGNORE_INDEX = {IGNORE_INDEX} at the positions not chosen, and to the original "
            "token at the chosen ones."
        )
    if (labelled & special).any():
        names = sorted({_NAMES[int(t)] for t in tokens[labelled & special]})
        raise Wrong(
            f"{', '.join(names)} positions were chosen (they have a label): [CLS], [SEP] and "
            "padding are never chosen -- they are in every sentence and there is nothing to "
            "predict. Choose among the real tokens only (not in vocab.special_ids)."
        )
    if not torch.equal(inputs[special], tokens[special]):
        changed = sorted({_NAMES[int(t)] for t in tokens[special & (inputs != tokens)]})
        raise Wrong(
            f"a {', '.join(changed)} position was replaced in `inputs`: [CLS], [SEP] and padding "
            "are never chosen, so they stay as they are."
        )
    wrong_label = labelled & (labels != tokens)
    if wrong_label.any():
        if torch.equal(labels[labelled], inputs[labelled]):
            raise Wrong(
                "the labels hold what the model reads ([MASK], a random token): the label of a "
                "chosen position must be the original token, the word the model has to recover."
            )
        raise Wrong(
            "at some chosen positions the label is not the original token; the label is "
            f"`tokens` where chosen and IGNORE_INDEX = {IGNORE_INDEX} elsewhere."
        )
    if not torch.equal(inputs[~labelled], tokens[~labelled]):
        raise Wrong(
            "a position that was not chosen (label IGNORE_INDEX) was changed in `inputs`: "
            "only chosen tokens become [MASK] or a random token; the rest are left alone."
        )
    return labelled


def _shares(tokens: Tensor, inputs: Tensor, chosen: Tensor) -> tuple[int, int, int, int]:
    """``(n_chosen, masked, randomized, unchanged)`` counts among the chosen positions."""
    n = int(chosen.sum())
    masked = int((inputs[chosen] == _VOCAB.mask_id).sum())
    unchanged = int((inputs[chosen] == tokens[chosen]).sum())
    return n, masked, n - masked - unchanged, unchanged


def _expect_arguments_used(fn: Callable, tokens: Tensor, real: Tensor) -> None:
    """select_prob, mask_prob and random_prob are the arguments', not fixed numbers."""
    # The arguments, on a quarter of the rows (still about 3,300 real tokens).
    n_real = int(real.sum())
    for probs, share in (({"select_prob": 0.5}, 0.5), ({"select_prob": 0.0}, 0.0)):
        inputs, labels = _call(fn, tokens, seed=1, **probs)
        chosen = _positions(tokens, inputs, labels)
        if share == 0.0 and chosen.any():
            raise Wrong("with select_prob=0.0 some tokens were still chosen.")
        if share > 0 and _off(int(chosen.sum()), n_real, share):
            raise Wrong(
                f"with select_prob={share} {chosen.sum() / n_real:.1%} of the real tokens "
                "were chosen: use the `select_prob` argument, not a fixed 0.15."
            )
    probs = {"select_prob": 0.5, "mask_prob": 0.5, "random_prob": 0.3}
    inputs, labels = _call(fn, tokens, seed=2, **probs)
    chosen = _positions(tokens, inputs, labels)
    n, masked, randomized, _ = _shares(tokens, inputs, chosen)
    if _off(masked, n, 0.5) or _off(randomized, n, 0.3 - 0.3 / len(_ORDINARY)):
        raise Wrong(
            f"with mask_prob=0.5, random_prob=0.3 {masked / n:.1%} of the chosen tokens "
            f"show [MASK] and {randomized / n:.1%} a random token: use the `mask_prob` and "
            "`random_prob` arguments, not fixed 0.8 and 0.1."
        )


def _expect_ordinary_replacements(fn: Callable, tokens: Tensor, real: Tensor) -> None:
    """A random replacement is an ordinary token, each drawn uniformly."""
    # Every real token replaced by a random one: which ids can a replacement be?
    inputs, labels = _call(fn, tokens, 3, select_prob=1.0, mask_prob=0.0, random_prob=1.0)
    drawn = inputs[real]
    bad = _special(drawn) | (drawn < 0) | (drawn >= _VOCAB.vocab_size)
    if bad.any():
        names = sorted({_NAMES.get(int(t), str(int(t))) for t in drawn[bad]})
        raise Wrong(
            f"a random replacement was a special token ({', '.join(names)}): draw it from "
            "the ordinary tokens only (every id not in vocab.special_ids), so that a random "
            "word never looks like [MASK], [CLS], [SEP] or padding."
        )
    counts = torch.bincount(drawn - 4, minlength=len(_ORDINARY)).double()  # (33,)
    expected = len(drawn) / len(_ORDINARY)
    if (counts - expected).abs().max() > _SIGMAS * math.sqrt(expected):
        raise Wrong(
            f"the random replacements are not spread evenly over the {len(_ORDINARY)} "
            f"ordinary ids (counts from {int(counts.min())} to {int(counts.max())}, "
            f"{expected:.0f} expected each): draw each one uniformly, with its own number."
        )


def _expect_reproducible(fn: Callable, tokens: Tensor, inputs: Tensor, labels: Tensor) -> None:
    """A second call with a generator seeded alike gives the same batch."""
    again = _call(fn, tokens, seed=0)
    if not (torch.equal(inputs, again[0]) and torch.equal(labels, again[1])):
        raise Wrong(
            "two calls with generators seeded alike gave different results: draw every "
            "random number from `generator` (torch.rand(..., generator=generator)), so "
            "that a seeded batch is reproducible."
        )


def _expect_shares(n: int, masked: int, randomized: int, unchanged: int, n_real: int) -> int:
    """15 % of the ``n_real`` real tokens chosen (``n``), 80 / 10 / 10 of them [MASK] / random
    / unchanged, each within the tolerance; returns ``n``."""
    if _off(n, n_real, 0.15):
        raise Wrong(
            f"{n / n_real:.1%} of the real tokens were chosen ({n:,} of {n_real:,}); "
            "select_prob = 0.15 chooses each real token with probability 0.15 (and only "
            "real tokens are counted)."
        )
    p_same = 0.1 / len(_ORDINARY)  # a random draw equal to the original looks unchanged
    off = [
        _off(masked, n, 0.8),
        _off(randomized, n, 0.1 - p_same),
        _off(unchanged, n, 0.1 + p_same),
    ]
    if any(off):
        seen = (
            f"of the {n:,} chosen tokens {masked / n:.1%} show [MASK], "
            f"{randomized / n:.1%} a random token and {unchanged / n:.1%} are unchanged"
        )
        if masked == n:
            raise Wrong(
                f"{seen}: every chosen token became [MASK]. Of the chosen tokens 80 % become "
                "[MASK], 10 % a random token and 10 % stay unchanged (80 / 10 / 10), so "
                "that a visible word may also be asked about."
            )
        raise Wrong(
            f"{seen}; the rule is 80 / 10 / 10 of the chosen tokens. Draw one number per "
            "position to pick the case: [MASK] below mask_prob, random between mask_prob "
            "and mask_prob + random_prob, unchanged above."
        )
    return n


@check(
    "BERT masking (mask_tokens)",
    call="fn(tokens, vocab, generator, select_prob=0.15, mask_prob=0.8, random_prob=0.1)",
)
def check_mask_tokens(fn: Callable) -> Verdict:
    """``fn(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1)
    -> (inputs, labels)``, BERT's masking rule as the book's ``mask_tokens``: each real token
    (not in ``vocab.special_ids``) chosen independently with ``select_prob``; a chosen one
    becomes ``[MASK]`` with ``mask_prob``, a random ordinary token with ``random_prob``, and
    stays as it is otherwise; labels the original token where chosen, ``IGNORE_INDEX``
    elsewhere. The shares are checked on about 13,000 tokens, each within 5 standard deviations.
    """
    tokens = _sentences(2000)  # (2000, 14): about 13,000 real tokens
    real = ~_special(tokens)
    n_real = n_total = int(real.sum())
    inputs, labels = _call(fn, tokens, seed=0)
    _expect_reproducible(fn, tokens, inputs, labels)
    chosen = _positions(tokens, inputs, labels)
    _expect_shares(*_shares(tokens, inputs, chosen), n_real)
    # The arguments, on a quarter of the rows (still about 3,300 real tokens).
    _expect_arguments_used(fn, tokens[:500], real[:500])
    _expect_ordinary_replacements(fn, tokens[:500], real[:500])
    return (
        f"15 % of the real tokens chosen, 80 / 10 / 10 of them [MASK] / random / unchanged "
        f"(within {_SIGMAS:.0f} standard deviations on {n_total:,} tokens), specials never "
        "chosen, labels the original token or IGNORE_INDEX, random tokens ordinary ones, "
        "and the same generator seed gives the same batch."
    )
