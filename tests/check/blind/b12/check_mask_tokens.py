"""Blind set B12, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mt_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # only padding excluded: [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mt_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens.clone()  # the model should predict every token
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mt_labels_corrupted(
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
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # labels from the corrupted inputs
    return inputs, labels


def mt_split_wrong(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    # two separate coin flips: mask with 0.8, then random with 0.1 among the rest
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mt_select_all_masked(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    return torch.where(chosen, vocab.mask_id, tokens), labels  # always [MASK]


def mt_hardcoded(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    return torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs), labels


def mt_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mt_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # no copy: the caller's tensor gets the masks
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rnd] = draw[rnd]
    return inputs, labels


def mt_global_rng(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)  # generator forgotten: global random numbers
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mt_padding_choosable(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = (tokens != vocab.cls_id) & (tokens != vocab.sep_id)  # forgot the padding
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def mt_select_1_minus(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) > select_prob  # wrong direction
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mt_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """torch.bernoulli for the choice, a second bernoulli for mask vs the rest, a third for
    random vs keep (the conditional probability), labels filled with masked_fill."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    full = torch.full(tokens.shape, select_prob)
    chosen = torch.bernoulli(full, generator=generator).bool() & real
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    to_mask = torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    to_mask &= chosen
    rest = 1.0 - mask_prob
    cond = random_prob / rest if rest > 0 else 0.0
    to_random = torch.bernoulli(torch.full(tokens.shape, cond), generator=generator).bool()
    to_random &= chosen & ~to_mask
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mt_multinomial(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """The random replacement drawn with torch.multinomial over a weight vector that is 0 on
    the special ids; one uniform number per token picks the case."""
    special = torch.tensor(vocab.special_ids)
    u = torch.rand(tokens.shape, generator=generator)
    chosen = (u < select_prob) & ~torch.isin(tokens, special)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    v = torch.rand(tokens.shape, generator=generator)
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    draw = draw.view(tokens.shape)
    inputs = tokens.clone()
    inputs[chosen & (v < mask_prob)] = vocab.mask_id
    rnd = chosen & (v >= mask_prob) & (v < mask_prob + random_prob)
    inputs[rnd] = draw[rnd]
    return inputs, labels


def mt_numpy_style(
    tokens,
    vocab,
    generator=None,
    select_prob=0.15,
    mask_prob=0.8,
    random_prob=0.1,
    ignore_index: int = IGNORE_INDEX,
):
    """A loop over the chosen positions only, with a per-position draw; extra ignore_index."""
    special = set(vocab.special_ids)
    ordinary = _ordinary(vocab)
    inputs = tokens.clone()
    labels = torch.full_like(tokens, ignore_index)
    pick = torch.rand(tokens.shape, generator=generator)
    for b, t in (pick < select_prob).nonzero().tolist():
        if int(tokens[b, t]) in special:
            continue
        labels[b, t] = tokens[b, t]
        r = torch.rand(1, generator=generator).item()
        if r < mask_prob:
            inputs[b, t] = vocab.mask_id
        elif r < mask_prob + random_prob:
            j = torch.randint(len(ordinary), (1,), generator=generator).item()
            inputs[b, t] = ordinary[j]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "cls_sep_choosable",
        mt_specials_chosen,
        "mistake",
        "I excluded only padding, so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mt_labels_everywhere,
        "mistake",
        "labels is a copy of tokens, not IGNORE_INDEX where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_inputs",
        mt_labels_corrupted,
        "mistake",
        "I built the labels from the corrupted inputs, so they hold [MASK].",
    ),
    BlindCase(
        CHECK,
        "independent_coin_flips",
        mt_split_wrong,
        "mistake",
        "Two independent flips: [MASK] with 0.8, then random with 0.1 of the rest, so the "
        "random share is 2 %, not 10 %.",
    ),
    BlindCase(
        CHECK,
        "always_mask",
        mt_select_all_masked,
        "mistake",
        "Every chosen token becomes [MASK]; I forgot the 10 % random and 10 % unchanged.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hardcoded",
        mt_hardcoded,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 into the code and ignored the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mt_random_any_id,
        "mistake",
        "The random replacement is drawn from all ids, special tokens included.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mt_in_place,
        "mistake",
        "inputs = tokens without clone, so the caller's tensor is changed.",
    ),
    BlindCase(
        CHECK,
        "generator_ignored",
        mt_global_rng,
        "mistake",
        "I drew the random numbers without passing generator.",
    ),
    BlindCase(
        CHECK,
        "padding_choosable",
        mt_padding_choosable,
        "mistake",
        "I excluded [CLS] and [SEP] by comparing with their ids, and forgot the padding.",
    ),
    BlindCase(
        CHECK,
        "select_85_percent",
        mt_select_1_minus,
        "mistake",
        "I chose a token when rand > select_prob, i.e. 85 % of them.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_conditional",
        mt_bernoulli,
        "correct",
        "torch.bernoulli draws, random vs keep drawn with the conditional probability.",
    ),
    BlindCase(
        CHECK,
        "multinomial_replacement",
        mt_multinomial,
        "correct",
        "Random tokens drawn with torch.multinomial on weights that are 0 for specials.",
    ),
    BlindCase(
        CHECK,
        "loop_over_chosen",
        mt_numpy_style,
        "correct",
        "A Python loop over the chosen positions; extra ignore_index argument.",
    ),
]
