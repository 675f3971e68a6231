"""Blind cases for check_beam_search (chapter 15)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length, alpha):
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam_one(
    model,
    src_b,
    K,
    max_len,
    bos_id,
    eos_id,
    alpha,
    *,
    all_beams_start=False,
    bos_in_length=False,
    finished_keep_growing=False,
    pad_grows_length=False,
    block_pad=True,
    penalty_every_step=False,
    pick_by_logp=False,
    no_penalty=False,
):
    """The learner's beam search for one sentence (1, S); returns (tokens list, steps taken)."""
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src_b).expand(K, -1, -1)
    src_k = src_b.expand(K, -1)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_prob = torch.full((K,), float("-inf"))
    log_prob[0] = 0.0
    if all_beams_start:
        log_prob[:] = 0.0
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    score = torch.zeros(K)  # only for penalty_every_step
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    t = 0
    for t in range(1, max_len + 1):
        step = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)  # (K, V)
        if block_pad:
            step[:, pad] = float("-inf")
        if not finished_keep_growing:
            step = torch.where(finished[:, None], only_pad, step)
        total = log_prob[:, None] + step
        if pad_grows_length or finished_keep_growing:
            new_len = torch.full_like(lengths, t)
        else:
            new_len = torch.where(finished, lengths, torch.full_like(lengths, t))
        length_for_lp = new_len + 1 if bos_in_length else new_len
        if no_penalty:
            ranked = total
        elif penalty_every_step:
            ranked = (score[:, None] + step) / _lp(length_for_lp, alpha)[:, None]
        else:
            ranked = total / _lp(length_for_lp, alpha)[:, None]
        _, best = ranked.view(-1).topk(K)
        beam, token = best // V, best % V
        log_prob = total.view(-1)[best]
        if penalty_every_step:
            score = ranked.view(-1)[best]
        lengths = new_len[beam]
        finished = finished[beam] | (token == eos_id)
        tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
        if t >= max_len:
            finished[:] = True
        if finished.all():
            break
    if pick_by_logp:
        best_k = int(log_prob.argmax())
    elif penalty_every_step:
        best_k = int(score.argmax())
    else:
        final = log_prob / (
            1.0 if no_penalty else _lp(lengths + (1 if bos_in_length else 0), alpha)
        )
        best_k = int(final.argmax())
    return tokens[best_k, 1:].tolist(), t


def _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags):
    model.eval()
    pad = model.config.pad_id
    rows, width = [], 0
    for b in range(src.shape[0]):
        seq, steps = _beam_one(
            model, src[b : b + 1], beam_size, max_len, bos_id, eos_id, length_penalty, **flags
        )
        rows.append(seq)
        width = max(width, steps)
    out = torch.full((len(rows), width), pad, dtype=torch.long)
    for b, seq in enumerate(rows):
        out[b, : len(seq)] = torch.tensor(seq[:width], dtype=torch.long)
    return out


def bs_all_beams_from_bos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_beams_start=True
    )


def bs_bos_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def bs_finished_keep_growing(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_keep_growing=True
    )


def bs_pad_counts_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_grows_length=True
    )


def bs_pad_generated(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, block_pad=False)


def bs_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_every_step=True
    )


def bs_final_pick_by_logprob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_by_logp=True)


def bs_penalty_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_penalty=True)


def bs_returns_all_beams(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    out = _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)
    return out, None  # (tokens, scores) like the book's return_scores, scores left out


def bs_lp_keyword_renamed(model, src, beam_size, max_len, *, bos_id, eos_id, alpha=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, alpha)


@torch.no_grad()
def bs_batched_no_cache(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp = torch.zeros(B, K)
    logp[:, 1:] = float("-inf")
    fin = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    best_tokens = [None] * B
    active = torch.ones(B, dtype=torch.bool)
    widths = torch.zeros(B, dtype=torch.long)
    for t in range(1, max_len + 1):
        step = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1).view(B, K, V)
        step[..., pad] = float("-inf")
        pad_only = torch.full_like(step, float("-inf"))
        pad_only[..., pad] = 0.0
        step = torch.where(fin[..., None], pad_only, step)
        cand = logp[..., None] + step
        cand_len = torch.where(fin, length, torch.full_like(length, t))[..., None].expand(B, K, V)
        ranked = cand / ((5 + cand_len.double()) / 6) ** length_penalty
        top = ranked.reshape(B, -1).topk(K, dim=-1).indices
        beam, tok = top // V, top % V
        logp = cand.reshape(B, -1).gather(1, top)
        length = cand_len.reshape(B, -1).gather(1, top)
        fin = fin.gather(1, beam) | (tok == eos_id)
        if t == max_len:
            fin[:] = True
        rows = (torch.arange(B)[:, None] * K + beam).reshape(-1)
        tokens = torch.cat([tokens[rows], tok.reshape(-1, 1)], 1)
        newly = active & fin.all(1)
        for b in newly.nonzero().flatten().tolist():
            final = logp[b] / ((5 + length[b].double()) / 6) ** length_penalty
            best_tokens[b] = tokens.view(B, K, -1)[b, int(final.argmax()), 1:]
            widths[b] = t
        active &= ~newly
        if not active.any():
            break
    T = int(widths.max())
    out = torch.full((B, T), pad, dtype=torch.long)
    for b in range(B):
        out[b, : len(best_tokens[b])] = best_tokens[b]
    return out


