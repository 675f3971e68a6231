"""Blind set B9, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE_INDEX = -100


def _ordinary(vocab) -> torch.Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_cls_sep_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # "real" = not padding
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the loss should know every original token
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_label_is_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # labels made after corrupting
    return inputs, labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels  # random overrides some masks


def mask_same_uniform_overlap(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action < random_prob), draw, inputs)  # forgot the offset
    return inputs, labels


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_random_above_first_four(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)  # skip 0-3
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # no copy
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    inputs[rand] = draw[rand]
    return inputs, labels


def mask_randint_without_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]  # forgot generator here
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_hf_half_of_rest(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = (
        real & torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & torch.bernoulli(torch.full(tokens.shape, 0.8), generator=generator).bool()
    to_random = (
        chosen
        & ~to_mask
        & torch.bernoulli(torch.full(tokens.shape, 0.5), generator=generator).bool()
    )  # as in Hugging Face's collator: 0.8 and "half of the rest", fixed
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_padding_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = (tokens != vocab.cls_id) & (tokens != vocab.sep_id)  # forgot padding
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_one_uniform(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform number per token decides both whether it is chosen and what happens."""
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))
    u = torch.rand(tokens.shape, generator=generator).to(tokens.device)
    chosen = real & (u < select_prob)
    within = u / select_prob if select_prob > 0 else u  # uniform in [0, 1) among the chosen
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (within < mask_prob)] = vocab.mask_id
    rand = chosen & (within >= mask_prob) & (within < mask_prob + random_prob)
    inputs[rand] = draw.to(tokens.device)[rand]
    return inputs, labels


def mask_bernoulli_with_args(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.zeros_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        special |= tokens == s
    chosen = (
        ~special
        & torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    )
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    to_mask = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    to_random = (
        chosen
        & ~to_mask
        & torch.bernoulli(torch.full(tokens.shape, min(p_random, 1.0)), generator=generator).bool()
    )
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_multinomial_actions(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    probs = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    action = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    action = action.view(tokens.shape)  # 0 = [MASK], 1 = random, 2 = keep
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs = torch.where(chosen & (action == 0), torch.full_like(tokens, vocab.mask_id), inputs)
    inputs = torch.where(chosen & (action == 1), draw, inputs)
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "cls_sep_chosen",
        mask_cls_sep_chosen,
        "mistake",
        "I only exclude padding (tokens != pad_id), so [CLS] and [SEP] can be chosen",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels = tokens.clone(): every position has its original token as label, not -100 "
        "where nothing was chosen",
    ),
    BlindCase(
        CHECK,
        "label_is_corrupted_token",
        mask_label_is_corrupted,
        "mistake",
        "I build the labels from the corrupted inputs, so a chosen token's label is [MASK] or "
        "the random token",
    ),
    BlindCase(
        CHECK,
        "independent_draws",
        mask_independent_draws,
        "mistake",
        "two independent draws, rand < 0.8 for [MASK] and rand < 0.1 for random, the random "
        "one overriding: the split is 72 / 10 / 18, not 80 / 10 / 10",
    ),
    BlindCase(
        CHECK,
        "same_uniform_overlap",
        mask_same_uniform_overlap,
        "mistake",
        "one action draw but the random case tests action < random_prob, which overlaps the "
        "[MASK] range: 70 / 10 / 20",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "the random replacement is torch.randint(vocab_size), special tokens included",
    ),
    BlindCase(
        CHECK,
        "random_above_first_four",
        mask_random_above_first_four,
        "mistake",
        "randint(4, vocab_size) to skip the special ids, but [CLS], [SEP], [MASK] come after the "
        "subwords, so they can still be drawn",
    ),
    BlindCase(
        CHECK,
        "in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens without a clone, then inputs[...] = mask_id changes the caller's tensor",
    ),
    BlindCase(
        CHECK,
        "randint_without_generator",
        mask_randint_without_generator,
        "mistake",
        "the random replacement tokens come from torch.randint without generator=, so the "
        "same seed gives different inputs",
    ),
    BlindCase(
        CHECK,
        "hf_fixed_split",
        mask_hf_half_of_rest,
        "mistake",
        "copied from Hugging Face's collator: bernoulli(0.8) for [MASK] and bernoulli(0.5) of "
        "the rest for random, hard-coded, so mask_prob and random_prob are ignored (right for "
        "the defaults)",
    ),
    BlindCase(
        CHECK,
        "padding_chosen",
        mask_padding_chosen,
        "mistake",
        "I exclude [CLS] and [SEP] by id but forget padding, so PAD positions can be chosen",
    ),
    BlindCase(
        CHECK,
        "one_uniform",
        mask_one_uniform,
        "correct",
        "one uniform number per token: u < select_prob chooses, u / select_prob decides "
        "[MASK] / random / keep; in-place writes into a clone",
    ),
    BlindCase(
        CHECK,
        "bernoulli_with_args",
        mask_bernoulli_with_args,
        "correct",
        "Hugging Face's bernoulli scheme but with the arguments: random with probability "
        "random_prob / (1 - mask_prob) among the rest",
    ),
    BlindCase(
        CHECK,
        "multinomial_actions",
        mask_multinomial_actions,
        "correct",
        "torch.multinomial over the three actions with the generator",
    ),
]
