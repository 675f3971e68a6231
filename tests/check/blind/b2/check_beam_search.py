"""Blind cases for check_beam_search (chapter 15), written from the chapter's text only."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.decoding import gnmt_length_penalty, output_limit

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam_one(
    model,
    src_b,
    K,
    limit,
    bos_id,
    eos_id,
    alpha,
    *,
    bos_in_length=False,
    penalty_every_step=False,
    pick_by_logp=False,
    all_beams_grow=False,
    pad_allowed=False,
    eos_not_counted=False,
    no_finished_set=False,
):
    """Beam search of one sentence (1, S); returns (tokens without BOS, steps taken)."""
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    memory = model.encode(src_b).repeat(K, 1, 1)
    src_k = src_b.repeat(K, 1)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(K) if all_beams_grow else torch.full((K,), float("-inf"))
    log_prob[0] = 0.0
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    t = 0
    for t in range(1, limit + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]
        step = logits.log_softmax(-1)
        if not pad_allowed:
            step[:, pad] = float("-inf")
        if not no_finished_set:
            step = torch.where(finished[:, None], only_pad, step)
        total = log_prob[:, None] + step  # (K, V)
        open_len = torch.full((K, V), t + (1 if bos_in_length else 0), dtype=torch.long)
        if eos_not_counted:
            open_len[:, eos_id] -= 1
        new_len = torch.where(finished[:, None], lengths[:, None], open_len)
        ranked = total / _lp(new_len, alpha)
        best = ranked.view(-1).topk(K).indices
        beam, tok = best // V, best % V
        log_prob = (ranked if penalty_every_step else total).view(-1)[best]
        lengths = new_len.view(-1)[best]
        tokens = torch.cat([tokens[beam], tok[:, None]], dim=1)
        if no_finished_set:
            if tok[0] == eos_id or t >= limit:
                return tokens[0, 1:], t  # the best hypothesis just ended: stop here
            continue
        finished = finished[beam] | (tok == eos_id)
        if t >= limit:
            finished[:] = True
        if finished.all():
            break
    scores = log_prob if (pick_by_logp or penalty_every_step) else log_prob / _lp(lengths, alpha)
    return tokens[int(scores.max(dim=-1).indices), 1:], t


def _beam(model, src, K, max_len, bos_id, eos_id, alpha, **flags):
    was_training = model.training
    model.eval()
    limits = output_limit(model, src, max_len)
    rows, steps = [], 0
    for b in range(src.shape[0]):
        toks, t = _beam_one(
            model, src[b : b + 1], K, int(limits[b]), bos_id, eos_id, alpha, **flags
        )
        rows.append(toks)
        steps = max(steps, t)
    model.train(was_training)
    out = torch.full((src.shape[0], steps), model.config.pad_id, dtype=torch.long)
    for b, toks in enumerate(rows):
        out[b, : len(toks)] = toks
    return out


def _make(**flags):
    def search(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **flags)

    return search


# ---- mistakes -------------------------------------------------------------------------------

bos_in_length = _make(bos_in_length=True)
penalty_every_step = _make(penalty_every_step=True)
pick_by_logp = _make(pick_by_logp=True)
all_beams_grow = _make(all_beams_grow=True)
pad_allowed = _make(pad_allowed=True)
eos_not_counted = _make(eos_not_counted=True)
no_finished_set = _make(no_finished_set=True)


def penalty_argument_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, 0.6)


# ---- reader's slip ------------------------------------------------------------------------------


def alpha_keyword(model, src, beam_size, max_len, *, bos_id, eos_id, alpha=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, alpha)


# ---- correct variants ---------------------------------------------------------------------------


def per_sentence_tensors(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def hypothesis_lists(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Each hypothesis is (tokens, log P, finished); candidates sorted by score in Python."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    limits = output_limit(model, src, max_len)
    results, longest = [], 0
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        hyps = [([bos_id], torch.zeros(()), False)]
        limit = int(limits[b])
        for t in range(1, limit + 1):
            open_h = [h for h in hyps if not h[2]]
            cands = []  # (score, tokens, logp, finished)
            for toks, lp_, _ in [h for h in hyps if h[2]]:
                n = len([x for x in toks[1:] if x != pad])
                cands.append(
                    (
                        float(lp_ / gnmt_length_penalty(torch.tensor(n), length_penalty)),
                        toks + [pad],
                        lp_,
                        True,
                    )
                )
            if open_h:
                fed = torch.tensor([h[0] for h in open_h])
                logp = model.decode(
                    fed, memory.expand(len(open_h), -1, -1), s.expand(len(open_h), -1)
                )[:, -1].log_softmax(-1)
                pen = gnmt_length_penalty(torch.tensor(t), length_penalty)
                for (toks, lp_, _), row in zip(open_h, logp):
                    total = lp_ + row
                    for v in range(row.shape[0]):
                        if v == pad:
                            continue
                        cands.append(
                            (float(total[v] / pen), toks + [v], total[v], v == eos_id or t >= limit)
                        )
            cands.sort(key=lambda c: -c[0])
            hyps = [(c[1], c[2], c[3]) for c in cands[:beam_size]]
            if all(h[2] for h in hyps):
                break
        best = max(
            hyps,
            key=lambda h: float(
                h[1]
                / gnmt_length_penalty(
                    torch.tensor(len([x for x in h[0][1:] if x != pad])), length_penalty
                )
            ),
        )
        results.append(best[0][1:])
        longest = max(longest, t)
    model.train(was_training)
    out = torch.full((src.shape[0], longest), pad, dtype=torch.long)
    for b, toks in enumerate(results):
        out[b, : len(toks)] = torch.tensor(toks[:longest])
    return out


@torch.no_grad()
def batched_with_cache(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """All sentences together with the key/value cache; a finished sentence is only recorded."""
    was_training = model.training
    model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    limits = output_limit(model, src, max_len)
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp = torch.full((B, K), float("-inf"))
    logp[:, 0] = 0
    fin = torch.zeros(B, K, dtype=torch.bool)
    lens = torch.zeros(B, K, dtype=torch.long)
    recorded = [None] * B
    stop_at = 0
    cache = model.new_cache()
    for t in range(1, int(limits.max()) + 1):
        step = model.decode(tokens[:, -1:], memory, src_k, cache)[:, -1].log_softmax(-1)
        step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        pad_only = torch.full_like(step, float("-inf"))
        pad_only[..., pad] = 0.0
        step = torch.where(fin[..., None], pad_only, step)
        total = logp[..., None] + step
        new_len = torch.where(fin, lens, torch.full_like(lens, t))
        ranked = total / gnmt_length_penalty(new_len, length_penalty)[..., None]
        best = ranked.view(B, K * V).topk(K, dim=-1).indices
        beam, tok = best // V, best % V
        logp = total.view(B, K * V).gather(1, best)
        lens = new_len.gather(1, beam)
        fin = fin.gather(1, beam) | (tok == eos_id) | (t >= limits)[:, None]
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], tok.view(-1, 1)], dim=1)
        cache.reorder(rows)
        for b in range(B):
            if recorded[b] is None and bool(fin[b].all()):
                score = logp[b] / gnmt_length_penalty(lens[b], length_penalty)
                recorded[b] = tokens.view(B, K, -1)[b, int(score.max(-1).indices), 1:].clone()
                stop_at = t
        if all(r is not None for r in recorded):
            break
    model.train(was_training)
    out = torch.full((B, stop_at), pad, dtype=torch.long)
    for b, toks in enumerate(recorded):
        out[b, : len(toks)] = toks
    return out


CASES = [
    BlindCase(
        CHECK,
        "bos_in_length",
        bos_in_length,
        "mistake",
        "I counted BOS in |Y|, so every length in the penalty is one too large",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        penalty_every_step,
        "mistake",
        "I stored the length-normalized score as the running score, so the penalty is applied again at every step",
    ),
    BlindCase(
        CHECK,
        "pick_by_logp",
        pick_by_logp,
        "mistake",
        "I ranked with the penalty while searching but picked the final hypothesis by its raw log P",
    ),
    BlindCase(
        CHECK,
        "all_beams_grow",
        all_beams_grow,
        "mistake",
        "I started all K hypotheses from BOS with log P = 0, so the first step fills the beam with copies",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        pad_allowed,
        "mistake",
        "I let open hypotheses be extended by PAD like any token",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        eos_not_counted,
        "mistake",
        "I did not count EOS in |Y| for the length penalty",
    ),
    BlindCase(
        CHECK,
        "no_finished_set",
        no_finished_set,
        "mistake",
        "I treated EOS like any token and stopped when the best hypothesis of a step ended with EOS, with no finished set",
    ),
    BlindCase(
        CHECK,
        "penalty_argument_ignored",
        penalty_argument_ignored,
        "mistake",
        "I always used alpha = 0.6 and ignored the length_penalty argument",
    ),
    BlindCase(
        CHECK,
        "alpha_keyword",
        alpha_keyword,
        "mistake",
        "I named the keyword argument alpha instead of length_penalty",
    ),
    BlindCase(
        CHECK,
        "per_sentence_tensors",
        per_sentence_tensors,
        "correct",
        "I searched each sentence alone with K rows, recomputing the prefix at every step",
    ),
    BlindCase(
        CHECK,
        "hypothesis_lists",
        hypothesis_lists,
        "correct",
        "I kept the hypotheses as Python lists of (tokens, log P, finished) and sorted all candidates by score",
    ),
    BlindCase(
        CHECK,
        "batched_with_cache",
        batched_with_cache,
        "correct",
        "I searched all sentences together with the cache and recorded each sentence's best when its beam had all finished",
    ),
]
