"""Blind set B31, check_beam_search (chapter 15): beam search as readers write it.

Most readers' versions below share one batched search, ``_search``, whose switches each make one
slip; the correct variants are written out separately.
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
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    same_start: bool = False,
    no_finished: bool = False,
    bos_in_length: bool = False,
    penalty_at_end_only: bool = False,
    pick_by_log_prob: bool = False,
    finished_grow: bool = False,
    finished_pay_eos: bool = False,
    per_beam_topk: bool = False,
    no_reorder: bool = False,
    pad_allowed: bool = False,
    raw_logits: bool = False,
    stop_when_top_finished: bool = False,
    penalty_times: bool = False,
    plain_length: bool = False,
) -> Tensor:
    """A plain batched beam search (no cache, no rows dropped); each switch is one reader's slip."""
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_rep = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.full((B, K), float("-inf"))
    log_prob[:, 0] = 0.0
    if same_start:
        log_prob[:] = 0.0
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    only_eos = torch.full((V,), float("-inf"))

    def penalty(length: Tensor) -> Tensor:
        if penalty_at_end_only:
            return torch.ones_like(length, dtype=torch.float)
        if plain_length:
            return length.float().clamp(min=1) ** alpha
        return _lp(length + (1 if bos_in_length else 0), alpha)

    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, src_rep)[:, -1]
        step = logits if raw_logits else logits.log_softmax(-1)
        if not pad_allowed:
            step = step.index_fill(1, torch.tensor([pad]), float("-inf"))
        step = step.view(B, K, V)
        if finished_pay_eos:
            eos_cost = step[..., eos_id : eos_id + 1]
            only_eos_here = only_eos.expand(B, K, V).clone()
            only_eos_here[..., eos_id : eos_id + 1] = eos_cost
            step = torch.where(finished[..., None], only_eos_here, step)
        elif not no_finished:
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step
        if finished_grow or finished_pay_eos:
            new_length = torch.full_like(lengths, t)
        else:
            new_length = torch.where(finished, lengths, t)
        if penalty_times:
            ranked = total * penalty(new_length)[..., None]
        else:
            ranked = total / penalty(new_length)[..., None]
        if per_beam_topk:
            best_tok = ranked.argmax(-1)  # (B, K): each beam keeps its own best extension
            if t == 1:
                _, first = ranked[:, 0].topk(K, dim=-1)
                beam = torch.zeros_like(first)
                token = first
            else:
                beam = torch.arange(K).expand(B, K)
                token = best_tok
            best = beam * V + token
        else:
            _, best = ranked.view(B, K * V).topk(K, dim=-1)
            beam, token = best // V, best % V
        log_prob = total.view(B, K * V).gather(1, best)
        lengths = new_length.gather(1, beam)
        finished = finished.gather(1, beam) | (token == eos_id)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        if no_reorder:
            tokens = torch.cat([tokens, token.view(B * K, 1)], dim=1)
        else:
            tokens = torch.cat([tokens[rows], token.view(B * K, 1)], dim=1)
        if stop_when_top_finished:
            top = (log_prob / penalty(lengths)).argmax(-1)
            if finished.gather(1, top[:, None]).all():
                break
        elif finished.all():
            break
    if pick_by_log_prob:
        best_beam = log_prob.argmax(-1)
    else:
        best_beam = (log_prob / _lp(lengths + (1 if bos_in_length else 0), alpha)).argmax(-1)
    hyps = tokens.view(B, K, -1)[torch.arange(B), best_beam, 1:]
    if no_finished or finished_pay_eos:  # what comes after a row's first EOS is padding
        after = (hyps == eos_id).long().cumsum(1) - (hyps == eos_id).long() > 0
        hyps = hyps.masked_fill(after, pad)
    return hyps


# ---------------------------------------------------------------- mistakes


def beam_same_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, same_start=True)


def beam_no_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_finished=True)


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True
    )


def beam_penalty_at_end(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_at_end_only=True
    )


def beam_pick_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_by_log_prob=True
    )


def beam_finished_grows(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_grow=True
    )


