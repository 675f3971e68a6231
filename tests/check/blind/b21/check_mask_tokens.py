"""Blind set B21, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


def _random_ordinary(vocab: BertVocab, shape, generator) -> Tensor:
    ordinary = _ordinary(vocab)
    return ordinary[torch.randint(len(ordinary), shape, generator=generator)]


def _is_special(tokens: Tensor, vocab: BertVocab) -> Tensor:
    return torch.isin(tokens, torch.tensor(vocab.special_ids))


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] not excluded
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_labels_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # built after the corruption, from it
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens.clone()  # the original token as the label of every position
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_fixed_15(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = ~_is_special(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    rnd = chosen & (action >= 0.8) & (action < 0.9)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # a fresh draw for the random share, among the rest
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    any_id = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id at all
    inputs = torch.where(rnd, any_id, inputs)
    return inputs, labels


def mask_random_after_specials(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    # thought the special ids come first: 0 .. len(special_ids) - 1
    drawn = torch.randint(
        len(vocab.special_ids), vocab.vocab_size, tokens.shape, generator=generator
    )
    inputs = torch.where(rnd, drawn, inputs)
    return inputs, labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = tokens  # no clone
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rnd] = _random_ordinary(vocab, tokens.shape, generator)[rnd]
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    return inputs, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, None), inputs)
    return inputs, labels


def mask_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action < random_prob)  # the random tenth taken from the bottom as well
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_labels_only_changed(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    labels = torch.where(to_mask | rnd, tokens, IGNORE_INDEX)  # the kept tenth not asked for
    return inputs, labels


def mask_select_flipped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) > select_prob  # > for <
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, labels


def mask_returns_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_is_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return labels, inputs  # (labels, inputs)


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """torch.bernoulli for the choice, then the split drawn only among the chosen positions."""
    probs = torch.full(tokens.shape, float(select_prob))
    probs[_is_special(tokens, vocab)] = 0.0
    chosen = torch.bernoulli(probs, generator=generator).bool()
    labels = tokens.clone()
    labels[~chosen] = IGNORE_INDEX
    inputs = tokens.clone()
    n = int(chosen.sum())
    u = torch.rand(n, generator=generator)
    ordinary = _ordinary(vocab)
    replacement = tokens[chosen].clone()
    replacement[u < mask_prob] = vocab.mask_id
    rnd = (u >= mask_prob) & (u < mask_prob + random_prob)
    replacement[rnd] = ordinary[
        torch.randint(len(ordinary), (int(rnd.sum()),), generator=generator)
    ]
    inputs[chosen] = replacement
    return inputs, labels


def mask_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """The case of each position drawn with torch.multinomial over (mask, random, keep)."""
    special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    special[list(vocab.special_ids)] = True
    chosen = (torch.rand(tokens.shape, generator=generator) < select_prob) & ~special[tokens]
    weights = torch.tensor([mask_prob, random_prob, 1.0 - mask_prob - random_prob]).clamp(min=0)
    case = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape)
    word_weights = (~special).float()
    words = torch.multinomial(word_weights, tokens.numel(), replacement=True, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (case == 0)] = vocab.mask_id
    rnd = chosen & (case == 1)
    inputs[rnd] = words.view(tokens.shape)[rnd]
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_cumulative(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform number per position: below select_prob * mask_prob is [MASK], etc."""
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    real = ~_is_special(tokens, vocab)
    chosen = real & (u < select_prob)
    to_mask = chosen & (u < select_prob * mask_prob)
    to_random = chosen & ~to_mask & (u < select_prob * (mask_prob + random_prob))
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, _random_ordinary(vocab, tokens.shape, generator), inputs)
    return inputs, torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose positions among all tokens, special ones included",
    ),
    BlindCase(
        CHECK,
        "only_pad_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I excluded padding but not [CLS] and [SEP]",
    ),
    BlindCase(
        CHECK,
        "labels_corrupted",
        mask_labels_corrupted,
        "mistake",
        "labels built from the corrupted inputs, not the original tokens",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels = tokens.clone(): the original token at every position",
    ),
    BlindCase(
        CHECK,
        "fixed_15",
        mask_fixed_15,
        "mistake",
        "hard-coded 0.15, 0.8 and 0.1 instead of the arguments",
    ),
    BlindCase(
        CHECK,
        "independent_draws",
        mask_independent_draws,
        "mistake",
        "a second fresh draw < random_prob among the non-masked: 2 % random, not 10 %",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "the random replacement drawn from the whole vocabulary",
    ),
    BlindCase(
        CHECK,
        "random_after_specials",
        mask_random_after_specials,
        "mistake",
        "random ids drawn from len(special_ids) .. V - 1, assuming specials come first",
    ),
    BlindCase(
        CHECK,
        "in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens and then assignments, which change the caller's tensor",
    ),
    BlindCase(CHECK, "no_generator", mask_no_generator, "mistake", "torch.rand without generator="),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mask_overlapping_thresholds,
        "mistake",
        "random where action < random_prob, overlapping the [MASK] range",
    ),
    BlindCase(
        CHECK,
        "labels_only_changed",
        mask_labels_only_changed,
        "mistake",
        "labels only where the token was changed, not at the kept ones",
    ),
    BlindCase(
        CHECK,
        "select_flipped",
        mask_select_flipped,
        "mistake",
        "rand > select_prob, so 85 % are chosen",
    ),
    BlindCase(
        CHECK, "returns_swapped", mask_returns_swapped, "mistake", "I returned (labels, inputs)"
    ),
    BlindCase(
        CHECK,
        "bernoulli_then_split",
        mask_bernoulli,
        "correct",
        "torch.bernoulli for the choice, the split drawn only for the chosen positions",
    ),
    BlindCase(
        CHECK,
        "multinomial_cases",
        mask_multinomial,
        "correct",
        "the three cases and the random words drawn with torch.multinomial",
    ),
    BlindCase(
        CHECK,
        "one_uniform_cumulative",
        mask_cumulative,
        "correct",
        "one float64 uniform per position with cumulative thresholds",
    ),
]