def bs_per_sentence_heap(
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
    model.eval()
    pad = model.config.pad_id
    results, widths, scores = [], [], []
    with torch.no_grad():
        for b in range(src.shape[0]):
            s = src[b : b + 1]
            memory = model.encode(s)
            # each hypothesis: (log P, tokens without BOS, finished)
            beams = [(0.0, [], False)]
            t = 0
            for t in range(1, max_len + 1):
                live = [h for h in beams if not h[2]]
                cands = [h for h in beams if h[2]]  # finished ones compete unchanged
                if live:
                    prefix = torch.tensor([[bos_id] + h[1] for h in live])
                    step = model.decode(
                        prefix, memory.expand(len(live), -1, -1), s.expand(len(live), -1)
                    )[:, -1].log_softmax(-1)
                    step[:, pad] = float("-inf")
                    for h, row in zip(live, step):
                        vals, idx = row.topk(min(beam_size, row.numel()))
                        for v, i in zip(vals.tolist(), idx.tolist()):
                            cands.append((h[0] + v, h[1] + [i], i == eos_id or t >= max_len))

                def rank(h):
                    lp = ((5 + len(h[1])) / 6) ** length_penalty
                    return torch.tensor(h[0]) / torch.tensor(lp)

                cands.sort(key=lambda h: float(rank(h)), reverse=True)
                beams = cands[:beam_size]
                if all(h[2] for h in beams):
                    break
            best = max(beams, key=lambda h: float(rank(h)))
            results.append(best[1])
            widths.append(t)
            scores.append(float(rank(best)))
    T = max(widths)
    out = torch.full((len(results), T), pad, dtype=torch.long)
    for b, seq in enumerate(results):
        out[b, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return (out, torch.tensor(scores)) if return_scores else out


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_from_bos",
        bs_all_beams_from_bos,
        "mistake",
        "gives all K copies of BOS log-probability 0 at the start, so the beam fills with duplicates",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        bs_bos_counted,
        "mistake",
        "counts BOS in |Y| for the length penalty",
    ),
    BlindCase(
        CHECK,
        "finished_hypotheses_keep_growing",
        bs_finished_keep_growing,
        "mistake",
        "keeps extending a hypothesis after its EOS with ordinary tokens instead of only PAD",
    ),
    BlindCase(
        CHECK,
        "pad_extensions_grow_length",
        bs_pad_counts_in_length,
        "mistake",
        "extends finished hypotheses with PAD but still counts the PAD steps in |Y|",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        bs_pad_generated,
        "mistake",
        "does not set PAD's log-probability to -inf, so an open hypothesis can produce PAD",
    ),
    BlindCase(
        CHECK,
        "penalty_at_every_step",
        bs_penalty_every_step,
        "mistake",
        "divides the running score by the length penalty at every step, so it compounds",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_raw_logprob",
        bs_final_pick_by_logprob,
        "mistake",
        "ranks with the length penalty during the search but picks the final hypothesis by raw log P",
    ),
    BlindCase(
        CHECK,
        "length_penalty_ignored",
        bs_penalty_ignored,
        "mistake",
        "never applies the length penalty, ranking by log P alone",
    ),
    BlindCase(
        CHECK,
        "slip_returns_pair",
        bs_returns_all_beams,
        "mistake",
        "returns the pair (tokens, None) instead of the tokens",
    ),
    BlindCase(
        CHECK,
        "slip_alpha_keyword",
        bs_lp_keyword_renamed,
        "mistake",
        "names the keyword argument alpha instead of length_penalty",
    ),
    BlindCase(
        CHECK,
        "batched_without_cache",
        bs_batched_no_cache,
        "correct",
        "searches the whole batch together without a cache, re-running the prefix, and computes the penalty in float64",
    ),
    BlindCase(
        CHECK,
        "per_sentence_python_lists",
        bs_per_sentence_heap,
        "correct",
        "searches one sentence at a time with Python lists of (log P, tokens, finished) and a sort, with an optional return_scores",
    ),
]
