"""Blind set B7, check_mask_tokens (chapter 17): BERT's 15 % / 80-10-10 masking rule."""

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


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] are not padding, so they can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
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
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the model should predict every token
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_labels_are_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # labels taken after corrupting
    return inputs, labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # a second, fresh draw for the random replacement among the rest
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_random_skips_first_ids(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    # the special tokens are <pad> <unk> <bos> <eos> = 0..3, so ordinary ids start at 4
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # no copy
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rnd] = draw[rnd]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape) < select_prob)  # generator forgotten
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_hard_coded_rates(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    rnd = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(rnd, draw, inputs), labels


def mask_random_threshold_not_cumulative(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < random_prob)  # never true for 0.8 / 0.1
    return torch.where(rnd, draw, inputs), labels


def mask_labels_before_special_filter(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    picked = torch.rand(tokens.shape, generator=generator) < select_prob
    labels = torch.where(picked, tokens, IGNORE_INDEX)  # labels made before the filter below
    chosen = picked & ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mask_keep_and_random_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob)  # everything not masked is replaced at random
    return torch.where(rnd, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_conditional(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Three Bernoulli draws: chosen, then [MASK], then random among the rest with the
    conditional probability random_prob / (1 - mask_prob)."""
    shape = tokens.shape
    special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    special[list(vocab.special_ids)] = True
    real = ~special[tokens]
    chosen = real & torch.bernoulli(torch.full(shape, select_prob), generator=generator).bool()
    to_mask = chosen & torch.bernoulli(torch.full(shape, mask_prob), generator=generator).bool()
    rest = 1.0 - mask_prob
    p_random = 0.0 if rest <= 0 else min(1.0, random_prob / rest)
    coin = torch.bernoulli(torch.full(shape, p_random), generator=generator).bool()
    to_random = chosen & ~to_mask & coin
    ordinary = (~special).nonzero().flatten()
    pick = torch.randint(0, len(ordinary), shape, generator=generator)
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = ordinary[pick][to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_multinomial_actions(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One draw per token from {nothing, mask, random, keep} with torch.multinomial."""
    keep_prob = 1.0 - mask_prob - random_prob
    probs = torch.tensor(
        [
            1.0 - select_prob,
            select_prob * mask_prob,
            select_prob * random_prob,
            select_prob * max(keep_prob, 0.0),
        ]
    )
    n = tokens.numel()
    action = torch.multinomial(probs, n, replacement=True, generator=generator).view(tokens.shape)
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids, dtype=tokens.dtype))
    action = torch.where(real, action, torch.zeros_like(action))
    ordinary = _ordinary(vocab)
    random_ids = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(action == 1, torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(action == 2, random_ids, inputs)
    labels = torch.where(action > 0, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


def mask_per_token_loop(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """The rule written for one token at a time, with the uniform numbers drawn in one go."""
    u = torch.rand(2, *tokens.shape, generator=generator)
    ordinary = _ordinary(vocab).tolist()
    r = torch.randint(len(ordinary), tokens.shape, generator=generator)
    specials = set(vocab.special_ids)
    inputs = tokens.clone()
    labels = torch.full_like(tokens, IGNORE_INDEX)
    for i in range(tokens.shape[0]):
        for j in range(tokens.shape[1]):
            tok = int(tokens[i, j])
            if tok in specials or u[0, i, j] >= select_prob:
                continue
            labels[i, j] = tok
            a = float(u[1, i, j])
            if a < mask_prob:
                inputs[i, j] = vocab.mask_id
            elif a < mask_prob + random_prob:
                inputs[i, j] = ordinary[int(r[i, j])]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I exclude only padding (tokens != pad_id) from the choice, so [CLS] and [SEP] can be "
        "chosen and masked.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens at every position instead of IGNORE_INDEX where nothing "
        "was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted_inputs",
        mask_labels_are_inputs,
        "mistake",
        "I fill the labels after corrupting the inputs, so a chosen position's label is [MASK] "
        "or the random token instead of the original.",
    ),
    BlindCase(
        CHECK,
        "independent_second_draw",
        mask_independent_draws,
        "mistake",
        "After [MASK] with probability 0.8 I draw a fresh number for the rest and compare it "
        "with 0.1, so only 2 % of the chosen become random tokens (and 18 % stay).",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocabulary",
        mask_random_from_whole_vocab,
        "mistake",
        "The random replacement is torch.randint(vocab.vocab_size), which can draw special "
        "tokens ([MASK], [CLS], padding ...).",
    ),
    BlindCase(
        CHECK,
        "random_from_id_4_up",
        mask_random_skips_first_ids,
        "mistake",
        "I draw the random token from ids 4 .. V - 1, assuming the specials are the first four "
        "ids; [CLS], [SEP] and [MASK] were added at the end, so they can be drawn.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens without .clone(), then I write [MASK] and the random ids into it, "
        "which changes the caller's batch.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_global_rng,
        "mistake",
        "I call torch.rand and torch.randint without generator=generator, so a seeded "
        "generator does not make the batch reproducible.",
    ),
    BlindCase(
        CHECK,
        "rates_hard_coded",
        mask_hard_coded_rates,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 as numbers in the code, ignoring select_prob, mask_prob and "
        "random_prob.",
    ),
    BlindCase(
        CHECK,
        "random_threshold_not_cumulative",
        mask_random_threshold_not_cumulative,
        "mistake",
        "The random case is mask_prob <= u < random_prob instead of u < mask_prob + "
        "random_prob, so with 0.8 / 0.1 no token is ever replaced at random.",
    ),
    BlindCase(
        CHECK,
        "labels_before_special_filter",
        mask_labels_before_special_filter,
        "mistake",
        "I made the labels from the raw 15 % draw and removed the special tokens only "
        "afterwards, so [CLS], [SEP] and padding sometimes get a label.",
    ),
    BlindCase(
        CHECK,
        "unchanged_case_missing",
        mask_keep_and_random_swapped,
        "mistake",
        "Every chosen token that is not masked is replaced by a random token: I forgot the "
        "10 % that stay unchanged.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_conditional",
        mask_bernoulli_conditional,
        "correct",
        "torch.bernoulli with the generator for choice and [MASK], then random with the "
        "conditional probability random_prob / (1 - mask_prob) among the rest; a lookup table "
        "of special ids.",
    ),
    BlindCase(
        CHECK,
        "multinomial_actions",
        mask_multinomial_actions,
        "correct",
        "One torch.multinomial draw per token over {not chosen, mask, random, keep} with "
        "probabilities 0.85, 0.12, 0.015, 0.015 (from the arguments).",
    ),
    BlindCase(
        CHECK,
        "per_token_loop",
        mask_per_token_loop,
        "correct",
        "Uniform numbers drawn at once from the generator, then a Python loop applying the "
        "rule token by token.",
    ),
]
