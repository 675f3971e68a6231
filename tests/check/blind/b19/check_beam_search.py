"""Blind set B19, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.double()) / 6.0) ** alpha


@torch.no_grad()
def _beam_one(
    model,
    src: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    single_start: bool = True,
    forbid_pad: bool = True,
    finished_set: bool = True,
    bos_in_length: bool = False,
    eos_in_length: bool = True,
    penalty_every_step: bool = False,
    length_grows_after_eos: bool = False,
    raw_logits: bool = False,
    multiply_penalty: bool = False,
    rank_without_penalty: bool = False,
    prefer_open_at_limit: bool = False,
) -> list[int]:
    """One sentence ``src`` ``(1, S)``; returns its best hypothesis without BOS."""
    pad = model.config.pad_id
    memory = model.encode(src).expand(K, -1, -1)
    srcs = src.expand(K, -1)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(K, dtype=torch.float64)
    if single_start:
        log_prob[1:] = float("-inf")
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    V = model.config.tgt_vocab_size

    def score(lp_sum: Tensor, length: Tensor) -> Tensor:
        if rank_without_penalty:
            return lp_sum
        if multiply_penalty:
            return lp_sum * _lp(length, alpha)
        return lp_sum / _lp(length, alpha)

    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, srcs)[:, -1].double()  # (K, V)
        step = logits if raw_logits else logits.log_softmax(-1)
        if forbid_pad:
            step[:, pad] = float("-inf")
        if finished_set:
            only_pad = torch.full((V,), float("-inf"), dtype=torch.float64)
            only_pad[pad] = 0.0
            step = torch.where(finished[:, None], only_pad, step)
        total = log_prob[:, None] + step  # (K, V)
        n = t + 1 if bos_in_length else t
        if not eos_in_length:
            n_eos = torch.full((V,), n, dtype=torch.long)
            n_eos[eos_id] = n - 1
            new_length = torch.where(finished[:, None], lengths[:, None], n_eos[None])
        elif length_grows_after_eos or not finished_set:
            new_length = torch.full((K, V), n, dtype=torch.long)
        else:
            new_length = torch.where(finished, lengths, n)[:, None].expand(K, V)
        ranked = score(total, new_length)
        _, best = ranked.flatten().topk(K)
        beam, token = best // V, best % V
        log_prob = (ranked if penalty_every_step else total).flatten()[best]
        lengths = new_length.flatten()[best]
        finished = finished[beam]
        if finished_set:
            finished = finished | (token == eos_id)
        tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
        if t >= max_len:
            finished[:] = True
        if finished.all():
            break
    final = log_prob if penalty_every_step else score(log_prob, lengths)
    if prefer_open_at_limit:
        open_ = ~(tokens == eos_id).any(1)
        if open_.any():
            final = final.masked_fill(~open_, float("-inf"))
    return tokens[int(final.argmax()), 1:].tolist()


def _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags) -> Tensor:
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outs = [
        _beam_one(
            model, src[b : b + 1], beam_size, max_len, bos_id, eos_id, length_penalty, **flags
        )
        for b in range(src.shape[0])
    ]
    model.train(was_training)
    width = max(map(len, outs))
    return torch.tensor([o + [pad] * (width - len(o)) for o in outs], dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def beam_all_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 single_start=False)  # fmt: skip


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 forbid_pad=False)  # fmt: skip


def beam_no_finished_set(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 finished_set=False)  # fmt: skip


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 bos_in_length=True)  # fmt: skip


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 eos_in_length=False)  # fmt: skip


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 penalty_every_step=True)  # fmt: skip


def beam_length_grows(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 length_grows_after_eos=True)  # fmt: skip


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 raw_logits=True)  # fmt: skip


def beam_multiply_penalty(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 multiply_penalty=True)  # fmt: skip


def beam_penalty_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 rank_without_penalty=True)  # fmt: skip


def beam_open_at_limit(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
                 prefer_open_at_limit=True)  # fmt: skip


# ---------------------------------------------------------------- correct variants


def beam_per_sentence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_cached_two_stage_topk(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    return_scores: bool = False,
) -> Tensor:
    """All sentences together with a key/value cache; top K per hypothesis, then top K of
    those K * K candidates."""
    was_training = model.training
    model.eval()
    B, K, pad = src.shape[0], beam_size, model.config.pad_id
    V = model.config.tgt_vocab_size
    memory = model.encode(src).repeat_interleave(K, 0)
    srcs = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(B, K)
    log_prob[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    best_tokens: list[Tensor | None] = [None] * B
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens[:, -1:], memory, srcs, cache)[:, -1]  # (B*K, V)
        step = logits.log_softmax(-1)
        step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        pad_only = torch.full_like(step, float("-inf"))
        pad_only[..., pad] = 0.0
        step = torch.where(finished[..., None], pad_only, step)
        total = log_prob[..., None] + step  # (B, K, V)
        new_len = torch.where(finished, lengths, torch.full_like(lengths, t))  # (B, K)
        lp = ((5.0 + new_len.float()) / 6.0) ** length_penalty
        ranked = total / lp[..., None]
        top_r, top_v = ranked.topk(K, dim=-1)  # (B, K, K): per hypothesis
        _, pick = top_r.view(B, K * K).topk(K, dim=-1)  # (B, K)
        beam = pick // K
        token = top_v.view(B, K * K).gather(1, pick)
        log_prob = total[torch.arange(B)[:, None], beam, token]
        lengths = new_len.gather(1, beam)
        finished = finished.gather(1, beam) | (token == eos_id)
        if t >= max_len:
            finished[:] = True
        rows = (torch.arange(B)[:, None] * K + beam).flatten()
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        cache.reorder(rows, cross=False)
        for b in range(B):
            if best_tokens[b] is None and bool(finished[b].all()):
                scores = log_prob[b] / ((5.0 + lengths[b].float()) / 6.0) ** length_penalty
                best_tokens[b] = tokens.view(B, K, -1)[b, int(scores.argmax()), 1:]
        if all(x is not None for x in best_tokens):
            break
    model.train(was_training)
    out = torch.full((B, t), pad, dtype=torch.long)
    for b, toks in enumerate(best_tokens):
        out[b, : len(toks)] = toks
    return out


@torch.no_grad()
def beam_python_lists(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Hypotheses as Python tuples (log P, tokens, length, finished), sentence by sentence."""
    model.eval()
    pad = model.config.pad_id
    results = []

    def rank(h):
        return h[0] / ((5 + h[2]) / 6) ** length_penalty

    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        beams = [(0.0, [bos_id], 0, False)]
        for t in range(1, max_len + 1):
            candidates = []
            live = [h for h in beams if not h[3]]
            if live:
                prefix = torch.tensor([h[1] for h in live])
                logp = model.decode(prefix, memory.expand(len(live), -1, -1),
                                    s.expand(len(live), -1))[:, -1].double().log_softmax(-1)  # fmt: skip
                logp[:, pad] = float("-inf")
                for h, row in zip(live, logp.tolist()):
                    for tok, lp in enumerate(row):
                        if lp != float("-inf"):
                            candidates.append((h[0] + lp, h[1] + [tok], t, tok == eos_id))
            candidates += [(h[0], h[1] + [pad], h[2], True) for h in beams if h[3]]
            candidates.sort(key=rank, reverse=True)
            beams = candidates[:beam_size]
            if t >= max_len or all(h[3] for h in beams):
                break
        results.append(max(beams, key=rank)[1][1:])
    width = max(map(len, results))
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start",
        beam_all_start,
        "mistake",
        "I started all K hypotheses from BOS with log P = 0, so the beam fills with "
        "copies of one hypothesis.",
    ),
    BlindCase(
        CHECK, "pad_generated", beam_pad_allowed, "mistake", "I let PAD compete as a next token."
    ),
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "A hypothesis that produced EOS is extended like any other; nothing is finished "
        "before max_len.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "I used the length of the token tensor, BOS included, in the length penalty.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "I did not count the EOS token in |Y|.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalized score as the running score, so the penalty is applied "
        "again at every step.",
    ),
    BlindCase(
        CHECK,
        "length_grows_after_eos",
        beam_length_grows,
        "mistake",
        "A finished hypothesis is extended by PAD, but its length keeps growing with t.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I added the raw logits instead of log_softmax to the running score.",
    ),
    BlindCase(
        CHECK,
        "penalty_multiplied",
        beam_multiply_penalty,
        "mistake",
        "I multiplied log P by the length penalty instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "penalty_ignored",
        beam_penalty_ignored,
        "mistake",
        "I ranked by log P alone and never used length_penalty.",
    ),
    BlindCase(
        CHECK,
        "open_preferred_at_limit",
        beam_open_at_limit,
        "mistake",
        "At max_len I returned the best hypothesis that has not produced EOS, thinking the "
        "finished ones were already handled.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_no_cache",
        beam_per_sentence,
        "correct",
        "One sentence at a time, in float64, recomputing the prefix at each step.",
    ),
    BlindCase(
        CHECK,
        "cached_two_stage_topk",
        beam_cached_two_stage_topk,
        "correct",
        "Batched with a key/value cache; top K per hypothesis, then top K of the K*K "
        "candidates; an extra return_scores keyword.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        beam_python_lists,
        "correct",
        "Hypotheses as Python tuples sorted by their penalized score.",
    ),
]