def beam_finished_pay_eos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_pay_eos=True
    )


def beam_per_beam_topk(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, per_beam_topk=True
    )


def beam_no_reorder(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_reorder=True)


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_allowed=True)


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, raw_logits=True)


def beam_stop_when_top_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        stop_when_top_finished=True,
    )


def beam_penalty_multiplied(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_times=True
    )


def beam_lp_plain_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, plain_length=True
    )


def beam_alpha_hard_coded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, 0.6)


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def beam_hypothesis_lists(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Each sentence alone, its hypotheses as Python (log P, tokens, finished) triples."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    outputs = []
    for sentence in src:
        s = sentence[None]
        memory = model.encode(s)
        hyps = [(0.0, [bos_id], False)]
        for t in range(1, max_len + 1):
            candidates = []
            for logp, toks, done in hyps:
                if done:
                    length = len(toks) - 1 - toks.count(pad)
                    candidates.append(
                        (
                            logp / _lp(torch.tensor(length), length_penalty).item(),
                            logp,
                            toks + [pad],
                            True,
                        )
                    )
                    continue
                logits = model.decode(torch.tensor([toks]), memory, s)[0, -1]
                step = logits.log_softmax(-1)
                step[pad] = float("-inf")
                rank = (logp + step) / _lp(torch.tensor(t), length_penalty)
                for tok in range(len(step)):
                    if step[tok] == float("-inf"):
                        continue
                    total = logp + step[tok].item()
                    ended = tok == eos_id or t == max_len
                    candidates.append((rank[tok].item(), total, toks + [tok], ended))
            candidates.sort(key=lambda c: -c[0])
            hyps = [(c[1], c[2], c[3]) for c in candidates[:beam_size]]
            if all(h[2] for h in hyps):
                break
        best = max(
            hyps,
            key=lambda h: (
                h[0] / _lp(torch.tensor(len(h[1]) - 1 - h[1].count(pad)), length_penalty).item()
            ),
        )
        outputs.append(best[1][1:])
    model.train(was_training)
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], dtype=torch.long)


