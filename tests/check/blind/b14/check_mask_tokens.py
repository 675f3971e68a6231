"""Blind set B14, check_mask_tokens (chapter 17): BERT's 15 % / 80-10-10 masking rule."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # only padding left out; [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, labels


def _right(tokens, vocab, generator, select_prob, mask_prob, random_prob, slip=""):
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    p = 0.15 if slip == "hard_coded" else select_prob
    chosen = real & (torch.rand(tokens.shape, generator=generator) < p)
    u = torch.rand(tokens.shape, generator=generator)
    if slip == "random_overlaps_mask":
        to_mask = chosen & (u < mask_prob)
        to_random = chosen & (u < random_prob)
    elif slip == "independent_draws":
        to_mask = chosen & (u < mask_prob)
        u2 = torch.rand(tokens.shape, generator=generator)
        to_random = chosen & (u2 < random_prob)
    else:
        to_mask = chosen & (u < mask_prob)
        to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    if slip == "any_token_random":
        draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    else:
        ordinary = _ordinary(vocab)
        draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    if slip == "in_place":
        inputs = tokens
        inputs[to_mask] = vocab.mask_id
        inputs[to_random] = draw[to_random]
    else:
        inputs = torch.where(to_mask, vocab.mask_id, tokens)
        inputs = torch.where(to_random, draw, inputs)
    if slip == "labels_corrupted":
        labels = torch.where(chosen, inputs, IGNORE_INDEX)
    elif slip == "labels_everywhere":
        labels = tokens.clone()
    elif slip == "labels_only_masked":
        labels = torch.where(to_mask, tokens, IGNORE_INDEX)
    else:
        labels = torch.where(chosen, tokens if slip != "in_place" else inputs, IGNORE_INDEX)
    return inputs, labels


def _make(slip: str):
    def my_mask_tokens(
        tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
    ):
        return _right(tokens, vocab, generator, select_prob, mask_prob, random_prob, slip)

    my_mask_tokens.__name__ = f"mask_tokens_{slip}"
    return my_mask_tokens


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape) < select_prob)  # no gen
    u = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """torch.bernoulli for each decision, conditional probabilities for the split."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    to_mask = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    to_random = (
        chosen
        & ~to_mask
        & torch.bernoulli(torch.full(tokens.shape, p_random), generator=generator).bool()
    )
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    ordinary = _ordinary(vocab)
    picks = torch.randint(len(ordinary), (int(to_random.sum()),), generator=generator)
    inputs[to_random] = ordinary[picks]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_one_uniform(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform per token: u < select_prob chooses, u / select_prob splits 80/10/10."""
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    real = torch.ones_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        real &= tokens != s
    chosen = real & (u < select_prob)
    w = u / select_prob if select_prob > 0 else u
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    out = tokens.clone()
    out = torch.where(chosen & (w < mask_prob), torch.full_like(out, vocab.mask_id), out)
    out = torch.where(chosen & (w >= mask_prob) & (w < mask_prob + random_prob), draw, out)
    return out, tokens.masked_fill(~chosen, IGNORE_INDEX)


def mask_multinomial(
    tokens,
    vocab,
    generator=None,
    select_prob=0.15,
    mask_prob=0.8,
    random_prob=0.1,
    extra_special: tuple[int, ...] = (),
):
    """The three-way split drawn with torch.multinomial; an optional extra argument."""
    specials = set(vocab.special_ids) | set(extra_special)
    real = ~torch.isin(tokens, torch.tensor(sorted(specials)))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    probs = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    action = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    action = action.view(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (action == 0)] = vocab.mask_id
    sel = chosen & (action == 1)
    inputs[sel] = draw[sel]
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


_SLIPS = [
    ("labels_corrupted", "My labels are the corrupted inputs at the chosen positions."),
    ("labels_everywhere", "I used the original tokens as labels everywhere, no -100."),
    ("labels_only_masked", "Only positions turned into [MASK] get a label."),
    ("hard_coded", "I hard-coded 0.15 and ignored select_prob."),
    ("random_overlaps_mask", "I wrote u < random_prob for the random case, overlapping the mask."),
    ("independent_draws", "I drew the mask and the random case from two independent numbers."),
    ("any_token_random", "The random replacement is any id of the vocabulary."),
    ("in_place", "I wrote [MASK] into tokens itself instead of a copy."),
]

CASES = (
    [
        BlindCase(
            CHECK,
            "specials_chosen",
            mask_specials_chosen,
            "mistake",
            "I only excluded padding, so [CLS] and [SEP] can be chosen.",
        ),
    ]
    + [BlindCase(CHECK, s, _make(s), "mistake", w) for s, w in _SLIPS]
    + [
        BlindCase(
            CHECK,
            "global_rng",
            mask_global_rng,
            "mistake",
            "I called torch.rand without the generator.",
        ),
        BlindCase(
            CHECK,
            "bernoulli_conditional",
            mask_bernoulli,
            "correct",
            "torch.bernoulli draws with the generator; random share as conditional.",
        ),
        BlindCase(
            CHECK,
            "one_uniform",
            mask_one_uniform,
            "correct",
            "One float64 uniform per token both chooses and splits (u / select_prob).",
        ),
        BlindCase(
            CHECK,
            "multinomial_split",
            mask_multinomial,
            "correct",
            "The 80/10/10 split drawn with torch.multinomial; optional extra_special.",
        ),
    ]
)
