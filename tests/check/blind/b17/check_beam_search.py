"""Blind set B17, check_beam_search (chapter 15): beam search as readers write it.

Most mistakes share one batched search (``_beam``) with one slip switched on each; the slips are
the reader's, the rest of the search is right. The correct variants are written separately.
"""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


@torch.no_grad()
def _beam(
    model: Transformer,
    src: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    slip: str = "",
) -> Tensor:
    """A batched beam search without cache; all rows decoded until every sentence is done.
    ``slip`` names the one thing done wrong."""
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)  # (B*K, S)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.full((B, K), float("-inf"))
    log_prob[:, 0] = 0.0
    if slip == "all_beams_start_at_zero":
        log_prob.zero_()
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    out = torch.full((B, max_len), pad, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    width = 0
    for t in range(1, max_len + 1):
        step = model.decode(tokens, memory, src_k)[:, -1].log_softmax(dim=-1)  # (B*K, V)
        if slip != "pad_generated":
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if slip != "no_finished_state":
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step  # (B, K, V)
        open_len = torch.full((B, K, V), t, dtype=torch.long)
        if slip == "bos_counted_in_length":
            open_len += 1
        if slip == "length_without_eos":
            open_len[..., eos_id] = t - 1
        if slip == "finished_keep_growing":
            cand_len = open_len
        else:
            cand_len = torch.where(finished[..., None], lengths[..., None], open_len)
        ranked = total if slip == "no_length_penalty" else total / _lp(cand_len, alpha)
        _, best = ranked.view(B, K * V).topk(K, dim=-1)  # (B, K)
        beam, token = best // V, best % V
        if slip == "penalty_every_step":
            log_prob = ranked.view(B, K * V).gather(1, best)  # the divided score carried on
        else:
            log_prob = total.view(B, K * V).gather(1, best)
        lengths = cand_len.view(B, K * V).gather(1, best)
        finished = finished.gather(1, beam)
        if slip != "no_finished_state":
            finished |= token == eos_id
        if t >= max_len:
            finished[:] = True
        if slip == "rows_not_offset":
            rows = beam.reshape(-1)  # forgot the b * K offset of each sentence
        else:
            rows = (torch.arange(B)[:, None] * K + beam).reshape(-1)
        history = tokens if slip == "history_not_reordered" else tokens[rows]
        tokens = torch.cat([history, token.reshape(-1, 1)], dim=1)  # (B*K, t + 1)
        if slip == "stop_when_best_finished":
            newly = finished[:, 0] & ~done
        else:
            newly = finished.all(dim=1) & ~done
        for b in newly.nonzero().flatten().tolist():
            if slip in ("penalty_every_step",):
                score = log_prob[b]
            elif slip == "final_pick_by_log_prob":
                score = log_prob[b]
            else:
                score = log_prob[b] / _lp(lengths[b], alpha)
            k = 0 if slip == "stop_when_best_finished" else int(score.argmax())
            hyp = tokens.view(B, K, t + 1)[b, k, 1:].clone()
            if slip == "no_finished_state":
                ends = (hyp == eos_id).nonzero()
                if len(ends):
                    hyp[int(ends[0]) + 1 :] = pad
            out[b, :t] = hyp
        done |= newly
        width = t
        if done.all():
            break
    return out[:, :width]


# ---------------------------------------------------------------- mistakes


def beam_no_finished_state(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_finished_state"
    )


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "bos_counted_in_length"
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_every_step"
    )


def beam_stop_when_best_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "stop_when_best_finished"
    )


def beam_pad_generated(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pad_generated")


def beam_all_start_zero(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "all_beams_start_at_zero"
    )


def beam_no_length_penalty(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_length_penalty"
    )


def beam_final_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "final_pick_by_log_prob"
    )


def beam_finished_grow(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "finished_keep_growing"
    )


def beam_length_without_eos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "length_without_eos"
    )


def beam_history_not_reordered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "history_not_reordered"
    )


def beam_rows_not_offset(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "rows_not_offset")


