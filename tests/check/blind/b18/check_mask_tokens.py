"""Blind set B18, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    """The ids that are not special, for a right random replacement."""
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_labels_everywhere(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    labels = tokens.clone()  # the model should reproduce every token
    return inputs, labels


def mask_corrupted_label(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # what the model sees there
    return inputs, labels


def mask_labels_only_changed(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(to_mask | to_random, tokens, IGNORE_INDEX)  # nothing to predict if kept
    return inputs, labels


def mask_independent_draws(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)  # a second coin for the random case
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_thresholds_not_cumulative(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < random_prob), draw, tokens)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_arguments_ignored(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < 0.15)  # the paper's
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_random_any_id(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any word
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_random_above_first_specials(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    # the special tokens are ids 0-3, the words come after them
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_in_place(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    tokens[chosen & (action < mask_prob)] = vocab.mask_id  # the caller's tensor
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[random_case] = draw[random_case]
    return tokens, labels


def mask_no_generator(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape) < select_prob)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_labels_pad(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random_case = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random_case, draw, inputs)
    return inputs, torch.where(chosen, tokens, vocab.pad_id)  # padding is what the loss skips


def mask_random_among_unmasked(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the chosen tokens that were not masked, random_prob become a random word
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---------------------------------------------------------------- correct variants


def mask_one_uniform(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number per token decides both whether it is chosen and what happens."""
    special = torch.isin(tokens, torch.tensor(list(vocab.special_ids)))
    u = torch.rand(tokens.shape, generator=generator)
    chosen = ~special & (u < select_prob)
    to_mask = chosen & (u < select_prob * mask_prob)
    to_random = chosen & ~to_mask & (u < select_prob * (mask_prob + random_prob))
    ordinary = [i for i in range(vocab.vocab_size) if i not in vocab.special_ids]
    ordinary = torch.tensor(ordinary)
    draw = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_bernoulli_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Bernoulli for the choice; for the chosen positions only, a multinomial over
    (mask, random, keep) and a random ordinary id."""
    real = torch.ones_like(tokens, dtype=torch.bool)
    for special in vocab.special_ids:
        real &= tokens != special
    probs = torch.full(tokens.shape, float(select_prob))
    chosen = real & torch.bernoulli(probs, generator=generator).bool()
    n = int(chosen.sum())
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    inputs = tokens.clone()
    if n == 0:
        return inputs, labels
    weights = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    case = torch.multinomial(weights, n, replacement=True, generator=generator)  # (n,)
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)])
    random_ids = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
    picked = inputs[chosen]
    picked = torch.where(case == 0, torch.full_like(picked, vocab.mask_id), picked)
    picked = torch.where(case == 1, random_ids, picked)
    inputs[chosen] = picked
    return inputs, labels


def mask_flat_indices(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Works on a flattened copy with index lists; random draws only for the chosen ones."""
    flat = tokens.reshape(-1).clone()
    labels = torch.full_like(flat, IGNORE_INDEX)
    candidates = (~torch.isin(flat, torch.tensor(vocab.special_ids))).nonzero().flatten()
    coin = torch.rand(len(candidates), generator=generator)
    picked = candidates[coin < select_prob]
    labels[picked] = flat[picked]
    action = torch.rand(len(picked), generator=generator)
    masked = picked[action < mask_prob]
    swapped = picked[(action >= mask_prob) & (action < mask_prob + random_prob)]
    flat[masked] = vocab.mask_id
    ordinary = _ordinary(vocab)
    flat[swapped] = ordinary[torch.randint(len(ordinary), (len(swapped),), generator=generator)]
    return flat.view_as(tokens), labels.view_as(tokens)


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I choose 15 % of all positions, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens: every position has its token as label, not -100.",
    ),
    BlindCase(
        CHECK,
        "corrupted_token_as_label",
        mask_corrupted_label,
        "mistake",
        "At chosen positions my label is the corrupted input ([MASK] or the random word), not "
        "the original token.",
    ),
    BlindCase(
        CHECK,
        "labels_only_where_changed",
        mask_labels_only_changed,
        "mistake",
        "A chosen token that stays unchanged gets no label, only masked and replaced ones do.",
    ),
    BlindCase(
        CHECK,
        "independent_coins",
        mask_independent_draws,
        "mistake",
        "Two separate coins for [MASK] (0.8) and random (0.1); the random one overrides the "
        "mask, so the split is 72 / 10 / 18.",
    ),
    BlindCase(
        CHECK,
        "thresholds_not_cumulative",
        mask_thresholds_not_cumulative,
        "mistake",
        "Random when action < 0.1, then [MASK] when action < 0.8, which overwrites it: no "
        "random replacement ever survives.",
    ),
    BlindCase(
        CHECK,
        "arguments_ignored",
        mask_arguments_ignored,
        "mistake",
        "I hard-coded 0.15, 0.8 and 0.1 instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "The random replacement is torch.randint(vocab.vocab_size), which can draw a special "
        "token.",
    ),
    BlindCase(
        CHECK,
        "random_above_first_four",
        mask_random_above_first_specials,
        "mistake",
        "I drew the random word from ids 4 .. V-1, assuming the special tokens are 0-3; "
        "[CLS], [SEP] and [MASK] are at the end.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I write [MASK] and the random ids into tokens itself and return it.",
    ),
    BlindCase(
        CHECK,
        "generator_unused",
        mask_no_generator,
        "mistake",
        "I call torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_not_ignore_index",
        mask_labels_pad,
        "mistake",
        "I filled the labels of unchosen positions with vocab.pad_id instead of IGNORE_INDEX.",
    ),
    BlindCase(
        CHECK,
        "random_among_unmasked",
        mask_random_among_unmasked,
        "mistake",
        "After masking 80 % of the chosen tokens I made random_prob of the remaining ones "
        "random, so only 2 % of the chosen become a random word.",
    ),
    BlindCase(
        CHECK,
        "one_uniform",
        mask_one_uniform,
        "correct",
        "One uniform number per token decides the choice and the case (u < 0.15 * 0.8 for "
        "[MASK], and so on); boolean-index assignment on a clone.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial over (mask, random, keep) for the "
        "chosen positions only, all with the generator.",
    ),
    BlindCase(
        CHECK,
        "flat_index_lists",
        mask_flat_indices,
        "correct",
        "A flattened copy and index lists; the action and random ids drawn only for the "
        "chosen positions.",
    ),
]
