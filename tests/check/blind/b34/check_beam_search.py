"""Blind set B34, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: int, alpha: float) -> float:
    return ((5 + length) / 6) ** alpha


def _one_sentence(
    model,
    s: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    one_start: bool = True,
    ban_pad: bool = True,
    keep_finished: bool = True,
    finished_free: bool = True,
    length_shift: int = 0,
    eos_counted: bool = True,
    rank_normalised: bool = True,
    pick_normalised: bool = True,
    pick_last: bool = False,
    use_log_softmax: bool = True,
    alpha_used: bool = True,
    limit_shift: int = 0,
    penalty_every_step: bool = False,
) -> list[int]:
    """One reader's per-sentence search; the flags are where the readers below slipped."""
    pad = model.config.pad_id
    memory = model.encode(s)
    # a hypothesis: (tokens without BOS, log P, length, finished)
    beam = [([], 0.0, 0, False)] if one_start else [([], 0.0, 0, False)] * K
    a = alpha if alpha_used else 1.0

    def length_of(toks: list[int], n: int) -> int:
        if not eos_counted and toks and toks[-1] == eos_id:
            n -= 1
        return n + length_shift

    for t in range(1, max_len + limit_shift + 1):
        open_ = [h for h in beam if not h[3]]
        cand = []
        if open_:
            fed = torch.tensor([[bos_id, *h[0]] for h in open_], dtype=torch.long)
            mem = memory.expand(len(open_), -1, -1)
            logits = model.decode(fed, mem, s.expand(len(open_), -1))[:, -1]
            step = logits.log_softmax(-1) if use_log_softmax else logits
            if ban_pad:
                step[:, pad] = float("-inf")
            for h, row in zip(open_, step):
                for v in range(row.shape[0]):
                    toks = [*h[0], v]
                    if penalty_every_step:
                        lp_new = (h[1] + float(row[v])) / _lp(t, a)
                    else:
                        lp_new = h[1] + float(row[v])
                    fin = keep_finished and v == eos_id
                    cand.append((toks, lp_new, t, fin))
        for h in beam:
            if h[3]:
                if finished_free:
                    cand.append(([*h[0], pad], h[1], h[2], True))
                else:
                    cand.append(([*h[0], pad], h[1], t, True))

        def score(h) -> float:
            if not rank_normalised or penalty_every_step:
                return h[1]
            return h[1] / _lp(length_of(h[0][: h[2]], h[2]), a)

        cand.sort(key=score, reverse=True)
        beam = cand[:K]
        if t >= max_len + limit_shift:
            beam = [(h[0], h[1], h[2], True) for h in beam]
        if all(h[3] for h in beam):
            break
    if pick_last:
        best = beam[-1]
    elif pick_normalised and not penalty_every_step:
        best = max(beam, key=lambda h: h[1] / _lp(length_of(h[0][: h[2]], h[2]), a))
    else:
        best = max(beam, key=lambda h: h[1])
    toks = best[0]
    if not keep_finished and eos_id in toks:  # cut after the first EOS
        i = toks.index(eos_id)
        toks = toks[: i + 1] + [pad] * (len(toks) - i - 1)
    return toks


def _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags) -> Tensor:
    model.eval()
    pad = model.config.pad_id
    with torch.no_grad():
        rows = [
            _one_sentence(
                model, src[b : b + 1], beam_size, max_len, bos_id, eos_id, length_penalty, **flags
            )
            for b in range(src.shape[0])
        ]
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], dtype=torch.long)


# ---------------------------------------------------------------- mistakes


def beam_k_copies_of_bos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, one_start=False)


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, ban_pad=False)


def beam_no_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, keep_finished=False
    )


def beam_finished_grows(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_free=False
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, length_shift=1)


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_counted=False
    )


def beam_rank_by_logp(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, rank_normalised=False
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_every_step=True
    )


def beam_pick_by_logp(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_normalised=False
    )


def beam_pick_last(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_last=True)


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, use_log_softmax=False
    )


def beam_alpha_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, alpha_used=False)


def beam_one_step_short(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, limit_shift=-1)


# ---------------------------------------------------------------- correct variants