@torch.no_grad()
def beam_with_cache(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """Batched, with model.new_cache() reordered after every step; float64 scores."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    B, K = src.shape[0], beam_size
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_k = src.repeat_interleave(K, dim=0)
    cache = model.new_cache()
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B, K, dtype=torch.float64)
    score[:, 1:] = float("-inf")
    done = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    t = 0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens[:, -1:], memory, src_k, cache)[:, -1].double()
        logp = logits.log_softmax(-1)
        logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        frozen = torch.full_like(logp, float("-inf"))
        frozen[..., pad] = 0.0
        logp = torch.where(done[..., None], frozen, logp)
        cand = score[..., None] + logp  # (B, K, V)
        cand_len = torch.where(done, length, torch.full_like(length, t))
        lp = ((5.0 + cand_len.double()) / 6.0) ** length_penalty
        flat = (cand / lp[..., None]).reshape(B, K * V)
        idx = flat.topk(K, dim=1).indices
        parent, tok = idx.div(V, rounding_mode="floor"), idx.remainder(V)
        score = cand.reshape(B, K * V).gather(1, idx)
        length = cand_len.gather(1, parent)
        done = done.gather(1, parent) | (tok == eos_id)
        if t == max_len:
            done[:] = True
        rows = (parent + K * torch.arange(B)[:, None]).flatten()
        tokens = torch.cat([tokens[rows], tok.reshape(-1, 1)], 1)
        cache.reorder(rows, cross=False)
        if done.all():
            break
    final = score / ((5.0 + length.double()) / 6.0) ** length_penalty
    pick = final.argmax(1)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B), pick, 1:]


@torch.no_grad()
def beam_log_prob_then_penalty_each_step(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    """One sentence at a time, batched over its K hypotheses, prefix recomputed each step."""
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    K = beam_size
    results = []
    for sentence in src:
        s = sentence[None].expand(K, -1)
        memory = model.encode(sentence[None]).expand(K, -1, -1)
        tokens = torch.full((K, 1), bos_id, dtype=torch.long)
        logp_sum = torch.tensor([0.0] + [float("-inf")] * (K - 1))
        ended = torch.zeros(K, dtype=torch.bool)
        n = torch.zeros(K)
        for t in range(1, max_len + 1):
            step = model.decode(tokens, memory, s)[:, -1].log_softmax(-1)
            step[:, pad] = float("-inf")
            step[ended] = float("-inf")
            step[ended, pad] = 0.0
            total = logp_sum[:, None] + step  # (K, V)
            new_n = torch.where(ended, n, torch.full_like(n, t))
            ranked = total / ((5 + new_n[:, None]) / 6) ** length_penalty
            top = ranked.flatten().topk(K).indices
            parent, tok = top // V, top % V
            logp_sum = total.flatten()[top]
            n = new_n[parent]
            ended = ended[parent] | (tok == eos_id)
            tokens = torch.cat([tokens[parent], tok[:, None]], dim=1)
            if ended.all():
                break
        best = (logp_sum / ((5 + n) / 6) ** length_penalty).argmax()
        results.append(tokens[best, 1:])
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long)
    for i, r in enumerate(results):
        out[i, : len(r)] = r
    return out


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_same_start,
        "mistake",
        "All K start hypotheses got score 0, so the first step keeps K copies of one token.",
    ),
    BlindCase(
        CHECK,
        "finished_not_frozen",
        beam_no_finished,
        "mistake",
        "A hypothesis that produced EOS goes on growing like the others; I cut it at EOS at the end.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "I counted BOS in |Y| for the length penalty.",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_the_end",
        beam_penalty_at_end,
        "mistake",
        "I ranked candidates by log P during the search and divided by lp only to pick the output.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_pick_by_log_prob,
        "mistake",
        "The search used the penalty, but I returned the hypothesis with the highest raw log P.",
    ),
    BlindCase(
        CHECK,
        "finished_keeps_growing",
        beam_finished_grows,
        "mistake",
        "A finished hypothesis is extended by PAD at no cost, but its length keeps growing.",
    ),
    BlindCase(
        CHECK,
        "finished_extended_by_eos_at_cost",
        beam_finished_pay_eos,
        "mistake",
        "After EOS I kept extending a hypothesis with EOS, adding the model's log P of EOS.",
    ),
    BlindCase(
        CHECK,
        "topk_per_beam",
        beam_per_beam_topk,
        "mistake",
        "After the first step each beam keeps only its own best next token (K greedy searches).",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_no_reorder,
        "mistake",
        "I appended the chosen tokens without reordering the token history by parent beam.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not exclude PAD from the candidates.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I added up the raw logits instead of log_softmax log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finished",
        beam_stop_when_top_finished,
        "mistake",
        "I stopped as soon as the best-ranked hypothesis had finished, not when all K had.",
    ),
    BlindCase(
        CHECK,
        "penalty_multiplied",
        beam_penalty_multiplied,
        "mistake",
        "I multiplied log P by lp(Y) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "lp_plain_length",
        beam_lp_plain_length,
        "mistake",
        "I divided log P by |Y| ** alpha during the search, forgetting GNMT's (5 + |Y|) / 6.",
    ),
    BlindCase(
        CHECK,
        "alpha_hard_coded",
        beam_alpha_hard_coded,
        "mistake",
        "I wrote the paper's alpha = 0.6 in the penalty and ignored length_penalty.",
    ),
    BlindCase(
        CHECK,
        "python_hypothesis_lists",
        beam_hypothesis_lists,
        "correct",
        "Each sentence alone, hypotheses as Python lists sorted by score; restores the mode.",
    ),
    BlindCase(
        CHECK,
        "batched_with_kv_cache",
        beam_with_cache,
        "correct",
        "Batched over B*K rows with model.new_cache() reordered each step, scores in float64.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_batched_beams",
        beam_log_prob_then_penalty_each_step,
        "correct",
        "A loop over sentences; each one's K hypotheses in one batch, prefix recomputed.",
    ),
]
