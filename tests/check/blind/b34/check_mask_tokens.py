"""Blind set B34, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE = -100


def _ordinary(vocab) -> torch.Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE)
    a = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (a < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (a >= mask_prob) & (a < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, **slip):
    """A right rule with one switch per slip of the readers below."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    a = torch.rand(tokens.shape, generator=generator)
    ordinary = torch.arange(vocab.vocab_size) if slip.get("any_random") else _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_mask = chosen & (a < mask_prob)
    to_rand = chosen & (a >= mask_prob) & (a < mask_prob + random_prob)
    inputs = tokens if slip.get("in_place") else tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_rand] = draw[to_rand]
    labels = torch.full_like(tokens, slip.get("fill", IGNORE))
    labels[chosen] = inputs[chosen] if slip.get("label_corrupted") else tokens[chosen]
    return inputs, labels


def mask_labels_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, label_corrupted=True
    )


def mask_labels_zero_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, fill=vocab.pad_id)


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, any_random=True)


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, in_place=True)


def mask_hardcoded_probs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 0.15, 0.8, 0.1)  # the paper's numbers


def mask_elif_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    a = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    to_mask = chosen & (a < mask_prob)
    to_rand = chosen & ~to_mask & (a < random_prob)  # "else if a < 0.1"
    inputs[to_mask] = vocab.mask_id
    inputs[to_rand] = draw[to_rand]
    return inputs, torch.where(chosen, tokens, IGNORE)


def mask_two_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_rand = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_rand, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE)


def mask_probs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, random_prob, mask_prob)


def mask_all_chosen_become_mask(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, 1.0, 0.0)


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, None, select_prob, mask_prob, random_prob)


def mask_pad_only_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] are tokens too
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    a = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (a < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (a >= mask_prob) & (a < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), torch.where(chosen, tokens, IGNORE)


def mask_select_complement(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 1 - select_prob, mask_prob, random_prob)


# ---------------------------------------------------------------- correct variants


def mask_like_book(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)


def mask_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    is_special = torch.zeros_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        is_special |= tokens == s
    p = torch.full(tokens.shape, select_prob)
    chosen = torch.bernoulli(p, generator=generator).bool() & ~is_special
    to_mask = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = random_prob / (1 - mask_prob) if mask_prob < 1 else 0.0
    to_rand = (
        chosen
        & ~to_mask
        & torch.bernoulli(torch.full(tokens.shape, min(rest, 1.0)), generator=generator).bool()
    )
    ordinary = [i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)]
    pick = torch.randint(len(ordinary), tokens.shape, generator=generator)
    draw = torch.tensor(ordinary)[pick]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_rand, draw, inputs)
    labels = tokens.masked_fill(~chosen, IGNORE)
    return inputs, labels


def mask_action_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    action = torch.rand(tokens.shape, generator=generator)  # drawn first, then the choice
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(0, ordinary.numel(), tokens.shape, generator=generator)]
    u = torch.rand(tokens.shape, generator=generator)
    chosen = (u < select_prob) & ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    kind = torch.bucketize(
        action, torch.tensor([mask_prob, mask_prob + random_prob]), right=True
    )  # 0 mask, 1 random, 2 keep
    inputs = tokens.clone()
    inputs = torch.where(chosen & (kind == 0), torch.full_like(tokens, vocab.mask_id), inputs)
    inputs = torch.where(chosen & (kind == 1), draw, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose positions without leaving out the special tokens",
    ),
    BlindCase(
        CHECK,
        "labels_corrupted",
        mask_labels_corrupted,
        "mistake",
        "I filled the labels from inputs after corrupting them",
    ),
    BlindCase(
        CHECK,
        "labels_pad_elsewhere",
        mask_labels_zero_elsewhere,
        "mistake",
        "where nothing was chosen I put the pad id in the labels",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "my random replacement is any id of the vocabulary",
    ),
    BlindCase(
        CHECK,
        "in_place",
        mask_in_place,
        "mistake",
        "I wrote [MASK] straight into tokens instead of a copy",
    ),
    BlindCase(
        CHECK,
        "hardcoded_probs",
        mask_hardcoded_probs,
        "mistake",
        "I used 0.15, 0.8 and 0.1 directly instead of the arguments",
    ),
    BlindCase(
        CHECK,
        "elif_thresholds",
        mask_elif_thresholds,
        "mistake",
        "if a < mask_prob: mask, elif a < random_prob: random token",
    ),
    BlindCase(
        CHECK,
        "two_independent_draws",
        mask_two_independent_draws,
        "mistake",
        "I drew mask with p 0.8, then among the rest random with p 0.1",
    ),
    BlindCase(
        CHECK,
        "probs_swapped",
        mask_probs_swapped,
        "mistake",
        "I passed random_prob where mask_prob goes and the other way round",
    ),
    BlindCase(
        CHECK,
        "all_become_mask",
        mask_all_chosen_become_mask,
        "mistake",
        "every chosen token becomes [MASK]",
    ),
    BlindCase(
        CHECK,
        "no_generator",
        mask_no_generator,
        "mistake",
        "I called torch.rand without the generator",
    ),
    BlindCase(
        CHECK,
        "pad_only_excluded",
        mask_pad_only_excluded,
        "mistake",
        "I only left out padding; [CLS] and [SEP] can be chosen",
    ),
    BlindCase(
        CHECK,
        "select_complement",
        mask_select_complement,
        "mistake",
        "I kept tokens with probability select_prob, so 85% are chosen",
    ),
    BlindCase(
        CHECK,
        "like_book",
        mask_like_book,
        "correct",
        "isin for the specials, one uniform draw split at 0.8 and 0.9",
    ),
    BlindCase(
        CHECK,
        "bernoulli",
        mask_bernoulli,
        "correct",
        "torch.bernoulli for each decision, random given not-mask at 0.1 / 0.2",
    ),
    BlindCase(
        CHECK,
        "action_first",
        mask_action_first,
        "correct",
        "I draw the action first and use bucketize for mask / random / keep",
    ),
]
