"""Blind set B10, check_beam_search (chapter 15): beam search as readers write it.

The mistakes share one batched search (``_beam``, the prefix recomputed at every step) with
one slip switched on each; the correct variants are written separately.
"""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.decoding import output_limit

from .. import BlindCase

CHECK = "check_beam_search"


@torch.no_grad()
def _beam(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int | None,
    bos_id: int,
    eos_id: int,
    length_penalty: float,
    *,
    bos_in_length: bool = False,
    eos_not_counted: bool = False,
    no_penalty: bool = False,
    compound: bool = False,
    all_beams_start: bool = False,
    pad_allowed: bool = False,
    no_finished: bool = False,
    finished_length_grows: bool = False,
    pick: str = "best",
    stop_when_top_finished: bool = False,
    raw_logits: bool = False,
) -> Tensor:
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    limits = output_limit(model, src, max_len)  # (B,)
    steps = int(limits.max())
    alpha = 0.0 if no_penalty else length_penalty
    extra = 1 if bos_in_length else 0

    def lp(length: Tensor) -> Tensor:
        return ((5.0 + length.float() + extra) / 6.0) ** alpha

    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(B, K) if all_beams_start else torch.full((B, K), float("-inf"))
    log_prob[:, 0] = 0.0
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    is_eos = torch.arange(V) == eos_id  # (V,)
    out = torch.full((B, steps), pad, dtype=torch.long)
    sentence_done = torch.zeros(B, dtype=torch.bool)
    for t in range(1, steps + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]  # (B*K, V)
        step = logits.clone() if raw_logits else logits.log_softmax(dim=-1)
        if not pad_allowed:
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if not no_finished:
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step  # (B, K, V)
        if finished_length_grows:
            new_length = torch.full((B, K), t, dtype=torch.long)
        else:
            new_length = torch.where(finished, lengths, t)
        cand_length = new_length[..., None].expand(B, K, V)
        if eos_not_counted:
            cand_length = cand_length - (is_eos & ~finished[..., None]).long()
        ranked = total / lp(cand_length)
        _, best = ranked.reshape(B, K * V).topk(K, dim=-1)
        beam, token = best // V, best % V
        source = ranked if compound else total
        log_prob = source.reshape(B, K * V).gather(1, best)
        lengths = cand_length.reshape(B, K * V).gather(1, best)
        finished = finished.gather(1, beam) | (token == eos_id)
        finished |= (t >= limits)[:, None]
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if stop_when_top_finished:
            now = finished[:, 0] | finished.all(dim=1)
        else:
            now = finished.all(dim=1)
        for b in (now & ~sentence_done).nonzero().flatten().tolist():
            if compound:
                scores = log_prob[b]
            else:
                scores = log_prob[b] / lp(lengths[b])
            if pick == "best":
                k = int(scores.argmax())
            elif pick == "last":
                k = K - 1
            else:  # "log_prob"
                k = int(log_prob[b].argmax())
            out[b, :t] = tokens.view(B, K, t + 1)[b, k, 1:]
        sentence_done |= now
        if sentence_done.all():
            break
    return out[:, :t]


# ---------------------------------------------------------------- mistakes


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_not_counted=True
    )


def beam_no_penalty(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_penalty=True)


def beam_penalty_compounded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, compound=True)


def beam_all_beams_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_beams_start=True
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_allowed=True)


def beam_finished_extended(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_finished=True)


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        finished_length_grows=True,
    )


def beam_returns_last_beam(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick="last")


def beam_best_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick="log_prob")


