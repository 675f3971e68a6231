"""BERT checks: the masking rule of the masked language model (chapter 17)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..bert import IGNORE_INDEX, BertVocab
from .engine import check
from .verdict import Verdict, Wrong, say

# A vocabulary of 40 ids: 0-3 the book's specials (<pad> <unk> <bos> <eos>), 4-36 ordinary
# subwords, 37-39 [CLS] [SEP] [MASK].
_VOCAB = BertVocab(
    vocab_size=40, pad_id=0, cls_id=37, sep_id=38, mask_id=39, special_ids=(0, 1, 2, 3, 37, 38, 39)
)
_ORDINARY = torch.arange(4, 37)
_NAMES = {0: "padding", 1: "<unk>", 2: "<bos>", 3: "<eos>", 37: "[CLS]", 38: "[SEP]", 39: "[MASK]"}
_SIGMAS = 5.0  # a share further than this many standard deviations from its target is wrong

MISTAKES = {
    "bert-mask-in-place": "your function changed the tokens you passed in (in place): build "
    "`inputs` as a new tensor (torch.where, or tokens.clone()), since the caller still needs the "
    "originals.",
    "bert-mask-label-zero-not-ignore": "the positions not chosen have label {pad}; use "
    "IGNORE_INDEX = {ignore}, the value F.cross_entropy skips -- {pad} is a real id (<pad>), so "
    "the loss would ask the model to predict it there.",
    "bert-mask-pair-swapped": "the first tensor you return holds IGNORE_INDEX = {ignore} and the "
    "second none: you return (labels, inputs); the book's order is (inputs, labels) -- what the "
    "model reads first, then what it must predict.",
    "bert-mask-every-token-labelled": "every real token has a label: the loss would count all "
    "positions. Set the label to IGNORE_INDEX = {ignore} at the positions not chosen, and to the "
    "original token at the chosen ones.",
    "bert-mask-specials-chosen": "{names} positions were chosen (they have a label): [CLS], [SEP] "
    "and padding are never chosen -- they are in every sentence and there is nothing to predict. "
    "Choose among the real tokens only (not in vocab.special_ids).",
    "bert-mask-labels-inverted": "your labels are inverted: the positions without a label "
    "(IGNORE_INDEX) are {share:.1%} of the real tokens, about select_prob = {p:g}, and include "
    "every position you changed in `inputs`; all the others keep their token as a label. The "
    "chosen positions get the label (the original token), the rest IGNORE_INDEX: "
    "torch.where(chosen, tokens, IGNORE_INDEX), or tokens.masked_fill(~chosen, IGNORE_INDEX).",
    "bert-mask-label-is-corrupted-token": "the labels hold what the model reads ([MASK], a random "
    "token): the label of a chosen position must be the original token, the word the model has "
    "to recover.",
    "bert-mask-random-outside-chosen": "a position that was not chosen (label IGNORE_INDEX) was "
    "changed in `inputs`: only chosen tokens become [MASK] or a random token; the rest are left "
    "alone. If the labels and the inputs each drew their own chosen positions, draw `chosen` once "
    "and use it for both.",
    "bert-mask-unchanged-unlabelled": "{share:.1%} of the real tokens have a label, about "
    "0.9 x 15 %, and no labelled token is left as it was: you label only the positions you "
    "changed. The 10 % of chosen tokens that stay unchanged are chosen too: they get their "
    "label (the original token), so that the model must also check the words it can see.",
    "bert-mask-labels-only-on-mask": "every labelled position shows [MASK], and positions without "
    "a label were changed to other tokens: you set labels only where the token became [MASK]. "
    "Every chosen position gets its label (the original token), also the 10 % replaced by a "
    "random token and the 10 % left unchanged -- the model must also learn to check the words "
    "it can see.",
    "bert-mask-select-prob-fixed": "with select_prob={share} {chosen:.1%} of the real tokens were "
    "chosen: use the `select_prob` argument, not a fixed 0.15.",
    "bert-mask-select-inverted": "{share:.1%} of the real tokens were chosen, about 1 - "
    "select_prob = 85%: you choose with probability 1 - select_prob (rand > select_prob, or "
    "rand < 1 - select_prob). Choose a token when its number is below select_prob.",
    "bert-mask-random-unchanged-swapped": "with mask_prob=0.5, random_prob=0.3 {share:.1%} of "
    "the chosen tokens got a random token, about 1 - mask_prob - random_prob = 20%: the random "
    "and the unchanged cases have changed places (at 0.8 / 0.1 / 0.1 they look alike). A chosen "
    "token becomes random when its number lies between mask_prob and mask_prob + random_prob, "
    "and stays as it is above that.",
    "bert-mask-mask-random-swapped": "of the {n:,} chosen tokens {masked:.1%} show [MASK] and "
    "{randomized:.1%} a random token: the two cases have changed places (mask_prob and "
    "random_prob swapped, or the branches). A chosen token becomes [MASK] with probability "
    "mask_prob = 0.8 and a random token with random_prob = 0.1.",
    "bert-mask-case-probs-fixed": "with mask_prob=0.5, random_prob=0.3 {masked:.1%} of the chosen "
    "tokens show [MASK] and {randomized:.1%} a random token: use the `mask_prob` and "
    "`random_prob` arguments, not fixed 0.8 and 0.1.",
    "bert-mask-random-may-be-special": "a random replacement was a special token ({names}): draw "
    "it from the ordinary tokens only (every id not in vocab.special_ids), so that a random word "
    "never looks like [MASK], [CLS], [SEP] or padding.",
    "bert-mask-draws-together": "per sentence, the number of chosen tokens varies {ratio:.1f} "
    "times as much as independent draws at the same overall share would make it vary: whole "
    "sentences are chosen together, as by one draw per sentence (rand(B, 1)) or one draw "
    "broadcast along the row. Choose each real token with a draw of its own, "
    "torch.rand(tokens.shape, generator=generator) < select_prob.",
    "bert-mask-count-fixed": "per sentence, the number of chosen tokens varies only {ratio:.2f} "
    "times as much as independent draws at the same overall share would make it vary: each "
    "sentence gets about the same count, as with a fixed number per sentence "
    "(round(0.15 * length)). Choose each real token with a draw of its own, "
    "torch.rand(tokens.shape, generator=generator) < select_prob, so that the count varies.",
    "bert-mask-ignores-generator": "two calls with generators seeded alike gave different "
    "results: draw every random number from `generator` (torch.rand(..., generator=generator)), "
    "so that a seeded batch is reproducible.",
    "bert-mask-always-mask": "of the {n:,} chosen tokens {masked:.1%} show [MASK], "
    "{randomized:.1%} a random token and {unchanged:.1%} are unchanged: every chosen token became "
    "[MASK]. Of the chosen tokens 80 % become [MASK], 10 % a random token and 10 % stay unchanged "
    "(80 / 10 / 10), so that a visible word may also be asked about.",
}

MESSAGES = {
    "bert-mask-passed": "15 % of the real tokens chosen, 80 / 10 / 10 of them [MASK] / random / "
    "unchanged (within {sigmas:.0f} standard deviations on {n:,} tokens), specials never chosen, "
    "labels the original token or IGNORE_INDEX, random tokens ordinary ones, and the same "
    "generator seed gives the same batch.",
    "bert-mask-not-a-pair": "return two tensors, `(inputs, labels)`, each of the shape of "
    "`tokens`.",
    "bert-mask-not-a-tensor": "`{name}` should be a tensor, got {kind}.",
    "bert-mask-shape": "`{name}` has shape {shape}; it must be (B, T) = {expected}, the shape of "
    "`tokens`.",
    "bert-mask-dtype": "`{name}` has dtype {dtype}; token ids and labels are integers "
    "(torch.long).",
    "bert-mask-special-replaced": "a {names} position was replaced in `inputs`: [CLS], [SEP] and "
    "padding are never chosen, so they stay as they are.",
    "bert-mask-specials-labelled": "{names} positions have a label, and {share:.1%} of the "
    "real tokens have one, not about select_prob = {p:g}: only the chosen positions get a label "
    "(the original token), the others IGNORE_INDEX; [CLS], [SEP] and padding are never chosen.",
    "bert-mask-label-not-original": "at some chosen positions the label is not the original "
    "token; the label is `tokens` where chosen and IGNORE_INDEX = {ignore} elsewhere.",
    "bert-mask-select-prob-zero": "with select_prob=0.0 some tokens were still chosen.",
    "bert-mask-select-prob-off": "with select_prob={share} {chosen:.1%} of the real tokens were "
    "chosen: each real token is chosen with probability select_prob.",
    "bert-mask-case-probs-off": "with mask_prob=0.5, random_prob=0.3 {masked:.1%} of the chosen "
    "tokens show [MASK] and {randomized:.1%} a random token, where about 50% and 29% are "
    "expected (a random draw is sometimes the original token): a chosen token becomes [MASK] "
    "with probability mask_prob, a random ordinary token with probability random_prob, and "
    "stays as it is otherwise.",
    "bert-mask-random-uneven": "the random replacements are not spread evenly over the {ids} "
    "ordinary ids (counts from {low} to {high}, {expected:.0f} expected each): draw each one "
    "uniformly, with its own number.",
    "bert-mask-chosen-share": "{share:.1%} of the real tokens were chosen ({n:,} of {n_real:,}); "
    "select_prob = 0.15 chooses each real token with probability 0.15 (and only real tokens are "
    "counted).",
    "bert-mask-case-shares": "of the {n:,} chosen tokens {masked:.1%} show [MASK], "
    "{randomized:.1%} a random token and {unchanged:.1%} are unchanged; the rule is 80 / 10 / 10 "
    "of the chosen tokens. Draw one number per position to pick the case: [MASK] below "
    "mask_prob, random between mask_prob and mask_prob + random_prob, unchanged above.",
}


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
        raise Wrong.named(MISTAKES, "bert-mask-in-place")
    if not (isinstance(result, tuple | list) and len(result) == 2):
        raise Wrong.differs(MESSAGES, "bert-mask-not-a-pair")
    inputs, labels = result
    for name, t in (("inputs", inputs), ("labels", labels)):
        if not isinstance(t, Tensor):
            raise Wrong.differs(
                MESSAGES, "bert-mask-not-a-tensor", name=name, kind=type(t).__name__
            )
        if tuple(t.shape) != tuple(tokens.shape):
            raise Wrong.differs(MESSAGES, "bert-mask-shape", name=name, shape=tuple(t.shape),
                                expected=tuple(tokens.shape))  # fmt: skip
        if t.dtype not in (torch.int64, torch.int32):
            raise Wrong.differs(MESSAGES, "bert-mask-dtype", name=name, dtype=t.dtype)
    if (inputs == IGNORE_INDEX).any() and not (labels == IGNORE_INDEX).any():
        raise Wrong.named(MISTAKES, "bert-mask-pair-swapped", ignore=IGNORE_INDEX)
    return inputs.long(), labels.long()


def _off(count: int, n: int, p: float) -> bool:
    """Is ``count`` of ``n`` trials further than ``_SIGMAS`` standard deviations from ``n p``?"""
    return abs(count - n * p) > _SIGMAS * math.sqrt(max(n * p * (1 - p), 1e-12))


def _positions(tokens: Tensor, inputs: Tensor, labels: Tensor, p: float = 0.15) -> Tensor:
    """Check where labels are set and what was changed (``p`` the select_prob); return the
    chosen positions."""
    special = _special(tokens)  # (B, T)
    real = ~special
    labelled = labels != IGNORE_INDEX
    if ((labels == _VOCAB.pad_id) & real).float().sum() > 0.3 * real.sum():
        raise Wrong.named(MISTAKES, "bert-mask-label-zero-not-ignore", pad=_VOCAB.pad_id,
                          ignore=IGNORE_INDEX)  # fmt: skip
    if labelled[real].all():
        raise Wrong.named(MISTAKES, "bert-mask-every-token-labelled", ignore=IGNORE_INDEX)
    n_real, n_unlabelled = int(real.sum()), int((real & ~labelled).sum())
    changed = inputs != tokens  # chosen, whatever the rule
    if changed.any() and not (changed & labelled).any() and not _off(n_unlabelled, n_real, p):
        if torch.equal(labels[labelled], tokens[labelled]):  # labels where not chosen
            raise Wrong.named(MISTAKES, "bert-mask-labels-inverted", share=n_unlabelled / n_real,
                              p=p)  # fmt: skip
    if (labelled & special).any():
        names = ", ".join(sorted({_NAMES[int(t)] for t in tokens[labelled & special]}))
        n_labelled = n_real - n_unlabelled
        if not _off(n_labelled, n_real, p):  # chosen as often as the real tokens
            raise Wrong.named(MISTAKES, "bert-mask-specials-chosen", names=names)
        raise Wrong.differs(MESSAGES, "bert-mask-specials-labelled", names=names,
                            share=n_labelled / n_real, p=p)  # fmt: skip
    if not torch.equal(inputs[special], tokens[special]):
        changed = sorted({_NAMES[int(t)] for t in tokens[special & (inputs != tokens)]})
        raise Wrong.differs(MESSAGES, "bert-mask-special-replaced", names=", ".join(changed))
    wrong_label = labelled & (labels != tokens)
    if wrong_label.any():
        if torch.equal(labels[labelled], inputs[labelled]):
            raise Wrong.named(MISTAKES, "bert-mask-label-is-corrupted-token")
        raise Wrong.differs(MESSAGES, "bert-mask-label-not-original", ignore=IGNORE_INDEX)
    if not torch.equal(inputs[~labelled], tokens[~labelled]):
        if (inputs[labelled] == _VOCAB.mask_id).all():
            raise Wrong.named(MISTAKES, "bert-mask-labels-only-on-mask")
        raise Wrong.named(MISTAKES, "bert-mask-random-outside-chosen")
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
        chosen = _positions(tokens, inputs, labels, share)
        if share == 0.0 and chosen.any():
            raise Wrong.differs(MESSAGES, "bert-mask-select-prob-zero")
        n_chosen = int(chosen.sum())
        if share > 0 and _off(n_chosen, n_real, share):
            key = "fixed" if not _off(n_chosen, n_real, 0.15) else "off"
            raise Wrong.named_or_differs(MISTAKES, MESSAGES, f"bert-mask-select-prob-{key}",
                                        share=share, chosen=n_chosen / n_real)  # fmt: skip
    probs = {"select_prob": 0.5, "mask_prob": 0.5, "random_prob": 0.3}
    inputs, labels = _call(fn, tokens, seed=2, **probs)
    chosen = _positions(tokens, inputs, labels, probs["select_prob"])
    n, masked, randomized, _ = _shares(tokens, inputs, chosen)
    swapped = not _off(randomized, n, 0.2 - 0.2 / len(_ORDINARY)) and randomized < 0.225 * n
    if not _off(masked, n, 0.5) and swapped:  # nearer 20% than the 25% of "half the rest"
        raise Wrong.named(MISTAKES, "bert-mask-random-unchanged-swapped", share=randomized / n)
    if _off(masked, n, 0.5) or _off(randomized, n, 0.3 - 0.3 / len(_ORDINARY)):
        fixed = not _off(masked, n, 0.8) and not _off(randomized, n, 0.1 - 0.1 / len(_ORDINARY))
        key = "bert-mask-case-probs-" + ("fixed" if fixed else "off")
        raise Wrong.named_or_differs(MISTAKES, MESSAGES, key, masked=masked / n,
                                    randomized=randomized / n)  # fmt: skip


def _expect_ordinary_replacements(fn: Callable, tokens: Tensor, real: Tensor) -> None:
    """A random replacement is an ordinary token, each drawn uniformly."""
    # Every real token replaced by a random one: which ids can a replacement be?
    inputs, labels = _call(fn, tokens, 3, select_prob=1.0, mask_prob=0.0, random_prob=1.0)
    drawn = inputs[real]
    bad = _special(drawn) | (drawn < 0) | (drawn >= _VOCAB.vocab_size)
    if bad.any():
        names = sorted({_NAMES.get(int(t), str(int(t))) for t in drawn[bad]})
        raise Wrong.named(MISTAKES, "bert-mask-random-may-be-special", names=", ".join(names))
    counts = torch.bincount(drawn - 4, minlength=len(_ORDINARY)).double()  # (33,)
    expected = len(drawn) / len(_ORDINARY)
    if (counts - expected).abs().max() > _SIGMAS * math.sqrt(expected):
        raise Wrong.differs(MESSAGES, "bert-mask-random-uneven", ids=len(_ORDINARY),
                            low=int(counts.min()), high=int(counts.max()), expected=expected)  # fmt: skip


def _expect_independent(chosen: Tensor, real: Tensor) -> None:
    """Each real token chosen by its own draw: per sentence, the count of chosen tokens varies
    as a binomial count does (the dispersion index, observed over expected variance, near 1)."""
    length = real.sum(1).double()  # (B,) real tokens per sentence
    count = (chosen & real).sum(1).double()  # (B,) chosen among them
    share = float(count.sum() / length.sum())  # the share overall, right or not
    if not 0 < share < 1:
        return  # nothing or everything chosen: the shares say what is wrong
    expected = (length * share * (1 - share)).sum()
    ratio = float(((count - share * length) ** 2).sum() / expected)
    if 0.7 < ratio < 1.4:  # 9 or more standard deviations of the index on 2,000 sentences
        return
    key = "bert-mask-draws-together" if ratio > 1 else "bert-mask-count-fixed"
    raise Wrong.named(MISTAKES, key, ratio=ratio)


def _expect_reproducible(fn: Callable, tokens: Tensor, inputs: Tensor, labels: Tensor) -> None:
    """A second call with a generator seeded alike gives the same batch."""
    again = _call(fn, tokens, seed=0)
    if not (torch.equal(inputs, again[0]) and torch.equal(labels, again[1])):
        raise Wrong.named(MISTAKES, "bert-mask-ignores-generator")


def _expect_shares(n: int, masked: int, randomized: int, unchanged: int, n_real: int) -> int:
    """15 % of the ``n_real`` real tokens chosen (``n``), 80 / 10 / 10 of them [MASK] / random
    / unchanged, each within the tolerance; returns ``n``."""
    if _off(n, n_real, 0.15) and unchanged < 0.02 * n and not _off(n, n_real, 0.15 * 0.9):
        raise Wrong.named(MISTAKES, "bert-mask-unchanged-unlabelled", share=n / n_real)
    if _off(n, n_real, 0.15) and not _off(n, n_real, 0.85):
        raise Wrong.named(MISTAKES, "bert-mask-select-inverted", share=n / n_real)
    if _off(n, n_real, 0.15):
        raise Wrong.differs(MESSAGES, "bert-mask-chosen-share", share=n / n_real, n=n,
                            n_real=n_real)  # fmt: skip
    p_same = 0.1 / len(_ORDINARY)  # a random draw equal to the original looks unchanged
    off = [
        _off(masked, n, 0.8),
        _off(randomized, n, 0.1 - p_same),
        _off(unchanged, n, 0.1 + p_same),
    ]
    if any(off):
        seen = {"n": n, "masked": masked / n, "randomized": randomized / n,
                "unchanged": unchanged / n}  # fmt: skip
        if masked == n:
            raise Wrong.named(MISTAKES, "bert-mask-always-mask", **seen)
        if not _off(masked, n, 0.1) and not _off(randomized, n, 0.8 - 0.8 / len(_ORDINARY)):
            raise Wrong.named(MISTAKES, "bert-mask-mask-random-swapped", **seen)
        raise Wrong.differs(MESSAGES, "bert-mask-case-shares", **seen)
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
    _expect_independent(chosen, real)
    _expect_shares(*_shares(tokens, inputs, chosen), n_real)
    # The arguments, on a quarter of the rows (still about 3,300 real tokens).
    _expect_arguments_used(fn, tokens[:500], real[:500])
    _expect_ordinary_replacements(fn, tokens[:500], real[:500])
    return say(MESSAGES, "bert-mask-passed", sigmas=_SIGMAS, n=n_total)
