"""Blind set B5, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

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


# ---------------------------------------------------------------- mistakes


def mask_random_second_draw(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # a second coin with random_prob among the chosen tokens that were not masked
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_specials_assumed_first(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    # "the special tokens are the first ids": [CLS], [SEP], [MASK] come last, though
    low = len(vocab.special_ids)
    draw = torch.randint(low, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_fixed_count_per_row(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = torch.zeros_like(real)
    for b in range(tokens.shape[0]):  # BERT's script: a fixed number per sequence
        n_ids = int((tokens[b] != vocab.pad_id).sum())  # [CLS] and [SEP] counted
        candidates = real[b].nonzero().flatten()
        n = min(len(candidates), max(1, round(select_prob * n_ids)))
        if len(candidates):
            pick = torch.randperm(len(candidates), generator=generator)[:n]
            chosen[b, candidates[pick]] = True
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_random_not_limited_to_chosen(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = (action >= mask_prob) & (action < mask_prob + random_prob)  # "chosen &" forgotten
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_randint_without_generator(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]  # generator left out here
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_excludes_three_specials(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    # only [CLS], [SEP] and padding are kept out; <unk>, <bos>, <eos>, [MASK] may be chosen
    real = (tokens != vocab.cls_id) & (tokens != vocab.sep_id) & (tokens != vocab.pad_id)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_overlapping_thresholds(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action < random_prob)  # overlaps the [MASK] range and overrides it
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_returns_labels_first(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return torch.where(chosen, tokens, IGNORE_INDEX), inputs  # (labels, inputs)


def mask_select_over_all_positions(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    # 15 % of all positions, padding and specials included, rescaled to the real ones
    share = select_prob * tokens.numel() / max(int(real.sum()), 1)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < share)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---------------------------------------------------------------- correct variants


def mask_draws_for_chosen_only(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Bernoulli choice; the second draw and the random ids only for the chosen positions."""
    specials = torch.tensor(vocab.special_ids, device=tokens.device)
    real = ~torch.isin(tokens, specials)
    coin = torch.bernoulli(torch.full(tokens.shape, float(select_prob)), generator=generator)
    chosen = real & coin.bool().to(tokens.device)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    inputs = tokens.clone()
    where = chosen.nonzero(as_tuple=True)
    u = torch.rand(len(where[0]), generator=generator)
    ordinary = _ordinary(vocab)
    replacement = ordinary[torch.randint(len(ordinary), (len(where[0]),), generator=generator)]
    new = tokens[where].clone()
    new[u < mask_prob] = vocab.mask_id
    is_random = (u >= mask_prob) & (u < mask_prob + random_prob)
    new[is_random] = replacement[is_random].to(new.dtype)
    inputs[where] = new
    return inputs, labels


def mask_one_uniform_reused(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform per position: u < select_prob chooses, and u / select_prob (uniform again
    for a chosen token) picks the case; the random ids drawn by multinomial over ordinary ids."""
    is_special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    is_special[list(vocab.special_ids)] = True
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    chosen = ~is_special[tokens] & (u < select_prob)
    case = u / select_prob if select_prob > 0 else u
    weights = (~is_special).double()
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    draw = draw.view(tokens.shape)
    inputs = tokens.clone()
    inputs[chosen & (case < mask_prob)] = vocab.mask_id
    random_case = chosen & (case >= mask_prob) & (case < mask_prob + random_prob)
    inputs[random_case] = draw[random_case]
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "random_as_second_coin",
        mask_random_second_draw,
        "mistake",
        "I drew [MASK] with probability 0.8 and then a separate coin with 0.1 for the random "
        "token among the rest, so only 2 % of the chosen tokens become random.",
    ),
    BlindCase(
        CHECK,
        "specials_assumed_first_ids",
        mask_specials_assumed_first,
        "mistake",
        "I drew random tokens from len(special_ids) .. V - 1, assuming the special ids come "
        "first; [CLS], [SEP] and [MASK] are the last ids, so they can be drawn.",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_sentence",
        mask_fixed_count_per_row,
        "mistake",
        "I chose a fixed number max(1, round(0.15 * length)) of tokens per sentence as "
        "BERT's script does, with [CLS] and [SEP] in the length.",
    ),
    BlindCase(
        CHECK,
        "random_case_not_and_chosen",
        mask_random_not_limited_to_chosen,
        "mistake",
        "I forgot 'chosen &' on the random-token case, so tokens that were never chosen get "
        "replaced too.",
    ),
    BlindCase(
        CHECK,
        "randint_without_generator",
        mask_randint_without_generator,
        "mistake",
        "I passed the generator to both torch.rand calls but not to torch.randint for the "
        "random ids.",
    ),
    BlindCase(
        CHECK,
        "only_cls_sep_pad_excluded",
        mask_excludes_three_specials,
        "mistake",
        "I kept only [CLS], [SEP] and padding out of the choice; <unk>, <bos>, <eos> and "
        "[MASK] can still be chosen.",
    ),
    BlindCase(
        CHECK,
        "random_range_overlaps_mask",
        mask_overlapping_thresholds,
        "mistake",
        "My random case is action < random_prob, which lies inside the [MASK] range, so "
        "the split becomes 70 / 10 / 20.",
    ),
    BlindCase(
        CHECK,
        "labels_returned_first",
        mask_returns_labels_first,
        "mistake",
        "I return (labels, inputs) instead of (inputs, labels).",
    ),
    BlindCase(
        CHECK,
        "share_of_all_positions",
        mask_select_over_all_positions,
        "mistake",
        "I rescaled select_prob so that 15 % of all positions, padding and specials "
        "included, are chosen, which chooses more than 15 % of the real tokens.",
    ),
    BlindCase(
        CHECK,
        "draws_for_chosen_only",
        mask_draws_for_chosen_only,
        "correct",
        "torch.bernoulli for the choice, then the case draw and the random ids only for "
        "the chosen positions, written through boolean indexing on a clone.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_reused",
        mask_one_uniform_reused,
        "correct",
        "One uniform per position: below select_prob it chooses, and divided by "
        "select_prob it picks the case; random ids by multinomial over the ordinary ids.",
    ),
]
