"""Blind set B16, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE_INDEX = -100


def _ordinary(vocab: BertVocab) -> Tensor:
    """The ids a random replacement may take."""
    allowed = torch.ones(vocab.vocab_size, dtype=torch.bool)
    allowed[list(vocab.special_ids)] = False
    return allowed.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mt_specials_chosen(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_only_padding_excluded(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = tokens != vocab.pad_id  # padding is the only thing that is not a token
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_labels_everywhere(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), tokens.clone()  # the model predicts every token


def mt_labels_corrupted(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # labels made after the corruption
    return inputs, labels


def mt_labels_zero(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.zeros_like(tokens)  # 0 is padding: "nothing to predict"
    labels[chosen] = tokens[chosen]
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_independent_draws(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # a second coin for the random replacement, among the chosen tokens not masked
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mt_thresholds_overlap(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    random_here = chosen & (action < mask_prob + random_prob)  # forgot ">= mask_prob"
    inputs[random_here] = draw[random_here]
    return inputs, labels


def mt_random_any_id(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_random_above_four(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    # ids 0-3 are <pad> <unk> <bos> <eos>; the subwords come after them
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_in_place(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # the caller's tensor, written into
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mt_global_rng(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape) < select_prob)  # the generator is never used
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_paper_numbers(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < 0.15)  # the paper's 15 %
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    return torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs), labels


def mt_greater_than(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) > select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mt_always_mask(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    return tokens.masked_fill(chosen, vocab.mask_id), labels  # every chosen token hidden


# ---------------------------------------------------------------- correct variants


def mt_nested_bernoulli(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Nested coins as in Hugging Face's collator: [MASK] with mask_prob, then random with
    random_prob / (1 - mask_prob) among the rest."""
    special = torch.zeros_like(tokens, dtype=torch.bool)
    for i in vocab.special_ids:
        special |= tokens == i
    p = torch.full(tokens.shape, select_prob)
    chosen = torch.bernoulli(p, generator=generator).bool() & ~special
    labels = tokens.clone()
    labels[~chosen] = IGNORE_INDEX
    inputs = tokens.clone()
    to_mask = torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    to_mask &= chosen
    inputs[to_mask] = vocab.mask_id
    rest = 1.0 - mask_prob
    second = min(1.0, random_prob / rest) if rest > 0 else 0.0
    to_random = torch.bernoulli(torch.full(tokens.shape, second), generator=generator).bool()
    to_random &= chosen & ~to_mask
    ordinary = _ordinary(vocab)
    pick = torch.randint(len(ordinary), (int(to_random.sum()),), generator=generator)
    inputs[to_random] = ordinary[pick]
    return inputs, labels


def mt_random_at_top(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Every coin drawn first, the specials removed afterwards; random at the top of [0, 1)."""
    u_select = torch.rand(tokens.shape, generator=generator)
    u_action = torch.rand(tokens.shape, generator=generator)
    is_special = torch.isin(tokens, torch.tensor(list(vocab.special_ids), dtype=tokens.dtype))
    chosen = (u_select < select_prob) & ~is_special
    to_mask = chosen & (u_action < mask_prob)
    to_random = chosen & (u_action >= 1.0 - random_prob) & ~to_mask
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, draw, inputs)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mt_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One categorical draw per token among (not chosen, [MASK], random, kept); the random
    token from torch.multinomial over the allowed ids."""
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
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    case = case.masked_fill(~real, 0)
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    inputs = tokens.clone()
    inputs[case == 1] = vocab.mask_id
    inputs[case == 2] = draw.view(tokens.shape)[case == 2]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[case > 0] = tokens[case > 0]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_can_be_chosen",
        mt_specials_chosen,
        "mistake",
        "I chose 15 % of all positions, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mt_only_padding_excluded,
        "mistake",
        "I only kept padding out of the choice, so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mt_labels_everywhere,
        "mistake",
        "My labels are the original tokens at every position, not -100 where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_after_corruption",
        mt_labels_corrupted,
        "mistake",
        "I built the labels from the corrupted inputs, so a masked position's label is [MASK].",
    ),
    BlindCase(
        CHECK,
        "labels_zero_not_ignored",
        mt_labels_zero,
        "mistake",
        "Positions not chosen get label 0 (padding) instead of IGNORE_INDEX -100.",
    ),
    BlindCase(
        CHECK,
        "second_coin_for_random",
        mt_independent_draws,
        "mistake",
        "I drew a new coin with random_prob for the random replacement among the chosen tokens "
        "not masked, so only 2 % of the chosen become random instead of 10 %.",
    ),
    BlindCase(
        CHECK,
        "random_threshold_overlaps",
        mt_thresholds_overlap,
        "mistake",
        "I wrote the random case as action < mask_prob + random_prob without action >= "
        "mask_prob, and applied it after the masking, so it overwrites most [MASK]s.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocabulary",
        mt_random_any_id,
        "mistake",
        "The random replacement is drawn from all vocab_size ids, special tokens included.",
    ),
    BlindCase(
        CHECK,
        "random_from_id_four_up",
        mt_random_above_four,
        "mistake",
        "I drew the random token from ids 4 .. V-1, skipping the book's four special tokens but "
        "not [CLS], [SEP] and [MASK].",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mt_in_place,
        "mistake",
        "inputs = tokens, then I wrote [MASK] and the random tokens into it, changing the "
        "caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mt_global_rng,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hard_coded",
        mt_paper_numbers,
        "mistake",
        "I wrote the paper's 0.15, 0.8 and 0.1 into the code and ignored the arguments.",
    ),
    BlindCase(
        CHECK,
        "select_with_greater_than",
        mt_greater_than,
        "mistake",
        "I chose a token when rand > select_prob, which chooses 85 % of them.",
    ),
    BlindCase(
        CHECK,
        "always_mask",
        mt_always_mask,
        "mistake",
        "Every chosen token becomes [MASK]; no random or unchanged ones.",
    ),
    BlindCase(
        CHECK,
        "nested_bernoulli",
        mt_nested_bernoulli,
        "correct",
        "torch.bernoulli coins as in Hugging Face: [MASK] with mask_prob, then random with "
        "random_prob / (1 - mask_prob) among the chosen tokens not masked; specials found with "
        "a loop.",
    ),
    BlindCase(
        CHECK,
        "random_at_top_of_interval",
        mt_random_at_top,
        "correct",
        "The specials removed after the coins; the random case is action >= 1 - random_prob "
        "instead of the interval just above mask_prob.",
    ),
    BlindCase(
        CHECK,
        "one_categorical_draw",
        mt_multinomial,
        "correct",
        "One torch.multinomial draw per token among not chosen / [MASK] / random / kept, and "
        "the random token from torch.multinomial over the ordinary ids.",
    ),
]
