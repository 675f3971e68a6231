"""Blind set B12, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.double()) / 6.0) ** alpha


@torch.no_grad()
def _one(
    model,
    src,
    K,
    max_len,
    bos_id,
    eos_id,
    alpha,
    *,
    finished_frozen=True,
    bos_len=0,
    penalty_each_step=False,
    one_from_bos=True,
    ban_pad=True,
    final_raw=False,
    eos_not_counted=False,
    stop_when_top_done=False,
    per_beam_argmax=False,
):
    """One sentence (1, S); returns its tokens without BOS and the steps taken."""
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    memory = model.encode(src).repeat(K, 1, 1)
    srcK = src.repeat(K, 1)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(K, dtype=torch.double)
    if one_from_bos:
        log_prob[1:] = float("-inf")
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"), dtype=torch.double)
    only_pad[pad] = 0.0
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, srcK)[:, -1]
        step = logits.log_softmax(-1).double()
        if ban_pad:
            step[:, pad] = float("-inf")
        if finished_frozen:
            step = torch.where(finished[:, None], only_pad, step)
        total = log_prob[:, None] + step  # (K, V)
        cand_len = torch.full((K, V), t + bos_len, dtype=torch.long)
        if eos_not_counted:
            cand_len[:, eos_id] -= 1
        if finished_frozen:
            cand_len = torch.where(finished[:, None], lengths[:, None], cand_len)
        ranked = total / _lp(cand_len, alpha)
        if per_beam_argmax:
            token = ranked.argmax(-1)
            beam = torch.arange(K)
            best = beam * V + token
        else:
            _, best = ranked.view(-1).topk(K)
            beam, token = best // V, best % V
        if penalty_each_step:
            log_prob = ranked.view(-1)[best]
        else:
            log_prob = total.view(-1)[best]
        lengths = cand_len.view(-1)[best]
        finished = finished[beam] | (token == eos_id)
        if t >= max_len:
            finished[:] = True
        tokens = torch.cat([tokens[beam], token[:, None]], 1)
        if finished.all() or (stop_when_top_done and finished[0]):
            break
    if penalty_each_step:
        score = log_prob
    elif final_raw:
        score = log_prob.clone()
    else:
        score = log_prob / _lp(lengths, alpha)
    if stop_when_top_done:
        score = torch.where(finished, score, torch.full_like(score, float("-inf")))
    return tokens[int(score.argmax()), 1:], t


def _search(model, src, K, max_len, bos_id, eos_id, alpha, **flags):
    model.eval()
    pad = model.config.pad_id
    rows = [
        _one(model, src[b : b + 1], K, max_len, bos_id, eos_id, alpha, **flags)
        for b in range(src.shape[0])
    ]
    T = max(r[1] for r in rows)
    out = torch.full((src.shape[0], T), pad, dtype=torch.long)
    for b, (toks, _) in enumerate(rows):
        out[b, : len(toks)] = toks
    return out


# ---------------------------------------------------------------- mistakes


def beam_no_finished_set(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_frozen=False
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_len=1)


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_each_step=True
    )


def beam_all_from_bos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, one_from_bos=False
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, ban_pad=False)


def beam_final_without_penalty(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, final_raw=True)


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_not_counted=True
    )


def beam_stop_when_top_done(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, stop_when_top_done=True
    )


def beam_per_beam_argmax(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        per_beam_argmax=True,
        one_from_bos=False,
    )


@torch.no_grad()
def beam_last_beam(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Finished hypotheses are taken out of the beam; at the end the first open beam is
    returned if there is one."""
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    outs = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        mem = model.encode(s)
        beams = [([bos_id], 0.0)]
        done = []
        for t in range(1, max_len + 1):
            cands = []
            for toks, lp in beams:
                logp = model.decode(torch.tensor([toks]), mem, s)[0, -1].log_softmax(-1)
                logp[pad] = float("-inf")
                for v in range(V):
                    cands.append((toks + [v], lp + float(logp[v])))
            cands.sort(key=lambda c: c[1] / ((5 + t) / 6) ** length_penalty, reverse=True)
            beams = []
            for toks, lp in cands[:beam_size]:
                (done if toks[-1] == eos_id else beams).append((toks, lp))
            if not beams:
                break
        best = (
            beams[0]
            if beams
            else max(done, key=lambda c: c[1] / ((5 + len(c[0]) - 1) / 6) ** length_penalty)
        )
        outs.append(best[0][1:])
    T = max(len(o) for o in outs)
    return torch.tensor([o + [pad] * (T - len(o)) for o in outs], dtype=torch.long)


# ---------------------------------------------------------------- correct variants


