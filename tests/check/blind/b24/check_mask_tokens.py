"""Blind set B24, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_mask_tokens"
IGNORE_INDEX = -100


def _ordinary(vocab) -> Tensor:
    ids = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ids[list(vocab.special_ids)] = False
    return ids.nonzero().flatten()


def _real(tokens: Tensor, vocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids))


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob  # every position
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, labels


def mask_only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_labels_from_inputs(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # what the model sees at those places
    return inputs, labels


def mask_labels_pad_elsewhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.full_like(tokens, vocab.pad_id)  # padding: not a target
    labels[chosen] = tokens[chosen]
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_overlapping_intervals(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action < random_prob)  # the first 10 % of the draws
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_independent_random_draw(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # of the rest, random_prob become a random token
    to_random = chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_paper_numbers(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < 0.8)
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_from_whole_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_above_first_specials(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    # <pad> <unk> <bos> <eos> are ids 0-3, so ordinary tokens start at 4
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_not_restricted_to_chosen(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_keep_case_unlabelled(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    labels = torch.where(to_mask | to_random, tokens, IGNORE_INDEX)  # the changed tokens
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_returns_labels_first(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return labels, torch.where(to_random, draw, inputs)


# ---------------------------------------------------------------- correct variants


def mask_bernoulli(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """torch.bernoulli for the choice and for each case, the random token from the ordinary ids."""
    special = torch.zeros(vocab.vocab_size, dtype=torch.bool)
    special[list(vocab.special_ids)] = True
    real = ~special[tokens]
    chosen = torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    chosen &= real
    masked = (
        chosen & torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    )
    p_random = random_prob / (1 - mask_prob) if mask_prob < 1 else 0.0
    randomised = (
        chosen
        & ~masked
        & torch.bernoulli(torch.full(tokens.shape, min(p_random, 1.0)), generator=generator).bool()
    )
    ordinary = (~special).nonzero().squeeze(1)
    pick = torch.randint(0, ordinary.numel(), tokens.shape, generator=generator)
    inputs = tokens.clone()
    inputs[masked] = vocab.mask_id
    inputs[randomised] = ordinary[pick[randomised]]
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    return inputs, labels


def mask_multinomial(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One multinomial draw over (mask, random, keep) per chosen position."""
    specials = torch.tensor(sorted(vocab.special_ids))
    real = ~(tokens[..., None] == specials).any(-1)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    n = int(chosen.sum())
    probs = torch.tensor([mask_prob, random_prob, max(1.0 - mask_prob - random_prob, 0.0)])
    if n > 0 and probs.sum() > 0:
        case = torch.multinomial(probs, n, replacement=True, generator=generator)
    else:
        case = torch.full((n,), 2, dtype=torch.long)
    ordinary = torch.tensor([i for i in range(vocab.vocab_size) if i not in vocab.special_ids])
    random_ids = ordinary[torch.randint(len(ordinary), (n,), generator=generator)]
    originals = tokens[chosen]
    new = torch.where(case == 0, vocab.mask_id, torch.where(case == 1, random_ids, originals))
    inputs = tokens.clone()
    inputs[chosen] = new
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = originals
    return inputs, labels


def mask_python_loop(
    tokens: Tensor,
    vocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A loop over the positions; a random token by rejection until it is ordinary."""
    special = set(vocab.special_ids)
    inputs = tokens.clone()
    labels = torch.full_like(tokens, IGNORE_INDEX)
    u = torch.rand(tokens.numel(), 2, generator=generator).tolist()
    flat_in, flat_lab = inputs.view(-1), labels.view(-1)
    for i, tok in enumerate(tokens.reshape(-1).tolist()):
        if tok in special or u[i][0] >= select_prob:
            continue
        flat_lab[i] = tok
        if u[i][1] < mask_prob:
            flat_in[i] = vocab.mask_id
        elif u[i][1] < mask_prob + random_prob:
            while True:
                r = int(torch.randint(vocab.vocab_size, (1,), generator=generator))
                if r not in special:
                    break
            flat_in[i] = r
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_can_be_chosen",
        mask_specials_chosen,
        "mistake",
        "I choose 15 % of all positions, [CLS], [SEP] and padding included.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "real = tokens != vocab.pad_id: I left out padding but not [CLS] and [SEP].",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted_inputs",
        mask_labels_from_inputs,
        "mistake",
        "The labels are taken after the corruption, so [MASK] or the random token is the label.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_where_not_chosen",
        mask_labels_pad_elsewhere,
        "mistake",
        "labels start as vocab.pad_id, not -100, where nothing was chosen.",
    ),
    BlindCase(
        CHECK,
        "random_interval_overlaps_mask",
        mask_overlapping_intervals,
        "mistake",
        "to_random = action < random_prob, which lies inside the mask interval: 10 % random, "
        "70 % [MASK], 20 % kept.",
    ),
    BlindCase(
        CHECK,
        "random_drawn_independently",
        mask_independent_random_draw,
        "mistake",
        "A second coin with random_prob for the positions not masked: random_prob of the "
        "remaining 20 %, 2 % in all.",
    ),
    BlindCase(
        CHECK,
        "paper_numbers_hard_coded",
        mask_paper_numbers,
        "mistake",
        "I wrote 0.15, 0.8 and 0.9 into the code; the arguments are never used.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocabulary",
        mask_random_from_whole_vocab,
        "mistake",
        "The random token is torch.randint(vocab.vocab_size), special ids included.",
    ),
    BlindCase(
        CHECK,
        "random_above_id_3",
        mask_random_above_first_specials,
        "mistake",
        "The random token is drawn from 4 .. V - 1, but [CLS] [SEP] [MASK] sit at the top ids.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "inputs = tokens, then item assignment: the caller's tensor is corrupted.",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        mask_global_rng,
        "mistake",
        "torch.rand and torch.randint without generator=: the global RNG draws everything.",
    ),
    BlindCase(
        CHECK,
        "random_case_not_limited_to_chosen",
        mask_random_not_restricted_to_chosen,
        "mistake",
        "I forgot chosen & in to_random, so 10 % of all tokens get a random replacement.",
    ),
    BlindCase(
        CHECK,
        "kept_tokens_unlabelled",
        mask_keep_case_unlabelled,
        "mistake",
        "Labels only where the token was changed; the chosen-but-kept 10 % get -100.",
    ),
    BlindCase(
        CHECK,
        "labels_returned_first",
        mask_returns_labels_first,
        "mistake",
        "return labels, inputs.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_conditional",
        mask_bernoulli,
        "correct",
        "torch.bernoulli for the choice, then [MASK] with mask_prob and random with "
        "random_prob / (1 - mask_prob) of the rest; boolean item assignment on a clone.",
    ),
    BlindCase(
        CHECK,
        "multinomial_cases",
        mask_multinomial,
        "correct",
        "One torch.multinomial draw over (mask, random, keep) for the chosen positions only.",
    ),
    BlindCase(
        CHECK,
        "python_loop_rejection",
        mask_python_loop,
        "correct",
        "A loop over the positions; the random token drawn from the whole vocabulary again "
        "until it is not special.",
    ),
]
