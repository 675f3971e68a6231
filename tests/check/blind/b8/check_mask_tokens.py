"""Blind set B8, check_mask_tokens (chapter 17): BERT's 80/10/10 masking rule as readers write
it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.bert import IGNORE_INDEX, BertVocab

from .. import BlindCase

CHECK = "check_mask_tokens"


def _ordinary(vocab: BertVocab) -> Tensor:
    ok = torch.ones(vocab.vocab_size, dtype=torch.bool)
    ok[list(vocab.special_ids)] = False
    return ok.nonzero().flatten()


# ---------------------------------------------------------------- mistakes


def mask_only_pad_excluded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    real = tokens != vocab.pad_id  # [CLS] and [SEP] can be chosen
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (u < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    return torch.where(rnd, draw, inputs), labels


def _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, slip=""):
    """The rule with one reader's ``slip``."""
    special = torch.tensor(vocab.special_ids)
    real = ~torch.isin(tokens, special)
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    u = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (u < mask_prob)
    if slip == "random_from_zero":
        to_random = chosen & (u < random_prob)
    else:
        to_random = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    if slip == "full_vocab":
        draw = torch.randint(vocab.vocab_size, tokens.shape, generator=generator)
    elif slip == "skip_first_four":
        draw = torch.randint(4, vocab.vocab_size, tokens.shape, generator=generator)
    else:
        ordinary = _ordinary(vocab)
        draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)
    if slip == "labels_everywhere":
        labels = tokens.clone()
    elif slip == "labels_corrupted":
        labels = torch.where(chosen, inputs, IGNORE_INDEX)
    elif slip == "labels_mask_only":
        labels = torch.where(to_mask, tokens, IGNORE_INDEX)
    elif slip == "labels_pad":
        labels = torch.where(chosen, tokens, vocab.pad_id)
    else:
        labels = torch.where(chosen, tokens, IGNORE_INDEX)
    return inputs, labels


def mask_labels_everywhere(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "labels_everywhere")


def mask_labels_corrupted(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "labels_corrupted")


def mask_labels_mask_only(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "labels_mask_only")


def mask_labels_pad(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "labels_pad")


def mask_random_from_zero(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "random_from_zero")


def mask_full_vocab(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "full_vocab")


def mask_skip_first_four(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, select_prob, mask_prob, random_prob, "skip_first_four")


