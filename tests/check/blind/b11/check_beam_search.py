"""Blind set B11, check_beam_search (chapter 15): beam search as readers write it."""

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
    alpha: float,
    *,
    one_start: bool = True,
    block_pad: bool = True,
    finished_free_pad: bool = True,
    bos_in_length: bool = False,
    eos_in_length: bool = True,
    penalty_in_score: bool = False,
    split: str = "right",
    pick_by: str = "normalized",
    eval_mode: bool = True,
    stop_when_top_done: bool = False,
) -> Tensor:
    """A batched beam search over the whole prefix (no cache); the flags are the mistakes."""
    if eval_mode:
        model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B, K)
    if one_start:
        score[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    free_pad = torch.full((V,), float("-inf"))
    free_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        logp = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)
        if block_pad:
            logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        if finished_free_pad:
            logp = torch.where(finished[..., None], free_pad, logp)
        else:
            logp = logp.masked_fill(finished[..., None], float("-inf"))
        new_len = torch.where(finished, length, t + 1 if bos_in_length else t)
        if penalty_in_score:
            total = score[..., None] + logp / _lp(new_len, alpha)[..., None]
            ranked = total
        else:
            total = score[..., None] + logp
            ranked = total / _lp(new_len, alpha)[..., None]
        _, idx = ranked.view(B, K * V).topk(K, dim=-1)
        if split == "right":
            beam, tok = idx // V, idx % V
        else:  # "swapped"
            beam, tok = idx % K, idx // K
        score = total.view(B, K * V).gather(1, idx)
        length = new_len.gather(1, beam)
        was_finished = finished.gather(1, beam)
        finished = was_finished | (tok == eos_id)
        if not eos_in_length:
            length = torch.where(~was_finished & (tok == eos_id), length - 1, length)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], tok.view(-1, 1)], dim=1)
        if finished.all() or (stop_when_top_done and finished[:, 0].all()):
            break
    if pick_by == "normalized":
        final = score / _lp(length, alpha)
    elif pick_by == "raw":
        final = score
    else:  # "first"
        final = torch.zeros_like(score)
        final[:, 0] = 1.0
    best = final.argmax(dim=1)
    hyps = tokens.view(B, K, -1)[torch.arange(B), best, 1:]
    return hyps


# ---------------------------------------------------------------- mistakes


def beam_all_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, one_start=False)


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, block_pad=False)


def beam_finished_dropped(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_free_pad=False
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_in_length=False
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_in_score=True
    )


def beam_index_split_swapped(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, split="swapped")


def beam_pick_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_by="raw")


def beam_no_eval(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eval_mode=False)


def beam_length_penalty_ignored(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, 0.0)


