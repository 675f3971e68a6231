"""Blind set B27, check_beam_search (chapter 15): beam search as readers write it.

Most cases share one batched search without a cache, ``_search``, in which each mistake turns
one detail of the chapter's rules the wrong way; the others are written on their own.
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
    length_penalty: float,
    slip: str = "",
) -> Tensor:
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K, dev = src.shape[0], beam_size, src.device
    alpha = length_penalty
    if slip == "repeat_not_interleave":
        memory = model.encode(src).repeat(K, 1, 1)  # (K*B, S, D)
        src_k = src.repeat(K, 1)
    else:
        memory = model.encode(src).repeat_interleave(K, dim=0)  # row b*K + k
        src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    log_prob = torch.zeros(B, K, device=dev)
    if slip != "all_beams_start":
        log_prob[:, 1:] = float("-inf")  # only the first hypothesis grows at the first step
    finished = torch.zeros(B, K, dtype=torch.bool, device=dev)
    lengths = torch.zeros(B, K, dtype=torch.long, device=dev)
    done = torch.zeros(B, dtype=torch.bool, device=dev)
    out = torch.full((B, max_len), pad, dtype=torch.long, device=dev)
    best_scores = torch.zeros(B, device=dev)
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]  # (B*K, V)
        if slip == "raw_logits":
            step = logits.clone()  # the scores of the next token
        else:
            step = logits.log_softmax(-1)
        if slip == "finished_pay_pad":
            pad_cost = step[:, pad].view(B, K).clone()  # what the model says PAD costs
        if slip != "pad_allowed":
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if slip != "finished_extend_normally":
            only_pad = torch.full((B, K, V), float("-inf"), device=dev)
            only_pad[..., pad] = pad_cost if slip == "finished_pay_pad" else 0.0
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step  # (B, K, V)
        if slip == "finished_keep_growing":
            new_len = torch.full_like(lengths, t)
        elif slip == "bos_in_length":
            new_len = torch.where(finished, lengths, t + 1)
        else:
            new_len = torch.where(finished, lengths, t)
        if slip == "eos_not_counted":
            cand_len = new_len[..., None].expand(B, K, V).clone()  # (B, K, V)
            cand_len[..., eos_id] = torch.where(finished, new_len, new_len - 1)  # EOS: no word
            ranked = total / _lp(cand_len, alpha)
        elif slip == "penalty_precedence":
            ranked = total / ((5.0 + new_len.float()) / 6.0**alpha)[..., None]
        elif slip == "penalty_only_at_end":
            ranked = total
        else:
            ranked = total / _lp(new_len, alpha)[..., None]
        best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
        if slip == "divide_by_k":
            beam, token = best // K, best % V
        else:
            beam, token = best // V, best % V
        log_prob = total.view(B, K * V).gather(1, best)
        if slip == "eos_not_counted":
            lengths = cand_len.view(B, K * V).gather(1, best)
        else:
            lengths = new_len.gather(1, beam)
        if slip != "finished_extend_normally":
            finished = finished.gather(1, beam) | (token == eos_id)
        else:
            finished = finished.gather(1, beam)
            lengths = torch.full_like(lengths, t)
        if t >= max_len:
            finished[:] = True
        rows = (torch.arange(B, device=dev)[:, None] * K + beam).view(-1)
        if slip == "no_reorder":
            tokens = torch.cat([tokens, token.view(-1, 1)], dim=1)
        else:
            tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if slip == "finished_extend_normally":
            finished = finished | (tokens[:, 1:] == eos_id).any(1).view(B, K)
            if t >= max_len:
                finished[:] = True
        if slip == "stop_when_best_finished":
            now_done = (finished[:, 0] | finished.all(1)) & ~done
        else:
            now_done = finished.all(1) & ~done
        for b in now_done.nonzero().flatten().tolist():
            if slip == "final_by_log_prob":
                k = int(log_prob[b].argmax())
            elif slip == "stop_when_best_finished":
                k = 0 if finished[b, 0] else int((log_prob[b] / _lp(lengths[b], alpha)).argmax())
            else:
                k = int((log_prob[b] / _lp(lengths[b], alpha)).argmax())
            out[b, :t] = tokens.view(B, K, -1)[b, k, 1:]
            best_scores[b] = log_prob[b, k] / _lp(lengths[b, k], alpha)
        done |= now_done
        if bool(done.all()):
            break
    model.train(was_training)
    if slip == "with_scores":
        return out[:, :t], best_scores
    return out[:, :t]


# ---------------------------------------------------------------- mistakes


def beam_all_beams_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "all_beams_start"
    )


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "eos_not_counted"
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "bos_in_length")


def beam_penalty_only_at_end(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_only_at_end"
    )


def beam_final_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "final_by_log_prob"
    )


def beam_finished_pay_pad(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "finished_pay_pad"
    )


def beam_finished_keep_growing(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "finished_keep_growing"
    )


def beam_finished_extend_normally(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "finished_extend_normally"
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pad_allowed")


def beam_penalty_precedence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_precedence"
    )


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "raw_logits")


def beam_divide_by_k(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "divide_by_k")


def beam_no_reorder(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_reorder")


def beam_stop_when_best_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "stop_when_best_finished"
    )


def beam_repeat_not_interleave(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "repeat_not_interleave"
    )


def beam_alpha_default_only(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # the paper's alpha, written where the penalty is computed
    return _search(model, src, beam_size, max_len, bos_id, eos_id, 0.6)


def beam_returns_scores(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    # the tokens and each one's log P / lp, as the book's return_scores=True gives them
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "with_scores")


# ---------------------------------------------------------------- correct variants


def beam_batched_no_cache(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Batched, the whole prefix decoded again at every step, finished sentences kept."""
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_python_lists(
    model, src: Tensor, beam_size: int, max_len: int, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """One sentence at a time, each hypothesis a (tokens, log P, length, finished) tuple, the
    candidates sorted in Python."""
    mode = model.training
    model.eval()
    pad = model.config.pad_id
    results = []
    for i in range(src.shape[0]):
        s = src[i : i + 1]
        memory1 = model.encode(s)
        beams = [([bos_id], 0.0, 0, False)]
        steps = 0
        for t in range(1, max_len + 1):
            steps = t
            fed = torch.tensor([b[0] for b in beams], device=src.device)
            n = len(beams)
            log_p = model.decode(fed, memory1.expand(n, -1, -1), s.expand(n, -1))[:, -1]
            log_p = log_p.log_softmax(-1)
            log_p[:, pad] = float("-inf")
            candidates = []
            for j, (toks, score, length, fin) in enumerate(beams):
                if fin:
                    lp = _lp(torch.tensor(length), length_penalty)
                    rank = (torch.tensor(score) / lp).item()
                    candidates.append((rank, toks + [pad], score, length, True))
                    continue
                totals = torch.tensor(score) + log_p[j]
                ranks = (totals / _lp(torch.tensor(t), length_penalty)).tolist()
                for v, (r, tot) in enumerate(zip(ranks, totals.tolist())):
                    if r != float("-inf"):
                        candidates.append((r, toks + [v], tot, t, v == eos_id or t >= max_len))
            candidates.sort(key=lambda c: -c[0])
            beams = [(c[1], c[2], c[3], c[4]) for c in candidates[:beam_size]]
            if all(b[3] for b in beams):
                break
        best = max(beams, key=lambda b: b[1] / _lp(torch.tensor(b[2]), length_penalty).item())
        results.append((best[0][1:], steps))
    model.train(mode)
    width = max(steps for _, steps in results)
    out = torch.full((len(results), width), pad, dtype=torch.long, device=src.device)
    for i, (toks, _) in enumerate(results):
        out[i, : len(toks)] = torch.tensor(toks)
    return out


@torch.no_grad()
def beam_with_cache(
    model,
    src: Tensor,
    beam_size: int = 4,
    max_len: int = 50,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """The model's key/value cache, reordered after every step; scores kept as log P, the
    penalty divided in for the ranking only; defaults for beam_size and max_len."""
    training = model.training
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    src_k = src.repeat_interleave(K, dim=0)
    memory = model.encode(src_k)  # every copy encoded: the same memory rows
    cache = model.new_cache()
    history = torch.full((B * K, 0), pad, dtype=torch.long, device=src.device)
    last = torch.full((B * K, 1), bos_id, dtype=torch.long, device=src.device)
    scores = torch.tensor([0.0] + [float("-inf")] * (K - 1), device=src.device).repeat(B, 1)
    lengths = torch.zeros(B, K, dtype=torch.long, device=src.device)
    ended = torch.zeros(B, K, dtype=torch.bool, device=src.device)
    answer = torch.full((B, max_len), pad, dtype=torch.long, device=src.device)
    answered = torch.zeros(B, dtype=torch.bool, device=src.device)
    step = 0
    for step in range(1, max_len + 1):
        logp = model.decode(last, memory, src_k, cache, last_only=True)[:, 0].log_softmax(-1)
        logp[:, pad] = float("-inf")
        logp = logp.reshape(B, K, V)
        frozen = torch.full_like(logp, float("-inf"))
        frozen[:, :, pad] = 0.0
        logp = torch.where(ended.unsqueeze(-1), frozen, logp)
        cand = scores.unsqueeze(-1) + logp
        cand_len = torch.where(ended, lengths, torch.full_like(lengths, step))
        rank = cand / ((5.0 + cand_len.float().unsqueeze(-1)) / 6.0) ** length_penalty
        _, flat = rank.reshape(B, -1).topk(K, dim=1)
        parent, word = torch.div(flat, V, rounding_mode="floor"), flat % V
        scores = cand.reshape(B, -1).gather(1, flat)
        lengths = cand_len.gather(1, parent)
        ended = ended.gather(1, parent) | (word == eos_id) | (step >= max_len)
        rows = (parent + K * torch.arange(B, device=src.device).unsqueeze(1)).flatten()
        history = torch.cat([history[rows], word.reshape(-1, 1)], dim=1)
        cache.reorder(rows)
        last = word.reshape(-1, 1)
        complete = ended.all(dim=1) & ~answered
        if complete.any():
            final = scores / ((5.0 + lengths.float()) / 6.0) ** length_penalty
            pick = final.argmax(dim=1)
            for b in complete.nonzero()[:, 0].tolist():
                answer[b, :step] = history[b * K + pick[b]]
            answered |= complete
        if answered.all():
            break
    model.train(training)
    return answer[:, :step]


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start",
        beam_all_beams_start,
        "mistake",
        "All K hypotheses start from BOS with score 0, so the first step keeps K copies of the "
        "same token.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "In the length penalty |Y| counts the words but not the EOS.",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "The length I put into the penalty is the length of the token row, BOS included.",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_end",
        beam_penalty_only_at_end,
        "mistake",
        "I rank the candidates by log P during the search and divide by lp only to choose the "
        "final hypothesis.",
    ),
    BlindCase(
        CHECK,
        "final_by_log_prob",
        beam_final_by_log_prob,
        "mistake",
        "At the end I return the finished hypothesis with the highest log P, forgetting the "
        "length penalty there.",
    ),
    BlindCase(
        CHECK,
        "finished_pay_pad",
        beam_finished_pay_pad,
        "mistake",
        "A finished hypothesis is extended by PAD at the log-probability the model gives PAD, "
        "not at no cost.",
    ),
    BlindCase(
        CHECK,
        "finished_keep_growing",
        beam_finished_keep_growing,
        "mistake",
        "Every hypothesis gets length t in the penalty, also the finished ones that are only "
        "extended by PAD.",
    ),
    BlindCase(
        CHECK,
        "finished_extend_normally",
        beam_finished_extend_normally,
        "mistake",
        "I keep no finished set: a hypothesis goes on growing real tokens after its EOS.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I did not forbid PAD, so a hypothesis can be extended by padding.",
    ),
    BlindCase(
        CHECK,
        "penalty_precedence",
        beam_penalty_precedence,
        "mistake",
        "I wrote the penalty as (5 + length) / 6 ** alpha, so only the 6 is raised to alpha.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I added up the raw logits of the tokens instead of their log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "parent_divided_by_k",
        beam_divide_by_k,
        "mistake",
        "I recovered the parent hypothesis from the flat index as index // K instead of // V.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_no_reorder,
        "mistake",
        "I append each surviving token to the row of the same place, without moving the rows "
        "to follow their parents.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finished",
        beam_stop_when_best_finished,
        "mistake",
        "A sentence stops as soon as its best hypothesis has produced EOS.",
    ),
    BlindCase(
        CHECK,
        "repeat_not_interleave",
        beam_repeat_not_interleave,
        "mistake",
        "I copied the memory and the source for the K beams with repeat instead of "
        "repeat_interleave.",
    ),
    BlindCase(
        CHECK,
        "alpha_hardcoded",
        beam_alpha_default_only,
        "mistake",
        "I wrote the paper's 0.6 into the penalty and never use the length_penalty argument.",
    ),
    BlindCase(
        CHECK,
        "returns_tokens_and_scores",
        beam_returns_scores,
        "mistake",
        "I return (tokens, scores) as the book's beam_search does with return_scores=True.",
    ),
    BlindCase(
        CHECK,
        "batched_no_cache",
        beam_batched_no_cache,
        "correct",
        "Batched; the whole prefix is decoded at every step, and finished sentences stay in the "
        "batch extended by PAD.",
    ),
    BlindCase(
        CHECK,
        "python_lists",
        beam_python_lists,
        "correct",
        "One sentence at a time; the hypotheses are Python tuples and the candidates are sorted "
        "with list.sort.",
    ),
    BlindCase(
        CHECK,
        "cache_and_defaults",
        beam_with_cache,
        "correct",
        "The model's cache reordered after every step; each copy of a source encoded; "
        "beam_size and max_len have defaults.",
    ),
]
