"""Blind set B23, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import math

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
    first_beam_only: bool = True,
    bos_in_length: bool = False,
    compound_penalty: bool = False,
    eos_finishes: bool = True,
    finished_length_frozen: bool = True,
    ban_pad: bool = True,
    penalty_in_ranking: bool = True,
    lp_times_alpha: bool = False,
    reorder_history: bool = True,
    gather_lengths: bool = True,
    gather_finished: bool = True,
    final_by_raw_logp: bool = False,
    keep_bos: bool = False,
    step_offset: int = 0,
) -> Tensor:
    """A reader's batched beam search: B * K decoder rows, the prefix recomputed at every
    step, every sentence kept until all are finished. Each keyword switches on one slip."""

    def lp(length: Tensor) -> Tensor:
        length = length + 1 if bos_in_length else length
        if lp_times_alpha:
            return (5.0 + length.float()) / 6.0 * alpha
        return _lp(length, alpha)

    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    dev = src.device
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    scores = torch.zeros(B, K, device=dev)
    if first_beam_only:
        scores[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool, device=dev)
    lengths = torch.zeros(B, K, dtype=torch.long, device=dev)
    pad_only = torch.full((V,), float("-inf"), device=dev)
    pad_only[pad] = 0.0
    steps = max_len + step_offset
    for t in range(1, steps + 1):
        logp = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)  # (B*K, V)
        if ban_pad:
            logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        if eos_finishes:
            logp = torch.where(finished[..., None], pad_only, logp)
        cand = scores[..., None] + logp  # (B, K, V)
        if finished_length_frozen:
            cand_len = torch.where(finished, lengths, t)
        else:
            cand_len = torch.full_like(lengths, t)
        ranked = cand / lp(cand_len)[..., None] if penalty_in_ranking else cand
        top = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
        parent, tok = top // V, top % V
        if compound_penalty:
            scores = ranked.view(B, K * V).gather(1, top)  # I kept the normalised score
        else:
            scores = cand.view(B, K * V).gather(1, top)
        lengths = cand_len.gather(1, parent) if gather_lengths else cand_len
        finished = finished.gather(1, parent) if gather_finished else finished
        if eos_finishes:
            finished = finished | (tok == eos_id)
        if t >= steps:
            finished = torch.ones_like(finished)
        rows = (torch.arange(B, device=dev)[:, None] * K + parent).view(-1)
        history = tokens[rows] if reorder_history else tokens
        tokens = torch.cat([history, tok.view(-1, 1)], dim=1)
        if finished.all():
            break
    final = scores if (final_by_raw_logp or compound_penalty) else scores / lp(lengths)
    best = final.argmax(dim=1)  # (B,)
    out = tokens.view(B, K, -1)[torch.arange(B, device=dev), best]
    model.train(was_training)
    return out if keep_bos else out[:, 1:]


# ---------------------------------------------------------------- mistakes


def beam_all_beams_start_equal(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    # every hypothesis starts with score 0, so the K beams are copies of one
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, first_beam_only=False
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # |Y| counted the BOS token too
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def beam_penalty_compounded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # I stored the normalised score and added the next log P to it: divided again every step
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, compound_penalty=True
    )


def beam_eos_not_final(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # a hypothesis with EOS is not set aside: it goes on growing like the others
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_finishes=False)


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    # finished hypotheses get PAD at no cost, but their length still becomes t
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_length_frozen=False
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # I never set log P(PAD) to -inf, so PAD can be generated
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, ban_pad=False)


def beam_penalty_only_at_end(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # candidates ranked by log P alone; the penalty only used to pick the final hypothesis
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_in_ranking=False
    )


def beam_penalty_times_alpha(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # lp = (5 + |Y|) / 6 * alpha: '*' where the formula has '**'
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, lp_times_alpha=True
    )


def beam_history_not_reordered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    # I appended the new tokens but did not move each row's history to its parent
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, reorder_history=False
    )


def beam_lengths_not_gathered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    # lengths kept in the old beam order: not gathered by parent after topk
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, gather_lengths=False
    )


def beam_finished_not_gathered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    # the finished flags stay with the row, not with the hypothesis that moved
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, gather_finished=False
    )


def beam_best_by_raw_logp(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # the returned hypothesis is the one with the highest log P, not log P / lp
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, final_by_raw_logp=True
    )


def beam_keeps_bos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, keep_bos=True)


def beam_one_step_short(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # range(1, max_len): one step fewer than max_len
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, step_offset=-1)


# ---------------------------------------------------------------- correct variants


def beam_batched_recompute(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """B * K rows, the prefix recomputed every step, no sentence leaves the batch early."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_lists_per_sentence(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Each sentence alone, hypotheses as Python tuples (tokens, log P, finished)."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id

    def rank(logp: float, n: int) -> float:
        return logp / ((5 + n) / 6) ** length_penalty

    results, widths = [], []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        beams = [([], 0.0, False)]  # only one hypothesis grows from BOS
        t = 0
        for t in range(1, max_len + 1):
            candidates = []
            open_beams = [h for h in beams if not h[2]]
            if open_beams:
                fed = torch.tensor([[bos_id, *h[0]] for h in open_beams], device=src.device)
                mem = memory.expand(len(open_beams), -1, -1)
                logp = model.decode(fed, mem, s.expand(len(open_beams), -1))[:, -1]
                logp = logp.log_softmax(-1)
                logp[:, pad] = float("-inf")
                for h, row in zip(open_beams, logp.tolist(), strict=True):
                    for tok, lp_tok in enumerate(row):
                        if lp_tok != float("-inf"):
                            candidates.append((h[0] + [tok], h[1] + lp_tok, tok == eos_id))
            candidates += [h for h in beams if h[2]]  # finished: kept at no cost
            candidates.sort(key=lambda h: rank(h[1], len(h[0])), reverse=True)
            beams = candidates[:beam_size]
            if t == max_len:
                beams = [(h[0], h[1], True) for h in beams]
            if all(h[2] for h in beams):
                break
        best = max(beams, key=lambda h: rank(h[1], len(h[0])))
        results.append(best[0])
        widths.append(t)
    out = torch.full((len(results), max(widths)), pad, dtype=torch.long, device=src.device)
    for b, toks in enumerate(results):
        out[b, : len(toks)] = torch.tensor(toks, dtype=torch.long)
    model.train(was_training)
    return out


