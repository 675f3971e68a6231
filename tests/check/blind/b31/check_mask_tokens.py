"""Blind set B31, check_mask_tokens (chapter 17): BERT's masking rule as readers write it."""

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


def _real(tokens: Tensor, vocab: BertVocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids))


# ---------------------------------------------------------------- mistakes


def mask_specials_chosen(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Every position may be chosen, [CLS], [SEP] and padding included."""
    chosen = torch.rand(tokens.shape, generator=generator) < select_prob
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_only_padding_excluded(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Only padding is never chosen; [CLS] and [SEP] may be."""
    real = tokens != vocab.pad_id
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_labels_corrupted(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """The labels are read from the corrupted inputs."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)
    return inputs, labels


def mask_labels_everywhere(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """labels = tokens.clone(): the original token at every position."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = tokens.clone()
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_labels_pad_elsewhere(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Unchosen positions labelled with the padding id instead of -100."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, vocab.pad_id)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_random_of_remainder(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A second, independent draw with random_prob among the chosen tokens not masked."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = (
        chosen & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    )  # 0.1 of the remaining 0.2: 2 % instead of 10 %
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    return torch.where(to_random, draw, inputs), labels


def mask_random_from_whole_vocab(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_random_after_first_four(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Random tokens drawn from 4 .. V - 1, skipping only <pad> <unk> <bos> <eos>."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_select_prob_hard_coded(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """The paper's 15 / 80 / 10 written in; the arguments are ignored."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    random = chosen & (action >= 0.8) & (action < 0.9)
    return torch.where(random, draw, inputs), labels


def mask_in_place(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """The corruption written into tokens itself, which is then returned as the inputs."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id
    tokens[random] = draw[random]
    return tokens, labels


def mask_generator_unused(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_probs_swapped(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """mask_prob and random_prob used the wrong way round: 10 % [MASK], 80 % random."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < random_prob), vocab.mask_id, tokens)
    random = chosen & (action >= random_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


def mask_no_keep_case(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """if < mask_prob: [MASK], else: random -- the 'keep' case forgotten."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    return torch.where(chosen & (action >= mask_prob), draw, inputs), labels


def mask_one_random_token(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """One random replacement drawn for the whole batch and used at every random position."""
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), (1,), generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    return torch.where(random, draw, inputs), labels


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """torch.bernoulli for the choice, one multinomial draw over the three actions."""
    real = _real(tokens, vocab)
    chosen = (
        real & torch.bernoulli(torch.full(tokens.shape, select_prob), generator=generator).bool()
    )
    labels = tokens.masked_fill(~chosen, IGNORE_INDEX)
    p = torch.tensor([mask_prob, random_prob, max(0.0, 1.0 - mask_prob - random_prob)])
    action = torch.multinomial(p, tokens.numel(), replacement=True, generator=generator)
    action = action.view(tokens.shape)
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    draw = torch.multinomial(weights, tokens.numel(), replacement=True, generator=generator)
    inputs = tokens.clone()
    inputs[chosen & (action == 0)] = vocab.mask_id
    rnd = chosen & (action == 1)
    inputs[rnd] = draw.view(tokens.shape)[rnd]
    return inputs, labels


def mask_hf_style(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """Hugging Face's way: [MASK] with mask_prob, then random with random_prob / (1 - mask_prob)
    of the rest."""
    inputs = tokens.clone()
    labels = tokens.clone()
    special = ~_real(tokens, vocab)
    prob = torch.full(tokens.shape, select_prob).masked_fill(special, 0.0)
    chosen = torch.bernoulli(prob, generator=generator).bool()
    labels[~chosen] = IGNORE_INDEX
    masked = torch.bernoulli(torch.full(tokens.shape, mask_prob), generator=generator).bool()
    masked &= chosen
    inputs[masked] = vocab.mask_id
    rest = 1.0 - mask_prob
    share = random_prob / rest if rest > 0 else 0.0
    randomized = torch.bernoulli(torch.full(tokens.shape, share), generator=generator).bool()
    randomized &= chosen & ~masked
    ordinary = _ordinary(vocab)
    picks = torch.randint(len(ordinary), tokens.shape, generator=generator)
    inputs[randomized] = ordinary[picks][randomized]
    return inputs, labels


def mask_per_token_loop(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Tensor, Tensor]:
    """A plain loop over the positions, three uniforms per token from the generator."""
    specials = set(vocab.special_ids)
    ordinary = [i for i in range(vocab.vocab_size) if i not in specials]
    inputs = tokens.clone()
    labels = torch.full_like(tokens, IGNORE_INDEX)
    u = torch.rand(tokens.numel(), 3, generator=generator).tolist()
    flat_in, flat_lab = inputs.view(-1), labels.view(-1)
    for i, tok in enumerate(tokens.reshape(-1).tolist()):
        if tok in specials or u[i][0] >= select_prob:
            continue
        flat_lab[i] = tok
        if u[i][1] < mask_prob:
            flat_in[i] = vocab.mask_id
        elif u[i][1] < mask_prob + random_prob:
            flat_in[i] = ordinary[min(int(u[i][2] * len(ordinary)), len(ordinary) - 1)]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "specials_chosen",
        mask_specials_chosen,
        "mistake",
        "I chose from every position, forgetting to exclude [CLS], [SEP] and padding.",
    ),
    BlindCase(
        CHECK,
        "only_padding_excluded",
        mask_only_padding_excluded,
        "mistake",
        "I excluded tokens == pad_id only, so [CLS] and [SEP] can be chosen.",
    ),
    BlindCase(
        CHECK,
        "labels_from_corrupted",
        mask_labels_corrupted,
        "mistake",
        "I built the labels after corrupting, so they hold [MASK] or the random token.",
    ),
    BlindCase(
        CHECK,
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels = tokens.clone(): every position carries its token, not -100 where unchosen.",
    ),
    BlindCase(
        CHECK,
        "labels_pad_not_ignore",
        mask_labels_pad_elsewhere,
        "mistake",
        "Unchosen positions labelled with the padding id instead of IGNORE_INDEX (-100).",
    ),
    BlindCase(
        CHECK,
        "random_prob_of_remainder",
        mask_random_of_remainder,
        "mistake",
        "A second independent draw < random_prob among the unmasked: 2 % random instead of 10 %.",
    ),
    BlindCase(
        CHECK,
        "random_from_whole_vocab",
        mask_random_from_whole_vocab,
        "mistake",
        "The random replacement is torch.randint(vocab_size): special tokens can be drawn.",
    ),
    BlindCase(
        CHECK,
        "random_from_four_up",
        mask_random_after_first_four,
        "mistake",
        "I drew random tokens from 4 .. V - 1, skipping only the book's four special tokens.",
    ),
    BlindCase(
        CHECK,
        "probabilities_hard_coded",
        mask_select_prob_hard_coded,
        "mistake",
        "I wrote the paper's 0.15, 0.8 and 0.1 into the code and ignored the arguments.",
    ),
    BlindCase(
        CHECK,
        "tokens_changed_in_place",
        mask_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into tokens itself and returned it.",
    ),
    BlindCase(
        CHECK,
        "generator_unused",
        mask_generator_unused,
        "mistake",
        "I called torch.rand and torch.randint without generator=generator.",
    ),
    BlindCase(
        CHECK,
        "mask_and_random_swapped",
        mask_probs_swapped,
        "mistake",
        "I compared with random_prob where mask_prob belongs: 10 % [MASK] and 80 % random.",
    ),
    BlindCase(
        CHECK,
        "no_keep_case",
        mask_no_keep_case,
        "mistake",
        "if < mask_prob: [MASK], else random: I forgot the 10 % that keep their token.",
    ),
    BlindCase(
        CHECK,
        "one_random_token_for_all",
        mask_one_random_token,
        "mistake",
        "I drew a single random token, shape (1,), and used it at every random position.",
    ),
    BlindCase(
        CHECK,
        "bernoulli_and_multinomial",
        mask_bernoulli_multinomial,
        "correct",
        "torch.bernoulli for the choice, torch.multinomial over the three actions and the words.",
    ),
    BlindCase(
        CHECK,
        "huggingface_style",
        mask_hf_style,
        "correct",
        "As in Hugging Face: [MASK] with mask_prob, then random with random_prob / (1 - mask_prob).",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_per_token_loop,
        "correct",
        "A Python loop over the tokens, with three uniforms per token drawn from the generator.",
    ),
]
