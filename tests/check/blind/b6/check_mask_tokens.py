"""Blind set B6, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary_ids(vocab: BertVocab, device) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten().to(device)


def _real(tokens: Tensor, vocab: BertVocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))


# ---------------------------------------------------------------- mistakes


def mask_hf_second_draw(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=g) < mask_prob)
    # of the rest, random with probability random_prob (Hugging Face draws 0.5 here)
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=g) < random_prob)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_pad_only_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    real = tokens != vocab.pad_id  # padding is the only token I thought of
    chosen = real & (torch.rand(tokens.shape, generator=g) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=g)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    u = torch.rand(tokens.shape, generator=g)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, tokens.clone()  # the labels: the original sentence


def mask_labels_after_corruption(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    inputs = tokens.clone()
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    u = torch.rand(tokens.shape, generator=g)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    inputs[to_random] = draw[to_random]
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # read from inputs, after the changes
    return inputs, labels


def mask_random_any_id(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=g)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=g)  # any id at all
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)  # no generator
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_in_place(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=g)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = tokens  # no copy: the caller's batch is corrupted as well
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mask_fixed_count(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    real = _real(tokens, vocab)
    chosen = torch.zeros_like(real)
    for i in range(tokens.shape[0]):
        positions = real[i].nonzero().flatten()
        n = max(1, round(select_prob * len(positions)))  # 15 % of each sentence, at least one
        if len(positions):
            pick = torch.randperm(len(positions), generator=g)[:n]
            chosen[i, positions[pick]] = True
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=g)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


def mask_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=g) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=g) < random_prob)  # independent
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_float_labels(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
) -> tuple[Tensor, Tensor]:
    g = generator
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    labels = torch.where(chosen, tokens, -100.0)  # a float -100: the labels become float32
    u = torch.rand(tokens.shape, generator=g)
    ordinary = _ordinary_ids(vocab, tokens.device)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=g)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(to_random, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_chain(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Hugging Face's chain of Bernoulli draws, with the conditional probability of "random"
    among the chosen tokens that were not masked."""
    g = generator
    shape = tokens.shape
    chosen = torch.bernoulli(torch.full(shape, select_prob), generator=g).bool()
    chosen &= _real(tokens, vocab)
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    masked = torch.bernoulli(torch.full(shape, mask_prob), generator=g).bool() & chosen
    rest = 1.0 - mask_prob
    p_random = random_prob / rest if rest > 0 else 0.0
    randomized = torch.bernoulli(torch.full(shape, p_random), generator=g).bool()
    randomized &= chosen & ~masked
    inputs = tokens.masked_fill(masked, vocab.mask_id)
    ordinary = _ordinary_ids(vocab, tokens.device)
    replacement = ordinary[torch.randint(len(ordinary), shape, generator=g)]
    inputs = torch.where(randomized, replacement, inputs)
    return inputs, labels


def mask_random_interval_first(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One uniform number per token: [0, random_prob) random, then [.., + mask_prob) [MASK];
    random ids by rejection, drawing again where a special id came out."""
    g = generator
    selected = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=g) < select_prob)
    u = torch.rand(tokens.shape, generator=g)
    to_random = selected & (u < random_prob)
    to_mask = selected & (u >= random_prob) & (u < random_prob + mask_prob)
    special = torch.tensor(vocab.special_ids)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=g)
    bad = torch.isin(draw, special)
    while bad.any():
        draw[bad] = torch.randint(vocab.vocab_size, (int(bad.sum()),), generator=g)
        bad = torch.isin(draw, special)
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw.to(tokens.device)[to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[selected] = tokens[selected]
    return inputs, labels


def mask_multinomial_action(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """The action of every token drawn with torch.multinomial over (mask, random, keep)."""
    g = generator
    n = tokens.numel()
    chosen = (torch.rand(n, generator=g) < select_prob).view(tokens.shape)
    chosen &= _real(tokens, vocab)
    weights = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    action = torch.multinomial(weights, n, replacement=True, generator=g).view(tokens.shape)
    ordinary = _ordinary_ids(vocab, tokens.device)
    replacement = ordinary[torch.randint(len(ordinary), (n,), generator=g)].view(tokens.shape)
    inputs = tokens.clone()
    inputs = torch.where(chosen & (action == 0), torch.full_like(tokens, vocab.mask_id), inputs)
    inputs = torch.where(chosen & (action == 1), replacement, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "hf_second_draw",
        mask_hf_second_draw,
        "mistake",
        "After taking 80 % for [MASK], I draw 'random' among the rest with probability "
        "random_prob (0.1) where Hugging Face draws 0.5, so only 2 % of the chosen tokens "
        "become random tokens.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_pad_only_excluded,
        "mistake",
        "I exclude only padding from the choice (tokens != pad_id), so [CLS] and [SEP] can be "
        "chosen and masked.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "I return the original tokens as labels at every position instead of IGNORE_INDEX "
        "where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_after_corruption",
        mask_labels_after_corruption,
        "mistake",
        "I build the labels from the inputs after corrupting them, so a chosen position's "
        "label is [MASK] or the random token instead of the original.",
    ),
    BlindCase(
        CHECK,
        "random_from_any_id",
        mask_random_any_id,
        "mistake",
        "The random replacement is torch.randint(vocab_size), which can draw [CLS], [SEP], "
        "[MASK] or padding.",
    ),
    BlindCase(
        CHECK,
        "global_rng",
        mask_global_rng,
        "mistake",
        "I never pass the generator to torch.rand / torch.randint, so the draws come from "
        "the global random state.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens without a clone, then in-place assignments, so the caller's tensor "
        "is corrupted too.",
    ),
    BlindCase(
        CHECK,
        "fixed_count_per_sentence",
        mask_fixed_count,
        "mistake",
        "I choose exactly max(1, round(15 % of the real tokens)) positions in each sentence "
        "instead of choosing every token independently.",
    ),
    BlindCase(
        CHECK,
        "independent_mask_and_random",
        mask_independent_draws,
        "mistake",
        "[MASK] (p = 0.8) and random (p = 0.1) are two independent draws on the chosen tokens, "
        "so random also overwrites masked ones and the split is not 80 / 10 / 10.",
    ),
    BlindCase(
        CHECK,
        "float_labels",
        mask_float_labels,
        "mistake",
        "torch.where(chosen, tokens, -100.0) with a float -100 promotes the labels to float32.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_chain",
        mask_bernoulli_chain,
        "correct",
        "Hugging Face's chain of torch.bernoulli draws, with random_prob / (1 - mask_prob) for "
        "'random' among the chosen tokens that were not masked.",
    ),
    BlindCase(
        CHECK,
        "random_interval_first",
        mask_random_interval_first,
        "correct",
        "One uniform number per token with the 'random' interval first and [MASK] second; "
        "random ids drawn from the whole vocabulary and drawn again while special.",
    ),
    BlindCase(
        CHECK,
        "multinomial_action",
        mask_multinomial_action,
        "correct",
        "The action of each token (mask / random / keep) drawn with torch.multinomial.",
    ),
]