def beam_stop_when_top_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        stop_when_top_finished=True,
    )


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, raw_logits=True)


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def beam_per_sentence_lists(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int | None,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """One sentence at a time, hypotheses as Python tuples (tokens, log P, length, finished),
    candidates sorted by score; a single BOS hypothesis at the start instead of K rows."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    limits = output_limit(model, src, max_len)

    def score(logp: float, length: int) -> float:
        return logp / ((5.0 + length) / 6.0) ** length_penalty

    results, widths = [], []
    for b in range(src.shape[0]):
        one = src[b : b + 1]
        memory = model.encode(one)
        beams = [([bos_id], 0.0, 0, False)]
        t = 0
        while True:
            t += 1
            open_rows = [h for h in beams if not h[3]]
            candidates = [(h[0] + [pad], h[1], h[2], True) for h in beams if h[3]]
            if open_rows:
                fed = torch.tensor([h[0] for h in open_rows])
                mem = memory.expand(len(open_rows), -1, -1)
                logp = model.decode(fed, mem, one.expand(len(open_rows), -1))[:, -1]
                logp = logp.log_softmax(dim=-1)
                for h, row in zip(open_rows, logp.tolist(), strict=True):
                    for tok, lp_tok in enumerate(row):
                        if tok == pad:
                            continue
                        total = torch.tensor(h[1]) + torch.tensor(lp_tok)  # float32 sum
                        candidates.append((h[0] + [tok], float(total), t, tok == eos_id))
            candidates.sort(key=lambda h: score(h[1], h[2]), reverse=True)
            beams = candidates[:beam_size]
            if t >= int(limits[b]):
                beams = [(h[0], h[1], h[2], True) for h in beams]
            if all(h[3] for h in beams):
                break
        best = max(beams, key=lambda h: score(h[1], h[2]))
        results.append(best[0][1:])
        widths.append(t)
    model.train(was_training)
    width = max(widths)
    rows = [r + [pad] * (width - len(r)) for r in results]
    return torch.tensor(rows, dtype=torch.long, device=src.device)


@torch.no_grad()
def beam_two_stage_topk_cached(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int | None,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Batched with the package's KVCache; each hypothesis proposes its own top K first, then
    the best K of those K * K survive (the global top K is always among them); every sentence
    stays in the batch until all are finished."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    limits = output_limit(model, src, max_len)
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_rep = src.repeat_interleave(K, dim=0)
    cache = model.new_cache()
    hyps = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp = torch.tensor([0.0] + [float("-inf")] * (K - 1)).repeat(B, 1)  # (B, K)
    length = torch.zeros(B, K, dtype=torch.long)
    done = torch.zeros(B, K, dtype=torch.bool)
    out = torch.full((B, int(limits.max())), pad, dtype=torch.long)
    closed = torch.zeros(B, dtype=torch.bool)
    t = 0
    while not closed.all():
        t += 1
        step = model.decode(hyps[:, -1:], memory, src_rep, cache)[:, -1].log_softmax(-1)
        step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        frozen = torch.full_like(step, float("-inf"))
        frozen[..., pad] = 0.0
        step = torch.where(done[..., None], frozen, step)
        cand = logp[..., None] + step  # (B, K, V)
        cand_len = torch.where(done, length, torch.full_like(length, t))  # (B, K)
        penalty = ((5.0 + cand_len.float()) / 6.0) ** length_penalty  # (B, K)
        ranked = cand / penalty[..., None]
        top_r, top_tok = ranked.topk(K, dim=-1)  # (B, K, K): stage 1, per hypothesis
        _, pick = top_r.view(B, K * K).topk(K, dim=-1)  # (B, K): stage 2
        parent = pick // K
        token = top_tok.view(B, K * K).gather(1, pick)
        logp = cand.view(B, K * V).gather(1, parent * V + token)
        length = cand_len.gather(1, parent)
        done = done.gather(1, parent) | (token == eos_id) | (limits[:, None] <= t)
        rows = (torch.arange(B)[:, None] * K + parent).flatten()
        hyps = torch.cat([hyps[rows], token.reshape(-1, 1)], dim=1)
        cache.reorder(rows, cross=False)
        newly = done.all(dim=1) & ~closed
        if newly.any():
            final = logp / ((5.0 + length.float()) / 6.0) ** length_penalty
            best = final.argmax(dim=1)
            seqs = hyps.view(B, K, t + 1)[torch.arange(B), best, 1:]  # (B, t)
            out[newly, :t] = seqs[newly]
            closed |= newly
    model.train(was_training)
    return out[:, :t].to(src.device)


@torch.no_grad()
def beam_sorted_flat_scores(
    model,
    src: Tensor,
    beam_size: int = 4,
    max_len: int | None = None,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    use_cache: bool = False,
    return_scores: bool = False,
):
    """model(src, prefix) at every step, scores ranked with torch.sort over the K*V
    candidates; finished sentences leave the batch; extra keyword options with defaults."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    K = beam_size
    limits = output_limit(model, src, max_len)
    out = torch.full((src.shape[0], int(limits.max())), pad, dtype=torch.long)
    best_scores = torch.zeros(src.shape[0])
    active = list(range(src.shape[0]))
    seqs = torch.full((len(active) * K, 1), bos_id, dtype=torch.long)
    logp = torch.full((len(active), K), float("-inf"))
    logp[:, 0] = 0
    lens = torch.zeros(len(active), K, dtype=torch.long)
    fin = torch.zeros(len(active), K, dtype=torch.bool)
    t = 0
    while active:
        t += 1
        n = len(active)
        rep = src[active].repeat_interleave(K, dim=0)
        logits = model(rep, seqs)[:, -1]  # (n*K, V)
        lsm = torch.log_softmax(logits, dim=-1)
        lsm[:, pad] = float("-inf")
        lsm = lsm.view(n, K, V)
        pad_only = torch.full((V,), float("-inf"))
        pad_only[pad] = 0.0
        lsm = torch.where(fin.unsqueeze(-1), pad_only.expand(n, K, V), lsm)
        total = (logp.unsqueeze(-1) + lsm).view(n, K * V)
        new_len = torch.where(fin, lens, torch.full_like(lens, t))
        lp = ((5.0 + new_len.float()) / 6.0) ** length_penalty  # (n, K)
        ranked = total / lp.repeat_interleave(V, dim=1)
        order = torch.sort(ranked, dim=1, descending=True).indices[:, :K]  # (n, K)
        parent, token = order // V, order % V
        logp = total.gather(1, order)
        lens = new_len.gather(1, parent)
        fin = fin.gather(1, parent) | (token == eos_id)
        fin |= (limits[active] <= t).unsqueeze(1)
        seqs = torch.cat(
            [seqs.view(n, K, -1).gather(1, parent[..., None].expand(n, K, t)), token[..., None]],
            dim=2,
        ).view(n * K, t + 1)
        keep = []
        for i, b in enumerate(active):
            if fin[i].all():
                final = logp[i] / ((5.0 + lens[i].float()) / 6.0) ** length_penalty
                j = int(final.argmax())
                out[b, :t] = seqs.view(n, K, -1)[i, j, 1:]
                best_scores[b] = final[j]
            else:
                keep.append(i)
        if len(keep) < n:
            idx = torch.tensor(keep, dtype=torch.long)
            active = [active[i] for i in keep]
            logp, lens, fin = logp[idx], lens[idx], fin[idx]
            seqs = seqs.view(n, K, -1)[idx].reshape(len(keep) * K, t + 1)
    model.train(was_training)
    out = out[:, :t].to(src.device)
    return (out, best_scores) if return_scores else out


CASES = [
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "My |Y| in the length penalty counts BOS as well (one more than the output tokens).",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "I did not count EOS in |Y|: a hypothesis that ends gets the length of its words only.",
    ),
    BlindCase(
        CHECK,
        "no_length_penalty",
        beam_no_penalty,
        "mistake",
        "I ranked by log P alone and never used the length_penalty argument.",
    ),
    BlindCase(
        CHECK,
        "penalty_compounded",
        beam_penalty_compounded,
        "mistake",
        "I stored the penalized score as the hypothesis's score, so at the next step the "
        "penalty divides a score that was already divided (applied at every step).",
    ),
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_beams_start,
        "mistake",
        "All K copies of BOS start with score 0, so the first step picks the same tokens K "
        "times and the beam holds duplicates.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I did not exclude PAD from the candidates, so it can be generated like a word.",
    ),
    BlindCase(
        CHECK,
        "finished_extended",
        beam_finished_extended,
        "mistake",
        "No finished set: I noted which hypotheses produced EOS (to stop the search) but kept "
        "extending them with real tokens at their cost.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "A finished hypothesis is extended by PAD at no cost, but its length keeps growing with "
        "the step, so its penalty changes.",
    ),
    BlindCase(
        CHECK,
        "returns_last_beam",
        beam_returns_last_beam,
        "mistake",
        "At the end I return the last of the K hypotheses (beam K - 1) instead of the best one.",
    ),
    BlindCase(
        CHECK,
        "best_by_log_prob",
        beam_best_by_log_prob,
        "mistake",
        "I rank with the length penalty during the search but pick the final hypothesis by its "
        "raw log P.",
    ),
    BlindCase(
        CHECK,
        "stop_when_top_finished",
        beam_stop_when_top_finished,
        "mistake",
        "A sentence stops as soon as its best-ranked hypothesis has produced EOS, while other "
        "hypotheses are still open.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I added the raw logits to the scores instead of log_softmax of them.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_lists",
        beam_per_sentence_lists,
        "correct",
        "Each sentence searched alone with Python lists of (tokens, log P, length, finished), "
        "one BOS hypothesis at the start, candidates sorted by score.",
    ),
    BlindCase(
        CHECK,
        "two_stage_topk_cached",
        beam_two_stage_topk_cached,
        "correct",
        "Batched with the KVCache; top K per hypothesis first, then the best K of the K*K; "
        "finished sentences stay in the batch until all are done.",
    ),
    BlindCase(
        CHECK,
        "sorted_flat_scores",
        beam_sorted_flat_scores,
        "correct",
        "Calls model(src, prefix) every step, ranks with torch.sort instead of topk, drops "
        "finished sentences; optional use_cache/return_scores keywords.",
    ),
]