def beam_per_sentence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Each sentence searched alone, the whole prefix recomputed each step, in float64."""
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_batched(
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
    """All sentences at once as B*K rows, no cache; finished sentences stay in the batch (only
    PAD) until every one is done; an extra return_scores argument."""
    model.eval()
    pad, V, K, B = model.config.pad_id, model.config.tgt_vocab_size, beam_size, src.shape[0]
    memory = model.encode(src).repeat_interleave(K, 0)
    srcK = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    lp = torch.full((B, K), float("-inf"))
    lp[:, 0] = 0
    fin = torch.zeros(B, K, dtype=torch.bool)
    lens = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0
    for t in range(1, max_len + 1):
        step = model.decode(tokens, memory, srcK)[:, -1].log_softmax(-1)
        step[:, pad] = float("-inf")
        step = torch.where(fin.view(-1, 1), only_pad, step).view(B, K, V)
        total = lp[..., None] + step
        nl = torch.where(fin, lens, torch.full_like(lens, t))
        ranked = total / (((5.0 + nl.float()) / 6.0) ** length_penalty)[..., None]
        best = ranked.view(B, -1).topk(K, -1).indices
        beam, token = best // V, best % V
        lp = total.view(B, -1).gather(1, best)
        lens = nl.gather(1, beam)
        fin = fin.gather(1, beam) | (token == eos_id) | (t >= max_len)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], 1)
        if fin.all():
            break
    scores = lp / ((5.0 + lens.float()) / 6.0) ** length_penalty
    pick = scores.argmax(-1)
    out = tokens.view(B, K, -1)[torch.arange(B), pick, 1:]
    # a sentence that finished earlier holds only PAD after its EOS; trim columns all PAD
    # beyond the last step any sentence needed is impossible here: out has t columns
    return (out, scores.max(-1).values) if return_scores else out


def beam_with_cache(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Per sentence with the model's KVCache: one token per step, the cache reordered with the
    surviving beams."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    results = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            s = src[b : b + 1].repeat(K, 1)
            mem = model.encode(src[b : b + 1]).repeat(K, 1, 1)
            cache = model.new_cache()
            toks = torch.full((K, 1), bos_id, dtype=torch.long)
            lp = torch.tensor([0.0] + [float("-inf")] * (K - 1))
            fin = torch.zeros(K, dtype=torch.bool)
            lens = torch.zeros(K, dtype=torch.long)
            for t in range(1, max_len + 1):
                step = model.decode(toks[:, -1:], mem, s, cache, last_only=True)[:, -1]
                step = step.log_softmax(-1)
                step[:, pad] = float("-inf")
                step[fin] = float("-inf")
                step[fin, pad] = 0.0
                total = lp[:, None] + step
                nl = torch.where(fin, lens, torch.full_like(lens, t))
                ranked = total / (((5.0 + nl.float()) / 6.0) ** length_penalty)[:, None]
                best = ranked.flatten().topk(K).indices
                beam, token = best // V, best % V
                lp, lens = total.flatten()[best], nl[beam]
                fin = fin[beam] | (token == eos_id) | (t >= max_len)
                toks = torch.cat([toks[beam], token[:, None]], 1)
                cache.reorder(beam, cross=False)
                if fin.all():
                    break
            score = lp / ((5.0 + lens.float()) / 6.0) ** length_penalty
            results.append(toks[int(score.argmax()), 1:])
    T = max(len(r) for r in results)
    out = torch.full((len(results), T), pad, dtype=torch.long)
    for i, r in enumerate(results):
        out[i, : len(r)] = r
    return out


CASES = [
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "A hypothesis that produced EOS keeps being extended like the others (no "
        "finished hypotheses).",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "I counted BOS in |Y| for the length penalty.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalized score and added the next log-probabilities to it.",
    ),
    BlindCase(
        CHECK,
        "all_beams_from_bos",
        beam_all_from_bos,
        "mistake",
        "All K hypotheses start with score 0, so the first step yields K copies.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not forbid PAD among the candidates.",
    ),
    BlindCase(
        CHECK,
        "final_choice_raw_log_prob",
        beam_final_without_penalty,
        "mistake",
        "At the end I picked the hypothesis with the best log P, without the penalty.",
    ),
    BlindCase(
        CHECK, "eos_not_in_length", beam_eos_not_counted, "mistake", "I did not count EOS in |Y|."
    ),
    BlindCase(
        CHECK,
        "stop_when_top_finishes",
        beam_stop_when_top_done,
        "mistake",
        "I stopped as soon as the best-ranked hypothesis had finished.",
    ),
    BlindCase(
        CHECK,
        "argmax_per_beam",
        beam_per_beam_argmax,
        "mistake",
        "Each beam keeps its own best token: K greedy searches side by side.",
    ),
    BlindCase(
        CHECK,
        "last_open_beam",
        beam_last_beam,
        "mistake",
        "Finished hypotheses leave the beam; at the end I return the first open beam "
        "instead of the best finished hypothesis.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_float64",
        beam_per_sentence,
        "correct",
        "Each sentence alone, whole prefix recomputed each step, scores in float64.",
    ),
    BlindCase(
        CHECK,
        "batched_no_cache",
        beam_batched,
        "correct",
        "All sentences batched as B*K rows without a cache; finished sentences stay in "
        "the batch; an extra return_scores argument.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_kv_cache",
        beam_with_cache,
        "correct",
        "Per sentence with the model's KVCache, reordered with the surviving beams.",
    ),
]
