"""Blind set B32, check_beam_search (chapter 15): beam search with GNMT's length penalty."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam_one(
    model,
    src: Tensor,
    K: int,
    limit: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    flags: frozenset,
) -> tuple[list[int], int]:
    """Beam search for one sentence ``src`` (1, S), recomputing the prefix at every step.

    Returns the best hypothesis (without BOS) and the number of steps taken. ``flags`` switch
    on the mistakes below.
    """
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    memory = model.encode(src).expand(K, -1, -1)
    srcs = src.expand(K, -1)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long, device=src.device)
    log_prob = torch.full((K,), float("-inf"), device=src.device)
    log_prob[0] = 0.0
    if "no_first_step_restriction" in flags:
        log_prob.zero_()
    finished = torch.zeros(K, dtype=torch.bool, device=src.device)
    lengths = torch.zeros(K, dtype=torch.long, device=src.device)
    only_pad = torch.full((V,), float("-inf"), device=src.device)
    only_pad[pad] = 0.0
    steps = limit - 1 if "one_step_short" in flags else limit
    t = 0
    for t in range(1, steps + 1):
        logits = model.decode(tokens, memory, srcs)[:, -1]  # (K, V)
        if "no_log_softmax" in flags:
            step = logits.clone()
        else:
            step = logits.log_softmax(-1)
        if "pad_allowed" not in flags:
            step[:, pad] = float("-inf")
        if "no_finished_set" not in flags:
            step = torch.where(finished[:, None], only_pad, step)
        total = log_prob[:, None] + step  # (K, V)
        if "finished_length_grows" in flags:
            new_length = torch.full_like(lengths, t)
        else:
            new_length = torch.where(finished, lengths, torch.full_like(lengths, t))
        if "bos_in_length" in flags:
            counted = new_length + 1
        else:
            counted = new_length
        if "precedence_slip" in flags:
            penalty = (5.0 + counted.float()) / 6.0**alpha
        else:
            penalty = _lp(counted, alpha)
        if "rank_by_log_prob" in flags:
            ranked = total
        else:
            ranked = total / penalty[:, None]
        if "per_beam_best" in flags:
            token = ranked.argmax(-1)  # (K,)
            beam = torch.arange(K, device=src.device)
            best = beam * V + token
        else:
            _, best = ranked.reshape(-1).topk(K)
            if "index_slip" in flags:
                beam, token = best % K, best // K
            else:
                beam, token = best // V, best % V
        if "penalty_compounded" in flags:
            log_prob = ranked.reshape(-1)[best]
        else:
            log_prob = total.reshape(-1)[best]
        lengths = new_length[beam]
        if "no_finished_set" in flags:
            finished = torch.zeros_like(finished)
        else:
            finished = finished[beam] | (token == eos_id)
        if "eos_not_in_length" in flags:
            lengths = torch.where(token == eos_id, lengths - 1, lengths)
        if t >= limit:
            finished = torch.ones_like(finished)
        if "history_not_reordered" in flags:
            tokens = torch.cat([tokens, token[:, None]], dim=1)
        else:
            tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
        if "stop_when_top_finishes" in flags:
            if finished[0]:
                break
        elif finished.all():
            break
    if "final_by_log_prob" in flags:
        choice = int(log_prob.argmax())
    elif "final_first_beam" in flags:
        choice = 0
    else:
        counted = lengths + 1 if "bos_in_length" in flags else lengths
        choice = int((log_prob / _lp(counted, alpha)).argmax())
    out = tokens[choice].tolist()
    return (out if "bos_kept" in flags else out[1:]), t


def _beam(
    model,
    src,
    beam_size,
    max_len,
    bos_id,
    eos_id,
    length_penalty,
    *flags,
    eval_mode=True,
):
    was_training = model.training
    if eval_mode:
        model.eval()
    pad = model.config.pad_id
    results, widths = [], []
    for b in range(src.shape[0]):
        hyp, t = _beam_one(
            model, src[b : b + 1], beam_size, max_len, bos_id, eos_id, length_penalty,
            frozenset(flags),
        )  # fmt: skip
        results.append(hyp)
        widths.append(t + (1 if "bos_kept" in flags else 0))
    width = max(max(widths), max(len(h) for h in results))
    out = torch.full((len(results), width), pad, dtype=torch.long)
    for b, hyp in enumerate(results):
        out[b, : len(hyp)] = torch.tensor(hyp, dtype=torch.long)
    model.train(was_training)
    return out.to(src.device)


# ---------------------------------------------------------------- mistakes


def beam_no_first_step_restriction(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty,
        "no_first_step_restriction",
    )  # fmt: skip


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "bos_in_length")


def beam_eos_not_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "eos_not_in_length"
    )


def beam_penalty_compounded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_compounded"
    )


def beam_no_finished_set(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_finished_set")


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "finished_length_grows"
    )


def beam_final_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "final_by_log_prob"
    )


def beam_rank_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "rank_by_log_prob")


def beam_stop_when_top_finishes(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "stop_when_top_finishes"
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pad_allowed")


def beam_per_beam_best(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "per_beam_best")


def beam_index_slip(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "index_slip")


def beam_precedence_slip(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "precedence_slip")


def beam_no_log_softmax(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_log_softmax")


def beam_alpha_hard_coded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, 0.6)


def beam_one_step_short(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "one_step_short")


def beam_history_not_reordered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "history_not_reordered"
    )


def beam_dropout_on(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eval_mode=False)


@torch.no_grad()
def beam_finished_moved_out(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """The 'finished list' design: a hypothesis that ends leaves the beam, which is refilled
    with open ones; the search stops when K have finished or at the limit."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    results = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        beams = [([bos_id], 0.0)]
        done: list[tuple[list[int], float]] = []
        for t in range(1, max_len + 1):
            toks = torch.tensor([h for h, _ in beams], device=src.device)
            logp = model.decode(toks, memory.expand(len(beams), -1, -1), s.expand(len(beams), -1))
            logp = logp[:, -1].log_softmax(-1)
            logp[:, pad] = float("-inf")
            total = torch.tensor([sc for _, sc in beams], device=src.device)[:, None] + logp
            ranked = total / _lp(torch.tensor(t), length_penalty)
            _, best = ranked.reshape(-1).topk(min(K, ranked.numel()))
            new = []
            for i in best.tolist():
                hyp = beams[i // V][0] + [i % V]
                score = float(total.reshape(-1)[i])
                if i % V == eos_id or t == max_len:
                    done.append((hyp, score / float(_lp(torch.tensor(t), length_penalty))))
                else:
                    new.append((hyp, score))
            beams = new
            if len(done) >= K or not beams:
                break
        results.append(max(done, key=lambda d: d[1])[0][1:])
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long)
    for b, r in enumerate(results):
        out[b, : len(r)] = torch.tensor(r)
    return out.to(src.device)