def beam_lists(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_batched_topk(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """All sentences together, K rows each, the prefix recomputed at every step."""
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    with torch.no_grad():
        memory = model.encode(src).repeat_interleave(K, 0)
        srcK = src.repeat_interleave(K, 0)
        tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
        logp = torch.full((B, K), float("-inf"), dtype=torch.float64)
        logp[:, 0] = 0.0
        fin = torch.zeros(B, K, dtype=torch.bool)
        length = torch.zeros(B, K, dtype=torch.long)
        done_at = torch.zeros(B, dtype=torch.long)
        best = torch.full((B, max_len + 1), pad, dtype=torch.long)
        alive = torch.ones(B, dtype=torch.bool)
        for t in range(1, max_len + 1):
            step = model.decode(tokens, memory, srcK)[:, -1].log_softmax(-1).double()
            step[:, pad] = float("-inf")
            step = step.view(B, K, V)
            pad_only = torch.full((V,), float("-inf"), dtype=torch.float64)
            pad_only[pad] = 0.0
            step = torch.where(fin[..., None], pad_only, step)
            total = logp[..., None] + step
            new_len = torch.where(fin, length, torch.full_like(length, t))
            lp = ((5.0 + new_len.double()) / 6.0) ** length_penalty
            idx = (total / lp[..., None]).view(B, K * V).topk(K, dim=-1).indices
            beam, tok = idx // V, idx % V
            logp = total.view(B, K * V).gather(1, idx)
            length = new_len.gather(1, beam)
            fin = fin.gather(1, beam) | (tok == eos_id)
            if t >= max_len:
                fin[:] = True
            rows = (torch.arange(B)[:, None] * K + beam).view(-1)
            tokens = torch.cat([tokens[rows], tok.view(-1, 1)], dim=1)
            newly = alive & fin.all(1)
            for b in newly.nonzero().flatten().tolist():
                score = logp[b] / ((5.0 + length[b].double()) / 6.0) ** length_penalty
                k = int(score.argmax())
                best[b, :t] = tokens.view(B, K, -1)[b, k, 1:]
                done_at[b] = t
            alive &= ~newly
            if not alive.any():
                break
    return best[:, : int(done_at.max())]


def beam_dict_hyps(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Each sentence alone; hypotheses as dicts; torch.topk over the flattened candidates."""
    model.eval()
    pad = model.config.pad_id
    outs = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            s = src[b : b + 1]
            mem = model.encode(s)
            hyps = [{"toks": [bos_id], "lp": 0.0, "n": 0, "done": False}]
            for t in range(1, max_len + 1):
                scores, cands = [], []
                for h in hyps:
                    if h["done"]:
                        cands.append({**h, "toks": h["toks"] + [pad]})
                        scores.append(h["lp"] / ((5 + h["n"]) / 6) ** length_penalty)
                        continue
                    x = torch.tensor([h["toks"]])
                    lps = model.decode(x, mem, s)[0, -1].log_softmax(-1)
                    for v, lpv in enumerate(lps.tolist()):
                        if v == pad:
                            continue
                        c = {
                            "toks": h["toks"] + [v],
                            "lp": h["lp"] + lpv,
                            "n": t,
                            "done": v == eos_id,
                        }
                        cands.append(c)
                        scores.append(c["lp"] / ((5 + t) / 6) ** length_penalty)
                top = torch.tensor(scores).topk(min(beam_size, len(scores))).indices.tolist()
                hyps = [cands[i] for i in top]
                if t == max_len:
                    for h in hyps:
                        h["done"] = True
                if all(h["done"] for h in hyps):
                    break
            win = max(hyps, key=lambda h: h["lp"] / ((5 + h["n"]) / 6) ** length_penalty)
            outs.append(win["toks"][1:])
    width = max(len(o) for o in outs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outs], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "k_copies_of_bos",
        beam_k_copies_of_bos,
        "mistake",
        "I started with K hypotheses that are all just BOS",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I let every token, PAD included, extend a hypothesis",
    ),
    BlindCase(
        CHECK,
        "no_finished",
        beam_no_finished,
        "mistake",
        "I do not mark EOS hypotheses finished; I cut the output at the first EOS at the end",
    ),
    BlindCase(
        CHECK,
        "finished_grows",
        beam_finished_grows,
        "mistake",
        "a finished hypothesis gets PAD appended and its length keeps growing",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "I counted BOS in |Y| for the length penalty",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "I left EOS out of |Y|, it is not a word",
    ),
    BlindCase(
        CHECK,
        "rank_by_logp",
        beam_rank_by_logp,
        "mistake",
        "I pruned by log P and only used the length penalty to pick the winner",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I divided the running score by the length penalty at every step",
    ),
    BlindCase(
        CHECK,
        "pick_by_logp",
        beam_pick_by_logp,
        "mistake",
        "at the end I returned the hypothesis with the highest log P, no penalty",
    ),
    BlindCase(
        CHECK,
        "pick_last",
        beam_pick_last,
        "mistake",
        "I returned beam[-1], thinking the list was sorted from worst to best",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        beam_raw_logits,
        "mistake",
        "I added up the logits instead of log-softmax values",
    ),
    BlindCase(
        CHECK,
        "alpha_ignored",
        beam_alpha_ignored,
        "mistake",
        "I wrote the penalty as (5 + |Y|) / 6, forgetting the power alpha",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        beam_one_step_short,
        "mistake",
        "my loop stops one step before max_len",
    ),
    BlindCase(
        CHECK,
        "lists",
        beam_lists,
        "correct",
        "one sentence at a time with Python lists of hypotheses, prefix recomputed",
    ),
    BlindCase(
        CHECK,
        "batched_topk",
        beam_batched_topk,
        "correct",
        "all sentences in one batch, K rows each, float64 scores, no cache",
    ),
    BlindCase(
        CHECK,
        "dict_hyps",
        beam_dict_hyps,
        "correct",
        "hypotheses as dicts, one sentence at a time, topk over the candidates",
    ),
]
