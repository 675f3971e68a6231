"""Blind set B26, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab, device) -> Tensor:
    """The ids a random replacement may take: every id that is not special."""
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten().to(device)


def _real(tokens: Tensor, vocab: BertVocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))


def _draw_random(tokens: Tensor, vocab: BertVocab, generator) -> Tensor:
    ordinary = _ordinary(vocab, tokens.device)
    return ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]


# ---------------------------------------------------------------- mistakes


def mask_any_token(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # not padding
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_labels_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # the label of each chosen position
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, tokens.clone()  # the labels are the original sentence


def mask_labels_pad_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, vocab.pad_id)  # padding is ignored by the loss anyway
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_random_of_rest(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    masked = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the rest, random_prob become a random token
    rand = chosen & ~masked & (torch.rand(tokens.shape, generator=generator) < random_prob)
    inputs = torch.where(masked, vocab.mask_id, tokens)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_overlapping_thresholds(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rand = chosen & (action < random_prob)  # 10 % random: the lowest draws
    inputs[rand] = _draw_random(tokens, vocab, generator)[rand]
    return inputs, labels


def mask_fixed_probs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < 0.15)  # the paper's 15 %
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    rand = chosen & (action >= 0.8) & (action < 0.9)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    random_ids = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(rand, random_ids, inputs)
    return inputs, labels


def mask_random_after_specials(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    first_word = len(vocab.special_ids)  # the special tokens come first
    random_ids = torch.randint(first_word, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(rand, random_ids, inputs)
    return inputs, labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = tokens  # the inputs are the tokens with some of them replaced
    inputs[chosen & (action < mask_prob)] = vocab.mask_id
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs[rand] = _draw_random(tokens, vocab, generator)[rand]
    return inputs, labels


def mask_no_generator(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    action = torch.rand(tokens.shape)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, None), inputs)
    return inputs, labels


def mask_fixed_count(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    chosen = torch.zeros_like(real)
    for b in range(tokens.shape[0]):
        positions = real[b].nonzero().flatten()
        n = round(select_prob * len(positions))  # 15 % of each sentence
        pick = torch.randperm(len(positions), generator=generator)[:n]
        chosen[b, positions[pick]] = True
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_unchanged_unlabelled(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    masked = chosen & (action < mask_prob)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(masked, vocab.mask_id, tokens)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    labels = torch.where(masked | rand, tokens, IGNORE_INDEX)  # a word left as it is: no question
    return inputs, labels


def mask_outputs_swapped(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    rand = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return labels, inputs


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Three Bernoulli draws as in the Hugging Face collator: chosen, then [MASK], then random
    with probability random_prob / (1 - mask_prob) among the rest."""
    real = _real(tokens, vocab)
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    masked = torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    masked &= chosen
    rest = 1.0 - mask_prob
    p_random = 0.0 if rest <= 0 else min(random_prob / rest, 1.0)
    rand = torch.bernoulli(torch.full(tokens.shape, p_random), generator=generator).bool()
    rand &= chosen & ~masked
    inputs = tokens.masked_fill(masked, vocab.mask_id)
    inputs = torch.where(rand, _draw_random(tokens, vocab, generator), inputs)
    return inputs, labels