# ---------------------------------------------------------------- correct variants


def beam_per_sentence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_batched_with_cache(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Every sentence's K hypotheses as rows of one batch, the cache reordered; no sentence
    leaves the batch before all have finished."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B = src.shape[0]
    dev = src.device
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    score = torch.zeros(B, K, device=dev)
    score[:, 1:] = float("-inf")
    ended = torch.zeros(B, K, dtype=torch.bool, device=dev)
    length = torch.zeros(B, K, dtype=torch.long, device=dev)
    pad_only = torch.full((V,), float("-inf"), device=dev)
    pad_only[pad] = 0.0
    t = 0
    for t in range(1, max_len + 1):
        logp = model.decode(tokens[:, -1:], memory, src_k, cache, last_only=True)[:, -1]
        logp = logp.log_softmax(-1)
        logp[:, pad] = float("-inf")
        logp = torch.where(ended.view(-1, 1), pad_only, logp).view(B, K, V)
        total = score.unsqueeze(-1) + logp
        new_len = torch.where(ended, length, torch.full_like(length, t))
        ranked = total / (((5.0 + new_len.float()) / 6.0) ** length_penalty).unsqueeze(-1)
        idx = ranked.flatten(1).topk(K, dim=1).indices  # (B, K)
        beam = torch.div(idx, V, rounding_mode="floor")
        token = idx - beam * V
        score = total.flatten(1).gather(1, idx)
        length = new_len.gather(1, beam)
        ended = ended.gather(1, beam) | (token == eos_id)
        if t >= max_len:
            ended[:] = True
        rows = (torch.arange(B, device=dev).unsqueeze(1) * K + beam).flatten()
        tokens = torch.cat([tokens[rows], token.reshape(-1, 1)], dim=1)
        cache.reorder(rows, cross=False)
        if bool(ended.all()):
            break
    final = score / ((5.0 + length.float()) / 6.0) ** length_penalty
    best = final.argmax(dim=1)
    chosen = tokens.view(B, K, -1)[torch.arange(B, device=dev), best, 1:]
    model.train(was_training)
    return chosen


@torch.no_grad()
def beam_hypothesis_list(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """A list of hypotheses per sentence, the open ones decoded together; candidates ranked
    with a stable descending sort."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    outputs, widths = [], []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        hyps = [([bos_id], 0.0, 0, False)]  # tokens, log P, |Y|, finished
        t = 0
        for t in range(1, max_len + 1):
            rows = torch.tensor([h[0] for h in hyps], device=src.device)
            n = len(hyps)
            logp = model.decode(rows, memory.expand(n, -1, -1), s.expand(n, -1))[:, -1]
            logp = logp.log_softmax(-1)
            logp[:, pad] = float("-inf")
            for i, h in enumerate(hyps):
                if h[3]:  # finished: only PAD, at no cost
                    logp[i] = float("-inf")
                    logp[i, pad] = 0.0
            base = torch.tensor([h[1] for h in hyps], device=src.device)
            total = base[:, None] + logp  # (n, V)
            lens = torch.tensor([h[2] if h[3] else t for h in hyps], device=src.device)
            ranked = total / (((5.0 + lens.float()) / 6.0) ** length_penalty)[:, None]
            order = ranked.reshape(-1).sort(descending=True, stable=True).indices[:K]
            new = []
            for flat in order.tolist():
                i, tok = divmod(flat, V)
                tokens, _, length, done = hyps[i]
                length = length if done else t
                done = done or tok == eos_id or t >= max_len
                new.append((tokens + [tok], float(total[i, tok]), length, done))
            hyps = new
            if all(h[3] for h in hyps):
                break
        best = max(hyps, key=lambda h: h[1] / ((5.0 + h[2]) / 6.0) ** length_penalty)
        outputs.append(best[0][1:])
        widths.append(t)
    out = torch.full((len(outputs), max(widths)), pad, dtype=torch.long)
    for b, hyp in enumerate(outputs):
        out[b, : len(hyp)] = torch.tensor(hyp, dtype=torch.long)
    return out.to(src.device)


CASES = [
    BlindCase(
        CHECK,
        "no_first_step_restriction",
        beam_no_first_step_restriction,
        "mistake",
        "I started all K hypotheses from BOS with score 0, so the first step fills the beam "
        "with K copies of the same extensions.",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "I used the number of tokens in the row as |Y|, BOS included.",
    ),
    BlindCase(
        CHECK,
        "eos_not_in_length",
        beam_eos_not_in_length,
        "mistake",
        "I did not count EOS in |Y| for the length penalty.",
    ),
    BlindCase(
        CHECK,
        "penalty_compounded",
        beam_penalty_compounded,
        "mistake",
        "I kept the penalized score as the running score, so the penalty is divided in again "
        "at every step.",
    ),
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "A hypothesis that produced EOS is extended like any other, so the search always runs "
        "to max_len and outputs go on after their EOS.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "Finished hypotheses are extended by PAD at no cost, but their length still grows with "
        "every step, so their penalty changes.",
    ),
    BlindCase(
        CHECK,
        "final_by_log_prob",
        beam_final_by_log_prob,
        "mistake",
        "At the end I returned the hypothesis with the highest log P, forgetting the length "
        "penalty in the final choice.",
    ),
    BlindCase(
        CHECK,
        "rank_by_log_prob",
        beam_rank_by_log_prob,
        "mistake",
        "During the search I ranked candidates by log P and applied the penalty only to pick "
        "the final hypothesis.",
    ),
    BlindCase(
        CHECK,
        "stop_when_top_finishes",
        beam_stop_when_top_finishes,
        "mistake",
        "I stop a sentence as soon as its best-ranked hypothesis has finished.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I did not set PAD's log-probability to -inf, so PAD can be generated.",
    ),
    BlindCase(
        CHECK,
        "per_beam_best",
        beam_per_beam_best,
        "mistake",
        "Each hypothesis is extended by its own best token: K greedy searches side by side "
        "instead of a top-K over all K * V candidates.",
    ),
    BlindCase(
        CHECK,
        "index_slip",
        beam_index_slip,
        "mistake",
        "I decoded the flat index as beam = best % K, token = best // K.",
    ),
    BlindCase(
        CHECK,
        "penalty_precedence_slip",
        beam_precedence_slip,
        "mistake",
        "I wrote (5 + length) / 6 ** alpha: the power binds to 6 only.",
    ),
    BlindCase(
        CHECK,
        "no_log_softmax",
        beam_no_log_softmax,
        "mistake",
        "I added the raw logits to the scores instead of log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "alpha_hard_coded",
        beam_alpha_hard_coded,
        "mistake",
        "I wrote 0.6 in the penalty instead of the length_penalty argument.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        beam_one_step_short,
        "mistake",
        "My loop ran range(1, max_len), so at most max_len - 1 tokens come out.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "I appended the new tokens to the rows without first reordering the rows by the "
        "surviving hypotheses.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        beam_dropout_on,
        "mistake",
        "I forgot model.eval().",
    ),
    BlindCase(
        CHECK,
        "finished_moved_out",
        beam_finished_moved_out,
        "mistake",
        "I move a finished hypothesis to a list and refill the beam with open ones, stopping "
        "when K have finished, so finished hypotheses no longer compete for the beam.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_recompute",
        beam_per_sentence,
        "correct",
        "Each sentence searched alone, recomputing the prefix at every step, outputs padded "
        "to the number of steps the longest search took.",
    ),
    BlindCase(
        CHECK,
        "batched_with_cache",
        beam_batched_with_cache,
        "correct",
        "All B * K hypotheses in one batch with the key/value cache reordered at every step; "
        "no sentence leaves the batch early.",
    ),
    BlindCase(
        CHECK,
        "hypothesis_list",
        beam_hypothesis_list,
        "correct",
        "A Python list of (tokens, log P, length, finished) per sentence, candidates ranked "
        "with a stable descending sort, the final choice by the penalized score; leaves the "
        "model in eval mode.",
    ),
]
