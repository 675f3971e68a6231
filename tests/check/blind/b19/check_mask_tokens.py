"""Blind set B19, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    allowed = torch.ones(vocab.vocab_size, dtype=torch.bool)
    allowed[list(vocab.special_ids)] = False
    return allowed.nonzero().flatten()


def _real(tokens: Tensor, vocab: BertVocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids))


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_labels_are_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    return inputs, torch.where(chosen, inputs, IGNORE_INDEX)  # labels from the corrupted ids


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    return inputs, tokens.clone()  # the labels are the original sentence


def mask_labels_zero_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, draw, inputs)
    return inputs, tokens * chosen  # 0 (the padding id) where nothing was chosen


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)  # a second, separate coin
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action < random_prob), draw, inputs)  # overlaps the mask range
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_arguments_ignored(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)  # BERT's numbers
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)  # any id
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mask_random_skips_first_four(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)  # after <eos>
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # the corrupted copy
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rand] = draw[rand]
    return inputs, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)  # global RNG
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(rand, draw, inputs), torch.where(chosen, tokens, IGNORE_INDEX)


def mask_labels_only_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    labels = torch.where(to_mask | to_random, tokens, IGNORE_INDEX)  # what the model can't see
    return inputs, labels


def mask_select_then_mask_prob_on_all(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    u = torch.rand(tokens.shape, generator=generator)
    to_mask = real & (u < select_prob * mask_prob)
    to_random = real & (u >= select_prob * mask_prob) & (u < select_prob * random_prob)
    chosen = real & (u < select_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_random, draw, torch.where(to_mask, vocab.mask_id, tokens))
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    real = _real(tokens, vocab)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    masked = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0  # of those not masked
    randomized = (
        chosen
        & ~masked
        & torch.bernoulli(torch.full(tokens.shape, p_random), generator=generator).bool()
    )
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    ordinary = _ordinary(vocab)
    picks = torch.randint(len(ordinary), (int(randomized.sum()),), generator=generator)
    inputs[randomized] = ordinary[picks]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_one_uniform(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    chosen = _real(tokens, vocab) & (u < select_prob)
    a = u / select_prob if select_prob > 0 else u  # uniform again inside the chosen ones
    ordinary = _ordinary(vocab)
    weights = torch.ones(len(ordinary))
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    draw = ordinary[draw].view(tokens.shape)
    inputs = tokens.clone()
    inputs = torch.where(chosen & (a < mask_prob), torch.full_like(tokens, vocab.mask_id), inputs)
    random_here = chosen & (a >= mask_prob) & (a < mask_prob + random_prob)
    inputs = torch.where(random_here, draw, inputs)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_categorical(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """Each position draws one of four fates: not chosen, [MASK], random, kept."""
    probs = torch.tensor(
        [
            1 - select_prob,
            select_prob * mask_prob,
            select_prob * random_prob,
            select_prob * (1 - mask_prob - random_prob),
        ]
    ).clamp(min=0)
    fate = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    fate = fate.view(tokens.shape).masked_fill(~_real(tokens, vocab), 0)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[fate == 1] = vocab.mask_id
    inputs[fate == 2] = draw[fate == 2]
    labels = torch.where(fate > 0, tokens, torch.full_like(tokens, IGNORE_INDEX))
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
        "I excluded only the padding (tokens != pad_id), so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_inputs",
        mask_labels_are_inputs,
        "mistake",
        "I took the labels from the corrupted inputs, so a masked position's label is [MASK].",
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
        "labels_zero_elsewhere",
        mask_labels_zero_elsewhere,
        "mistake",
        "I wrote labels as tokens * chosen, so unchosen positions get 0, not -100.",
    ),
    BlindCase(
        CHECK,
        "independent_coins",
        mask_independent_draws,
        "mistake",
        "I drew one coin for [MASK] (0.8) and another for random (0.1), the random one "
        "overwriting, so the split is 72/10/18.",
    ),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mask_overlapping_thresholds,
        "mistake",
        "With one draw I used action < mask_prob for [MASK] and action < random_prob for "
        "random, ranges that overlap: 70/10/20.",
    ),
    BlindCase(
        CHECK,
        "arguments_ignored",
        mask_arguments_ignored,
        "mistake",
        "I wrote BERT's 0.15, 0.8 and 0.1 into the code instead of the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "I drew the random token from randint(vocab_size), special ids included.",
    ),
    BlindCase(
        CHECK,
        "random_after_first_four",
        mask_random_skips_first_four,
        "mistake",
        "I drew the random token from ids 4 .. V-1, thinking all special ids come first; "
        "[CLS], [SEP] and [MASK] are at the end.",
    ),
    BlindCase(
        CHECK,
        "in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens and then wrote [MASK] into it, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "generator_unused",
        mask_no_generator,
        "mistake",
        "I called torch.rand without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "labels_only_where_corrupted",
        mask_labels_only_corrupted,
        "mistake",
        "I set labels only at the positions I replaced ([MASK] or random), not at the "
        "chosen tokens left unchanged.",
    ),
    BlindCase(
        CHECK,
        "probabilities_multiplied_wrong",
        mask_select_then_mask_prob_on_all,
        "mistake",
        "One uniform draw: [MASK] below 0.15*0.8, random between 0.15*0.8 and 0.15*0.1 "
        "(an empty range), so no random tokens.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_conditional",
        mask_bernoulli,
        "correct",
        "torch.bernoulli draws: chosen, then [MASK], then random with probability "
        "random_prob / (1 - mask_prob) among the rest; boolean-index assignment on a clone.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_rescaled",
        mask_one_uniform,
        "correct",
        "One float64 uniform draw for both decisions (rescaled by select_prob), random "
        "ids by torch.multinomial.",
    ),
    BlindCase(
        CHECK,
        "categorical_fates",
        mask_categorical,
        "correct",
        "One categorical draw of four fates per position with torch.multinomial.",
    ),
]
