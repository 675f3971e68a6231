"""Blind set B33, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_mask_tokens"

IGNORE_INDEX = -100


def _ordinary_ids(vocab) -> torch.Tensor:
    ordinary = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ordinary[list(vocab.special_ids)] = False
    return ordinary.nonzero().flatten()


def _real(tokens: torch.Tensor, vocab) -> torch.Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids))


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
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # not padding
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_labels_are_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # what the model must predict there
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = tokens.clone()  # the original sentence is the answer
    labels[tokens == vocab.pad_id] = IGNORE_INDEX
    return inputs, labels


def mask_hardcoded_probs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs)
    return inputs, labels


def mask_random_of_the_rest(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the chosen tokens not masked, random_prob become a random token
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_random_overwrites_mask(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action < random_prob), draw, inputs)
    return inputs, labels


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_draw_index_not_mapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = torch.randint(len(ordinary), tokens.shape, generator=generator)  # an ordinary token
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id
    tokens[to_random] = draw[to_random]
    return tokens, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_select_polarity(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) > select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_outputs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return labels, inputs


def mask_ignore_is_pad(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, vocab.pad_id)  # the loss skips padding anyway
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_unchanged_and_random_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action >= mask_prob + random_prob), draw, inputs)  # the rest
    return inputs, labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_multinomial(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    probs = torch.tensor([mask_prob, random_prob, 1.0 - mask_prob - random_prob]).clamp(min=0)
    case = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    case = case.view(tokens.shape)  # 0 = [MASK], 1 = random, 2 = unchanged
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (case == 0)] = vocab.mask_id
    random_here = chosen & (case == 1)
    inputs[random_here] = draw.view(tokens.shape)[random_here]
    return inputs, labels


def mask_sequential_conditional(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=g) < mask_prob)
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0  # of those not masked
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=g) < p_random)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_one_uniform(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform number per token decides everything: below select_prob it is chosen, and
    u / select_prob (uniform again) picks the case."""
    u = torch.rand(tokens.shape, generator=generator, dtype=torch.float64)
    chosen = _real(tokens, vocab) & (u < select_prob)
    case = u / select_prob if select_prob > 0 else u
    specials = set(vocab.special_ids)
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in specials])
    pick = torch.randint(0, len(ordinary), tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs = torch.where(
        chosen & (case < mask_prob), torch.full_like(tokens, vocab.mask_id), inputs
    )
    random_case = chosen & (case >= mask_prob) & (case < mask_prob + random_prob)
    inputs = torch.where(random_case, ordinary[pick], inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


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
        mask_only_pad_excluded,
        "mistake",
        "I excluded only padding (tokens != vocab.pad_id) from the choice.",
    ),
    BlindCase(
        CHECK,
        "labels_from_inputs",
        mask_labels_are_inputs,
        "mistake",
        "I took the labels from the corrupted inputs at the chosen positions.",
    ),
    BlindCase(
        CHECK,
        "labels_at_every_token",
        mask_labels_everywhere,
        "mistake",
        "I kept the original token as the label at every position that is not padding.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hardcoded",
        mask_hardcoded_probs,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 as numbers in the code instead of using the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_share_of_the_rest",
        mask_random_of_the_rest,
        "mistake",
        "I drew a second coin for the chosen tokens that were not masked and replaced them "
        "with probability random_prob, so only 2 % of the chosen become random.",
    ),
    BlindCase(
        CHECK,
        "random_overwrites_mask",
        mask_random_overwrites_mask,
        "mistake",
        "With one draw per token I masked where action < mask_prob and put a random token "
        "where action < random_prob, which overlaps the masked ones.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "I drew the random token with torch.randint(vocab.vocab_size), specials included.",
    ),
    BlindCase(
        CHECK,
        "random_index_not_mapped",
        mask_draw_index_not_mapped,
        "mistake",
        "I drew an index into the ordinary ids but forgot to look up ordinary[index].",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens straight into tokens and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_no_generator,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "select_with_greater_than",
        mask_select_polarity,
        "mistake",
        "I chose a token when its random number was > select_prob.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_outputs_swapped,
        "mistake",
        "I returned (labels, inputs).",
    ),
    BlindCase(
        CHECK,
        "pad_id_as_ignore_label",
        mask_ignore_is_pad,
        "mistake",
        "I put vocab.pad_id as the label where nothing was chosen, instead of -100.",
    ),
    BlindCase(
        CHECK,
        "random_takes_the_remainder",
        mask_unchanged_and_random_swapped,
        "mistake",
        "I gave the random token to the cases above mask_prob + random_prob, so the "
        "unchanged share is random_prob and the random share is what remains.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_and_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial over the three cases and over the "
        "ordinary ids (specials weighted 0), all with the generator.",
    ),
    BlindCase(
        CHECK,
        "sequential_conditional",
        mask_sequential_conditional,
        "correct",
        "First [MASK] with mask_prob, then among the rest a random token with probability "
        "random_prob / (1 - mask_prob); in-place writes on a clone.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        mask_one_uniform,
        "correct",
        "One float64 uniform number per token: below select_prob it is chosen, and u / "
        "select_prob decides among [MASK], random and unchanged.",
    ),
]
