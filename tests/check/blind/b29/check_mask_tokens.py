"""Blind set B29, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import random

import torch
from torch import Tensor

from transformer_tutorial.bert import BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"

IGNORE_INDEX = -100


def _ordinary(vocab: BertVocab, device: torch.device) -> Tensor:
    """The ids a random replacement may be: every id that is not special."""
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten().to(device)


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_only_padding_excluded(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_corrupted(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # what the model has to predict there
    return inputs, labels


def mask_labels_everywhere(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), tokens.clone()  # the original sentence


def mask_ignore_is_pad(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, vocab.pad_id)  # padding is what the loss skips
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_thresholds_overlap(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action < random_prob)  # 10 % of the chosen
    return torch.where(to_random, draw, inputs), labels


def mask_whole_vocab_random(
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
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any token
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_random_above_four(
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
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)  # after <eos>
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_in_place(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # then overwrite the chosen positions
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mask_draw_without_generator(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]  # generator forgotten here
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_hardcoded_rates(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < 0.15)  # BERT's 15 %
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_only_changed(
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
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    labels = torch.where(to_mask | to_random, tokens, IGNORE_INDEX)  # where the input changed
    return inputs, labels


def mask_one_draw_reused(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    u = torch.rand(tokens.shape, generator=generator)  # one number per token for both stages
    chosen = real & (u < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_fixed_count(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """BERT's script: max(1, round(0.15 * length)) tokens per sentence, [CLS] and [SEP]
    counted in the length."""
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = torch.zeros_like(real)
    for b in range(tokens.shape[0]):
        positions = real[b].nonzero().flatten()
        if len(positions) == 0:
            continue
        length = int((tokens[b] != vocab.pad_id).sum())
        n = min(len(positions), max(1, round(select_prob * length)))
        pick = torch.randperm(len(positions), generator=generator)[:n]
        chosen[b, positions[pick]] = True
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_single_uniform(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number per token decides both stages: below select_prob * mask_prob is
    [MASK], then random, then unchanged, up to select_prob."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    u = torch.rand(tokens.shape, generator=generator)
    chosen = real & (u < select_prob)
    to_mask = chosen & (u < select_prob * mask_prob)
    to_random = chosen & ~to_mask & (u < select_prob * (mask_prob + random_prob))
    ordinary = _ordinary(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_bernoulli_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """torch.bernoulli for the choice, torch.multinomial over the three cases; the random
    token drawn by rejecting special ids."""
    is_special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    is_special[list(vocab.special_ids)] = True
    real = ~is_special[tokens]
    chosen = (
        real
        & torch.bernoulli(torch.full(tokens.shape, float(select_prob)), generator=generator).bool()
    )
    keep_prob = max(0.0, 1.0 - mask_prob - random_prob)
    weights = torch.tensor([mask_prob, random_prob, keep_prob], dtype=torch.float)
    case = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    while is_special[draw].any():  # draw again where a special id came up
        bad = is_special[draw]
        draw[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (case == 0)] = vocab.mask_id
    pick = chosen & (case == 1)
    inputs[pick] = draw[pick]
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_python_loop(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A loop over the tokens with Python's random.Random, seeded from the generator."""
    seed = int(torch.randint(2**62, (1,), generator=generator))
    rng = random.Random(seed)
    special = set(vocab.special_ids)
    ordinary = [i for i in range(vocab.vocab_size) if i not in special]
    inputs, labels = tokens.tolist(), []
    for row in inputs:
        row_labels = []
        for j, tok in enumerate(row):
            if tok in special or rng.random() >= select_prob:
                row_labels.append(IGNORE_INDEX)
                continue
            row_labels.append(tok)
            r = rng.random()
            if r < mask_prob:
                row[j] = vocab.mask_id
            elif r < mask_prob + random_prob:
                row[j] = rng.choice(ordinary)
        labels.append(row_labels)
    as_tensor = dict(dtype=tokens.dtype, device=tokens.device)
    return torch.tensor(inputs, **as_tensor), torch.tensor(labels, **as_tensor)


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose 15 % of all positions, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I excluded only the padding (tokens != pad_id); [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "label_is_corrupted_token",
        mask_labels_corrupted,
        "mistake",
        "I built the labels from the corrupted inputs instead of the original tokens.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "I returned the original tokens as labels at every position.",
    ),
    BlindCase(
        CHECK,
        "pad_id_as_ignore",
        mask_ignore_is_pad,
        "mistake",
        "Where nothing was chosen I put pad_id in the labels instead of -100.",
    ),
    BlindCase(
        CHECK,
        "thresholds_overlap",
        mask_thresholds_overlap,
        "mistake",
        "I tested action < mask_prob for [MASK] and action < random_prob for a random token, so "
        "the two cases overlap: 70 / 10 / 20.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_whole_vocab_random,
        "mistake",
        "The random replacement is any id of the vocabulary, special ids included.",
    ),
    BlindCase(
        CHECK,
        "random_above_four",
        mask_random_above_four,
        "mistake",
        "I drew the random token from 4 .. V - 1, skipping the four special tokens of chapter 1 "
        "but not [CLS], [SEP] and [MASK].",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote inputs = tokens and then assigned into inputs, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "random_draw_without_generator",
        mask_draw_without_generator,
        "mistake",
        "I forgot generator= in the torch.randint that draws the random tokens.",
    ),
    BlindCase(
        CHECK,
        "rates_hardcoded",
        mask_hardcoded_rates,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 into the code and never used the arguments.",
    ),
    BlindCase(
        CHECK,
        "labels_only_where_changed",
        mask_labels_only_changed,
        "mistake",
        "I put labels only where the input was changed ([MASK] or random), not at the chosen "
        "tokens left unchanged.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_for_both_stages",
        mask_one_draw_reused,
        "mistake",
        "I used the same random number for choosing and for the 80 / 10 / 10 split, so every "
        "chosen token (u < 0.15) becomes [MASK].",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_sentence",
        mask_fixed_count,
        "mistake",
        "I chose max(1, round(0.15 * length)) tokens per sentence as BERT's script does, the "
        "length counting [CLS] and [SEP].",
    ),
    BlindCase(
        CHECK,
        "single_uniform_scaled",
        mask_single_uniform,
        "correct",
        "One uniform number per token for both stages, with the thresholds scaled by "
        "select_prob; index assignment into a clone.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial over the three cases, and the random "
        "token drawn again where it was special.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_python_loop,
        "correct",
        "A Python loop over every token with random.Random seeded from the generator.",
    ),
]
