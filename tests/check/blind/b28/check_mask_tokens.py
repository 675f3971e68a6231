"""Blind set B28, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab) -> Tensor:
    """The ids a random replacement may take: every id that is not special."""
    keep = torch.ones(vocab.vocab_size, dtype=torch.bool)
    keep[list(vocab.special_ids)] = False
    return keep.nonzero().flatten()


def _special(tokens: Tensor, vocab) -> Tensor:
    return torch.isin(tokens, torch.tensor(vocab.special_ids))


# ---------------------------------------------------------------- mistakes


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # padding is never chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = tokens.clone()  # the model predicts the original sentence
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_label_is_input(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # made after the corruption
    return inputs, labels


def mask_labels_pad_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, vocab.pad_id)  # padding is ignored by the loss
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_random_of_the_rest(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the chosen tokens that were not masked, random_prob become a random token
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(to_mask, vocab.mask_id)
    return torch.where(to_random, draw, inputs), labels


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_random_above_specials(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    # the special tokens come first, so ordinary ids start after them
    draw = torch.randint(
        len(vocab.special_ids), vocab.vocab_size, tokens.shape, generator=generator
    )
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[random] = draw[random]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_constants(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = ~_special(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)  # the paper's numbers
    random = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(random, draw, inputs), labels


def mask_comparison_flipped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_mask = chosen & (action > mask_prob)
    to_random = chosen & (action < random_prob)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_not_only_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return labels, torch.where(random, draw, inputs)


def mask_one_random_token(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = ~_special(tokens, vocab) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    word = ordinary[torch.randint(len(ordinary), (1,), generator=generator)]  # a random word
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, word, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_multinomial(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Selection by torch.bernoulli; the three cases drawn with torch.multinomial."""
    special = torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))
    p = torch.full(tokens.shape, select_prob, dtype=torch.float)
    chosen = torch.bernoulli(p, generator=generator).bool() & ~special
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    probs = torch.tensor([mask_prob, random_prob, max(0.0, 1 - mask_prob - random_prob)])
    case = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape)
    ordinary = _ordinary(vocab)
    random_ids = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[chosen & (case == 0)] = vocab.mask_id
    pick = chosen & (case == 1)
    inputs[pick] = random_ids[pick]
    return inputs, labels


def mask_one_uniform(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number per token decides both the choice and the case; random ids are
    drawn only for the positions that need one."""
    u = torch.rand(tokens.shape, generator=generator)
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (u < select_prob)
    to_mask = chosen & (u < select_prob * mask_prob)
    to_random = chosen & ~to_mask & (u < select_prob * (mask_prob + random_prob))
    ordinary = _ordinary(vocab)
    n = int(to_random.sum())
    replacement = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = replacement
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_token_loop(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A plain loop over the tokens, each decision a draw from the generator."""
    specials = set(vocab.special_ids)
    ordinary = [i for i in range(vocab.vocab_size) if i not in specials]
    flat = tokens.flatten().tolist()
    inputs, labels = list(flat), [IGNORE_INDEX] * len(flat)
    draws = torch.rand(2 * len(flat), generator=generator).tolist()
    for i, token in enumerate(flat):
        if token in specials or draws[2 * i] >= select_prob:
            continue
        labels[i] = token
        r = draws[2 * i + 1]
        if r < mask_prob:
            inputs[i] = vocab.mask_id
        elif r < mask_prob + random_prob:
            j = int(torch.randint(len(ordinary), (1,), generator=generator))
            inputs[i] = ordinary[j]
    shape = tokens.shape
    return (
        torch.tensor(inputs, dtype=tokens.dtype).view(shape),
        torch.tensor(labels, dtype=tokens.dtype).view(shape),
    )


CASES = [
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I excluded only the padding (tokens != pad_id), so [CLS] and [SEP] can be chosen.",
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
        "label_from_corrupted_input",
        mask_label_is_input,
        "mistake",
        "I built the labels from the inputs after the corruption, so a chosen position's "
        "label is [MASK] or the random token.",
    ),
    BlindCase(
        CHECK,
        "pad_id_as_ignore_label",
        mask_labels_pad_elsewhere,
        "mistake",
        "Where nothing was chosen I put pad_id in the labels instead of -100.",
    ),
    BlindCase(
        CHECK,
        "random_share_of_the_rest",
        mask_random_of_the_rest,
        "mistake",
        "Two separate draws: mask with mask_prob, then random_prob of the chosen tokens not "
        "masked become random, which is 2 % of the chosen, not 10 %.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "The random token is torch.randint(vocab.vocab_size), so it can be a special token.",
    ),
    BlindCase(
        CHECK,
        "random_above_special_count",
        mask_random_above_specials,
        "mistake",
        "I drew the random token from len(special_ids) .. vocab_size - 1, assuming the special "
        "tokens have the lowest ids; [CLS], [SEP] and [MASK] have the highest.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens and then inputs[...] = mask_id: the caller's tensor is changed.",
    ),
    BlindCase(
        CHECK,
        "generator_ignored",
        mask_global_rng,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hard_coded",
        mask_constants,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 into the code instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "comparisons_flipped",
        mask_comparison_flipped,
        "mistake",
        "[MASK] where action > mask_prob and random where action < random_prob: 20 % masked "
        "and 10 % random.",
    ),
    BlindCase(
        CHECK,
        "random_outside_chosen",
        mask_random_not_only_chosen,
        "mistake",
        "I forgot 'chosen &' in the random-token condition, so tokens that were not chosen "
        "(and special ones) get replaced too.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_returns_labels_first,
        "mistake",
        "I return (labels, inputs) instead of (inputs, labels).",
    ),
    BlindCase(
        CHECK,
        "one_random_word_for_all",
        mask_one_random_token,
        "mistake",
        "I drew a single random word and used it at every position that gets a random token.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial for [MASK] / random / unchanged, "
        "both from the generator.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        mask_one_uniform,
        "correct",
        "One uniform number per token decides the choice and the case; random ids are drawn "
        "only where needed.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_token_loop,
        "correct",
        "A Python loop over the tokens with random numbers taken from the generator.",
    ),
]
