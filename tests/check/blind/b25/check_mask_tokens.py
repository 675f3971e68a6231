"""Blind set B25, check_mask_tokens (chapter 17): BERT's 15 % / 80-10-10 masking rule as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"

IGNORE_INDEX = -100


def _ordinary(vocab) -> Tensor:
    """The ids a random replacement may take: every id that is not special."""
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


def _real(tokens: Tensor, vocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))


# ---------------------------------------------------------------- mistakes


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = (tokens != vocab.pad_id) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the model predicts the original sentence
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_pad_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, vocab.pad_id)  # padding is what the loss skips
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)
    return inputs, labels


def mask_labels_only_changed(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    labels = torch.where(to_mask | to_random, tokens, IGNORE_INDEX)  # what was corrupted
    return inputs, labels


def mask_two_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_overwritten(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < random_prob), draw, tokens)  # 10 %: a random token
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, inputs)  # 80 %: [MASK]
    return inputs, labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_random_after_first_four(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)  # past <eos>
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_random_from_batch(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    flat = tokens.flatten()
    draw = flat[torch.randint(len(flat), tokens.shape, generator=generator)]  # a word of the batch
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id
    tokens[to_random] = draw[to_random]
    return tokens, labels


def mask_last_draw_global(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_paper_constants(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    return torch.where(chosen & (action >= 0.9), draw, inputs), labels


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return labels, torch.where(to_random, draw, inputs)


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_random_first(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = _real(tokens, vocab)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    u = torch.rand(tokens.shape, generator=generator)
    to_random = chosen & (u < random_prob)  # the random band first, then the [MASK] band
    to_mask = chosen & (u >= random_prob) & (u < random_prob + mask_prob)
    ordinary = _ordinary(vocab)
    pick = torch.randint(0, ordinary.numel(), tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = ordinary[pick[to_random]]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_only_chosen_draws(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Draws only as many actions and replacements as there are chosen tokens."""
    real = _real(tokens, vocab)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    where = chosen.nonzero(as_tuple=True)
    n = int(chosen.sum())
    action = torch.rand(n, generator=generator)
    ordinary = _ordinary(vocab)
    replacement = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
    originals = tokens[where]
    new = torch.where(action < mask_prob, torch.full_like(originals, vocab.mask_id), originals)
    new = torch.where((action >= mask_prob) & (action < mask_prob + random_prob), replacement, new)
    inputs = tokens.clone()
    inputs[where] = new
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[where] = originals
    return inputs, labels


def mask_multinomial(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One draw of four outcomes per token: not chosen, [MASK], random, kept."""
    probs = torch.tensor(
        [
            1 - select_prob,
            select_prob * mask_prob,
            select_prob * random_prob,
            select_prob * (1 - mask_prob - random_prob),
        ]
    ).clamp(min=0)
    outcome = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    outcome = outcome.view(tokens.shape)
    outcome = torch.where(_real(tokens, vocab), outcome, torch.zeros_like(outcome))
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    random_ids = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    random_ids = random_ids.view(tokens.shape)
    inputs = torch.where(outcome == 1, torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(outcome == 2, random_ids, inputs)
    labels = torch.where(outcome > 0, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I only kept padding out of the choice, so [CLS] and [SEP] can be masked too.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels = tokens.clone(): the original token at every position, chosen or not.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_where_not_chosen",
        mask_labels_pad_id,
        "mistake",
        "Where nothing was chosen I put vocab.pad_id in the labels instead of -100.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted_inputs",
        mask_labels_from_inputs,
        "mistake",
        "I built the labels after corrupting, from inputs instead of tokens.",
    ),
    BlindCase(
        CHECK,
        "labels_only_where_changed",
        mask_labels_only_changed,
        "mistake",
        "I gave labels only to the tokens that were masked or replaced; the 10 % left as they "
        "are get -100.",
    ),
    BlindCase(
        CHECK,
        "two_independent_draws",
        mask_two_independent_draws,
        "mistake",
        "I drew one random number for [MASK] (< 0.8) and another for a random token (< 0.1), "
        "so the two cases overlap and the split is not 80/10/10.",
    ),
    BlindCase(
        CHECK,
        "random_band_overwritten_by_mask",
        mask_random_overwritten,
        "mistake",
        "Random token where action < random_prob, then [MASK] where action < mask_prob, which "
        "covers the random band, so no token is ever replaced at random.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocabulary",
        mask_random_any_id,
        "mistake",
        "I drew the random token with randint(vocab.vocab_size), special ids included.",
    ),
    BlindCase(
        CHECK,
        "random_skips_first_four_ids",
        mask_random_after_first_four,
        "mistake",
        "I drew the random token from randint(4, vocab_size), thinking the special ids are "
        "0-3, but [CLS], [SEP] and [MASK] come last.",
    ),
    BlindCase(
        CHECK,
        "random_token_from_batch",
        mask_random_from_batch,
        "mistake",
        "The random replacement is a token picked from the batch itself, which may be [CLS], "
        "[SEP] or padding.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into tokens and returned it as the inputs.",
    ),
    BlindCase(
        CHECK,
        "last_draw_without_generator",
        mask_last_draw_global,
        "mistake",
        "I passed generator to the two torch.rand calls but forgot it in torch.randint.",
    ),
    BlindCase(
        CHECK,
        "paper_numbers_hard_coded",
        mask_paper_constants,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 into the code instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_returns_labels_first,
        "mistake",
        "I returned (labels, inputs).",
    ),
    BlindCase(
        CHECK,
        "bernoulli_random_band_first",
        mask_bernoulli_random_first,
        "correct",
        "torch.bernoulli for the choice; the random band [0, random_prob) before the [MASK] "
        "band; boolean indexing on a clone.",
    ),
    BlindCase(
        CHECK,
        "draws_only_for_chosen",
        mask_only_chosen_draws,
        "correct",
        "Actions and replacements drawn only for the chosen positions, written back by index.",
    ),
    BlindCase(
        CHECK,
        "multinomial_outcomes",
        mask_multinomial,
        "correct",
        "One torch.multinomial draw of four outcomes per token, and a multinomial over the "
        "ordinary ids for the random token.",
    ),
]
