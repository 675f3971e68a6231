"""Blind set B14, check_beam_search (chapter 15): beam search as readers write it.

The mistakes share one batched search without a cache (``_beam``) with a switch per slip, so
each case differs from a right search in exactly the way its description says.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


@torch.no_grad()
def _beam(model, src, K, max_len, bos_id, eos_id, alpha, slip=""):
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, 0)
    srcK = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.full((B, K), float("-inf"))
    if slip == "all_beams_start":
        score[:] = 0.0
    else:
        score[:, 0] = 0.0
    fin = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0

    def lp(n):
        return ((5.0 + n.float()) / 6.0) ** alpha

    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, srcK)[:, -1]
        if slip == "probs_added":
            step = logits.softmax(-1)
        else:
            step = logits.log_softmax(-1)
        if slip != "pad_allowed":
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if slip == "finished_dropped":
            step = torch.where(fin[..., None], torch.full_like(step, float("-inf")), step)
        elif slip != "no_finished_set":
            step = torch.where(fin[..., None], only_pad, step)
        total = score[..., None] + step
        new_len = torch.where(fin, length, t)
        if slip == "bos_in_length":
            new_len = torch.where(fin, length, t + 1)
        if slip == "eos_not_counted":
            eos_step = torch.zeros(V, dtype=torch.bool)
            eos_step[eos_id] = True
            lens = new_len[..., None] - (eos_step & ~fin[..., None]).long()
            ranked = total / lp(lens)
        elif slip == "rank_without_penalty":
            ranked = total.clone()
        elif slip == "penalty_multiplied":
            ranked = total * lp(new_len)[..., None]
        else:
            ranked = total / lp(new_len)[..., None]
        _, best = ranked.view(B, K * V).topk(K, -1)
        beam, tok = best // V, best % V
        if slip == "penalty_every_step":
            score = ranked.view(B, K * V).gather(1, best)  # the normalised score carried on
        else:
            score = total.view(B, K * V).gather(1, best)
        length = new_len.gather(1, beam)
        if slip == "eos_not_counted":
            length = torch.where(tok == eos_id, length - 1, length)
        fin = fin.gather(1, beam)
        if slip != "no_finished_set":
            fin = fin | (tok == eos_id)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], tok.view(-1, 1)], 1)
        if slip == "no_finished_set":
            if bool((tokens[:, 1:] == eos_id).any(1).all()):
                break
        elif bool(fin.all()):
            break
    if slip in ("last_beam", "final_by_logp"):
        pick = torch.full((B,), K - 1) if slip == "last_beam" else score.argmax(-1)
    else:
        pick = (score / lp(length)).argmax(-1)
    out = tokens.view(B, K, -1)[torch.arange(B), pick, 1:]
    if slip == "no_finished_set":
        after = (out == eos_id).long().cumsum(1) - (out == eos_id).long() > 0
        out = out.masked_fill(after, pad)
    return out


def _make(slip: str):
    def my_beam_search(
        model,
        src: Tensor,
        beam_size: int,
        max_len: int,
        *,
        bos_id: int,
        eos_id: int,
        length_penalty: float = 0.6,
    ) -> Tensor:
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, slip)

    my_beam_search.__name__ = f"beam_{slip or 'right'}"
    return my_beam_search


# ---------------------------------------------------------------- correct variants


def beam_batched_no_cache(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Every sentence kept in the batch until all finish; the whole prefix re-decoded."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_per_sentence_lists(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """One sentence at a time, hypotheses as (tokens, logp, finished) lists."""
    model.eval()
    pad = model.config.pad_id
    results = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        beams = [([bos_id], 0.0, False)]
        for t in range(1, max_len + 1):
            cands = []
            open_ = [h for h in beams if not h[2]]
            if open_:
                ys = torch.tensor([h[0] for h in open_])
                logp = model.decode(ys, memory.expand(len(open_), -1, -1), s.expand(len(open_), -1))
                logp = logp[:, -1].log_softmax(-1)
                logp[:, pad] = float("-inf")
            i = 0
            for toks, lp_, done in beams:
                if done:
                    cands.append((toks + [pad], lp_, True, len([x for x in toks[1:] if x != pad])))
                    continue
                row = logp[i]
                i += 1
                for v in range(row.shape[0]):
                    if v == pad:
                        continue
                    n = len(toks)
                    cands.append((toks + [v], lp_ + float(row[v]), v == eos_id or t == max_len, n))
            key = [c[1] / ((5.0 + c[3]) / 6.0) ** length_penalty for c in cands]
            order = sorted(range(len(cands)), key=lambda j: -key[j])[:beam_size]
            beams = [cands[j][:3] for j in order]
            if all(h[2] for h in beams):
                break
        results.append(torch.tensor(beams[0][0][1:]))
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long)
    for b, r in enumerate(results):
        out[b, : len(r)] = r
    return out


@torch.no_grad()
def beam_extra_args(
    model,
    src: Tensor,
    beam_size: int = 4,
    max_len: int = 20,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    return_scores: bool = False,
) -> Tensor:
    """Defaults on every argument and an optional return_scores flag (off by default)."""
    out = _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)
    return (out, None) if return_scores else out


_MISTAKES = [
    ("no_finished_set", "Finished hypotheses are not special: EOS is just another token."),
    ("penalty_every_step", "I carried the normalised score forward, so the penalty compounds."),
    ("last_beam", "At the end I returned the last of the K hypotheses."),
    ("final_by_logp", "The final pick is by raw log P, without the length penalty."),
    ("all_beams_start", "All K beams start from BOS with score 0, so the beam holds copies."),
    ("pad_allowed", "I did not forbid PAD as a next token."),
    ("eos_not_counted", "My |Y| does not count the EOS token."),
    ("probs_added", "I added probabilities (softmax) instead of log-probabilities."),
    ("finished_dropped", "A finished hypothesis gets -inf, so it leaves the beam."),
]

CASES = [BlindCase(CHECK, s, _make(s), "mistake", w) for s, w in _MISTAKES] + [
    BlindCase(
        CHECK,
        "batched_no_cache",
        beam_batched_no_cache,
        "correct",
        "No cache: re-decodes the prefixes; every sentence stays until all finish.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_lists",
        beam_per_sentence_lists,
        "correct",
        "Each sentence alone, hypotheses as Python lists, sorted candidates.",
    ),
    BlindCase(
        CHECK,
        "defaults_and_return_scores",
        beam_extra_args,
        "correct",
        "Defaults on every argument and an optional return_scores flag.",
    ),
]
