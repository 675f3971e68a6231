"""Blind set B29, check_beam_search (chapter 15): beam search as readers write it.

Most mistakes share one body, a batched search over ``B * K`` decoder rows that feeds the whole
prefix at every step; each one changes a single line of it (``slip``)."""

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
    length_penalty: float,
    slip: str = "",
) -> Tensor:
    was_training = model.training
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B, K, dev = src.shape[0], beam_size, src.device
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    score = torch.full((B, K), float("-inf"), device=dev)
    score[:, 0] = 0.0
    if slip == "all_beams_start":
        score.zero_()  # every beam starts from BOS with log P = 0
    finished = torch.zeros(B, K, dtype=torch.bool, device=dev)
    length = torch.zeros(B, K, dtype=torch.long, device=dev)
    only_pad = torch.full((V,), float("-inf"), device=dev)
    only_pad[pad] = 0.0
    steps = max_len - 1 if slip == "one_step_short" else max_len
    alpha = 0.0 if slip == "no_penalty" else length_penalty
    for t in range(1, steps + 1):
        logp = model.decode(tokens, memory, src_k)[:, -1].log_softmax(dim=-1)  # (B*K, V)
        if slip != "pad_allowed":
            logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        if slip != "no_finished_set":
            logp = torch.where(finished[..., None], only_pad, logp)
        total = score[..., None] + logp  # (B, K, V)
        if slip == "bos_in_length":
            new_len = torch.where(finished, length, t + 1)
        elif slip == "pads_counted":
            new_len = torch.full_like(length, t)
        else:
            new_len = torch.where(finished, length, t)
        lens = new_len[..., None].expand(B, K, V)
        if slip == "eos_not_counted":
            is_eos = (torch.arange(V, device=dev) == eos_id) & ~finished[..., None]
            lens = lens - is_eos.long()
        if slip == "penalty_multiplied":
            ranked = total * _lp(lens, alpha)
        else:
            ranked = total / _lp(lens, alpha)
        best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
        beam = best % K if slip == "parent_modulo" else best // V
        token = best % V
        if slip == "penalty_every_step":
            score = ranked.view(B, K * V).gather(1, best)  # keep the ranked score
        else:
            score = total.view(B, K * V).gather(1, best)
        length = lens.reshape(B, K * V).gather(1, best)
        finished = finished.gather(1, beam) | (token == eos_id)
        rows = (torch.arange(B, device=dev)[:, None] * K + beam).view(-1)
        if slip == "history_not_reordered":
            tokens = torch.cat([tokens, token.view(-1, 1)], dim=1)
        else:
            tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if t == steps:
            finished[:] = True
        if slip == "stop_when_top_finished" and finished[:, 0].all():
            break
        if finished.all():
            break
    model.train(was_training)
    if slip == "pick_by_log_prob":
        final = score
    elif slip == "penalty_multiplied":
        final = score * _lp(length, alpha)
    elif slip == "penalty_every_step":
        final = score
    else:
        final = score / _lp(length, alpha)
    pick = 0 if slip == "stop_when_top_finished" else final.argmax(dim=1)
    out = tokens.view(B, K, -1)[torch.arange(B, device=dev), pick, 1:]
    if slip == "no_finished_set":  # the tokens after EOS are cut off at the end
        after = (out == eos_id).long().cumsum(dim=1) - (out == eos_id).long() > 0
        out = out.masked_fill(after, pad)
    return out


# ---------------------------------------------------------------- mistakes


def beam_all_beams_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "all_beams_start"
    )


def beam_no_penalty(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_penalty")


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "eos_not_counted"
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "bos_in_length")


def beam_penalty_multiplied(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_multiplied"
    )


def beam_no_finished_set(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_finished_set"
    )


def beam_pads_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pads_counted")


def beam_pick_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pick_by_log_prob"
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pad_allowed")


def beam_stop_when_top_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "stop_when_top_finished"
    )


def beam_parent_modulo(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "parent_modulo")


def beam_history_not_reordered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "history_not_reordered"
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_every_step"
    )


def beam_one_step_short(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "one_step_short")


def beam_default_alpha_one(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=1.0):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_returns_scores_too(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    tokens = _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)
    return tokens, torch.zeros(src.shape[0])  # (tokens, scores) as beam_search can return


# ---------------------------------------------------------------- correct variants