def mask_one_uniform(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number per position decides all: below select * mask is [MASK], below
    select * (mask + random) a random token, below select unchanged."""
    u = torch.rand(tokens.shape, generator=generator).to(tokens.device)
    real = _real(tokens, vocab)
    chosen = real & (u < select_prob)
    to_mask = real & (u < select_prob * mask_prob)
    to_random = real & ~to_mask & (u < select_prob * (mask_prob + random_prob))
    ordinary = _ordinary(vocab, tokens.device)
    pick = torch.randint(len(ordinary), tokens.shape, generator=generator).to(tokens.device)
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = ordinary[pick[to_random]]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Only the chosen positions get a case, drawn with torch.multinomial over the three."""
    special = set(vocab.special_ids)
    real = torch.tensor(
        [[int(t) not in special for t in row] for row in tokens.tolist()], dtype=torch.bool
    ).reshape(tokens.shape)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    inputs = tokens.clone()
    where = chosen.nonzero(as_tuple=True)
    n = len(where[0])
    if n:
        probs = torch.tensor([mask_prob, random_prob, max(1.0 - mask_prob - random_prob, 0.0)])
        case = torch.multinomial(probs, n, replacement=True, generator=generator)
        ordinary = _ordinary(vocab, tokens.device)
        random_ids = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
        new = inputs[where]
        new = torch.where(case == 0, torch.full_like(new, vocab.mask_id), new)
        new = torch.where(case == 1, random_ids, new)
        inputs[where] = new
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "special_tokens_chosen",
        mask_any_token,
        "mistake",
        "I choose 15 % of all positions, [CLS], [SEP] and padding included.",
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
        mask_labels_corrupted,
        "mistake",
        "I built the labels from the corrupted inputs, so a masked position's label is [MASK].",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "The labels are the whole original sentence, not -100 where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_elsewhere",
        mask_labels_pad_elsewhere,
        "mistake",
        "Where nothing was chosen I put pad_id in the labels instead of IGNORE_INDEX.",
    ),
    BlindCase(
        CHECK,
        "random_prob_of_the_rest",
        mask_random_of_rest,
        "mistake",
        "After [MASK] I drew again with random_prob among the remaining 20 %, which gives 2 % "
        "random tokens.",
    ),
    BlindCase(
        CHECK,
        "overlapping_thresholds",
        mask_overlapping_thresholds,
        "mistake",
        "[MASK] where the draw is < 0.8, then a random token where it is < 0.1, which overwrites "
        "some masks: 70 / 10 / 20.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hardcoded",
        mask_fixed_probs,
        "mistake",
        "I wrote 0.15, 0.8 and 0.1 in the code and ignored the arguments.",
    ),
    BlindCase(
        CHECK,
        "random_id_from_whole_vocab",
        mask_random_any_id,
        "mistake",
        "The random replacement is randint(vocab.vocab_size), so it can be a special token.",
    ),
    BlindCase(
        CHECK,
        "random_id_after_first_specials",
        mask_random_after_specials,
        "mistake",
        "I drew random ids from len(special_ids) upward, assuming the special tokens are the "
        "first ids; [CLS], [SEP] and [MASK] are the last ones.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens and then assigned [MASK] into it, which changes the caller's tensor.",
    ),
    BlindCase(
        CHECK,
        "generator_unused",
        mask_no_generator,
        "mistake",
        "I accepted generator but called torch.rand and randint without it.",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_sentence",
        mask_fixed_count,
        "mistake",
        "I pick exactly round(15 % of the real tokens) per sentence with randperm, so a short "
        "sentence never gets one.",
    ),
    BlindCase(
        CHECK,
        "unchanged_not_labelled",
        mask_unchanged_unlabelled,
        "mistake",
        "Only the [MASK] and random positions get a label; the 10 % left unchanged get -100.",
    ),
    BlindCase(
        CHECK,
        "returns_labels_first",
        mask_outputs_swapped,
        "mistake",
        "I return (labels, inputs) instead of (inputs, labels).",
    ),
    BlindCase(
        CHECK,
        "three_bernoulli_draws",
        mask_bernoulli,
        "correct",
        "torch.bernoulli three times, the random share as random_prob / (1 - mask_prob) of "
        "the rest, like the Hugging Face collator.",
    ),
    BlindCase(
        CHECK,
        "one_uniform_draw",
        mask_one_uniform,
        "correct",
        "One uniform number per position decides both whether it is chosen and its case.",
    ),
    BlindCase(
        CHECK,
        "multinomial_on_chosen",
        mask_multinomial,
        "correct",
        "Special tokens found with a Python set; the case of each chosen token drawn with "
        "torch.multinomial.",
    ),
]
