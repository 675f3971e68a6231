"""Blind set B27, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # the real tokens of each sentence
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens.clone()  # the model predicts the original sentence
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)
    return inputs, labels


def mask_ignore_zero(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens * chosen  # zero where nothing is asked
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_two_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_thresholds_not_cumulative(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < random_prob), draw, tokens)  # 10 %: random
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, inputs)  # 80 %: [MASK]
    return inputs, labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any token
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_random_skips_first_ids(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    # the special tokens come first in the vocabulary, so skip that many ids
    draw = torch.randint(
        len(vocab.special_ids), vocab.vocab_size, tokens.shape, generator=generator
    )
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_fixed_probabilities(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < 0.15)  # BERT's 15 %
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    rand = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(rand, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rand] = draw[rand]
    return inputs, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_fixed_count_per_row(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = torch.zeros_like(real)
    n = max(1, round(select_prob * tokens.shape[1]))  # like BERT's script: 15 % of the length
    for b in range(tokens.shape[0]):
        candidates = real[b].nonzero().flatten()
        order = torch.randperm(len(candidates), generator=generator)
        chosen[b, candidates[order[:n]]] = True
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return labels, torch.where(rand, draw, inputs)


def mask_probs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_random = chosen & (action < mask_prob)
    to_mask = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_chosen_above(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) > select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """torch.bernoulli for the choice, torch.multinomial for the three cases."""
    specials = torch.tensor(vocab.special_ids, device=tokens.device)
    real = ~torch.isin(tokens, specials)
    chosen = torch.bernoulli(torch.full(tokens.shape, float(select_prob)), generator=generator)
    chosen = chosen.bool().to(tokens.device) & real
    probs = torch.tensor([mask_prob, random_prob, 1.0 - mask_prob - random_prob]).clamp(min=0)
    case = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape).to(tokens.device)  # 0 = [MASK], 1 = random, 2 = unchanged
    allowed = torch.ones(vocab.vocab_size, dtype=torch.bool)
    allowed[list(vocab.special_ids)] = False
    pool = torch.arange(vocab.vocab_size)[allowed]
    random_ids = pool[torch.randint(0, len(pool), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (case == 0)] = vocab.mask_id
    swap = chosen & (case == 1)
    inputs[swap] = random_ids.to(tokens.device)[swap]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_token_loop(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A loop over the tokens; a random replacement redrawn until it is not special."""
    special = set(vocab.special_ids)
    inputs = tokens.tolist()
    labels = [[IGNORE_INDEX] * len(row) for row in inputs]
    for i, row in enumerate(inputs):
        for j, tok in enumerate(row):
            if tok in special:
                continue
            if torch.rand(1, generator=generator).item() >= select_prob:
                continue
            labels[i][j] = tok
            u = torch.rand(1, generator=generator).item()
            if u < mask_prob:
                row[j] = vocab.mask_id
            elif u < mask_prob + random_prob:
                new = int(torch.randint(vocab.vocab_size, (1,), generator=generator))
                while new in special:
                    new = int(torch.randint(vocab.vocab_size, (1,), generator=generator))
                row[j] = new
    as_tensor = lambda x: torch.tensor(x, dtype=tokens.dtype, device=tokens.device)  # noqa: E731
    return as_tensor(inputs), as_tensor(labels)


