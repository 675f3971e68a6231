"""Blind set B23, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE_INDEX = -100


def _ordinary_ids(vocab) -> Tensor:
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


def _real(tokens: Tensor, vocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))


def _random_ordinary(tokens: Tensor, vocab, generator) -> Tensor:
    ordinary = _ordinary_ids(vocab)
    draw = torch.randint(len(ordinary), tokens.shape, generator=generator)
    return ordinary[draw].to(tokens.device)


def _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob):
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_mask, torch.full_like(tokens, vocab.mask_id), tokens)
    return torch.where(to_random, _random_ordinary(tokens, vocab, generator), inputs)


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # any token, [CLS] too
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob), labels


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # I excluded padding but not [CLS] and [SEP]
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the original token as the label at every position
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob), labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # the corrupted token, not the original
    return inputs, labels


def mask_second_draw_unconditional(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the rest, random with probability random_prob: 0.2 * 0.1 = 2 % instead of 10 %
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    inputs = torch.where(to_mask, torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(to_random, _random_ordinary(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_no_unchanged_share(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & ~to_mask  # every chosen token that is not [MASK] becomes random
    inputs = torch.where(to_mask, torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(to_random, _random_ordinary(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_hardcoded_rates(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, 0.8, 0.1), labels  # the paper's


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_mask, torch.full_like(tokens, vocab.mask_id), tokens)
    anything = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # specials too
    return torch.where(to_random, anything, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = tokens  # not a copy
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = _random_ordinary(tokens, vocab, generator)[to_random]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    # I accepted generator but drew everything from the global random state
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    return _corrupt(tokens, vocab, chosen, action, None, mask_prob, random_prob), labels


def mask_select_inverted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) > select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob), labels


def mask_fixed_count_per_row(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    chosen = torch.zeros_like(real)
    for b in range(tokens.shape[0]):
        length = int((tokens[b] != vocab.pad_id).sum())  # [CLS] and [SEP] counted, as BERT's script
        positions = real[b].nonzero().flatten()
        n = min(len(positions), max(1, round(select_prob * length)))
        pick = torch.randperm(len(positions), generator=generator)[:n]
        chosen[b, positions[pick]] = True
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob), labels


def mask_per_sentence_draw(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    draw = torch.rand(tokens.shape[0], 1, generator=generator)  # one draw per row, not per token
    chosen = _real(tokens, vocab) & (draw < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    return _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob), labels


def mask_outputs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = _corrupt(tokens, vocab, chosen, action, generator, mask_prob, random_prob)
    return labels, inputs  # (labels, inputs): the wrong order


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_top_band(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Bernoulli for the choice; random where the action draw is in the top random_prob."""
    special = torch.tensor(list(vocab.special_ids))
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= ~torch.isin(tokens, special)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    to_random = chosen & (u >= 1.0 - random_prob)
    ordinary = [i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)]
    pick = torch.randint(len(ordinary), (int(to_random.sum()),), generator=generator)
    inputs[to_random] = torch.tensor(ordinary, dtype=tokens.dtype)[pick]
    return inputs, labels


def mask_conditional_draws(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """[MASK] first; of the rest, random with probability random_prob / (1 - mask_prob);
    random tokens drawn from the whole vocabulary and redrawn while they are special."""
    real = _real(tokens, vocab)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < p_random)
    replacement = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    special = torch.tensor(vocab.special_ids)
    bad = torch.isin(replacement, special)
    while bad.any():
        replacement[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=generator)
        bad = torch.isin(replacement, special)
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, replacement, inputs)
    return inputs, labels


def mask_multinomial_cases(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One multinomial draw per token over (not chosen, [MASK], random, unchanged)."""
    p = torch.tensor(
        [
            1 - select_prob,
            select_prob * mask_prob,
            select_prob * random_prob,
            select_prob * (1 - mask_prob - random_prob),
        ]
    ).clamp(min=0)
    case = torch.multinomial(p, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape)
    case = torch.where(_real(tokens, vocab), case, torch.zeros_like(case))
    labels = torch.where(case > 0, tokens, IGNORE_INDEX)
    inputs = torch.where(case == 1, vocab.mask_id, tokens)
    inputs = torch.where(case == 2, _random_ordinary(tokens, vocab, generator), inputs)
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_can_be_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose 15 % of all positions: [CLS], [SEP] and padding are not excluded",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "real = tokens != pad_id: I forgot that [CLS] and [SEP] are special too",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels = tokens.clone(): the original token is the label at every position",
    ),
    BlindCase(
        CHECK,
        "label_is_corrupted_token",
        mask_labels_from_inputs,
        "mistake",
        "I built the labels from the corrupted inputs instead of the original tokens",
    ),
    BlindCase(
        CHECK,
        "random_share_two_percent",
        mask_second_draw_unconditional,
        "mistake",
        "a second draw with random_prob among the non-[MASK] ones: 2 % random, 18 % unchanged",
    ),
    BlindCase(
        CHECK,
        "no_unchanged_tokens",
        mask_no_unchanged_share,
        "mistake",
        "every chosen token not made [MASK] became a random token: 80 / 20 / 0",
    ),
    BlindCase(
        CHECK,
        "rates_hardcoded",
        mask_hardcoded_rates,
        "mistake",
        "I wrote 0.15, 0.8 and 0.1 into the code and ignored the arguments",
    ),
    BlindCase(
        CHECK,
        "random_may_be_special",
        mask_random_from_whole_vocab,
        "mistake",
        "random tokens drawn from randint(vocab_size): special ids can come out",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens, then inputs[...] = ...: the caller's tensor is changed",
    ),
    BlindCase(
        CHECK,
        "generator_ignored",
        mask_global_rng,
        "mistake",
        "torch.rand without generator=: the draws come from the global random state",
    ),
    BlindCase(
        CHECK,
        "select_comparison_flipped",
        mask_select_inverted,
        "mistake",
        "rand > select_prob: 85 % of the real tokens chosen instead of 15 %",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_sentence",
        mask_fixed_count_per_row,
        "mistake",
        "BERT's script: max(1, round(0.15 * length)) tokens per row, length with [CLS] [SEP]",
    ),
    BlindCase(
        CHECK,
        "one_draw_per_sentence",
        mask_per_sentence_draw,
        "mistake",
        "rand(B, 1): a whole sentence is chosen or not, instead of each token independently",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_outputs_swapped,
        "mistake",
        "I returned (labels, inputs) instead of (inputs, labels)",
    ),
    BlindCase(
        CHECK,
        "bernoulli_and_top_band",
        mask_bernoulli_top_band,
        "correct",
        "torch.bernoulli for the choice; random where the action draw is >= 1 - random_prob",
    ),
    BlindCase(
        CHECK,
        "conditional_second_draw",
        mask_conditional_draws,
        "correct",
        "[MASK] first, then random with random_prob / (1 - mask_prob); specials redrawn",
    ),
    BlindCase(
        CHECK,
        "multinomial_four_cases",
        mask_multinomial_cases,
        "correct",
        "one torch.multinomial draw per token over (not chosen, [MASK], random, unchanged)",
    ),
]
