"""Blind set B17, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    """The ids that are not special, for the random replacements."""
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = (tokens != vocab.pad_id) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )  # padding is never chosen; [CLS] and [SEP] may be
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the original sentence is the target
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # the labels made at the end
    return inputs, labels


def mask_select_polarity(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) > select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_independent_random_draw(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # 10 % random: a second coin, among those not masked
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_overlapping_ranges(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < random_prob), draw, tokens)  # random below 0.1
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, inputs)  # mask below 0.8
    return inputs, labels


def mask_hard_coded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < 0.15)  # the paper's
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    rnd = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(rnd, draw, inputs), labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id  # writes into the caller's tensor
    tokens[rnd] = draw[rnd]
    return tokens, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape) < select_prob)  # generator forgotten
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_not_restricted_to_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(~special & (action < mask_prob), vocab.mask_id, tokens)  # not & chosen
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_chain(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """torch.bernoulli coins as in Hugging Face's collator: mask with mask_prob, then among the
    rest random with random_prob / (1 - mask_prob)."""
    real = torch.ones_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        real &= tokens != s
    probs = torch.full(tokens.shape, select_prob)
    chosen = torch.bernoulli(probs, generator=generator).bool() & real
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    masked = torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    masked &= chosen
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    randomized = torch.bernoulli(torch.full(tokens.shape, p_random), generator=generator).bool()
    randomized &= chosen & ~masked
    ordinary = [i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)]
    table = torch.tensor(ordinary)
    picks = table[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    inputs[randomized] = picks[randomized]
    return inputs, labels


def mask_rejection_sampling(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Random replacements drawn from the whole vocabulary and redrawn while special; the case
    drawn first, the selection second."""
    specials = torch.tensor(vocab.special_ids)
    action = torch.rand(tokens.shape, generator=generator)
    chosen = (torch.rand(tokens.shape, generator=generator) < select_prob) & ~torch.isin(
        tokens, specials
    )
    replacement = torch.randint(0, vocab.vocab_size, tokens.shape, generator=generator)
    bad = torch.isin(replacement, specials)
    while bad.any():
        redraw = torch.randint(0, vocab.vocab_size, (int(bad.sum()),), generator=generator)
        replacement[bad] = redraw
        bad = torch.isin(replacement, specials)
    inputs = tokens.clone()
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = replacement[to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_one_uniform(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number u per position: chosen when u < select_prob, and u / select_prob,
    again uniform on [0, 1) for a chosen position, decides the case."""
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (u < select_prob)
    a = u / select_prob if select_prob > 0 else u
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs = torch.where(chosen & (a < mask_prob), torch.full_like(tokens, vocab.mask_id), inputs)
    use_random = chosen & (a >= mask_prob) & (a < mask_prob + random_prob)
    inputs = torch.where(use_random, draw, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose positions with probability select_prob everywhere, [CLS], [SEP] and padding "
        "included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I excluded padding (tokens != vocab.pad_id) but not [CLS] and [SEP].",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens: every position has a label, not IGNORE_INDEX where "
        "nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        mask_labels_from_inputs,
        "mistake",
        "I made the labels at the end from inputs, so a chosen position's label is [MASK] or "
        "the random token.",
    ),
    BlindCase(
        CHECK,
        "select_polarity",
        mask_select_polarity,
        "mistake",
        "I wrote rand > select_prob, which chooses 85 % of the tokens.",
    ),
    BlindCase(
        CHECK,
        "independent_random_coin",
        mask_independent_random_draw,
        "mistake",
        "I drew a second coin with random_prob among the tokens not masked, so only "
        "0.2 * 0.1 = 2 % of the chosen become random.",
    ),
    BlindCase(
        CHECK,
        "overlapping_ranges",
        mask_overlapping_ranges,
        "mistake",
        "I used action < random_prob for random and action < mask_prob for [MASK]; the ranges "
        "overlap and the mask overwrites every random token.",
    ),
    BlindCase(
        CHECK,
        "arguments_hard_coded",
        mask_hard_coded,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 into the code instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "The random replacement is torch.randint(vocab.vocab_size), which can be a special token.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into tokens itself and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_global_rng,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "mask_not_restricted_to_chosen",
        mask_not_restricted_to_chosen,
        "mistake",
        "My [MASK] condition forgot '& chosen': every real token whose action < mask_prob is "
        "masked.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_chain",
        mask_bernoulli_chain,
        "correct",
        "torch.bernoulli coins: mask with mask_prob, then random with random_prob / "
        "(1 - mask_prob) among the rest, as Hugging Face's collator.",
    ),
    BlindCase(
        CHECK,
        "rejection_sampling",
        mask_rejection_sampling,
        "correct",
        "Random replacements from the whole vocabulary, redrawn while special; the case drawn "
        "before the selection; index assignment on clones.",
    ),
    BlindCase(
        CHECK,
        "one_uniform",
        mask_one_uniform,
        "correct",
        "One uniform per position decides both the selection (u < p) and the case (u / p).",
    ),
]