def beam_batched_no_cache(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """All B * K rows stay until every hypothesis has finished; no cache."""
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_with_cache(
    model: object,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """The model's key/value cache, reordered after every step; candidates chosen in two stages
    (the best K tokens of each hypothesis, then the best K of those K * K)."""
    was_training = model.training
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, 0)
    src_rep = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    history = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp_sum = torch.zeros(B, K)
    logp_sum[:, 1:] = float("-inf")
    done = torch.zeros(B, K, dtype=torch.bool)
    n_tokens = torch.zeros(B, K, dtype=torch.long)
    for t in range(1, max_len + 1):
        logits = model.decode(history[:, -1:], memory, src_rep, cache, last_only=True)[:, -1]
        step = torch.log_softmax(logits, -1)
        step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        step[done] = float("-inf")
        step[..., pad][done] = 0.0
        cand = logp_sum[..., None] + step  # (B, K, V)
        cand_len = torch.where(done, n_tokens, torch.full_like(n_tokens, t))  # (B, K)
        norm = cand / (((5 + cand_len.float()) / 6) ** length_penalty)[..., None]
        k_each = min(K, V)
        top_norm, top_tok = norm.topk(k_each, dim=-1)  # (B, K, k_each)
        pick = top_norm.view(B, -1).topk(K, dim=-1).indices  # (B, K)
        parent = pick // k_each
        token = top_tok.view(B, -1).gather(1, pick)
        logp_sum = cand.gather(2, top_tok).view(B, -1).gather(1, pick)
        n_tokens = cand_len.gather(1, parent)
        done = done.gather(1, parent) | (token == eos_id)
        rows = (torch.arange(B)[:, None] * K + parent).flatten()
        history = torch.cat([history[rows], token.reshape(-1, 1)], 1)
        cache.reorder(rows, cross=False)
        if t == max_len:
            done[:] = True
        if done.all():
            break
    model.train(was_training)
    final = logp_sum / ((5 + n_tokens.float()) / 6) ** length_penalty
    best = final.argmax(1)
    return history.view(B, K, -1)[torch.arange(B), best, 1:]


@torch.no_grad()
def beam_python_lists(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """One sentence at a time, hypotheses as Python tuples (tokens, log P, length, finished)."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id

    def rank(h):
        return h[1] / ((5 + h[2]) / 6) ** length_penalty

    results = []
    for i in range(src.shape[0]):
        one = src[i : i + 1]
        memory = model.encode(one)
        beams = [([bos_id], 0.0, 0, False)]
        for t in range(1, max_len + 1):
            live = [h for h in beams if not h[3]]
            candidates = [(h[0] + [pad], h[1], h[2], True) for h in beams if h[3]]
            if live:
                prefix = torch.tensor([h[0] for h in live])
                mem = memory.expand(len(live), -1, -1)
                logp = model.decode(prefix, mem, one.expand(len(live), -1))[:, -1]
                logp = logp.log_softmax(-1)
                for h, row in zip(live, logp.tolist(), strict=True):
                    for w, lp in enumerate(row):
                        if w != pad:
                            candidates.append((h[0] + [w], h[1] + lp, t, w == eos_id))
            candidates.sort(key=rank, reverse=True)
            beams = candidates[:beam_size]
            if t == max_len:
                beams = [(h[0], h[1], h[2], True) for h in beams]
            if all(h[3] for h in beams):
                break
        results.append(max(beams, key=rank)[0][1:])
    model.train(was_training)
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_beams_start,
        "mistake",
        "I started all K hypotheses from BOS with score 0, so the first step fills the beam "
        "with copies of one hypothesis.",
    ),
    BlindCase(
        CHECK,
        "length_penalty_ignored",
        beam_no_penalty,
        "mistake",
        "I ranked by log P alone and never used length_penalty.",
    ),
    BlindCase(
        CHECK,
        "eos_not_in_length",
        beam_eos_not_counted,
        "mistake",
        "My |Y| does not count the EOS token.",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "My |Y| counts the BOS token too (the length of the whole token row).",
    ),
    BlindCase(
        CHECK,
        "penalty_multiplied",
        beam_penalty_multiplied,
        "mistake",
        "I multiplied log P by the length penalty instead of dividing by it.",
    ),
    BlindCase(
        CHECK,
        "finished_keep_growing",
        beam_no_finished_set,
        "mistake",
        "A hypothesis that produced EOS keeps being extended by ordinary tokens; I cut the "
        "tokens after EOS off only at the end.",
    ),
    BlindCase(
        CHECK,
        "pads_counted_in_length",
        beam_pads_counted,
        "mistake",
        "Finished hypotheses are extended by PAD at no cost, but their length keeps growing "
        "with the step, so the penalty changes.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_pick_by_log_prob,
        "mistake",
        "At the end I return the hypothesis with the highest log P, not the highest log P / lp.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not forbid PAD, so an open hypothesis may be extended by it.",
    ),
    BlindCase(
        CHECK,
        "stop_when_top_finished",
        beam_stop_when_top_finished,
        "mistake",
        "I stop as soon as the top-ranked hypothesis of every sentence has finished and return it.",
    ),
    BlindCase(
        CHECK,
        "parent_by_modulo",
        beam_parent_modulo,
        "mistake",
        "I got the parent hypothesis of a flat index as index % K instead of index // V.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "I appended the new tokens to the rows as they were, without reordering the token "
        "history to follow the surviving parents.",
    ),
    BlindCase(
        CHECK,
        "normalized_score_carried",
        beam_penalty_every_step,
        "mistake",
        "I kept the ranked score (log P / lp) as the running score, so the penalty is applied "
        "again at every step.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        beam_one_step_short,
        "mistake",
        "My loop runs max_len - 1 steps, so unfinished outputs are one token short.",
    ),
    BlindCase(
        CHECK,
        "default_alpha_one",
        beam_default_alpha_one,
        "mistake",
        "I gave length_penalty the default 1.0 (division by about the length) instead of 0.6.",
    ),
    BlindCase(
        CHECK,
        "returns_scores_too",
        beam_returns_scores_too,
        "mistake",
        "I return (tokens, scores) like the book's return_scores=True, not the tokens alone.",
    ),
    BlindCase(
        CHECK,
        "batched_no_cache",
        beam_batched_no_cache,
        "correct",
        "B * K rows that all stay until every hypothesis has finished, the whole prefix fed at "
        "every step, no cache.",
    ),
    BlindCase(
        CHECK,
        "cache_two_stage_topk",
        beam_with_cache,
        "correct",
        "The model's cache reordered after every step; the K best tokens of each hypothesis "
        "first, then the K best of those K * K candidates.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        beam_python_lists,
        "correct",
        "One sentence at a time with hypotheses as Python tuples sorted by their score.",
    ),
]