@torch.no_grad()
def beam_with_cache(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """The model's key/value cache, reordered after every step; scores kept as (B, K)."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    hist = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp_sum = torch.tensor([0.0] + [-math.inf] * (K - 1)).repeat(B, 1)  # (B, K)
    done = torch.zeros(B, K, dtype=torch.bool)
    n_tok = torch.zeros(B, K, dtype=torch.long)
    for t in range(1, max_len + 1):
        step = model.decode(hist[:, -1:], memory, src_k, cache=cache, last_only=True)
        step = torch.log_softmax(step[:, -1], dim=-1)
        step[:, pad] = -math.inf
        step = step.view(B, K, V)
        frozen = torch.full_like(step, -math.inf)
        frozen[..., pad] = 0.0
        step = torch.where(done.unsqueeze(-1), frozen, step)
        total = logp_sum.unsqueeze(-1) + step
        new_n = torch.where(done, n_tok, torch.full_like(n_tok, t))
        penalty = ((5.0 + new_n.float()) / 6.0) ** length_penalty
        flat = (total / penalty.unsqueeze(-1)).reshape(B, K * V)
        idx = flat.topk(K, dim=1).indices
        parent = torch.div(idx, V, rounding_mode="floor")
        token = idx % V
        logp_sum = total.reshape(B, K * V).gather(1, idx)
        n_tok = new_n.gather(1, parent)
        done = done.gather(1, parent) | (token == eos_id) | (t >= max_len)
        rows = (parent + K * torch.arange(B).unsqueeze(1)).flatten()
        hist = torch.cat([hist.index_select(0, rows), token.reshape(-1, 1)], dim=1)
        cache.reorder(rows, cross=False)
        if bool(done.all()):
            break
    final = logp_sum / ((5.0 + n_tok.float()) / 6.0) ** length_penalty
    pick = final.argmax(1)
    model.train(was_training)
    return hist.view(B, K, -1)[torch.arange(B), pick, 1:]


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_beams_start_equal,
        "mistake",
        "all K hypotheses start with score 0, so the first step makes K copies of one",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "|Y| in the length penalty counts the BOS token as well",
    ),
    BlindCase(
        CHECK,
        "penalty_compounded_each_step",
        beam_penalty_compounded,
        "mistake",
        "I kept log P / lp as the running score, so it is divided again at every step",
    ),
    BlindCase(
        CHECK,
        "eos_does_not_finish",
        beam_eos_not_final,
        "mistake",
        "no finished set: a hypothesis that produced EOS keeps being extended",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "finished hypotheses get PAD at no cost, but their length keeps growing with t",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        beam_pad_allowed,
        "mistake",
        "I forgot to set log P(PAD) to -inf, so PAD competes like a word",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_the_end",
        beam_penalty_only_at_end,
        "mistake",
        "I ranked candidates by log P and used the length penalty only for the final pick",
    ),
    BlindCase(
        CHECK,
        "lp_multiplied_by_alpha",
        beam_penalty_times_alpha,
        "mistake",
        "I wrote ((5 + |Y|) / 6) * alpha instead of ** alpha",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "after topk I appended the new tokens without moving the rows to their parents",
    ),
    BlindCase(
        CHECK,
        "lengths_not_gathered",
        beam_lengths_not_gathered,
        "mistake",
        "I gathered the scores and the finished flags by parent, but not the lengths",
    ),
    BlindCase(
        CHECK,
        "finished_not_gathered",
        beam_finished_not_gathered,
        "mistake",
        "the finished flags were not gathered by parent after topk",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_p",
        beam_best_by_raw_logp,
        "mistake",
        "at the end I returned the hypothesis of highest log P, not log P / lp",
    ),
    BlindCase(
        CHECK,
        "bos_in_output",
        beam_keeps_bos,
        "mistake",
        "the returned hypotheses still start with BOS",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        beam_one_step_short,
        "mistake",
        "my loop ran max_len - 1 steps",
    ),
    BlindCase(
        CHECK,
        "batched_recompute_no_cache",
        beam_batched_recompute,
        "correct",
        "B*K rows, no cache (the prefix recomputed), finished sentences stay in the batch",
    ),
    BlindCase(
        CHECK,
        "python_lists_per_sentence",
        beam_lists_per_sentence,
        "correct",
        "each sentence alone, hypotheses as Python lists sorted by log P / lp",
    ),
    BlindCase(
        CHECK,
        "cache_and_reorder",
        beam_with_cache,
        "correct",
        "the model's KV cache, reordered with cache.reorder(rows, cross=False) every step",
    ),
]
