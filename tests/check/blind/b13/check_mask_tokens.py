"""Blind set B13, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE_INDEX = -100


def _ordinary(vocab: BertVocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mt_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def _right(tokens, vocab, generator, select_prob, mask_prob, random_prob):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    return chosen, action, draw


def mt_labels_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rnd, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # the label of the input I built
    return inputs, labels


def mt_labels_zero_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    labels = tokens * chosen  # 0 where nothing was chosen
    return torch.where(rnd, draw, inputs), labels


def mt_random_overrides_mask(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action < mask_prob + random_prob)  # forgot the lower bound
    return torch.where(rnd, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mt_select_prob_ignored(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, generator, 0.15, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mt_random_from_full_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, _ = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mt_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen, action, draw = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id
    tokens[rnd] = draw[rnd]
    return tokens, labels


def mt_generator_unused(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, None, select_prob, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mt_labels_every_real(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    return torch.where(rnd, draw, inputs), torch.where(real, tokens, IGNORE_INDEX)


def mt_probs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen, action, draw = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    to_mask = chosen & (action < random_prob)
    to_random = chosen & (action >= random_prob) & (action < random_prob + mask_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mt_mask_only(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen, action, _ = _right(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)  # the other 20 % stay


def mt_share_of_all_tokens(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    r = torch.rand(tokens.shape, generator=generator)
    # one draw: below 0.15*0.8 mask, below 0.15*0.9 random, below 0.15 keep -- over all tokens
    to_mask = real & (r < mask_prob)
    to_random = real & (r >= mask_prob) & (r < mask_prob + random_prob)
    chosen = real & (r < select_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask & chosen, vocab.mask_id, tokens)
    inputs = torch.where(to_random & chosen, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---------------------------------------------------------------- correct variants


def mt_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """torch.bernoulli draws, a clone edited in place."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    full = torch.full(tokens.shape, select_prob)
    chosen = torch.bernoulli(full, generator=generator).bool() & real
    masked = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = random_prob / (1 - mask_prob) if mask_prob < 1 else 0.0
    rnd = (
        chosen
        & ~masked
        & torch.bernoulli(torch.full(tokens.shape, rest), generator=generator).bool()
    )
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    inputs[rnd] = draw[rnd]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mt_multinomial(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """One categorical draw over (mask, random, keep) per chosen position."""
    real = torch.ones_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        real &= tokens != s
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    probs = torch.tensor([mask_prob, random_prob, 1 - mask_prob - random_prob]).clamp(min=0)
    what = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    what = what.view(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (what == 0), torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(chosen & (what == 1), draw, inputs)
    return inputs, tokens.masked_fill(~chosen, IGNORE_INDEX)


def mt_uniform_offset(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """The action draw made only where chosen, random ids drawn as positions in a list."""
    specials = set(vocab.special_ids)
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in specials])
    real = ~torch.isin(tokens, torch.tensor(sorted(specials)))
    chosen = (torch.rand(tokens.shape, generator=generator) < select_prob) & real
    n = int(chosen.sum())
    u = torch.rand(n, generator=generator)
    picks = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
    new = tokens[chosen].clone()
    new = torch.where(u < mask_prob, vocab.mask_id, new)
    new = torch.where((u >= mask_prob) & (u < mask_prob + random_prob), picks, new)
    inputs = tokens.clone()
    inputs[chosen] = new
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mt_specials_chosen,
        "mistake",
        "I chose every position with 15 %, [CLS], [SEP] and padding too.",
    ),
    BlindCase(
        CHECK,
        "labels_are_corrupted",
        mt_labels_corrupted,
        "mistake",
        "My labels hold the corrupted input at chosen positions, not the original.",
    ),
    BlindCase(
        CHECK,
        "labels_zero_elsewhere",
        mt_labels_zero_elsewhere,
        "mistake",
        "I wrote labels = tokens * chosen, so unchosen positions get 0 instead of -100.",
    ),
    BlindCase(
        CHECK,
        "random_overrides_mask",
        mt_random_overrides_mask,
        "mistake",
        "My random test was action < 0.9 only, so it overwrites the [MASK] ones too.",
    ),
    BlindCase(
        CHECK,
        "select_prob_ignored",
        mt_select_prob_ignored,
        "mistake",
        "I hard-coded 0.15 and ignored the select_prob argument.",
    ),
    BlindCase(
        CHECK,
        "random_from_full_vocab",
        mt_random_from_full_vocab,
        "mistake",
        "I drew the random token from the whole vocabulary, specials included.",
    ),
    BlindCase(
        CHECK,
        "tokens_in_place",
        mt_in_place,
        "mistake",
        "I wrote [MASK] and the random ids straight into tokens and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_unused",
        mt_generator_unused,
        "mistake",
        "I called torch.rand without the generator.",
    ),
    BlindCase(
        CHECK,
        "labels_on_every_real_token",
        mt_labels_every_real,
        "mistake",
        "I put the original token as label on every real token, not only chosen ones.",
    ),
    BlindCase(
        CHECK,
        "split_reversed",
        mt_probs_swapped,
        "mistake",
        "I used random_prob for the [MASK] band and mask_prob for the random band.",
    ),
    BlindCase(
        CHECK,
        "mask_only",
        mt_mask_only,
        "mistake",
        "I only replaced 80 % by [MASK]; I forgot the 10 % random tokens.",
    ),
    BlindCase(
        CHECK,
        "one_draw_for_all",
        mt_share_of_all_tokens,
        "mistake",
        "I used the same random number to choose a token and to pick mask/random/keep.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_clone",
        mt_bernoulli,
        "correct",
        "torch.bernoulli draws with the generator, edits on a clone.",
    ),
    BlindCase(
        CHECK,
        "multinomial",
        mt_multinomial,
        "correct",
        "torch.multinomial over (mask, random, keep) for the 80/10/10 split.",
    ),
    BlindCase(
        CHECK,
        "draws_only_where_chosen",
        mt_uniform_offset,
        "correct",
        "The 80/10/10 draw made only for the chosen positions, written back by indexing.",
    ),
]
