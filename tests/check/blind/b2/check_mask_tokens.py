"""Blind cases for check_mask_tokens (chapter 17), written from the chapter's text only."""

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


def _rule(
    tokens,
    vocab,
    generator=None,
    select_prob=0.15,
    mask_prob=0.8,
    random_prob=0.1,
    *,
    choose_specials=False,
    labels_from_inputs=False,
    labels_everywhere=False,
    independent_random=False,
    random_any_id=False,
    in_place=False,
    no_generator=False,
    mask_unchosen=False,
):
    g = None if no_generator else generator
    real = (
        torch.ones_like(tokens, dtype=torch.bool)
        if choose_specials
        else ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    )
    chosen = real & (torch.rand(tokens.shape, generator=g) < select_prob)
    action = torch.rand(tokens.shape, generator=g)
    to_mask = (action < mask_prob) if mask_unchosen else chosen & (action < mask_prob)
    if independent_random:
        to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=g) < random_prob)
    else:
        to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    if random_any_id:
        draws = torch.randint(vocab.vocab_size, tokens.shape, generator=g)
    else:
        ordinary = _ordinary(vocab)
        draws = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = tokens if in_place else tokens.clone()
    labels = torch.where(chosen, tokens, IGNORE_INDEX) if not labels_everywhere else tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draws[to_random]
    if labels_from_inputs:
        labels = torch.where(chosen, inputs, IGNORE_INDEX)
    return inputs, labels


# ---- mistakes -------------------------------------------------------------------------------


def specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, choose_specials=True
    )


def labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, labels_from_inputs=True
    )


def labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, labels_everywhere=True
    )


def independent_random_draw(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, independent_random=True
    )


def random_any_id(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, random_any_id=True)


def tokens_changed_in_place(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, in_place=True)


def generator_not_used(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, no_generator=True)


def probabilities_hard_coded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 0.15, 0.8, 0.1)


def unchosen_tokens_masked(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, mask_unchosen=True)


def mask_share_of_all_tokens(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    # I multiplied the probabilities out: mask with 0.15 * 0.8, random with 0.15 * 0.1 ... and
    # "chose" only those two groups, forgetting the 10 % that stay unchanged
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    u = torch.rand(tokens.shape, generator=generator)
    to_mask = real & (u < select_prob * mask_prob)
    to_random = (
        real & (u >= select_prob * mask_prob) & (u < select_prob * (mask_prob + random_prob))
    )
    chosen = to_mask | to_random
    ordinary = _ordinary(vocab)
    draws = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draws, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---- reader's slip ------------------------------------------------------------------------------


def labels_then_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    inputs, labels = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    return labels, inputs


# ---- correct variants ---------------------------------------------------------------------------


def one_uniform_per_token(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A single uniform u per token: u < p chooses it, and u / p (uniform again) picks the case."""
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    u = torch.rand(tokens.shape, generator=generator)
    chosen = real & (u < select_prob)
    within = u / select_prob if select_prob > 0 else u
    to_mask = chosen & (within < mask_prob)
    to_random = chosen & (within >= mask_prob) & (within < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draws = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, draws, inputs)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def bernoulli_and_rejection(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = (
        torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool() & real
    )
    masked = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    randomized = (
        chosen
        & ~masked
        & torch.bernoulli(torch.full(tokens.shape, min(p_random, 1.0)), generator=generator).bool()
    )
    draws = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    bad = torch.isin(draws, special)
    while bool(bad.any()):  # draw again where a special id came out
        draws[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=generator)
        bad = torch.isin(draws, special)
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    inputs[randomized] = draws[randomized]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def permutation_of_ordinary(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    specials = set(vocab.special_ids)
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in specials])
    real = torch.ones_like(tokens, dtype=torch.bool)
    for s in specials:
        real &= tokens != s
    r1 = torch.rand(tokens.shape, generator=generator)
    r2 = torch.rand(tokens.shape, generator=generator)
    pick = torch.randint(len(ordinary), tokens.shape, generator=generator)
    chosen = real & (r1 < select_prob)
    case = torch.where(r2 < mask_prob, 0, torch.where(r2 < mask_prob + random_prob, 1, 2))
    inputs = torch.where(chosen & (case == 0), torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(chosen & (case == 1), ordinary[pick], inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        specials_chosen,
        "mistake",
        "I chose 15 % of all positions, [CLS], [SEP] and padding included",
    ),
    BlindCase(
        CHECK,
        "labels_from_inputs",
        labels_from_inputs,
        "mistake",
        "I took the labels from the corrupted inputs, so a masked position's label is [MASK]",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        labels_everywhere,
        "mistake",
        "I set labels to a copy of tokens, so positions that were not chosen have labels too",
    ),
    BlindCase(
        CHECK,
        "independent_random_draw",
        independent_random_draw,
        "mistake",
        "I drew the random replacement with a new coin of probability 0.1 among the chosen tokens not masked, giving 2 % instead of 10 %",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        random_any_id,
        "mistake",
        "I drew the random replacement from the whole vocabulary, special ids included",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        tokens_changed_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into the tokens tensor itself",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        generator_not_used,
        "mistake",
        "I called torch.rand and torch.randint without the generator",
    ),
    BlindCase(
        CHECK,
        "probabilities_hard_coded",
        probabilities_hard_coded,
        "mistake",
        "I wrote 0.15, 0.8 and 0.1 into the code instead of using the arguments",
    ),
    BlindCase(
        CHECK,
        "unchosen_tokens_masked",
        unchosen_tokens_masked,
        "mistake",
        "I forgot 'chosen &' in the mask condition, so 80 % of all tokens become [MASK]",
    ),
    BlindCase(
        CHECK,
        "mask_share_of_all_tokens",
        mask_share_of_all_tokens,
        "mistake",
        "I multiplied the probabilities out but only labelled the masked and random tokens, forgetting the chosen ones that stay unchanged",
    ),
    BlindCase(
        CHECK,
        "labels_then_inputs",
        labels_then_inputs,
        "mistake",
        "I returned (labels, inputs) instead of (inputs, labels)",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        one_uniform_per_token,
        "correct",
        "I used one uniform number per token both to choose it and, rescaled by 1/p, to pick the case",
    ),
    BlindCase(
        CHECK,
        "bernoulli_and_rejection",
        bernoulli_and_rejection,
        "correct",
        "I used torch.bernoulli for each decision (random with 0.1 / 0.2 among the unmasked) and redrew special ids",
    ),
    BlindCase(
        CHECK,
        "permutation_of_ordinary",
        permutation_of_ordinary,
        "correct",
        "I excluded the specials with a loop of comparisons and chose the case with nested torch.where",
    ),
]