@torch.no_grad()
def beam_per_row_best(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Each hypothesis keeps its own best next tokens: topk over V for each of the K rows."""
    model.eval()
    B, K = src.shape[0], beam_size
    pad = model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B * K)
    finished = torch.zeros(B * K, dtype=torch.bool)
    length = torch.zeros(B * K, dtype=torch.long)
    for t in range(1, max_len + 1):
        logp = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)
        logp[:, pad] = float("-inf")
        if t == 1:  # K different first tokens from the one BOS
            first = logp.view(B, K, -1)[:, 0].topk(K, dim=-1)
            tok = first.indices.reshape(-1)
            step = first.values.reshape(-1)
        else:
            step, tok = logp.max(dim=-1)  # each row goes on alone
        tok = torch.where(finished, pad, tok)
        score = score + torch.where(finished, 0.0, step)
        length = torch.where(finished, length, t)
        finished = finished | (tok == eos_id)
        tokens = torch.cat([tokens, tok[:, None]], dim=1)
        if finished.all():
            break
    final = (score / _lp(length, length_penalty)).view(B, K)
    best = final.argmax(1)
    return tokens.view(B, K, -1)[torch.arange(B), best, 1:]


# ---------------------------------------------------------------- correct variants


def beam_full_prefix(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """No cache: the whole prefix of every hypothesis is decoded again at each step, and no
    sentence leaves the batch early; the best one picked at the end."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_one_sentence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """One sentence at a time; its K hypotheses are the rows of a small batch; a (K, V) table
    of candidate scores, flattened for topk; the outputs padded to the longest at the end."""
    was_training = model.training
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    K = beam_size
    results = []
    for b in range(src.shape[0]):
        one = src[b : b + 1].expand(K, -1)
        memory = model.encode(src[b : b + 1]).expand(K, -1, -1)
        hyps = torch.full((K, 1), bos_id, dtype=torch.long)
        logp_sum = torch.tensor([0.0] + [float("-inf")] * (K - 1))
        done = torch.zeros(K, dtype=torch.bool)
        n_tokens = torch.zeros(K, dtype=torch.long)
        for t in range(1, max_len + 1):
            step = model.decode(hyps, memory, one)[:, -1].log_softmax(dim=-1)
            step[:, pad] = float("-inf")
            step[done] = float("-inf")
            step[done, pad] = 0.0  # a finished hypothesis: PAD, free
            cand = logp_sum[:, None] + step  # (K, V)
            cand_len = torch.where(done, n_tokens, torch.full_like(n_tokens, t))
            norm = cand / ((5 + cand_len[:, None].double()) / 6).pow(length_penalty).float()
            flat = norm.reshape(-1).topk(K).indices
            src_beam, tok = flat // V, flat % V
            logp_sum = cand.reshape(-1)[flat]
            n_tokens = cand_len[src_beam]
            done = done[src_beam] | (tok == eos_id)
            hyps = torch.cat([hyps[src_beam], tok[:, None]], dim=1)
            if done.all():
                break
        final = logp_sum / ((5 + n_tokens.double()) / 6).pow(length_penalty).float()
        results.append(hyps[final.argmax(), 1:])
    model.train(was_training)
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long)
    for i, r in enumerate(results):
        out[i, : len(r)] = r
    return out


@torch.no_grad()
def beam_with_cache(
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
    """The book's key/value cache, reordered after each step; one token fed per step; an extra
    return_scores argument with a default."""
    model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_k = src.repeat_interleave(K, dim=0)
    cache = model.new_cache()
    seqs = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp = torch.full((B, K), float("-inf"))
    logp[:, 0] = 0
    ended = torch.zeros(B, K, dtype=torch.bool)
    lens = torch.zeros(B, K, dtype=torch.long)
    for t in range(1, max_len + 1):
        out = model.decode(seqs[:, -1:], memory, src_k, cache=cache, last_only=True)
        step = torch.log_softmax(out[:, -1], dim=-1)
        step[:, pad] = -float("inf")
        step = step.view(B, K, V)
        pad_only = torch.full_like(step, -float("inf"))
        pad_only[..., pad] = 0.0
        step = torch.where(ended.unsqueeze(-1), pad_only, step)
        total = logp.unsqueeze(-1) + step
        cand_len = torch.where(ended, lens, torch.full_like(lens, t))
        ranked = total / _lp(cand_len, length_penalty).unsqueeze(-1)
        flat = ranked.flatten(1).topk(K, dim=1).indices
        beam, tok = torch.div(flat, V, rounding_mode="floor"), flat.remainder(V)
        logp = total.flatten(1).gather(1, flat)
        lens = cand_len.gather(1, beam)
        ended = ended.gather(1, beam) | tok.eq(eos_id)
        rows = (beam + K * torch.arange(B).unsqueeze(1)).flatten()
        seqs = torch.cat([seqs.index_select(0, rows), tok.reshape(-1, 1)], dim=1)
        cache.reorder(rows)
        if ended.all():
            break
    final = logp / _lp(lens, length_penalty)
    scores, best = final.max(dim=1)
    hyps = seqs.view(B, K, -1)[torch.arange(B), best, 1:]
    return (hyps, scores) if return_scores else hyps


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start",
        beam_all_start,
        "mistake",
        "I started all K hypotheses at log P = 0, so at the first step the K beams are copies "
        "of the same best token.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I did not block PAD, so it can be generated like a word.",
    ),
    BlindCase(
        CHECK,
        "finished_hypotheses_dropped",
        beam_finished_dropped,
        "mistake",
        "A hypothesis that produced EOS gets -inf for every next token, so it falls out of the "
        "beam; what is left at the end is the best of the open ones (no finished set).",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "My |Y| for the penalty is the length of the token tensor, BOS included.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "I do not count the EOS in |Y|, only the words before it.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I divided each step's log-probability by the penalty and accumulated that, instead of "
        "dividing the total log P once.",
    ),
    BlindCase(
        CHECK,
        "flat_index_split_swapped",
        beam_index_split_swapped,
        "mistake",
        "After topk over the flattened (K, V) scores I took beam = idx % K and token = idx // K.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_pick_by_log_prob,
        "mistake",
        "At the end I return the hypothesis with the highest log P, without the length penalty.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        beam_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout is on during the search.",
    ),
    BlindCase(
        CHECK,
        "length_penalty_ignored",
        beam_length_penalty_ignored,
        "mistake",
        "I accept length_penalty but rank by log P alone (alpha = 0).",
    ),
    BlindCase(
        CHECK,
        "per_row_best",
        beam_per_row_best,
        "mistake",
        "K different first tokens, then each hypothesis extended by its own best token: K greedy "
        "searches, never compared with each other.",
    ),
    BlindCase(
        CHECK,
        "full_prefix_no_cache",
        beam_full_prefix,
        "correct",
        "No cache: every step decodes the whole prefix; no sentence leaves the batch early; "
        "the best hypothesis picked at the end.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        beam_one_sentence,
        "correct",
        "Each sentence searched alone with its K hypotheses as a batch; the penalty computed in "
        "float64; outputs padded afterwards.",
    ),
    BlindCase(
        CHECK,
        "with_cache_and_scores",
        beam_with_cache,
        "correct",
        "With the book's KVCache reordered every step; an extra return_scores argument.",
    ),
]
