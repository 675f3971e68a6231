"""Blind set B24, check_beam_search (chapter 15): beam search as readers write it.

Every variant below is one reader's batched search (``B * K`` decoder rows, row ``b * K + k``
is hypothesis ``k`` of sentence ``b``) with one thing changed; the switches of ``_search`` are
the slips, so that each mistake differs from the right search in that one place only.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _search(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    all_start_at_zero: bool = False,
    bos_in_length: bool = False,
    no_penalty: bool = False,
    eos_not_counted: bool = False,
    finished_length_grows: bool = False,
    final_by_log_prob: bool = False,
    pad_allowed: bool = False,
    history_not_reordered: bool = False,
    raw_logits: bool = False,
    penalty_stored: bool = False,
    alpha_multiplies: bool = False,
    memory_tiled: bool = False,
    stop_when_best_finished: bool = False,
    one_step_short: bool = False,
) -> Tensor:
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size

    def lp(length: Tensor) -> Tensor:
        if no_penalty:
            return torch.ones_like(length, dtype=torch.float)
        if alpha_multiplies:
            return (5.0 + length.float()) / 6.0 * alpha
        return _lp(length + 1 if bos_in_length else length, alpha)

    memory = model.encode(src)
    memory = memory.repeat(K, 1, 1) if memory_tiled else memory.repeat_interleave(K, dim=0)
    src_rows = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B, K) if all_start_at_zero else torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    finished = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    steps = max_len - 1 if one_step_short else max_len
    for t in range(1, steps + 1):
        logits = model.decode(tokens, memory, src_rows)[:, -1]  # (B*K, V)
        step = logits.clone() if raw_logits else logits.log_softmax(-1)
        if not pad_allowed:
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        step = torch.where(finished[..., None], only_pad, step)
        total = score[..., None] + step  # (B, K, V)
        new_length = length.new_full((B, K), t)
        if not finished_length_grows:
            new_length = torch.where(finished, length, new_length)
        new_length = new_length[..., None].repeat(1, 1, V)  # (B, K, V): per candidate
        if eos_not_counted:
            new_length[..., eos_id] = torch.where(finished, length, t - 1)
        ranked = total / lp(new_length)
        best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
        beam, token = best // V, best % V
        if penalty_stored:
            score = ranked.view(B, K * V).gather(1, best)
        else:
            score = total.view(B, K * V).gather(1, best)
        length = new_length.view(B, K * V).gather(1, best)
        finished = finished.gather(1, beam) | (token == eos_id)
        if t == steps:
            finished[:] = True
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        previous = tokens if history_not_reordered else tokens[rows]
        tokens = torch.cat([previous, token.view(-1, 1)], dim=1)
        if stop_when_best_finished:
            finished = finished | finished[:, :1]  # the best one has ended: sentence done
        if finished.all():
            break
    final = score if final_by_log_prob or penalty_stored else score / lp(length)
    pick = final.argmax(dim=-1)  # (B,)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B), pick, 1:]


def _mistake(**slip):
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
        return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **slip)

    return my_beam_search


# ---------------------------------------------------------------- mistakes (standalone)


@torch.no_grad()
def beam_cache_not_reordered(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """With the model's KVCache, feeding one token per step; the cache never follows the beams."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_rows = src.repeat_interleave(K, dim=0)
    cache = model.new_cache()
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    finished = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens[:, -1:], memory, src_rows, cache)[:, -1]
        step = logits.log_softmax(-1)
        step[:, pad] = float("-inf")
        step = torch.where(finished[..., None], only_pad, step.view(B, K, V))
        total = score[..., None] + step
        new_length = torch.where(finished, length, t)
        ranked = total / _lp(new_length, length_penalty)[..., None]
        best = ranked.view(B, K * V).topk(K, dim=-1).indices
        beam, token = best // V, best % V
        score = total.view(B, K * V).gather(1, best)
        length = new_length.gather(1, beam)
        finished = finished.gather(1, beam) | (token == eos_id)
        if t == max_len:
            finished[:] = True
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if finished.all():
            break
    pick = (score / _lp(length, length_penalty)).argmax(dim=-1)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B), pick, 1:]


# ---------------------------------------------------------------- correct variants


