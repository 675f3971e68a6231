"""Blind cases for check_mask_tokens (chapter 17), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary_ids(vocab: BertVocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


def _real(tokens: Tensor, vocab: BertVocab) -> Tensor:
    return ~torch.isin(tokens, torch.tensor(vocab.special_ids, device=tokens.device))


# ---------------------------------------------------------------- mistakes


def only_padding_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def labels_copy_of_tokens(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = tokens.clone()  # the original sentence is the target
    return inputs, labels


def labels_after_corruption(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    labels = torch.where(chosen, inputs, IGNORE_INDEX)  # built from inputs, after the changes
    return inputs, labels


def random_over_all_real_tokens(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = _real(tokens, vocab)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    # the 10 % random tokens drawn over the whole sentence, not among the chosen ones
    to_random = real & ~to_mask & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def random_share_of_the_rest(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    rest = chosen & ~to_mask
    to_random = rest & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def one_draw_overlapping_cases(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & (action < random_prob)  # inside the mask's range: 70 / 10 / 20
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def random_token_from_whole_vocabulary(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    action = torch.rand(tokens.shape, generator=generator)
    draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def corrupts_tokens_in_place(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    tokens[chosen & (action < mask_prob)] = vocab.mask_id
    tokens[to_random] = draw[to_random]
    return tokens, labels


def generator_not_used(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape) < select_prob)
    action = torch.rand(tokens.shape)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape)]
    inputs = torch.where(chosen & (action < mask_prob), vocab.mask_id, tokens)
    to_random = chosen & (action >= mask_prob) & (action < mask_prob + random_prob)
    inputs = torch.where(to_random, draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def paper_numbers_hardcoded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    chosen = _real(tokens, vocab) & (torch.rand(tokens.shape, generator=generator) < 0.15)
    action = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (action < 0.8), vocab.mask_id, tokens)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), draw, inputs)
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


# ---------------------------------------------------------------- correct variants


def one_uniform_per_token(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    u = torch.rand(tokens.shape, generator=generator).to(tokens.device)
    real = _real(tokens, vocab)
    chosen = real & (u < select_prob)
    # within [0, select_prob): the first mask_prob of it masks, the next random_prob replaces
    to_mask = real & (u < select_prob * mask_prob)
    to_random = (
        real & (u >= select_prob * mask_prob) & (u < select_prob * (mask_prob + random_prob))
    )
    ordinary = _ordinary_ids(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, torch.full_like(tokens, vocab.mask_id), tokens)
    inputs = torch.where(to_random, draw.to(tokens.device), inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


def bernoulli_and_multinomial(
    tokens: Tensor,
    vocab: BertVocab,
    generator: torch.Generator | None = None,
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
    ignore_index: int = IGNORE_INDEX,
) -> tuple[Tensor, Tensor]:
    probs = torch.full(tokens.shape, select_prob)
    chosen = torch.bernoulli(probs, generator=generator).bool() & _real(tokens, vocab)
    action = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (action < mask_prob)
    to_random = chosen & ~to_mask & (action < mask_prob + random_prob)
    weights = torch.ones(vocab.vocab_size)
    weights[list(vocab.special_ids)] = 0.0
    n = int(to_random.sum())
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    if n:
        inputs[to_random] = torch.multinomial(weights, n, replacement=True, generator=generator)
    labels = torch.full_like(tokens, ignore_index)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def case_by_case_loop(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    ordinary = _ordinary_ids(vocab).tolist()
    special = set(vocab.special_ids)
    inputs = tokens.clone()
    labels = torch.full_like(tokens, IGNORE_INDEX)
    for i in range(tokens.shape[0]):
        for j in range(tokens.shape[1]):
            t = int(tokens[i, j])
            if t in special or torch.rand((), generator=generator) >= select_prob:
                continue
            labels[i, j] = t
            r = float(torch.rand((), generator=generator))
            if r < mask_prob:
                inputs[i, j] = vocab.mask_id
            elif r < mask_prob + random_prob:
                pick = int(torch.randint(len(ordinary), (), generator=generator))
                inputs[i, j] = ordinary[pick]
    return inputs, labels


CASES = [
    BlindCase(
        CHECK,
        "only_padding_excluded",
        only_padding_excluded,
        "mistake",
        "I excluded only the padding (tokens != pad_id) from the choice, so [CLS] and [SEP] "
        "can be chosen and masked",
    ),
    BlindCase(
        CHECK,
        "labels_copy_of_tokens",
        labels_copy_of_tokens,
        "mistake",
        "my labels are a copy of the tokens everywhere, instead of IGNORE_INDEX (-100) at "
        "the positions that were not chosen",
    ),
    BlindCase(
        CHECK,
        "labels_after_corruption",
        labels_after_corruption,
        "mistake",
        "I built the labels from inputs after corrupting them, so a chosen position's label is "
        "[MASK] or the random token instead of the original",
    ),
    BlindCase(
        CHECK,
        "random_over_all_real_tokens",
        random_over_all_real_tokens,
        "mistake",
        "I read the 10 % random replacement as 10 % of all real tokens: the random tokens are "
        "drawn over the whole sentence, not among the chosen 15 %",
    ),
    BlindCase(
        CHECK,
        "random_share_of_the_rest",
        random_share_of_the_rest,
        "mistake",
        "after masking 80 % of the chosen I replaced random_prob (10 %) of the remaining 20 %, "
        "so only 2 % of the chosen become random tokens and 18 % stay",
    ),
    BlindCase(
        CHECK,
        "one_draw_overlapping_cases",
        one_draw_overlapping_cases,
        "mistake",
        "I used one draw for both cases, action < mask_prob for [MASK] and action < "
        "random_prob for random: the random range lies inside the mask range, giving 70 / 10 "
        "/ 20 instead of 80 / 10 / 10",
    ),
    BlindCase(
        CHECK,
        "random_token_from_whole_vocabulary",
        random_token_from_whole_vocabulary,
        "mistake",
        "I drew the random replacement with torch.randint(vocab.vocab_size), so it can be a "
        "special token ([MASK], [CLS], padding, ...)",
    ),
    BlindCase(
        CHECK,
        "corrupts_tokens_in_place",
        corrupts_tokens_in_place,
        "mistake",
        "I wrote [MASK] and the random tokens into tokens itself and returned it: the "
        "caller's tensor is changed in place",
    ),
    BlindCase(
        CHECK,
        "generator_not_used",
        generator_not_used,
        "mistake",
        "I drew the random numbers with torch.rand / torch.randint without generator=generator",
    ),
    BlindCase(
        CHECK,
        "paper_numbers_hardcoded",
        paper_numbers_hardcoded,
        "mistake",
        "I wrote the paper's 0.15, 0.8 and 0.9 as constants, ignoring the select_prob, "
        "mask_prob and random_prob arguments",
    ),
    BlindCase(
        CHECK,
        "one_uniform_per_token",
        one_uniform_per_token,
        "correct",
        "one uniform number per token decides all: u < select_prob * mask_prob masks, the "
        "next select_prob * random_prob replaces, the rest of [0, select_prob) stays",
    ),
    BlindCase(
        CHECK,
        "bernoulli_and_multinomial",
        bernoulli_and_multinomial,
        "correct",
        "torch.bernoulli for the choice, boolean-index assignment on a clone, random tokens by "
        "torch.multinomial over weights that are 0 on the special ids; extra ignore_index "
        "argument",
    ),
    BlindCase(
        CHECK,
        "case_by_case_loop",
        case_by_case_loop,
        "correct",
        "a Python loop over every token with if/elif, scalar draws from the generator",
    ),
]
