"""Blind set B22, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab, device=None) -> Tensor:
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten().to(device)


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens.clone()  # the original sentence is the target
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)
    return inputs, labels


def mask_hardcoded_probs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < 0.8), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= 0.8) & (u < 0.9), draw, inputs)
    return inputs, labels


def mask_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u < random_prob), draw, inputs)  # the first 10 %
    return inputs, labels


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def mask_independent_second_draw(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the rest, random_prob become random tokens
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_labels_zero_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, vocab.pad_id)  # padding is what the loss skips
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return labels, inputs


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    g = generator
    real = torch.ones_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        real &= tokens != s
    chosen = torch.bernoulli(torch.full(tokens.shape, float(select_prob)), generator=g).bool()
    chosen &= real
    weights = torch.tensor([mask_prob, random_prob, 1.0 - mask_prob - random_prob]).clamp(min=0)
    if weights.sum() == 0:
        weights = torch.tensor([0.0, 0.0, 1.0])
    action = torch.multinomial(weights, tokens.numel(), replacement=True, generator=g)
    action = action.view(tokens.shape)
    ordinary = _ordinary(vocab)
    random_ids = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=g)]
    inputs = tokens.clone()
    inputs[chosen & (action == 0)] = vocab.mask_id
    pick = chosen & (action == 1)
    inputs[pick] = random_ids[pick]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_one_uniform(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform number per token: below select_prob * mask_prob -> [MASK], the next
    select_prob * random_prob -> random, up to select_prob -> unchanged."""
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    special = torch.isin(tokens, torch.tensor(list(vocab.special_ids)))
    chosen = (u < select_prob) & ~special
    a = select_prob * mask_prob
    b = a + select_prob * random_prob
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < a), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= a) & (u < b), draw, inputs)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_rejection_sampling(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    is_special = (tokens[..., None] == special).any(-1)
    chosen = (torch.rand(tokens.shape, generator=generator) < select_prob) & ~is_special
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    bad = (draw[..., None] == special).any(-1)
    while bad.any():  # draw again where a special token came out
        draw[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=generator)
        bad = (draw[..., None] == special).any(-1)
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rnd] = draw[rnd]
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I choose 15 % of all positions and forgot to leave out the special tokens.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I excluded padding (tokens != pad_id) but [CLS] and [SEP] can still be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is the whole original sentence, not IGNORE_INDEX where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        mask_labels_from_inputs,
        "mistake",
        "I built the labels after corrupting, from inputs, so a masked position's label is [MASK].",
    ),
    BlindCase(
        CHECK,
        "hardcoded_probabilities",
        mask_hardcoded_probs,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 in the code instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mask_overlapping_thresholds,
        "mistake",
        "[MASK] where u < 0.8, a random token where u < 0.1: the random ones overwrite part "
        "of the masked ones, giving 70 / 10 / 20.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "The random replacement is torch.randint(vocab_size), special tokens included.",
    ),
    BlindCase(
        CHECK,
        "edits_tokens_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens and then index assignment: I changed the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_no_generator,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "independent_second_draw",
        mask_independent_second_draw,
        "mistake",
        "A fresh draw for the random case among the non-masked ones with probability 0.1, "
        "so only 2 % of the chosen become random tokens.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_elsewhere",
        mask_labels_zero_elsewhere,
        "mistake",
        "Where nothing was chosen the label is pad_id (0) instead of IGNORE_INDEX.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_returns_labels_first,
        "mistake",
        "I return (labels, inputs), the other order.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice and torch.multinomial over three actions, all with the "
        "generator; in-place edits on a clone.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        mask_one_uniform,
        "correct",
        "One uniform number per token decides both the choice and the action.",
    ),
    BlindCase(
        CHECK,
        "rejection_sampling",
        mask_rejection_sampling,
        "correct",
        "Random ids drawn from the whole vocabulary and redrawn where a special id came out.",
    ),
]