def beam_batched(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """B * K rows, the prefix recomputed at every step, finished sentences kept in the batch."""
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


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
    """The model's KVCache, reordered with the surviving rows after every step."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_rows = src.repeat_interleave(K, dim=0)
    cache = model.new_cache()
    hist = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp = torch.zeros(B, K)
    logp[:, 1:] = float("-inf")
    done = torch.zeros(B, K, dtype=torch.bool)
    n_tok = torch.zeros(B, K, dtype=torch.long)
    for t in range(1, max_len + 1):
        step = model.decode(hist[:, -1:], memory, src_rows, cache, last_only=True)[:, -1]
        step = step.log_softmax(-1).index_fill(1, torch.tensor([pad]), float("-inf"))
        step = step.view(B, K, V)
        pad_only = torch.full_like(step, float("-inf"))
        pad_only[..., pad] = 0.0
        step = torch.where(done.unsqueeze(-1), pad_only, step)
        cand = logp.unsqueeze(-1) + step
        cand_len = torch.where(done, n_tok, torch.full_like(n_tok, t))
        ranked = cand / _lp(cand_len, length_penalty).unsqueeze(-1)
        _, flat = torch.topk(ranked.flatten(1), K, dim=1)
        parent, tok = flat.div(V, rounding_mode="floor"), flat.remainder(V)
        logp = cand.flatten(1).gather(1, flat)
        n_tok = cand_len.gather(1, parent)
        done = done.gather(1, parent) | tok.eq(eos_id)
        if t == max_len:
            done.fill_(True)
        rows = (parent + K * torch.arange(B).unsqueeze(1)).flatten()
        cache.reorder(rows)
        hist = torch.cat([hist.index_select(0, rows), tok.reshape(-1, 1)], dim=1)
        if done.all():
            break
    pick = (logp / _lp(n_tok, length_penalty)).argmax(-1)
    model.train(was_training)
    return hist.view(B, K, -1)[torch.arange(B), pick, 1:]


@torch.no_grad()
def beam_per_sentence_two_stage(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """One sentence at a time; each hypothesis proposes its own K best, then the best K of the
    K * K proposals survive (the same K as the best of all K * V)."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    K = beam_size
    results: list[Tensor] = []
    for b in range(src.shape[0]):
        s = src[b : b + 1].expand(K, -1)
        memory = model.encode(src[b : b + 1]).expand(K, -1, -1)
        hyps = torch.full((K, 1), bos_id, dtype=torch.long)
        score = torch.tensor([0.0] + [float("-inf")] * (K - 1))
        ended = torch.zeros(K, dtype=torch.bool)
        size = torch.zeros(K, dtype=torch.long)
        for t in range(1, max_len + 1):
            lp_ = model.decode(hyps, memory, s)[:, -1].log_softmax(-1)
            lp_[:, pad] = float("-inf")
            lp_[ended] = float("-inf")
            lp_[ended, pad] = 0.0
            total = score[:, None] + lp_  # (K, V)
            new_size = torch.where(ended, size, t)
            ranked = total / _lp(new_size, length_penalty)[:, None]
            own = ranked.topk(K, dim=-1).indices  # (K, K): each hypothesis's K best tokens
            proposals = ranked.gather(1, own).view(-1)  # (K * K,)
            keep = proposals.topk(K).indices
            parent, tok = keep // K, own.view(-1)[keep]
            score = total[parent, tok]
            size = new_size[parent]
            ended = ended[parent] | (tok == eos_id)
            if t == max_len:
                ended[:] = True
            hyps = torch.cat([hyps[parent], tok[:, None]], dim=1)
            if ended.all():
                break
        best = int((score / _lp(size, length_penalty)).argmax())
        results.append(hyps[best, 1:])
    model.train(was_training)
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long)
    for i, r in enumerate(results):
        out[i, : len(r)] = r
    return out


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        _mistake(all_start_at_zero=True),
        "mistake",
        "Every hypothesis starts with score 0, so the first step picks one token K times.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        _mistake(bos_in_length=True),
        "mistake",
        "The length in the penalty counts BOS too: |Y| + 1.",
    ),
    BlindCase(
        CHECK,
        "no_length_penalty",
        _mistake(no_penalty=True),
        "mistake",
        "I ranked by log P alone and never used length_penalty.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        _mistake(eos_not_counted=True),
        "mistake",
        "A hypothesis that ends takes the length of its words, EOS not counted.",
    ),
    BlindCase(
        CHECK,
        "finished_length_keeps_growing",
        _mistake(finished_length_grows=True),
        "mistake",
        "Finished hypotheses get PAD at no cost, but their length goes on growing with t.",
    ),
    BlindCase(
        CHECK,
        "final_choice_by_log_prob",
        _mistake(final_by_log_prob=True),
        "mistake",
        "The search ranks with the penalty, but the hypothesis I return is the one of highest "
        "log P.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        _mistake(pad_allowed=True),
        "mistake",
        "PAD is not excluded from the candidates of an open hypothesis.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        _mistake(history_not_reordered=True),
        "mistake",
        "I appended each new token to row k without moving the row's history to its parent.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        _mistake(raw_logits=True),
        "mistake",
        "I summed the logits themselves, not log_softmax of them.",
    ),
    BlindCase(
        CHECK,
        "penalised_score_carried",
        _mistake(penalty_stored=True),
        "mistake",
        "I kept the penalised score of the survivors as their score, so the penalty is applied "
        "again at every step.",
    ),
    BlindCase(
        CHECK,
        "alpha_as_factor",
        _mistake(alpha_multiplies=True),
        "mistake",
        "lp = (5 + |Y|) / 6 * alpha: alpha multiplies instead of being the exponent.",
    ),
    BlindCase(
        CHECK,
        "memory_repeat_not_interleave",
        _mistake(memory_tiled=True),
        "mistake",
        "memory.repeat(K, 1, 1) for the K copies, while the rows are laid out b * K + k.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_ends",
        _mistake(stop_when_best_finished=True),
        "mistake",
        "A sentence is done as soon as its best hypothesis has produced EOS.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        _mistake(one_step_short=True),
        "mistake",
        "range(1, max_len): at most max_len - 1 tokens.",
    ),
    BlindCase(
        CHECK,
        "cache_not_reordered",
        beam_cache_not_reordered,
        "mistake",
        "With the model's cache I reorder the token history but forgot cache.reorder(rows).",
    ),
    BlindCase(
        CHECK,
        "batched_recompute",
        beam_batched,
        "correct",
        "B * K rows, no cache, finished sentences stay in the batch fed PAD until all are done.",
    ),
    BlindCase(
        CHECK,
        "batched_with_cache",
        beam_with_cache,
        "correct",
        "The model's cache, reordered (cross keys too) after every step; div/remainder.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_two_stage_topk",
        beam_per_sentence_two_stage,
        "correct",
        "Sentence by sentence; each hypothesis's K best, then the best K of the K * K.",
    ),
]
