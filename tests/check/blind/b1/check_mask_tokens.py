"""Blind cases for check_mask_tokens (chapter 17)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE = -100


def _ordinary(vocab):
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


def _rule(
    tokens,
    vocab,
    generator,
    select_prob,
    mask_prob,
    random_prob,
    *,
    real=None,
    random_pool=None,
    label_corrupted=False,
    label_everywhere=False,
):
    if real is None:
        real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    pool = _ordinary(vocab) if random_pool is None else random_pool
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    source = inputs if label_corrupted else tokens
    labels = source.clone() if label_everywhere else torch.where(chosen, source, IGNORE)
    return inputs, labels


def mt_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = torch.ones_like(tokens, dtype=torch.bool)  # every position may be chosen
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, real=real)


def mt_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, real=tokens != vocab.pad_id
    )  # [CLS] and [SEP] can be chosen


def mt_label_is_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, label_corrupted=True
    )


def mt_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, label_everywhere=True
    )


def mt_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action < random_prob)  # overlaps the mask range: no random tokens survive
    pool = _ordinary(vocab)
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, tokens)
    inputs = torch.where(to_mask, vocab.mask_id, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE)


def mt_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens,
        vocab,
        generator,
        select_prob,
        mask_prob,
        random_prob,
        random_pool=torch.arange(vocab.vocab_size),
    )


def mt_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    pool = _ordinary(vocab)
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id  # writes into the caller's tensor
    tokens[to_random] = draw[to_random]
    return tokens, labels


def mt_hard_coded_rates(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 0.15, 0.8, 0.1)  # the paper's numbers, arguments ignored


def mt_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, None, select_prob, mask_prob, random_prob)  # global RNG


def mt_select_over_all_then_filter(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    # picks exactly 15 % of all positions, padding included, then drops the special ones
    n = tokens.numel()
    k = round(select_prob * n)
    picked = torch.zeros(n, dtype=torch.bool)
    picked[torch.randperm(n, generator=generator)[:k]] = True
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = picked.view_as(tokens) & real
    action = torch.rand(tokens.shape, generator=generator)
    pool = _ordinary(vocab)
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE)


def mt_no_generator_parameter(tokens, vocab, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    return _rule(tokens, vocab, None, select_prob, mask_prob, random_prob)


def mt_single_uniform(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    # one uniform number per token decides everything: [0, s*m) mask, [s*m, s*(m+r)) random,
    # [s*(m+r), s) keep, [s, 1) not chosen
    special = torch.tensor(list(vocab.special_ids))
    real = ~(tokens[..., None] == special).any(-1)
    u = torch.rand(tokens.shape, generator=generator)
    chosen = real & (u < select_prob)
    to_mask = chosen & (u < select_prob * mask_prob)
    to_random = chosen & ~to_mask & (u < select_prob * (mask_prob + random_prob))
    ordinary = [i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)]
    ordinary = torch.tensor(ordinary)
    replacement = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = replacement[to_random]
    labels = torch.full_like(tokens, IGNORE)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mt_bernoulli_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = torch.ones_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        real &= tokens != s
    chosen = (
        torch.bernoulli(torch.full(tokens.shape, float(select_prob)), generator=generator).bool()
        & real
    )
    # 0 = mask, 1 = random, 2 = keep
    probs = torch.tensor([mask_prob, random_prob, 1.0 - mask_prob - random_prob]).clamp_min(0)
    kind = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator).view(
        tokens.shape
    )
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0
    rand_tok = torch.multinomial(
        weights, tokens.numel(), replacement=True, generator=generator
    ).view(tokens.shape)
    inputs = torch.where(chosen & (kind == 0), torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(chosen & (kind == 1), rand_tok, inputs)
    labels = tokens.masked_fill(~chosen, IGNORE)
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "special_tokens_chosen",
        mt_specials_chosen,
        "mistake",
        "chooses among all positions, so [CLS], [SEP] and padding can be masked",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mt_only_pad_excluded,
        "mistake",
        "excludes only padding (tokens != pad_id), so [CLS] and [SEP] can be chosen",
    ),
    BlindCase(
        CHECK,
        "label_is_corrupted_token",
        mt_label_is_corrupted,
        "mistake",
        "takes the labels from the corrupted inputs instead of the original tokens",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mt_labels_everywhere,
        "mistake",
        "returns the original tokens as labels everywhere instead of -100 where nothing was chosen",
    ),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mt_overlapping_thresholds,
        "mistake",
        "tests action < random_prob for the random case, which overlaps action < mask_prob, so the split is 80/0/20",
    ),
    BlindCase(
        CHECK,
        "random_token_may_be_special",
        mt_random_from_whole_vocab,
        "mistake",
        "draws the random replacement from the whole vocabulary, special tokens included",
    ),
    BlindCase(
        CHECK,
        "changes_tokens_in_place",
        mt_in_place,
        "mistake",
        "writes [MASK] and the random tokens into the caller's tokens tensor and returns it",
    ),
    BlindCase(
        CHECK,
        "rates_hard_coded",
        mt_hard_coded_rates,
        "mistake",
        "uses 0.15, 0.8 and 0.1 literally instead of the arguments",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mt_no_generator,
        "mistake",
        "draws from the global random generator instead of the generator argument",
    ),
    BlindCase(
        CHECK,
        "slip_no_generator_parameter",
        mt_no_generator_parameter,
        "mistake",
        "leaves the generator parameter out of the signature, so a positional generator lands in select_prob",
    ),
    BlindCase(
        CHECK,
        "exact_share_by_randperm",
        mt_select_over_all_then_filter,
        "correct",
        "picks exactly round(select_prob * n) of all positions with torch.randperm and then drops the special ones",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        mt_single_uniform,
        "correct",
        "uses a single uniform number per token to decide chosen/mask/random/keep and fills with boolean indexing",
    ),
    BlindCase(
        CHECK,
        "bernoulli_and_multinomial",
        mt_bernoulli_multinomial,
        "correct",
        "draws the choice with torch.bernoulli and the action and random token with torch.multinomial",
    ),
]
