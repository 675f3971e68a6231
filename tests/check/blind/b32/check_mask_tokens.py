"""Blind set B32, check_mask_tokens (chapter 17): BERT's 15 % / 80-10-10 masking rule."""

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


def _rule(
    tokens,
    vocab,
    generator,
    select_prob,
    mask_prob,
    random_prob,
    *,
    real=None,
    ordinary=None,
):
    """A right rule with pieces replaceable by the mistakes below."""
    real = _real(tokens, vocab) if real is None else real
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab) if ordinary is None else ordinary
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = torch.ones_like(tokens, dtype=torch.bool)  # every position may be chosen
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, real=real)


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # "real token" = not padding
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, real=real)


def mask_labels_are_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    inputs, labels = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    labels = torch.where(labels != IGNORE_INDEX, inputs, IGNORE_INDEX)  # what the model sees
    return inputs, labels


def mask_labels_pad_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    inputs, labels = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    return inputs, labels.masked_fill(labels == IGNORE_INDEX, vocab.pad_id)  # ignore = padding


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    inputs, _ = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    return inputs, tokens.clone()  # the labels are the original sentence


def mask_always_mask(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    return torch.where(chosen, vocab.mask_id, tokens), labels  # every chosen token -> [MASK]


def mask_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action < random_prob), draw, inputs)  # the first 10 %
    return inputs, labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_arguments_ignored(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 0.15, 0.8, 0.1)  # the paper's numbers


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    everything = torch.arange(vocab.vocab_size)
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, ordinary=everything)


def mask_random_skips_first_four(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    above = torch.arange(4, vocab.vocab_size)  # ids 0-3 are <pad> <unk> <bos> <eos>
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, ordinary=above)


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    inputs, labels = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    tokens.copy_(inputs)  # corrupt the batch itself, no copy needed
    return tokens, labels


def mask_global_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, None, select_prob, mask_prob, random_prob)  # torch's own RNG


def mask_separate_scaled_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """Three separate draws: chosen (15 %), [MASK] (12 %) and random (1.5 %) of all tokens."""
    real = _real(tokens, vocab)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = real & (torch.rand(tokens.shape, generator=generator) < select_prob * mask_prob)
    to_random = real & (torch.rand(tokens.shape, generator=generator) < select_prob * random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random & ~to_mask, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    inputs, labels = _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob)
    return labels, inputs


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    real = _real(tokens, vocab)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    masked = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    randomized = (
        chosen
        & ~masked
        & torch.bernoulli(torch.full(tokens.shape, p_random), generator=generator).bool()
    )
    ordinary = _ordinary(vocab)
    picks = torch.multinomial(
        torch.ones(len(ordinary)), tokens.numel(), replacement=True, generator=generator
    ).view(tokens.shape)
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    inputs[randomized] = ordinary[picks][randomized]
    return inputs, labels


def mask_random_first_partition(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform number per token: [0, random) random, [random, random + mask) [MASK]."""
    real = _real(tokens, vocab)
    u = torch.rand(tokens.shape, generator=generator)
    chosen = real & (u < select_prob)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    a = torch.rand(tokens.shape, generator=generator)
    to_random = chosen & (a < random_prob)
    to_mask = chosen & (a >= random_prob) & (a < random_prob + mask_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(0, len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mask_loop(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    ordinary = _ordinary(vocab).tolist()
    special = set(vocab.special_ids)
    inputs, labels = tokens.clone(), torch.full_like(tokens, IGNORE_INDEX)
    for b in range(tokens.shape[0]):
        for t in range(tokens.shape[1]):
            tok = int(tokens[b, t])
            if tok in special:
                continue
            if torch.rand(1, generator=generator).item() >= select_prob:
                continue
            labels[b, t] = tok
            r = torch.rand(1, generator=generator).item()
            if r < mask_prob:
                inputs[b, t] = vocab.mask_id
            elif r < mask_prob + random_prob:
                i = int(torch.randint(len(ordinary), (1,), generator=generator))
                inputs[b, t] = ordinary[i]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose every position with probability 15 %, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I excluded only padding (tokens != pad_id), so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_are_corrupted_inputs",
        mask_labels_are_inputs,
        "mistake",
        "At the chosen positions I put the new inputs (the [MASK] or random id) in the labels "
        "instead of the original token.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_elsewhere",
        mask_labels_pad_elsewhere,
        "mistake",
        "Where nothing was chosen I put the padding id in the labels instead of -100.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "I returned the original tokens as labels everywhere, not only at the chosen positions.",
    ),
    BlindCase(
        CHECK,
        "always_mask",
        mask_always_mask,
        "mistake",
        "Every chosen token becomes [MASK]; I forgot the 10 % random and 10 % unchanged.",
    ),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mask_overlapping_thresholds,
        "mistake",
        "I tested action < 0.8 for [MASK] and action < 0.1 for random on the same number, so "
        "the random ones are taken out of the masked ones: 70 / 10 / 20.",
    ),
    BlindCase(
        CHECK,
        "independent_draws",
        mask_independent_draws,
        "mistake",
        "I drew a new number for 'random' among the tokens not masked and compared it with "
        "0.1, so only 2 % of the chosen become random.",
    ),
    BlindCase(
        CHECK,
        "arguments_ignored",
        mask_arguments_ignored,
        "mistake",
        "I wrote 0.15, 0.8 and 0.1 in the body instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "I drew the random replacement from torch.randint(vocab_size), special ids included.",
    ),
    BlindCase(
        CHECK,
        "random_skips_first_four",
        mask_random_skips_first_four,
        "mistake",
        "I drew the random replacement from ids 4 .. V - 1, skipping the four special tokens "
        "of chapter 14 but not [CLS], [SEP] and [MASK].",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote the corrupted ids into tokens itself and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_global_generator,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "separate_scaled_draws",
        mask_separate_scaled_draws,
        "mistake",
        "I drew 'chosen' (15 %), '[MASK]' (0.15 * 0.8) and 'random' (0.15 * 0.1) "
        "independently, so the masked positions are not the chosen ones.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_returns_labels_first,
        "mistake",
        "I returned (labels, inputs) instead of (inputs, labels).",
    ),
    BlindCase(
        CHECK,
        "bernoulli_multinomial",
        mask_bernoulli,
        "correct",
        "torch.bernoulli for each decision (random with probability 0.1 / 0.2 among the "
        "unmasked chosen), torch.multinomial for the random ids, all from the generator.",
    ),
    BlindCase(
        CHECK,
        "random_first_partition",
        mask_random_first_partition,
        "correct",
        "One number per token split as [0, 0.1) random, [0.1, 0.9) [MASK], the rest kept; "
        "boolean indexing on a clone.",
    ),
    BlindCase(
        CHECK,
        "loop_per_token",
        mask_loop,
        "correct",
        "A Python loop over the tokens, drawing one number at a time from the generator.",
    ),
]
