"""Blind set B15, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE_INDEX = -100


def _ordinary(vocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


def _real(tokens: Tensor, vocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids))


# ---------------------------------------------------------------- mistakes


def mask_chooses_specials(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs[rnd] = draw[rnd]
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the original sentence as the label
    action = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs[rnd] = draw[rnd]
    return inputs, labels


def mask_label_is_input(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs[rnd] = draw[rnd]
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # labels made after the corruption
    return inputs, labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # a second, independent coin for the random token: 10 % of all chosen, masked ones too
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    to_random &= ~to_mask
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    return torch.where(to_random, draw, inputs), labels


def mask_hardcoded(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    rnd = chosen & (action >= 0.8) & (action < 0.9)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    return torch.where(rnd, draw, inputs), labels


def mask_random_any_token(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    return torch.where(rnd, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id  # no copy
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    tokens[rnd] = draw[rnd]
    return tokens, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    return torch.where(rnd, draw, inputs), labels


def mask_split_of_all(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    u = torch.rand(tokens.shape, generator=generator)
    # one draw for everything: mask below 0.8 * 0.15 ... but compared with the raw probabilities
    to_mask = real & (u < mask_prob * select_prob)
    to_random = real & (u >= mask_prob * select_prob) & (u < mask_prob * select_prob + random_prob)
    to_keep = real & (u >= mask_prob * select_prob + random_prob) & (u < select_prob + random_prob)
    chosen = to_mask | to_random | to_keep
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_pad_only_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    return torch.where(rnd, draw, inputs), labels


def mask_keep_and_random_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (action >= mask_prob)  # all the rest random, none kept
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    return torch.where(rnd, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    """torch.bernoulli for the selection, a conditional probability for random vs keep."""
    specials = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, specials)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
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
    ordinary = _ordinary(vocab)
    pick = torch.randint(0, len(ordinary), tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    inputs[randomized] = ordinary[pick][randomized]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_rejection_sampling(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """Random replacements drawn from the whole vocabulary and redrawn while special."""
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    u = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    rnd = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    bad = torch.isin(draw, special)
    while bad.any():
        draw[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=generator)
        bad = torch.isin(draw, special)
    inputs[rnd] = draw[rnd]
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One categorical draw per token over (mask, random, keep), then the selection."""
    real = _real(tokens, vocab)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    probs = torch.tensor([mask_prob, random_prob, 1.0 - mask_prob - random_prob]).clamp(min=0)
    kind = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    kind = kind.view(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (kind == 0), torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(chosen & (kind == 1), draw, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_chooses_specials,
        "mistake",
        "I chose positions among all tokens, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "I used the whole original sentence as labels, not -100 where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "corrupted_as_label",
        mask_label_is_input,
        "mistake",
        "I built the labels from inputs after corrupting them, so they hold [MASK] and random ids.",
    ),
    BlindCase(
        CHECK,
        "independent_coins",
        mask_independent_draws,
        "mistake",
        "I drew the random-token coin independently of the mask coin, so the random share is "
        "0.1 * 0.2 = 2 % of the chosen tokens instead of 10 %.",
    ),
    BlindCase(
        CHECK,
        "arguments_ignored",
        mask_hardcoded,
        "mistake",
        "I hard-coded 0.15, 0.8 and 0.1 instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_may_be_special",
        mask_random_any_token,
        "mistake",
        "The random replacement is drawn from the whole vocabulary, special ids included.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote [MASK] and the random ids straight into tokens and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_no_generator,
        "mistake",
        "I forgot to pass generator to torch.rand and torch.randint.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_wrong_bands",
        mask_split_of_all,
        "mistake",
        "I used one uniform number for everything but gave the random band width random_prob "
        "instead of random_prob * select_prob, so far too many tokens are chosen.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_pad_only_excluded,
        "mistake",
        "I excluded only padding, so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "no_kept_share",
        mask_keep_and_random_swapped,
        "mistake",
        "Every chosen token that is not masked gets a random token: 80 / 20 / 0.",
    ),
    BlindCase(
        CHECK,
        "bernoulli",
        mask_bernoulli,
        "correct",
        "torch.bernoulli with the generator, and random vs keep as a conditional probability "
        "random_prob / (1 - mask_prob).",
    ),
    BlindCase(
        CHECK,
        "rejection_sampling",
        mask_rejection_sampling,
        "correct",
        "The random replacement drawn from the whole vocabulary and redrawn while special.",
    ),
    BlindCase(
        CHECK,
        "multinomial_kind",
        mask_multinomial,
        "correct",
        "One torch.multinomial draw per token among mask, random and keep.",
    ),
]
