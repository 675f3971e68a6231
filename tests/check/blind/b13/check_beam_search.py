"""Blind set B13, check_beam_search (chapter 15): beam search as readers write it.

Every case decodes each sentence alone with one search loop, ``_search``; a mistake turns on
the one slip its reader made (the rest of the loop is right), so that each case differs from
the book in exactly one way.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _search(
    model,
    src_row: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    all_start=False,
    pad_ok=False,
    no_finished=False,
    bos_in_len=False,
    compound=False,
    pick_last=False,
    first_finished=False,
    raw_logits=False,
    finished_len_grows=False,
    use_cache=False,
    sort_rank=False,
) -> list[int]:
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    s = src_row[src_row != pad][None]
    memory = model.encode(s).expand(K, -1, -1)
    src = s.expand(K, -1)
    cache = model.new_cache() if use_cache else None
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_p = torch.zeros(K) if all_start else torch.tensor([0.0] + [float("-inf")] * (K - 1))
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        fed = tokens[:, -1:] if use_cache else tokens
        logits = model.decode(fed, memory, src, cache)[:, -1]
        step = logits.clone() if raw_logits else logits.log_softmax(-1)
        if not pad_ok:
            step[:, pad] = float("-inf")
        if not no_finished:
            step = torch.where(finished[:, None], only_pad, step)
        total = log_p[:, None] + step  # (K, V)
        length = t + 1 if bos_in_len else t
        new_len = (
            torch.full_like(lengths, length)
            if finished_len_grows
            else torch.where(finished, lengths, torch.full_like(lengths, length))
        )
        ranked = total / _lp(new_len, alpha)[:, None]
        if sort_rank:
            best = ranked.view(-1).argsort(descending=True, stable=True)[:K]
        else:
            best = ranked.view(-1).topk(K).indices
        beam, token = best // V, best % V
        log_p = (ranked if compound else total).view(-1)[best]
        lengths, finished = new_len[beam], finished[beam]
        if not no_finished:
            finished = finished | (token == eos_id)
        if t >= max_len:
            finished[:] = True
        tokens = torch.cat([tokens[beam], token[:, None]], 1)
        if cache is not None:
            cache.reorder(beam)
        if first_finished and finished.any():
            return tokens[int(finished.nonzero()[0]), 1:].tolist()
        if finished.all():
            break
    scores = log_p if compound else log_p / _lp(lengths, alpha)
    k = K - 1 if pick_last else int(scores.argmax())
    return tokens[k, 1:].tolist()


def _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags) -> Tensor:
    was = model.training
    model.eval()
    outs = [
        _search(model, row, beam_size, max_len, bos_id, eos_id, length_penalty, **flags)
        for row in src
    ]
    model.train(was)
    width = max(len(o) for o in outs)
    pad = model.config.pad_id
    return torch.tensor([o + [pad] * (width - len(o)) for o in outs], dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def beam_all_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_start=True)


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_ok=True)


def beam_no_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_finished=True)


def beam_bos_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_len=True)


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, compound=True)


def beam_last_beam(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_last=True)


def beam_first_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, first_finished=True
    )


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, raw_logits=True)


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _batch(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_len_grows=True
    )


def beam_alpha_hard_coded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, 0.6)  # the paper's alpha


# ---------------------------------------------------------------- correct variants


def beam_per_sentence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_cached(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6, use_cache=True
):
    return _batch(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, use_cache=use_cache
    )


def beam_sorted(
    model,
    src,
    beam_size,
    max_len,
    *,
    bos_id,
    eos_id,
    length_penalty=0.6,
    return_scores: bool = False,
):
    return _batch(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, sort_rank=True)


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start",
        beam_all_start,
        "mistake",
        "I started all K hypotheses with score 0, so the beam holds K copies of one.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not forbid PAD, so it can be chosen as a next token.",
    ),
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished,
        "mistake",
        "Hypotheses that produced EOS keep growing like the others.",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_counted,
        "mistake",
        "I counted BOS in |Y| of the length penalty.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalized score and added the next log-probability to it.",
    ),
    BlindCase(
        CHECK,
        "last_beam_returned",
        beam_last_beam,
        "mistake",
        "I returned the last hypothesis of the beam instead of the best one.",
    ),
    BlindCase(
        CHECK,
        "first_finished_returned",
        beam_first_finished,
        "mistake",
        "I stop and return as soon as one hypothesis produces EOS.",
    ),
    BlindCase(
        CHECK,
        "logits_summed",
        beam_raw_logits,
        "mistake",
        "I added the raw logits instead of log-probabilities to the score.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "A finished hypothesis's length keeps growing with the steps in the penalty.",
    ),
    BlindCase(
        CHECK,
        "alpha_hard_coded",
        beam_alpha_hard_coded,
        "mistake",
        "I wrote 0.6 inside the loop and ignored the length_penalty argument.",
    ),
    BlindCase(
        CHECK,
        "per_sentence",
        beam_per_sentence,
        "correct",
        "Each sentence searched alone (its padding removed), then padded together.",
    ),
    BlindCase(
        CHECK,
        "with_cache",
        beam_cached,
        "correct",
        "Per sentence with the book's KVCache and reorder; extra use_cache argument.",
    ),
    BlindCase(
        CHECK,
        "stable_sort",
        beam_sorted,
        "correct",
        "Candidates ranked with a stable argsort instead of topk; unused return_scores.",
    ),
]
