"""Blind cases for check_mask_tokens (chapter 17), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE = -100


def _ordinary(vocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


def _real(tokens: Tensor, vocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))


def second_draw_among_unmasked(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the rest, random_prob become a random token
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def labels_only_where_masked(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    labels = torch.where(to_mask, tokens, IGNORE)  # the loss only on [MASK] positions
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    return inputs, labels


def labels_from_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    labels = torch.where(chosen, inputs, IGNORE)  # built after the corruption
    return inputs, labels


def only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    return inputs, labels


def random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    return inputs, labels


def changes_tokens_in_place(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # no copy
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    return inputs, labels


def hard_coded_split(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < 0.8)
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    return inputs, labels


def pad_as_ignore_label(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, vocab.pad_id)  # chapter 14's loss skips PAD
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    return inputs, labels


def one_uniform_per_token(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """Correct: one uniform number per token decides both the choice and the action."""
    u = torch.rand(tokens.shape, generator=generator)
    chosen = _real(tokens, vocab) & (u < select_prob)
    labels = tokens.clone()
    labels[~chosen] = IGNORE
    a = u / select_prob  # uniform on [0, 1) given that the token is chosen
    to_mask = chosen & (a < mask_prob)
    to_random = chosen & (a >= mask_prob) & (a < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    n = int(to_random.sum())
    inputs[to_random] = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
    return inputs, labels


def bernoulli_draws(
    tokens,
    vocab,
    generator=None,
    select_prob=0.15,
    mask_prob=0.8,
    random_prob=0.1,
    ignore_index: int = IGNORE,
):
    """Correct: Bernoulli draws, the random share taken as a fraction of what is not masked."""
    full = torch.full(tokens.shape, 1.0)
    chosen = _real(tokens, vocab) & torch.bernoulli(full * select_prob, generator=generator).bool()
    to_mask = chosen & torch.bernoulli(full * mask_prob, generator=generator).bool()
    rest = random_prob / (1 - mask_prob) if mask_prob < 1 else 0.0
    to_random = chosen & ~to_mask & torch.bernoulli(full * rest, generator=generator).bool()
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, draw, inputs)
    labels = tokens.masked_fill(~chosen, ignore_index)
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "second_draw_among_unmasked",
        second_draw_among_unmasked,
        "mistake",
        "I drew [MASK] with 0.8, then gave each chosen token that was not masked a 0.1 "
        "chance of a random token, so only 2 % of the chosen become random",
    ),
    BlindCase(
        CHECK,
        "labels_only_where_masked",
        labels_only_where_masked,
        "mistake",
        "I put labels only where the token became [MASK], not on the random or kept ones",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        labels_from_corrupted,
        "mistake",
        "I built the labels from the corrupted inputs, after the replacement",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        only_padding_excluded,
        "mistake",
        "I excluded only padding from the choice, so [CLS] and [SEP] can be chosen",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        random_from_whole_vocab,
        "mistake",
        "the random replacement is drawn from the whole vocabulary, special tokens included",
    ),
    BlindCase(
        CHECK,
        "changes_tokens_in_place",
        changes_tokens_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into tokens itself (inputs = tokens)",
    ),
    BlindCase(
        CHECK,
        "hard_coded_split",
        hard_coded_split,
        "mistake",
        "I hard-coded 0.15, 0.8 and 0.1 and ignored the arguments",
    ),
    BlindCase(
        CHECK,
        "pad_as_ignore_label",
        pad_as_ignore_label,
        "mistake",
        "I put vocab.pad_id, not -100, where nothing was chosen, as chapter 14's loss ignores PAD",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        one_uniform_per_token,
        "correct",
        "one uniform number per token: below select_prob it is chosen, and u / select_prob "
        "picks the action; clone and in-place writes",
    ),
    BlindCase(
        CHECK,
        "bernoulli_draws",
        bernoulli_draws,
        "correct",
        "torch.bernoulli for each decision, random taken as random_prob / (1 - mask_prob) "
        "of the unmasked; an optional ignore_index argument",
    ),
]
