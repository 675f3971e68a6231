"""Blind set B10, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE = -100


def _ordinary(vocab) -> Tensor:
    """The ids a random replacement may take: every id that is not special."""
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] are "real" too here
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_labels_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE)  # labels from the corrupted inputs
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    labels = tokens.clone()  # the model should predict every token
    return torch.where(rand, draw, inputs), labels


def mask_labels_zero_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens * chosen  # 0 (the padding id) where nothing was chosen
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_hardcoded_probs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)  # the paper's numbers
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs)
    return inputs, labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels  # two draws: the cases overlap


def mask_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    # random when action < random_prob: a slice of the [MASK] range, overwritten
    return torch.where(chosen & (action < random_prob), draw, inputs), labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # not a copy
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rand] = draw[rand]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape) < select_prob)  # no generator
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_probs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_random = chosen & (action < mask_prob)  # the two cases' ranges swapped
    to_mask = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_select_complement(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    # "keep with probability select_prob" written as > instead of <
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) > select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_labels_changed_only(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    labels = torch.where(inputs != tokens, tokens, IGNORE)  # asked only where something changed
    return inputs, labels


def mask_fixed_count_per_sentence(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = torch.zeros_like(real)
    for b in range(tokens.shape[0]):  # BERT's script: round(15 % of the ids, [CLS]/[SEP] too)
        candidates = real[b].nonzero().flatten()
        length = int((tokens[b] != vocab.pad_id).sum())
        n = min(len(candidates), max(1, round(select_prob * length)))
        pick = torch.randperm(len(candidates), generator=generator)[:n]
        chosen[b, candidates[pick]] = True
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_multinomial(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """torch.bernoulli for the choice, torch.multinomial over the three cases."""
    special = torch.tensor(list(vocab.special_ids))
    real = ~(tokens[..., None] == special).any(-1)
    chosen = torch.bernoulli(torch.full(tokens.shape, float(select_prob)), generator=generator)
    chosen = chosen.bool() & real
    weights = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    case = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape)  # 0 = [MASK], 1 = random, 2 = unchanged
    ordinary = [i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)]
    ordinary = torch.tensor(ordinary)
    draw = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (case == 0)] = vocab.mask_id
    inputs[chosen & (case == 1)] = draw[chosen & (case == 1)]
    labels = torch.full_like(tokens, -100)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_two_stage_conditional(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """[MASK] with mask_prob, then random among the rest with random_prob / (1 - mask_prob);
    random tokens drawn only where needed."""
    is_special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    is_special[list(vocab.special_ids)] = True
    real = ~is_special[tokens]
    u = torch.rand(tokens.shape, generator=generator)
    chosen = real & (u < select_prob)
    labels = tokens.masked_fill(~chosen, -100)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < p_random)
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    ordinary = (~is_special).nonzero().squeeze(1)
    n = int(to_random.sum())
    picks = torch.randint(len(ordinary), (n,), generator=generator)
    inputs[to_random] = ordinary[picks]
    return inputs, labels


def mask_uniform_over_ordinary(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number decides everything: u < select_prob chooses, and u / select_prob
    (uniform again on the chosen) picks the case; random ids from a shuffled ordinary list."""
    special = set(vocab.special_ids)
    real = torch.tensor([[t not in special for t in row] for row in tokens.tolist()])
    real = real.reshape(tokens.shape)
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    chosen = real & (u < select_prob)
    v = u / select_prob if select_prob > 0 else u  # uniform on [0, 1) where chosen
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in special])
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (v < mask_prob), torch.full_like(tokens, vocab.mask_id), tokens)
    swap = chosen & (v >= mask_prob) & (v < mask_prob + random_prob)
    inputs = torch.where(swap, draw, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, -100))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "only_pad_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I excluded only the padding (tokens != pad_id), so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        mask_labels_corrupted,
        "mistake",
        "I built the labels after corrupting, from inputs, so a [MASK] position has the mask "
        "id as its label.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens: every position is a target, not only the chosen ones.",
    ),
    BlindCase(
        CHECK,
        "labels_zero_elsewhere",
        mask_labels_zero_elsewhere,
        "mistake",
        "labels = tokens * chosen, so the positions not chosen get 0 instead of -100.",
    ),
    BlindCase(
        CHECK,
        "hardcoded_probabilities",
        mask_hardcoded_probs,
        "mistake",
        "I wrote the paper's 0.15, 0.8 and 0.9 as numbers and ignored the arguments.",
    ),
    BlindCase(
        CHECK,
        "independent_draws",
        mask_independent_draws,
        "mistake",
        "I drew one random number for [MASK] (< 0.8) and another for random (< 0.1); the "
        "cases overlap and the random one wins, so [MASK] is 72 %, random 10 %, unchanged 18 %.",
    ),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mask_overlapping_thresholds,
        "mistake",
        "One draw, but [MASK] when action < 0.8 and random when action < 0.1, so the random "
        "case takes a slice of the [MASK] range: 70 / 10 / 20.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "The random token is drawn from range(vocab_size), so it can be a special token.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens, then inputs[...] = mask_id: the caller's tensor is changed.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_global_rng,
        "mistake",
        "I called torch.rand and torch.randint without generator=, so the seeded generator is "
        "ignored.",
    ),
    BlindCase(
        CHECK,
        "mask_and_random_swapped",
        mask_probs_swapped,
        "mistake",
        "The ranges are swapped: random when action < mask_prob, [MASK] for the next random_prob.",
    ),
    BlindCase(
        CHECK,
        "select_complement",
        mask_select_complement,
        "mistake",
        "I chose a token when rand > select_prob, which chooses 85 % instead of 15 %.",
    ),
    BlindCase(
        CHECK,
        "labels_only_where_changed",
        mask_labels_changed_only,
        "mistake",
        "I set the label only where the input was changed, so the 10 % left unchanged are not "
        "asked about.",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_sentence",
        mask_fixed_count_per_sentence,
        "mistake",
        "Like BERT's script, a fixed number of tokens per sentence, round(15 % of its length "
        "with [CLS] and [SEP]), which on short sentences is more than 15 % of the real tokens.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial over [MASK]/random/unchanged, "
        "boolean-index assignment on a clone.",
    ),
    BlindCase(
        CHECK,
        "two_stage_conditional",
        mask_two_stage_conditional,
        "correct",
        "[MASK] with mask_prob first, then random with random_prob / (1 - mask_prob) among the "
        "rest; random ids drawn only for the positions that need them.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_draw",
        mask_uniform_over_ordinary,
        "correct",
        "A single float64 uniform per position: u < select_prob chooses, u / select_prob picks "
        "the case.",
    ),
]
