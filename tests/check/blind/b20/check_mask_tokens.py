"""Blind set B20, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

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


def _rule(
    tokens: Tensor,
    vocab: BertVocab,
    generator,
    select_prob: float,
    mask_prob: float,
    random_prob: float,
    *,
    real: Tensor | None = None,
    labels_from_inputs: bool = False,
    labels_everywhere: bool = False,
    random_pool: Tensor | None = None,
    global_rng: bool = False,
) -> tuple[Tensor, Tensor]:
    """A right rule, with a switch for each slip."""
    g = None if global_rng else generator
    if real is None:
        real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=g) < select_prob)
    action = torch.rand(tokens.shape, generator=g)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    pool = _ordinary(vocab) if random_pool is None else random_pool
    draw = pool[torch.randint(len(pool), tokens.shape, generator=g)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    if labels_everywhere:
        labels = tokens.clone()
    else:
        labels = torch.where(chosen, inputs if labels_from_inputs else tokens, IGNORE_INDEX)
    return inputs, labels


# ---------------------------------------------------------------- mistakes


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] can be chosen
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, real=real)


def mask_label_is_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, labels_from_inputs=True
    )


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    # the label is the original token at every position
    return _rule(
        tokens, vocab, generator, select_prob, mask_prob, random_prob, labels_everywhere=True
    )


def mask_select_inverted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = real & (torch.rand(tokens.shape, generator=generator) > select_prob)  # > for <
    action = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    pool = _ordinary(vocab)
    inputs[rnd] = pool[torch.randint(len(pool), (int(rnd.sum()),), generator=generator)]
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_random_overlaps_mask(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action < random_prob)  # same draw, overlaps the [MASK] range
    pool = _ordinary(vocab)
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_conditional_split(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # the remaining 20 %: random with probability random_prob (should be 0.1 / 0.2 = 0.5)
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    pool = _ordinary(vocab)
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_args_ignored(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 0.15, 0.8, 0.1)  # the paper's numbers, hard-coded


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    pool = torch.arange(vocab.vocab_size)  # any id, special ones included
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, random_pool=pool)


def mask_random_from_4(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    pool = torch.arange(4, vocab.vocab_size)  # skipped <pad> <unk> <bos> <eos> only
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, random_pool=pool)


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    pool = _ordinary(vocab)
    draw = pool[torch.randint(len(pool), tokens.shape, generator=generator)]
    rnd = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id  # written into the caller's tensor
    tokens[rnd] = draw[rnd]
    return tokens, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, global_rng=True)


def mask_probs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    # passed the two probabilities to my helper in the wrong order
    return _rule(tokens, vocab, generator, select_prob, random_prob, mask_prob)


def mask_specials_below_4(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens > 3  # "ids 0-3 are the special tokens"
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, real=real)


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    inputs, labels = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    return labels, inputs


# ---------------------------------------------------------------- correct


def mask_bernoulli_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """Selection by torch.bernoulli, the action by torch.multinomial over three outcomes."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    keep_prob = max(0.0, 1.0 - mask_prob - random_prob)
    weights = torch.tensor([mask_prob, random_prob, keep_prob]) + 1e-12
    action = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    action = action.view(tokens.shape)
    pool = _ordinary(vocab)
    draw = pool[torch.randint(0, len(pool), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (action == 0)] = vocab.mask_id
    rnd = chosen & (action == 1)
    inputs[rnd] = draw[rnd]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_python_loop(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """A loop over every position, one draw at a time."""
    specials = set(vocab.special_ids)
    ordinary = [i for i in range(vocab.vocab_size) if i not in specials]
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
                j = int(torch.randint(len(ordinary), (1,), generator=generator))
                inputs[b, t] = ordinary[j]
    return inputs, labels


def mask_conditional_right(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """[MASK] with mask_prob; of the rest, random with random_prob / (1 - mask_prob)."""
    special = torch.tensor(vocab.special_ids)
    u1, u2, u3 = torch.rand((3, *tokens.shape), generator=generator)
    chosen = (u1 < select_prob) & ~torch.isin(tokens, special)
    to_mask = chosen & (u2 < mask_prob)
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    to_random = chosen & ~to_mask & (u3 < p_random)
    pool = _ordinary(vocab)
    n = int(to_random.sum())
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    inputs[to_random] = pool[torch.randint(len(pool), (n,), generator=generator)]
    return inputs, tokens.masked_fill(~chosen, IGNORE_INDEX)


CASES = [
    BlindCase(
        CHECK,
        "only_pad_excluded",
        mask_only_pad_excluded,
        "mistake",
        "excluded padding only, so [CLS] and [SEP] can be chosen",
    ),
    BlindCase(
        CHECK,
        "label_is_corrupted",
        mask_label_is_corrupted,
        "mistake",
        "labels taken from the corrupted inputs",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels = tokens at every position, no IGNORE_INDEX",
    ),
    BlindCase(
        CHECK,
        "select_inverted",
        mask_select_inverted,
        "mistake",
        "chose a token when rand > select_prob (85 %)",
    ),
    BlindCase(
        CHECK,
        "random_overlaps_mask",
        mask_random_overlaps_mask,
        "mistake",
        "random where action < random_prob, inside the [MASK] range (70/10/20)",
    ),
    BlindCase(
        CHECK,
        "conditional_split",
        mask_conditional_split,
        "mistake",
        "after [MASK], random with probability random_prob of the rest (80/2/18)",
    ),
    BlindCase(CHECK, "args_ignored", mask_args_ignored, "mistake", "0.15 / 0.8 / 0.1 hard-coded"),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "random replacement drawn from the whole vocabulary",
    ),
    BlindCase(
        CHECK,
        "random_from_4",
        mask_random_from_4,
        "mistake",
        "random replacement from ids 4 .. V-1 (BERT's own special ids not excluded)",
    ),
    BlindCase(CHECK, "in_place", mask_in_place, "mistake", "wrote [MASK] into the caller's tokens"),
    BlindCase(CHECK, "global_rng", mask_global_rng, "mistake", "torch.rand without the generator"),
    BlindCase(
        CHECK,
        "probs_swapped",
        mask_probs_swapped,
        "mistake",
        "mask_prob and random_prob passed in the wrong order (10/80/10)",
    ),
    BlindCase(
        CHECK,
        "specials_below_4",
        mask_specials_below_4,
        "mistake",
        "real = tokens > 3, assuming the special ids are 0-3",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_returns_labels_first,
        "mistake",
        "returned (labels, inputs)",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial for the three actions",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_python_loop,
        "correct",
        "a loop over positions, one draw at a time",
    ),
    BlindCase(
        CHECK,
        "conditional_right",
        mask_conditional_right,
        "correct",
        "[MASK] first, then random with random_prob / (1 - mask_prob) among the rest",
    ),
]
