"""Blind set B11, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = (tokens != vocab.pad_id) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the model should reproduce the sentence
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    return inputs, labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # what is at the chosen places
    return inputs, labels


def mask_fixed_probabilities(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < 0.15)  # the paper's
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < 0.8), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= 0.8) & (u < 0.9), rnd, inputs)
    return inputs, labels


def mask_random_branch_never(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (u < mask_prob)
    to_random = chosen & ~to_mask & (u < random_prob)  # the next 10 %
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, rnd, inputs)
    return inputs, labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    rnd = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    return inputs, labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # the batch is thrown away after this anyway
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    inputs[to_random] = rnd[to_random]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    return inputs, labels


def mask_random_outside_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    # 10 % random tokens (I forgot "chosen &" here)
    inputs = torch.where(~special & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    return inputs, labels


def mask_ignore_minus_one(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = ~special & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, -1)  # -1 = no label
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (u >= mask_prob) & (u < mask_prob + random_prob), rnd, inputs)
    return inputs, labels


def mask_select_times_mask(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.isin(tokens, torch.tensor(vocab.special_ids))
    u = torch.rand(tokens.shape, generator=generator)
    # one draw: below 0.15 * 0.8 -> [MASK], below 0.15 * 0.9 -> random, below 0.15 keep;
    # but I multiplied with the wrong probabilities
    to_mask = ~special & (u < mask_prob * select_prob)
    to_random = ~special & (u >= mask_prob * select_prob) & (u < random_prob * select_prob)
    chosen = ~special & (u < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    ordinary = _ordinary(vocab)
    rnd = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, rnd, inputs)
    return inputs, labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_conditional(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """Bernoulli draws, one after the other: choose; then [MASK]; then, among the rest,
    random with probability random_prob / (1 - mask_prob)."""
    real = torch.ones_like(tokens, dtype=torch.bool)
    for sid in vocab.special_ids:
        real &= tokens != sid
    p = torch.full(tokens.shape, float(select_prob))
    chosen = torch.bernoulli(p, generator=generator).bool() & real
    masked = (
        chosen
        & torch.bernoulli(torch.full(tokens.shape, float(mask_prob)), generator=generator).bool()
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
    inputs[randomized] = ordinary[pick[randomized]]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_python_loop(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """A loop over every position with Python numbers from the generator; a set of special
    ids; random tokens drawn by rejection until not special."""
    specials = set(vocab.special_ids)
    inputs = tokens.clone()
    labels = torch.full_like(tokens, IGNORE_INDEX)
    B, T = tokens.shape
    for b in range(B):
        for t in range(T):
            tok = int(tokens[b, t])
            if tok in specials:
                continue
            if torch.rand(1, generator=generator).item() >= select_prob:
                continue
            labels[b, t] = tok
            r = torch.rand(1, generator=generator).item()
            if r < mask_prob:
                inputs[b, t] = vocab.mask_id
            elif r < mask_prob + random_prob:
                new = int(torch.randint(vocab.vocab_size, (1,), generator=generator))
                while new in specials:
                    new = int(torch.randint(vocab.vocab_size, (1,), generator=generator))
                inputs[b, t] = new
    return inputs, labels


def mask_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """The three outcomes of a chosen token drawn at once with torch.multinomial; random
    tokens by multinomial over a weight vector that is zero at the special ids."""
    flat = tokens.reshape(-1)
    lookup = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    lookup[list(vocab.special_ids)] = True
    real = ~lookup[flat]
    chosen = real & (torch.rand(flat.shape, generator=generator) < select_prob)
    probs = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    outcome = torch.multinomial(probs, flat.numel(), replacement=True, generator=generator)
    weights = (~lookup).float()
    rnd = torch.multinomial(weights, flat.numel(), replacement=True, generator=generator)
    inputs = flat.clone()
    inputs = torch.where(chosen & (outcome == 0), torch.full_like(flat, vocab.mask_id), inputs)
    inputs = torch.where(chosen & (outcome == 1), rnd, inputs)
    labels = torch.where(chosen, flat, torch.full_like(flat, IGNORE_INDEX))
    return inputs.view_as(tokens), labels.view_as(tokens)


CASES = [
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I excluded only padding from the choice, so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens: every position has a label, not only the chosen ones.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        mask_labels_from_inputs,
        "mistake",
        "I took the labels from the corrupted inputs, so a masked position's label is [MASK].",
    ),
    BlindCase(
        CHECK,
        "arguments_ignored",
        mask_fixed_probabilities,
        "mistake",
        "I wrote the paper's 0.15, 0.8 and 0.9 as constants and ignored the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_branch_never",
        mask_random_branch_never,
        "mistake",
        "My random branch tests u < random_prob after u >= mask_prob, which never holds: "
        "90 % of the chosen tokens stay as they are.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "The random replacement is drawn from the whole vocabulary, special ids included.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens, then I wrote [MASK] into it by indexing: the caller's tensor changes.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_global_rng,
        "mistake",
        "I call torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "random_outside_chosen",
        mask_random_outside_chosen,
        "mistake",
        "I forgot 'chosen &' on the random replacement, so tokens that were not chosen get "
        "replaced too.",
    ),
    BlindCase(
        CHECK,
        "ignore_minus_one",
        mask_ignore_minus_one,
        "mistake",
        "I marked the unchosen labels with -1 instead of IGNORE_INDEX (-100).",
    ),
    BlindCase(
        CHECK,
        "one_draw_wrong_cut",
        mask_select_times_mask,
        "mistake",
        "One uniform draw for everything; I cut the random part at random_prob * select_prob "
        "instead of (mask_prob + random_prob) * select_prob, so no token is made random.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_conditional",
        mask_bernoulli_conditional,
        "correct",
        "torch.bernoulli draws one after the other; random among the unmasked with "
        "random_prob / (1 - mask_prob); boolean-index assignment on a clone.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_python_loop,
        "correct",
        "A loop over the positions with scalar draws from the generator; rejection sampling for "
        "a random non-special token.",
    ),
    BlindCase(
        CHECK,
        "multinomial_outcomes",
        mask_multinomial,
        "correct",
        "The three outcomes drawn with torch.multinomial, random tokens by multinomial over "
        "non-special weights, on a flattened view.",
    ),
]