def mask_random_band_first(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number per token for all decisions: [0, p) chosen, and inside it the
    random band first, then the [MASK] band."""
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    is_special = torch.zeros_like(tokens, dtype=torch.bool)
    for s in vocab.special_ids:
        is_special |= tokens == s
    chosen = (u < select_prob) & ~is_special
    w = u / select_prob if select_prob > 0 else u  # uniform in [0, 1) again among the chosen
    to_random = chosen & (w < random_prob)
    to_mask = chosen & (w >= random_prob) & (w < random_prob + mask_prob)
    ordinary = [i for i in range(vocab.vocab_size) if i not in set(vocab.special_ids)]
    ordinary = torch.tensor(ordinary, dtype=tokens.dtype)
    picks = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs = torch.where(to_random, picks.to(tokens.device), inputs)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_rejection_vectorised(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Random ids drawn from the whole vocabulary and redrawn where they hit a special one."""
    specials = torch.tensor(vocab.special_ids)
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob
    chosen &= ~torch.isin(tokens, specials)
    kind = torch.rand(tokens.shape, generator=generator)
    ids = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    bad = torch.isin(ids, specials)
    while bad.any():
        ids[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=generator)
        bad = torch.isin(ids, specials)
    out = tokens.clone()
    out[chosen & (kind < mask_prob)] = vocab.mask_id
    rnd = chosen & (kind >= mask_prob) & (kind < mask_prob + random_prob)
    out[rnd] = ids[rnd]
    lab = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return out, lab


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I choose 15 % of all positions, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I left out only the padding (tokens != pad_id); [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens: the original token at every position.",
    ),
    BlindCase(
        CHECK,
        "labels_from_inputs",
        mask_labels_from_inputs,
        "mistake",
        "I built the labels after corrupting, from inputs, so a masked position's label is [MASK].",
    ),
    BlindCase(
        CHECK,
        "ignore_label_zero",
        mask_ignore_zero,
        "mistake",
        "Positions not chosen get label 0 (tokens * chosen) instead of -100.",
    ),
    BlindCase(
        CHECK,
        "two_independent_draws",
        mask_two_independent_draws,
        "mistake",
        "I drew [MASK] with one random number (< 0.8) and the random token with another "
        "(< 0.1), so the cases overlap.",
    ),
    BlindCase(
        CHECK,
        "thresholds_not_cumulative",
        mask_thresholds_not_cumulative,
        "mistake",
        "I compare one number with random_prob for the random token and with mask_prob for "
        "[MASK]; the mask, written second, covers the random ones.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "The random replacement is drawn from the whole vocabulary, special tokens included.",
    ),
    BlindCase(
        CHECK,
        "random_skips_first_ids",
        mask_random_skips_first_ids,
        "mistake",
        "I drew random ids from len(special_ids) to vocab_size, assuming the special tokens "
        "have the first ids.",
    ),
    BlindCase(
        CHECK,
        "fixed_probabilities",
        mask_fixed_probabilities,
        "mistake",
        "I wrote BERT's 0.15, 0.8 and 0.1 into the code and ignore the arguments.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens, then I assign [MASK] and random ids by indexing, which changes the "
        "caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "no_generator",
        mask_no_generator,
        "mistake",
        "I call torch.rand and torch.randint without passing the generator.",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_row",
        mask_fixed_count_per_row,
        "mistake",
        "Like BERT's script I choose round(0.15 * length) tokens per row, the length being the "
        "padded width.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_returns_labels_first,
        "mistake",
        "I return (labels, inputs).",
    ),
    BlindCase(
        CHECK,
        "probabilities_swapped",
        mask_probs_swapped,
        "mistake",
        "I used mask_prob for the random token and random_prob for [MASK].",
    ),
    BlindCase(
        CHECK,
        "chosen_above",
        mask_chosen_above,
        "mistake",
        "I choose a token when its random number is above select_prob.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice and torch.multinomial over the three cases, all from "
        "the generator.",
    ),
    BlindCase(
        CHECK,
        "token_loop",
        mask_token_loop,
        "correct",
        "A Python loop over the tokens; a random replacement is redrawn until it is not special.",
    ),
    BlindCase(
        CHECK,
        "one_number_per_token",
        mask_random_band_first,
        "correct",
        "One float64 uniform number per token decides the choice and, rescaled, the case; the "
        "random band comes first.",
    ),
    BlindCase(
        CHECK,
        "rejection_vectorised",
        mask_rejection_vectorised,
        "correct",
        "Random ids from the whole vocabulary, redrawn in place where they are special.",
    ),
]
