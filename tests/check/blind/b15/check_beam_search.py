"""Blind set B15, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


def _beam_one(model, src: Tensor, K: int, max_len: int, bos: int, eos: int, alpha: float, **f):
    """One sentence ``src (1, S)``, the whole prefix recomputed each step; ``f`` holds flags
    that switch on one slip each. Returns the best hypothesis as a list without BOS."""
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src)
    hyps = torch.full((K, 1), bos, dtype=torch.long)
    log_prob = torch.full((K,), float("-inf"))
    if f.get("all_beams_start"):
        log_prob.zero_()
    log_prob[0] = 0.0
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        logits = model.decode(hyps, memory.expand(K, -1, -1), src.expand(K, -1))[:, -1]
        step = logits.log_softmax(-1)
        if f.get("finished_pays"):
            pad_cost = step[:, pad].clone()
        if not f.get("pad_allowed"):
            step[:, pad] = float("-inf")
        if f.get("finished_pays"):
            fin_step = only_pad.expand(K, V).clone()
            fin_step[:, pad] = pad_cost
        else:
            fin_step = only_pad.expand(K, V)
        if not f.get("no_finished"):
            step = torch.where(finished[:, None], fin_step, step)
        total = log_prob[:, None] + step
        length_now = t + 1 if f.get("bos_in_length") else t
        if f.get("length_counts_pad"):
            new_len = torch.full_like(lengths, length_now)
        else:
            new_len = torch.where(finished, lengths, length_now)
        ranked = total if f.get("rank_raw") else total / _lp(new_len, alpha)[:, None]
        _, best = ranked.view(-1).topk(K)
        beam, token = best // V, best % V
        if f.get("penalty_every_step"):
            log_prob = ranked.view(-1)[best]  # the normalised score carried on
        else:
            log_prob = total.view(-1)[best]
        lengths = new_len[beam]
        finished = finished[beam] | (token == eos)
        hyps = torch.cat([hyps[beam], token[:, None]], dim=1)
        if t == max_len:
            finished[:] = True
        if f.get("stop_when_top_done") and finished[0]:
            break
        if finished.all():
            break
    if f.get("return_row0"):
        choice = 0
    elif f.get("pick_raw"):
        choice = int(log_prob.argmax())
    elif f.get("pick_shortest"):
        choice = int(torch.where(finished, lengths, 10**6).argmin())
    else:
        choice = int((log_prob / _lp(lengths, alpha)).argmax())
    out = hyps[choice, 1:].tolist()
    if f.get("no_finished") and eos in out:
        out = out[: out.index(eos) + 1]
    return out


def _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        rows = [
            _beam_one(
                model,
                src[b : b + 1],
                beam_size,
                max_len,
                bos_id,
                eos_id,
                length_penalty,
                **flags,
            )
            for b in range(src.shape[0])
        ]
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


def _make(**flags):
    def beam(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags)

    return beam


# ---------------------------------------------------------------- mistakes

beam_all_start = _make(all_beams_start=True)
beam_bos_in_length = _make(bos_in_length=True)
beam_no_finished = _make(no_finished=True)
beam_pad_allowed = _make(pad_allowed=True)
beam_finished_pays = _make(finished_pays=True)
beam_length_counts_pad = _make(length_counts_pad=True)
beam_rank_raw = _make(rank_raw=True)
beam_pick_raw = _make(pick_raw=True)
beam_penalty_every_step = _make(penalty_every_step=True)
beam_stop_when_top_done = _make(stop_when_top_done=True)
beam_pick_shortest = _make(pick_shortest=True)


def beam_alpha_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, 0.6)  # the paper's alpha


# ---------------------------------------------------------------- correct variants

beam_per_sentence = _make()


def beam_batched(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """All sentences at once as (B, K) tensors; finished sentences run on at no cost."""
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B, K = src.shape[0], beam_size
    with torch.no_grad():
        memory = model.encode(src).repeat_interleave(K, 0)
        src_k = src.repeat_interleave(K, 0)
        hyps = torch.full((B * K, 1), bos_id, dtype=torch.long)
        score = torch.full((B, K), -torch.inf)
        score[:, 0] = 0
        done = torch.zeros(B, K, dtype=torch.bool)
        n_tok = torch.zeros(B, K, dtype=torch.long)
        for t in range(1, max_len + 1):
            lp = model.decode(hyps, memory, src_k)[:, -1].log_softmax(-1).view(B, K, V)
            lp[..., pad] = -torch.inf
            lp = lp.masked_fill(done[..., None], -torch.inf)
            lp[..., pad] = lp[..., pad].masked_fill(done, 0.0)
            cand = score[..., None] + lp
            n_new = torch.where(done, n_tok, torch.full_like(n_tok, t))
            pen = ((5 + n_new.float()) / 6) ** length_penalty
            idx = (cand / pen[..., None]).reshape(B, -1).topk(K, -1).indices
            k_from, tok = idx // V, idx % V
            score = cand.reshape(B, -1).gather(1, idx)
            n_tok = n_new.gather(1, k_from)
            done = done.gather(1, k_from) | (tok == eos_id)
            if t == max_len:
                done[:] = True
            rows = (torch.arange(B)[:, None] * K + k_from).reshape(-1)
            hyps = torch.cat([hyps[rows], tok.reshape(-1, 1)], 1)
            if done.all():
                break
        final = score / ((5 + n_tok.float()) / 6) ** length_penalty
        best = final.argmax(-1)
        return hyps.view(B, K, -1)[torch.arange(B), best, 1:]


def beam_with_scores(
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
    """Per sentence with the model's key/value cache reordered after each step; an extra
    return_scores flag."""
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    K = beam_size
    outs, scores = [], []
    with torch.no_grad():
        for b in range(src.shape[0]):
            s = src[b : b + 1].expand(K, -1)
            memory = model.encode(s)
            cache = model.new_cache()
            seqs = torch.full((K, 1), bos_id, dtype=torch.long)
            logp = torch.tensor([0.0] + [-float("inf")] * (K - 1))
            fin = torch.zeros(K, dtype=torch.bool)
            length = torch.zeros(K)
            for t in range(1, max_len + 1):
                step = model.decode(seqs[:, -1:], memory, s, cache)[:, -1].log_softmax(-1)
                step[:, pad] = -float("inf")
                step[fin] = -float("inf")
                step[fin, pad] = 0.0
                new_len = torch.where(fin, length, torch.tensor(float(t)))
                total = logp[:, None] + step
                top = (total / ((5 + new_len[:, None]) / 6) ** length_penalty).flatten().topk(K)
                src_beam = top.indices // V
                tok = top.indices % V
                logp, length = total.flatten()[top.indices], new_len[src_beam]
                fin = fin[src_beam] | (tok == eos_id) | (t == max_len)
                seqs = torch.cat([seqs[src_beam], tok[:, None]], 1)
                cache.reorder(src_beam)
                if fin.all():
                    break
            final = logp / ((5 + length) / 6) ** length_penalty
            outs.append(seqs[final.argmax(), 1:])
            scores.append(final.max())
    width = max(len(o) for o in outs)
    padded = torch.full((len(outs), width), pad, dtype=torch.long)
    for i, o in enumerate(outs):
        padded[i, : len(o)] = o
    return (padded, torch.stack(scores)) if return_scores else padded


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start",
        beam_all_start,
        "mistake",
        "All K hypotheses start with log P = 0, so the first step fills the beam with copies.",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "My length |Y| counts BOS too (the tensor's width).",
    ),
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished,
        "mistake",
        "Hypotheses that produced EOS go on growing like the others; I cut the output at its "
        "first EOS at the end.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not exclude PAD from the candidates of open hypotheses.",
    ),
    BlindCase(
        CHECK,
        "finished_pay_for_pad",
        beam_finished_pays,
        "mistake",
        "A finished hypothesis is extended by PAD but pays PAD's log-probability each step.",
    ),
    BlindCase(
        CHECK,
        "length_counts_padding",
        beam_length_counts_pad,
        "mistake",
        "Every hypothesis's length is the step number t, also after its EOS.",
    ),
    BlindCase(
        CHECK,
        "rank_by_log_prob",
        beam_rank_raw,
        "mistake",
        "I kept the K best by raw log P and used the length penalty only to pick the winner.",
    ),
    BlindCase(
        CHECK,
        "winner_by_log_prob",
        beam_pick_raw,
        "mistake",
        "The search ranks with the penalty, but I return the hypothesis of highest raw log P.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalised score and added the next log-probability to it, so the "
        "penalty is applied again at every step.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finishes",
        beam_stop_when_top_done,
        "mistake",
        "I stop the search as soon as the top-ranked hypothesis has produced EOS.",
    ),
    BlindCase(
        CHECK,
        "shortest_finished",
        beam_pick_shortest,
        "mistake",
        "At the end I return the shortest finished hypothesis, the first one to reach EOS.",
    ),
    BlindCase(
        CHECK,
        "alpha_ignored",
        beam_alpha_ignored,
        "mistake",
        "I hard-coded the paper's alpha = 0.6 and ignored length_penalty.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_recompute",
        beam_per_sentence,
        "correct",
        "Each sentence searched alone, the prefix recomputed each step, rows padded at the end.",
    ),
    BlindCase(
        CHECK,
        "batched_no_removal",
        beam_batched,
        "correct",
        "All sentences together as (B, K) tensors without a cache; finished sentences stay in "
        "the batch, extended by PAD at no cost.",
    ),
    BlindCase(
        CHECK,
        "cache_and_scores",
        beam_with_scores,
        "correct",
        "Per sentence with model.new_cache() and cache.reorder; an extra return_scores flag.",
    ),
]
