"""Blind set B21, check_beam_search (chapter 15): beam searches as readers write them."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    length_penalty: float,
    slip: str = "",
    use_cache: bool = False,
) -> Tensor:
    """All sentences together, K rows each, until every hypothesis has finished (no row is
    dropped early). ``slip`` names the one thing a case does wrong."""
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.full((B, K), float("-inf"))
    log_prob[:, 0] = 0.0
    if slip == "all_beams_start":
        log_prob[:] = 0.0
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    cache = model.new_cache() if use_cache else None
    for t in range(1, max_len + 1):
        fed = tokens[:, -1:] if use_cache else tokens
        logits = model.decode(fed, memory, src_k, cache)[:, -1]  # (B*K, V)
        step = logits.clone() if slip == "raw_logits" else logits.log_softmax(dim=-1)
        if slip != "pad_allowed":
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if slip != "eos_not_final":
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step  # (B, K, V)
        if slip in ("eos_not_final", "length_grows"):
            new_length = torch.full_like(lengths, t)
        elif slip == "bos_counted":
            new_length = torch.where(finished, lengths, t + 1)
        else:
            new_length = torch.where(finished, lengths, t)
        if slip == "no_exponent":
            penalty = (5.0 + new_length.float()) / 6.0
        else:
            penalty = _lp(new_length, length_penalty)
        if slip == "raw_rank":
            ranked = total
        elif slip == "penalty_multiplied":
            ranked = total * penalty[..., None]
        else:
            ranked = total / penalty[..., None]
        if slip == "batch_topk":
            _, best = ranked.reshape(-1).topk(B * K)  # one ranking for the whole batch
            rows, token = best // V, best % V
            log_prob = total.reshape(-1)[best].view(B, K)
            lengths = new_length.reshape(-1)[rows].view(B, K)
            finished = finished.reshape(-1)[rows].view(B, K)
            token = token.view(B, K)
        else:
            _, best = ranked.view(B, K * V).topk(K, dim=-1)
            beam, token = best // V, best % V
            log_prob = total.view(B, K * V).gather(1, best)
            lengths = new_length.gather(1, beam)
            finished = finished.gather(1, beam)
            rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        if slip == "eos_not_final":
            finished = token == eos_id
        else:
            finished = finished | (token == eos_id)
        if t >= max_len:
            finished[:] = True
        if slip == "no_reorder":
            rows = torch.arange(B * K)  # the new tokens appended to the old rows
        tokens = torch.cat([tokens[rows], token.view(B * K, 1)], dim=1)
        if cache is not None:
            cache.reorder(rows, cross=False)
        if finished.all():
            break
    if slip == "final_raw":
        scores = log_prob
    elif slip == "no_exponent":
        scores = log_prob / ((5.0 + lengths.float()) / 6.0)
    else:
        scores = log_prob / _lp(lengths, length_penalty)
    best_beam = scores.argmax(dim=1)  # (B,)
    return tokens.view(B, K, -1)[torch.arange(B), best_beam, 1:]


def _case(slip: str):
    def my_beam_search(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, slip)

    return my_beam_search


# ---------------------------------------------------------------- correct variants


def beam_batched(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """All sentences searched together without dropping finished ones, the prefix re-fed."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_batched_cache(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """The same with the model's key/value cache, reordered to follow the beams."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, use_cache=True)


@torch.no_grad()
def beam_lists(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """One sentence at a time, hypotheses as Python tuples, sorted with sorted()."""
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id

    def score(h):
        return h[1] / ((5.0 + h[3]) / 6.0) ** length_penalty

    results = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        hyps = [([bos_id], 0.0, False, 0)]  # tokens, log P, finished, length
        for t in range(1, max_len + 1):
            cands = []
            for toks, lp, fin, length in hyps:
                if fin:
                    cands.append((toks + [pad], lp, True, length))
                    continue
                logp = model.decode(torch.tensor([toks]), memory, s)[0, -1].log_softmax(-1)
                for v in range(V):
                    if v != pad:
                        ended = v == eos_id or t >= max_len
                        cands.append((toks + [v], lp + float(logp[v]), ended, t))
            hyps = sorted(cands, key=score, reverse=True)[:beam_size]
            if all(h[2] for h in hyps):
                break
        results.append(max(hyps, key=score)[0][1:])
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start",
        _case("all_beams_start"),
        "mistake",
        "every beam starts from BOS with log P 0, so the first step fills K copies",
    ),
    BlindCase(
        CHECK,
        "raw_logits",
        _case("raw_logits"),
        "mistake",
        "I added raw logits instead of log_softmax",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        _case("pad_allowed"),
        "mistake",
        "I never removed PAD from the candidates",
    ),
    BlindCase(
        CHECK,
        "eos_not_final",
        _case("eos_not_final"),
        "mistake",
        "no finished set: a hypothesis after EOS keeps growing with ordinary tokens",
    ),
    BlindCase(
        CHECK,
        "length_grows",
        _case("length_grows"),
        "mistake",
        "the length of a finished hypothesis keeps growing with the step",
    ),
    BlindCase(
        CHECK,
        "bos_counted",
        _case("bos_counted"),
        "mistake",
        "I counted BOS in |Y| (length t + 1 at step t)",
    ),
    BlindCase(
        CHECK,
        "no_exponent",
        _case("no_exponent"),
        "mistake",
        "the length penalty (5 + |Y|) / 6 without the ** alpha",
    ),
    BlindCase(
        CHECK,
        "raw_rank",
        _case("raw_rank"),
        "mistake",
        "beams ranked by log P alone; the penalty only used for the final choice",
    ),
    BlindCase(
        CHECK,
        "penalty_multiplied",
        _case("penalty_multiplied"),
        "mistake",
        "I multiplied log P by the penalty instead of dividing",
    ),
    BlindCase(
        CHECK,
        "batch_topk",
        _case("batch_topk"),
        "mistake",
        "one topk over the whole batch's candidates, not per sentence",
    ),
    BlindCase(
        CHECK,
        "no_reorder",
        _case("no_reorder"),
        "mistake",
        "the new tokens appended to the old rows: the surviving beams are not followed",
    ),
    BlindCase(
        CHECK,
        "final_raw",
        _case("final_raw"),
        "mistake",
        "the best finished hypothesis chosen by log P without the length penalty",
    ),
    BlindCase(
        CHECK,
        "batched_no_drop",
        beam_batched,
        "correct",
        "all sentences run until every hypothesis has finished; prefix re-fed each step",
    ),
    BlindCase(
        CHECK,
        "batched_kv_cache",
        beam_batched_cache,
        "correct",
        "the same with model.new_cache() and cache.reorder(rows, cross=False)",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        beam_lists,
        "correct",
        "one sentence at a time with Python lists of hypotheses and sorted()",
    ),
]