@torch.no_grad()
def beam_separate_finished_list(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """GNMT / fairseq style, as I had read it elsewhere: a hypothesis that ends with EOS leaves
    the beam for a finished list, the beam is refilled with open ones, and the search stops
    when K hypotheses have finished."""
    model.eval()
    pad = model.config.pad_id
    results = []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        beams = [([bos_id], 0.0)]
        done: list[tuple[list[int], float]] = []
        for t in range(1, max_len + 1):
            tokens = torch.tensor([ys for ys, _ in beams])
            step = model.decode(tokens, memory.expand(len(beams), -1, -1), s.expand(len(beams), -1))
            step = step[:, -1].log_softmax(-1)
            step[:, pad] = float("-inf")
            cands = []
            for i, (ys, lp) in enumerate(beams):
                for w in range(step.shape[1]):
                    if step[i, w] > float("-inf"):
                        cands.append((ys + [w], lp + float(step[i, w])))
            lpen = ((5.0 + t) / 6.0) ** length_penalty
            cands.sort(key=lambda c: c[1] / lpen, reverse=True)
            beams = []
            for ys, lp in cands[:beam_size]:
                if ys[-1] == eos_id or t == max_len:
                    done.append((ys, lp / lpen))
                else:
                    beams.append((ys, lp))
            if len(done) >= beam_size or not beams:
                break
        best = max(done, key=lambda d: d[1])[0][1:]
        results.append(torch.tensor(best, dtype=torch.long))
    return torch.nn.utils.rnn.pad_sequence(results, batch_first=True, padding_value=pad)


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def beam_one_sentence_loop(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Each sentence searched alone: K rows, the whole prefix re-fed every step, a finished
    hypothesis frozen by giving its non-PAD extensions -inf; rows padded at the end to the
    longest search."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    rows = []
    for b in range(src.shape[0]):
        s = src[b : b + 1].expand(K, -1)
        memory = model.encode(src[b : b + 1]).expand(K, -1, -1)
        ys = torch.full((K, 1), bos_id, dtype=torch.long)
        score = torch.tensor([0.0] + [float("-inf")] * (K - 1))
        length = torch.zeros(K, dtype=torch.long)
        closed = torch.zeros(K, dtype=torch.bool)
        for t in range(1, max_len + 1):
            logp = torch.log_softmax(model.decode(ys, memory, s)[:, -1], dim=-1)
            logp[:, pad] = float("-inf")
            logp[closed] = float("-inf")
            logp[closed, pad] = 0.0
            cand = score[:, None] + logp  # (K, V)
            cand_len = torch.where(closed, length, torch.full_like(length, t))  # (K,)
            ranked = cand / (((5.0 + cand_len.float()) / 6.0) ** length_penalty)[:, None]
            idx = ranked.flatten().topk(K).indices
            parent, word = idx // V, idx % V
            score = cand.flatten()[idx]
            length = cand_len[parent]
            closed = closed[parent] | (word == eos_id)
            ys = torch.cat([ys[parent], word[:, None]], dim=1)
            if t == max_len or bool(closed.all()):
                final = score / ((5.0 + length.float()) / 6.0) ** length_penalty
                rows.append(ys[int(final.argmax()), 1:])
                break
    model.train(was_training)
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=pad)


@torch.no_grad()
def beam_with_kv_cache(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Batched with the package's KVCache (one token fed per step, cache.reorder to follow the
    parents); sentences are not dropped when done, their result is copied out once."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B = src.size(0)
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    seqs = torch.full((B, K, 1), bos_id, dtype=torch.long)
    logp = torch.zeros(B, K)
    logp[:, 1:] = float("-inf")
    fin = torch.zeros(B, K, dtype=torch.bool)
    lens = torch.zeros(B, K, dtype=torch.long)
    pad_only = torch.full((V,), float("-inf"))
    pad_only[pad] = 0.0
    result = torch.full((B, max_len), pad, dtype=torch.long)
    recorded = torch.zeros(B, dtype=torch.bool)
    t = 0
    for t in range(1, max_len + 1):
        fed = seqs[:, :, -1].reshape(B * K, 1)
        step = model.decode(fed, memory, src_k, cache=cache, last_only=True)[:, -1]
        step = step.log_softmax(-1)
        step[:, pad] = float("-inf")
        step = torch.where(fin.reshape(B * K, 1), pad_only, step).view(B, K, V)
        total = logp.unsqueeze(-1) + step
        new_len = lens.masked_fill(~fin, t)
        penalty = ((5.0 + new_len.float()) / 6.0) ** length_penalty
        flat = (total / penalty.unsqueeze(-1)).view(B, -1)
        best = flat.topk(K, dim=1).indices
        parent, word = best.div(V, rounding_mode="floor"), best.remainder(V)
        logp = total.view(B, -1).gather(1, best)
        lens = new_len.gather(1, parent)
        fin = fin.gather(1, parent) | (word == eos_id) | (t >= max_len)
        seqs = torch.cat([seqs.gather(1, parent[..., None].expand(-1, -1, t)), word[..., None]], 2)
        cache.reorder((parent + torch.arange(B)[:, None] * K).flatten())
        all_fin = fin.all(1)
        for b in (all_fin & ~recorded).nonzero().flatten().tolist():
            final = logp[b] / ((5.0 + lens[b].float()) / 6.0) ** length_penalty
            result[b, :t] = seqs[b, int(final.argmax()), 1:]
        recorded |= all_fin
        if recorded.all():
            break
    return result[:, :t]


@torch.no_grad()
def beam_two_stage_topk(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    use_cache: bool = False,
) -> Tensor:
    """First the K best extensions of each hypothesis, then the K best of those K * K: the
    same K winners as a top-K over all K * V; finished hypotheses held in place by a PAD-only
    row. Sentences that finish leave the batch."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B = src.shape[0]
    out = torch.full((B, max_len), pad, dtype=torch.long)
    open_ = list(range(B))
    memory_all = model.encode(src)
    ys = torch.full((B, K, 1), bos_id, dtype=torch.long)
    score = torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    length = torch.zeros(B, K, dtype=torch.long)
    fin = torch.zeros(B, K, dtype=torch.bool)
    steps = 0
    for t in range(1, max_len + 1):
        n = len(open_)
        idx = torch.tensor(open_)
        mem = memory_all[idx].repeat_interleave(K, 0)
        s = src[idx].repeat_interleave(K, 0)
        logp = model.decode(ys.view(n * K, -1), mem, s)[:, -1].log_softmax(-1).view(n, K, V)
        logp[..., pad] = float("-inf")
        freeze = torch.full_like(logp, float("-inf"))
        freeze[..., pad] = 0.0
        logp = torch.where(fin[..., None], freeze, logp)
        total = score[..., None] + logp
        cand_len = torch.where(fin, length, torch.full_like(length, t))
        ranked = total / (((5.0 + cand_len.float()) / 6.0) ** length_penalty)[..., None]
        top_r, top_w = ranked.topk(K, dim=-1)  # (n, K, K): per hypothesis
        _, pick = top_r.view(n, K * K).topk(K, dim=-1)  # (n, K)
        parent = pick // K
        word = top_w.view(n, K * K).gather(1, pick)
        score = total.gather(2, top_w).view(n, K * K).gather(1, pick)
        length = cand_len.gather(1, parent)
        fin = fin.gather(1, parent) | (word == eos_id)
        if t == max_len:
            fin[:] = True
        ys = torch.cat([ys.gather(1, parent[..., None].expand_as(ys)), word[..., None]], dim=2)
        steps = t
        keep = []
        for i, b in enumerate(open_):
            if fin[i].all():
                final = score[i] / ((5.0 + length[i].float()) / 6.0) ** length_penalty
                out[b, :t] = ys[i, int(final.argmax()), 1:]
            else:
                keep.append(i)
        if not keep:
            break
        k = torch.tensor(keep)
        open_ = [open_[i] for i in keep]
        ys, score, length, fin = ys[k], score[k], length[k], fin[k]
    return out[:, :steps]


CASES = [
    BlindCase(
        CHECK,
        "no_finished_state",
        beam_no_finished_state,
        "mistake",
        "I treat EOS like any other token: a hypothesis that produced it keeps being extended "
        "and scored, and I cut the best one after its first EOS at the end.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "I counted BOS in |Y| (the length of the token row), one more than the output tokens.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I kept the length-penalised score as the hypothesis's score, so at the next step the "
        "already divided score is divided again.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finished",
        beam_stop_when_best_finished,
        "mistake",
        "I stop a sentence as soon as its top-ranked hypothesis has produced EOS and return it, "
        "without waiting for the open ones.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_generated,
        "mistake",
        "I did not give PAD -inf, so a hypothesis can be extended by PAD as a word.",
    ),
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_start_zero,
        "mistake",
        "All K start hypotheses got score 0, so the first step picks K copies of one token.",
    ),
    BlindCase(
        CHECK,
        "no_length_penalty",
        beam_no_length_penalty,
        "mistake",
        "I ranked the candidates by log P alone and never used length_penalty.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_final_by_log_prob,
        "mistake",
        "I ranked with the length penalty during the search but picked the final hypothesis by "
        "its raw log P.",
    ),
    BlindCase(
        CHECK,
        "finished_keep_growing",
        beam_finished_grow,
        "mistake",
        "A finished hypothesis is extended by PAD at no cost, but its length still grows with "
        "every step (I used t for all).",
    ),
    BlindCase(
        CHECK,
        "length_without_eos",
        beam_length_without_eos,
        "mistake",
        "I did not count EOS in |Y|: a hypothesis that ends gets length t - 1.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "I appended the chosen tokens to the token rows without first reordering the rows to "
        "follow their parent hypotheses.",
    ),
    BlindCase(
        CHECK,
        "rows_not_offset",
        beam_rows_not_offset,
        "mistake",
        "I reordered the rows with the beam index alone, forgetting the b * K offset of each "
        "sentence, so every sentence continues sentence 0's hypotheses.",
    ),
    BlindCase(
        CHECK,
        "separate_finished_list",
        beam_separate_finished_list,
        "mistake",
        "As in GNMT/fairseq, hypotheses ending with EOS go to a separate finished list, the beam "
        "holds only open ones, and I stop when K have finished.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_loop",
        beam_one_sentence_loop,
        "correct",
        "Each sentence searched alone, whole prefix re-fed, finished rows frozen by -inf "
        "except PAD; rows padded to the longest search at the end.",
    ),
    BlindCase(
        CHECK,
        "kv_cache_batched",
        beam_with_kv_cache,
        "correct",
        "Batched with the package's KVCache and cache.reorder; finished sentences stay in the "
        "batch, their result copied out once.",
    ),
    BlindCase(
        CHECK,
        "two_stage_topk",
        beam_two_stage_topk,
        "correct",
        "Top-K per hypothesis, then top-K of the K*K; finished sentences leave the batch; an "
        "extra use_cache argument (unused) with a default.",
    ),
]
