"""Blind set B30, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary_ids(vocab: BertVocab) -> torch.Tensor:
    """The ids that are not special, shared by the mistakes that are elsewhere."""
    ordinary = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ordinary[list(vocab.special_ids)] = False
    return ordinary.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # real = not padding
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()  # the model should predict the original sentence
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # labels made after the corruption
    return inputs, labels


def mask_constants(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < 0.15)  # the paper's 15 %
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    random = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(random, draw, inputs), labels


def mask_two_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_no_unchanged(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & ~to_mask  # the rest get a random token
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any token
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id
    tokens[random] = draw[random]
    return tokens, labels


def mask_generator_unused(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_labels_minus_one(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, -1)  # -1: "no label"
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_split_over_all_tokens(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = ~torch.isin(tokens, torch.tensor(vocab.special_ids))
    r = torch.rand(tokens.shape, generator=generator)
    chosen = real & (r < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    # the same number then decides what happens to a chosen token
    to_mask = chosen & (r < mask_prob)
    to_random = chosen & (r >= mask_prob) & (r < mask_prob + random_prob)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(
    tokens: torch.Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    special[list(vocab.special_ids)] = True
    real = ~special[tokens]
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    masked = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = random_prob / (1 - mask_prob) if mask_prob < 1 else 0.0
    randomised = (
        chosen
        & ~masked
        & torch.bernoulli(torch.full(tokens.shape, min(rest, 1.0)), generator=generator).bool()
    )
    ordinary = (~special).nonzero().squeeze(1)
    draw = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.masked_fill(masked, vocab.mask_id)
    inputs = torch.where(randomised, draw, inputs)
    return inputs, labels


def mask_python_loop(
    tokens: torch.Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    specials = set(vocab.special_ids)
    ordinary = [i for i in range(vocab.vocab_size) if i not in specials]
    inputs = tokens.clone()
    labels = torch.full_like(tokens, IGNORE_INDEX)
    B, T = tokens.shape
    u = torch.rand(B, T, 3, generator=generator).tolist()
    for b in range(B):
        for t in range(T):
            tok = int(tokens[b, t])
            if tok in specials or u[b][t][0] >= select_prob:
                continue
            labels[b, t] = tok
            if u[b][t][1] < mask_prob:
                inputs[b, t] = vocab.mask_id
            elif u[b][t][1] < mask_prob + random_prob:
                inputs[b, t] = ordinary[int(u[b][t][2] * len(ordinary)) % len(ordinary)]
    return inputs, labels


def mask_multinomial(
    tokens: torch.Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    real = torch.ones_like(tokens, dtype=torch.bool)
    for special_id in vocab.special_ids:
        real &= tokens != special_id
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    keep_prob = 1.0 - mask_prob - random_prob
    probs = torch.tensor([mask_prob, random_prob, max(keep_prob, 0.0)])
    action = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    action = action.view(tokens.shape)  # 0 = [MASK], 1 = random, 2 = unchanged
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action == 0)] = vocab.mask_id
    pick = chosen & (action == 1)
    inputs[pick] = draw.view(tokens.shape)[pick]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose positions among all tokens, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I excluded the padding (tokens != vocab.pad_id) but not [CLS] and [SEP].",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "My labels are the original tokens at every position, chosen or not.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        mask_labels_from_inputs,
        "mistake",
        "I built the labels from the inputs after the corruption, so they hold [MASK] or the "
        "random token.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hard_coded",
        mask_constants,
        "mistake",
        "I wrote 0.15, 0.8 and 0.1 into the code instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "two_independent_draws",
        mask_two_independent_draws,
        "mistake",
        "I drew one number for [MASK] (< mask_prob) and a second one for the random token "
        "(< random_prob) among the rest, so far fewer than 10 % are random.",
    ),
    BlindCase(
        CHECK,
        "no_unchanged_share",
        mask_no_unchanged,
        "mistake",
        "Every chosen token that does not become [MASK] gets a random token; none stays.",
    ),
    BlindCase(
        CHECK,
        "random_any_id",
        mask_random_any_id,
        "mistake",
        "I drew the random replacement with torch.randint(vocab.vocab_size), special ids included.",
    ),
    BlindCase(
        CHECK,
        "writes_into_tokens",
        mask_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into tokens itself and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_not_passed",
        mask_generator_unused,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "labels_minus_one",
        mask_labels_minus_one,
        "mistake",
        "I put -1 in the labels where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "one_number_for_both",
        mask_split_over_all_tokens,
        "mistake",
        "I reused the selection's random number to decide between [MASK], random and "
        "unchanged, so every chosen token becomes [MASK].",
    ),
    BlindCase(
        CHECK,
        "bernoulli_draws",
        mask_bernoulli,
        "correct",
        "torch.bernoulli with the generator; the random share drawn among the unmasked with "
        "random_prob / (1 - mask_prob); specials looked up in a boolean table.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_python_loop,
        "correct",
        "Three uniform numbers per position from the generator, then a Python loop over the "
        "positions.",
    ),
    BlindCase(
        CHECK,
        "multinomial_actions",
        mask_multinomial,
        "correct",
        "torch.multinomial for the three actions and for the random token (zero weight on "
        "the special ids), written into a clone.",
    ),
]