def mask_two_independent_draws(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    to_mask = chosen & (torch.rand(tokens.shape, generator=generator) < mask_prob)
    to_random = chosen & (torch.rand(tokens.shape, generator=generator) < random_prob)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(to_mask, vocab.mask_id, tokens)
    inputs = torch.where(to_random, draw, inputs)  # overwrites some masks: 72 / 10 / 18
    return inputs, torch.where(chosen, tokens, IGNORE_INDEX)


def mask_hard_coded(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, generator, 0.15, 0.8, 0.1)  # the paper's numbers, fixed


def mask_in_place(tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1):
    special = torch.tensor(vocab.special_ids)
    chosen = ~torch.isin(tokens, special) & (
        torch.rand(tokens.shape, generator=generator) < select_prob
    )
    labels = torch.where(chosen, tokens, IGNORE_INDEX)
    u = torch.rand(tokens.shape, generator=generator)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens  # the same tensor: the writes below change the caller's batch
    inputs[chosen & (u < mask_prob)] = vocab.mask_id
    rnd = chosen & (u >= mask_prob) & (u < mask_prob + random_prob)
    inputs[rnd] = draw[rnd]
    return inputs, labels


def mask_global_rng(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    return _rule(tokens, vocab, None, select_prob, mask_prob, random_prob)  # generator dropped


# ---------------------------------------------------------------- correct variants


def mask_bernoulli_top_slice(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = torch.tensor(vocab.special_ids)
    p = torch.full(tokens.shape, float(select_prob))
    chosen = torch.bernoulli(p, generator=generator).bool() & ~torch.isin(tokens, special)
    u = torch.rand(tokens.shape, generator=generator)
    to_mask = chosen & (u < mask_prob)
    to_random = chosen & (u >= 1 - random_prob)  # the top slice; needs mask + random <= 1
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs[to_mask] = vocab.mask_id
    inputs[to_random] = draw[to_random]
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[chosen] = tokens[chosen]
    return inputs, labels


def mask_one_uniform(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    """One uniform number per token: u < p chooses it, and u / p (uniform again) splits."""
    special = torch.tensor(vocab.special_ids)
    u = torch.rand(tokens.shape, generator=generator)
    chosen = (u < select_prob) & ~torch.isin(tokens, special)
    w = u / max(select_prob, 1e-12)
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = torch.where(chosen & (w < mask_prob), vocab.mask_id, tokens)
    rnd = chosen & (w >= mask_prob) & (w < mask_prob + random_prob)
    inputs = torch.where(rnd, draw, inputs)
    return inputs, tokens.masked_fill(~chosen, IGNORE_INDEX)


def mask_multinomial_action(
    tokens, vocab, generator=None, select_prob=0.15, mask_prob=0.8, random_prob=0.1
):
    special = set(vocab.special_ids)
    real = torch.tensor([[t not in special for t in row] for row in tokens.tolist()])
    chosen = real & (torch.rand(tokens.shape, generator=generator) < select_prob)
    probs = torch.tensor([mask_prob, random_prob, 1 - mask_prob - random_prob]).clamp(min=0)
    action = torch.multinomial(probs, tokens.numel(), replacement=True, generator=generator)
    action = action.view(tokens.shape)  # 0 = [MASK], 1 = random token, 2 = unchanged
    ordinary = _ordinary(vocab)
    draw = ordinary[torch.randint(len(ordinary), tokens.shape, generator=generator)]
    inputs = tokens.clone()
    inputs = torch.where(chosen & (action == 0), vocab.mask_id, inputs)
    inputs = torch.where(chosen & (action == 1), draw, inputs)
    labels = torch.where(chosen, tokens, torch.full_like(tokens, IGNORE_INDEX))
    return inputs, labels


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "only_padding_excluded",
        mask_only_pad_excluded,
        "mistake",
        "I excluded only padding from the choice, so [CLS] and [SEP] (and the other special "
        "ids) can be chosen and masked.",
    ),
    _case(
        "labels_everywhere",
        mask_labels_everywhere,
        "mistake",
        "labels is a copy of tokens at every position, not IGNORE_INDEX where nothing was chosen.",
    ),
    _case(
        "labels_are_corrupted_inputs",
        mask_labels_corrupted,
        "mistake",
        "I built the labels from the corrupted inputs, so a masked position's label is the "
        "[MASK] id and a replaced one's the random token.",
    ),
    _case(
        "labels_only_at_mask",
        mask_labels_mask_only,
        "mistake",
        "Only the positions turned into [MASK] get a label; the chosen tokens replaced at "
        "random or left unchanged get IGNORE_INDEX.",
    ),
    _case(
        "ignored_label_is_pad",
        mask_labels_pad,
        "mistake",
        "Positions not chosen get the padding id 0 as label instead of IGNORE_INDEX (-100).",
    ),
    _case(
        "random_slice_overlaps_mask",
        mask_random_from_zero,
        "mistake",
        "I test u < mask_prob for [MASK] and u < random_prob for a random token; the two ranges "
        "overlap and the random one wins, giving 70 / 10 / 20.",
    ),
    _case(
        "random_from_whole_vocabulary",
        mask_full_vocab,
        "mistake",
        "The random replacement is torch.randint(vocab.vocab_size), which can draw [CLS], [SEP], "
        "[MASK] or padding.",
    ),
    _case(
        "random_skips_first_four_ids",
        mask_skip_first_four,
        "mistake",
        "I drew the random token from ids 4 .. V-1, assuming the special tokens are the first "
        "four ids; [CLS], [SEP] and [MASK] come after them.",
    ),
    _case(
        "two_independent_draws",
        mask_two_independent_draws,
        "mistake",
        "I drew two independent numbers, one for [MASK] (< 0.8) and one for random (< 0.1); the "
        "random replacement overwrites masks, so the split is 72 / 10 / 18.",
    ),
    _case(
        "probabilities_hard_coded",
        mask_hard_coded,
        "mistake",
        "I wrote 0.15, 0.8 and 0.1 into the code, ignoring select_prob, mask_prob and random_prob.",
    ),
    _case(
        "caller_tokens_changed",
        mask_in_place,
        "mistake",
        "inputs = tokens without clone(), then masked writes, so the caller's batch is "
        "corrupted too.",
    ),
    _case(
        "generator_not_used",
        mask_global_rng,
        "mistake",
        "I call torch.rand and torch.randint without generator=, so the batch does not follow "
        "the caller's seed.",
    ),
    _case(
        "bernoulli_and_top_slice",
        mask_bernoulli_top_slice,
        "correct",
        "torch.bernoulli for the choice, and the random replacement taken from the top slice "
        "u >= 1 - random_prob instead of just above mask_prob; boolean-index writes on a clone.",
    ),
    _case(
        "one_uniform_reused",
        mask_one_uniform,
        "correct",
        "One uniform draw per token: u < select_prob chooses it, and u / select_prob (uniform "
        "again on the chosen) splits into mask / random / keep.",
    ),
    _case(
        "multinomial_action",
        mask_multinomial_action,
        "correct",
        "The special tokens tested in Python, the 80/10/10 action drawn with torch.multinomial "
        "from the generator.",
    ),
]
