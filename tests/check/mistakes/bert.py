"""Mistakes readers make in BERT's masking rule (chapter 17), and right versions written
differently from the book's ``mask_tokens``."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial import check
from transformer_tutorial.bert import IGNORE_INDEX, mask_tokens

from . import Correct, Mistake


def _draws(tokens: Tensor, generator) -> tuple[Tensor, Tensor, Tensor]:
    """The three random draws of the book's rule: choose, pick the case, pick a random id."""
    choose = torch.rand(tokens.shape, generator=generator)
    case = torch.rand(tokens.shape, generator=generator)
    pick = torch.rand(tokens.shape, generator=generator)
    return choose, case, pick


def _ordinary(vocab) -> Tensor:
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()  # the ids a random replacement may take


def _masking(
    *,
    exclude_specials: bool = True,
    label_rest: int | None = IGNORE_INDEX,
    label_from_inputs: bool = False,
    overlap: bool = False,
    all_mask: bool = False,
    random_from_all: bool = False,
    fixed_select: float | None = None,
    fixed_cases: bool = False,
    in_place: bool = False,
    unchosen_random: bool = False,
    global_rng: bool = False,
    one_random_id: bool = False,
    inverted: str | None = None,
    row_draw: bool = False,
    count_per_row: bool = False,
):
    """The book's rule with one switch turned to a typical mistake."""

    def fn(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
        if fixed_select is not None:
            select_prob = fixed_select
        if fixed_cases:
            mask_prob, random_prob = 0.8, 0.1
        choose, case, pick = _draws(tokens, None if global_rng else generator)
        special = torch.isin(tokens, torch.tensor(vocab.special_ids))
        chosen = choose < select_prob
        if row_draw:  # one draw per sentence: a row is chosen whole or not at all
            chosen = (choose[:, :1] < select_prob).expand_as(tokens).clone()
        if count_per_row:  # round(select_prob * length) of each row's real tokens, no more
            real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
            rank = choose.masked_fill(~real, 2.0).argsort(1).argsort(1)  # (B, T) random order
            chosen = rank < (select_prob * real.sum(1, keepdim=True)).round()
        if exclude_specials:
            chosen &= ~special
        to_mask = chosen & (case < mask_prob)
        if overlap:  # the random case overlaps the [MASK] case instead of following it
            to_random = chosen & (case < random_prob)
        elif unchosen_random:
            to_random = ~special & (case >= mask_prob) & (case < mask_prob + random_prob)
        else:
            to_random = chosen & (case >= mask_prob) & (case < mask_prob + random_prob)
        if all_mask:
            to_mask, to_random = chosen, torch.zeros_like(chosen)
        pool = torch.arange(vocab.vocab_size) if random_from_all else _ordinary(vocab)
        random_ids = pool[(pick * len(pool)).long().clamp(max=len(pool) - 1)]
        if one_random_id:
            random_ids = torch.full_like(tokens, int(pool[0]))
        if in_place:
            inputs = tokens
            inputs[to_mask] = vocab.mask_id
        else:
            inputs = torch.where(to_mask, vocab.mask_id, tokens)
        inputs = torch.where(to_random, random_ids, inputs)
        original = tokens.clone() if not in_place else inputs.clone()
        if inverted == "all":  # labels where not chosen: specials too
            labels = original.masked_fill(chosen, IGNORE_INDEX)
        elif inverted == "real":  # labels where not chosen, among the real tokens
            labels = torch.where(~special & ~chosen, original, IGNORE_INDEX)
        elif label_from_inputs:
            labels = torch.where(chosen, inputs, IGNORE_INDEX)
        elif label_rest is None:
            labels = torch.where(special, IGNORE_INDEX, original)  # every real token labelled
        else:
            labels = torch.where(chosen, original, label_rest)
        return inputs, labels

    return fn


def _by_loops(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """Position by position, as one would write it in plain Python."""
    ordinary = _ordinary(vocab).tolist()
    choose, case, pick = (d.tolist() for d in _draws(tokens, generator))
    inputs, labels = tokens.tolist(), tokens.tolist()
    specials = set(vocab.special_ids)
    for b, row in enumerate(tokens.tolist()):
        for t, token in enumerate(row):
            if token in specials or choose[b][t] >= select_prob:
                labels[b][t] = IGNORE_INDEX
                continue
            if case[b][t] < mask_prob:
                inputs[b][t] = vocab.mask_id
            elif case[b][t] < mask_prob + random_prob:
                inputs[b][t] = ordinary[min(int(pick[b][t] * len(ordinary)), len(ordinary) - 1)]
    return torch.tensor(inputs), torch.tensor(labels)


def _by_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """Nested Bernoulli draws, as Hugging Face's data collator writes it: [MASK] with
    ``mask_prob``, then random with ``random_prob / (1 - mask_prob)`` of the rest."""
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    p = torch.full(tokens.shape, select_prob).masked_fill(special, 0.0)
    chosen = torch.bernoulli(p, generator=generator).bool()
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    to_mask = torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    to_mask &= chosen
    rest = random_prob / (1 - mask_prob) if mask_prob < 1 else 0.0
    to_random = torch.bernoulli(torch.full(tokens.shape, rest), generator=generator).bool()
    to_random &= chosen & ~to_mask
    ordinary = _ordinary(vocab)
    draw = torch.randint(len(ordinary), tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = ordinary[draw[to_random]]
    return inputs, labels


def _labels_first(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    inputs, labels = mask_tokens(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    return labels, inputs


MISTAKES = [
    Mistake(
        check.check_mask_tokens,
        "bert-mask-pair-swapped",
        _labels_first,
        "you return (labels, inputs)",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-specials-chosen",
        _masking(exclude_specials=False),
        "positions were chosen (they have a label)",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-labels-inverted",
        _masking(inverted="all"),
        "your labels are inverted",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-labels-inverted-real-only",
        _masking(inverted="real"),
        "your labels are inverted",
        mistake="bert-mask-labels-inverted",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-every-token-labelled",
        _masking(label_rest=None),
        "every real token has a label",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-label-zero-not-ignore",
        _masking(label_rest=0),
        "use IGNORE_INDEX = -100",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-label-is-corrupted-token",
        _masking(label_from_inputs=True),
        "the label of a chosen position must be the original token",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-cases-overlap",
        _masking(overlap=True),
        "the rule is 80 / 10 / 10 of the chosen tokens",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-always-mask",
        _masking(all_mask=True),
        "every chosen token became [MASK]",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-random-may-be-special",
        _masking(random_from_all=True),
        "a random replacement was a special token",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-random-one-id",
        _masking(one_random_id=True),
        "not spread evenly over the 33 ordinary ids",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-select-prob-fixed",
        _masking(fixed_select=0.15),
        "use the `select_prob` argument",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-case-probs-fixed",
        _masking(fixed_cases=True),
        "use the `mask_prob` and `random_prob` arguments",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-select-prob-times-mask-prob",
        _masking(fixed_select=0.15 * 0.8),
        "of the real tokens were chosen",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-in-place",
        _masking(in_place=True),
        "changed the tokens you passed in",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-random-outside-chosen",
        _masking(unchosen_random=True),
        "a position that was not chosen",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-draws-together",
        _masking(row_draw=True),
        "whole sentences are chosen together",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-count-fixed",
        _masking(count_per_row=True),
        "about the same count",
    ),
    Mistake(
        check.check_mask_tokens,
        "bert-mask-ignores-generator",
        _masking(global_rng=True),
        "draw every random number from `generator`",
    ),
]

CORRECT = [
    Correct(check.check_mask_tokens, "bert-mask-by-loops", _by_loops),
    Correct(check.check_mask_tokens, "bert-mask-nested-bernoulli", _by_bernoulli),
]
