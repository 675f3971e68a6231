"""Blind set B7, check_beam_search (chapter 15): beam search as readers write it.

Most mistakes share one batched beam search (the whole prefix re-fed at every step, every
sentence kept in the batch until all have finished, a sentence's answer taken when all its
hypotheses have finished) with exactly one slip switched on; the correct variants are written
out on their own.
"""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.decoding import gnmt_length_penalty
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
    slip: str | None = None,
) -> Tensor:
    was_training = model.training
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    B = src.shape[0]
    if slip == "alpha_ignored":
        alpha = 0.6
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(B, K)
    if slip != "all_beams_start":
        log_prob[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    cache = model.new_cache() if slip == "cache_not_reordered" else None
    results: list[Tensor | None] = [None] * B
    for t in range(1, max_len + 1):
        if cache is not None:
            logits = model.decode(tokens[:, -1:], memory, src_k, cache)[:, -1]
        else:
            logits = model.decode(tokens, memory, src_k)[:, -1]  # (B*K, V)
        step = logits if slip == "raw_logits" else logits.log_softmax(-1)
        if slip != "pad_allowed":
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if slip != "finished_not_frozen":
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step  # (B, K, V)
        grown = t + 1 if slip == "bos_in_length" else t
        new_length = torch.where(finished, lengths, grown)[..., None].expand(B, K, V).clone()
        if slip == "finished_length_grows":
            new_length.fill_(t)
        if slip == "eos_not_counted":
            new_length[..., eos_id] = torch.where(finished, lengths, t - 1)
        ranked = total / _lp(new_length, alpha)
        if slip == "whole_batch_topk":
            _, best = ranked.reshape(-1).topk(B * K)  # over every sentence at once
            rows, token = best // V, best % V
            log_prob = total.reshape(-1)[best].view(B, K)
            lengths = new_length.reshape(-1)[best].view(B, K)
            finished = finished.reshape(-1)[rows].view(B, K)
            token = token.view(B, K)
        else:
            _, best = ranked.view(B, K * V).topk(K, dim=-1)  # (B, K)
            beam, token = best // V, best % V
            source = ranked if slip == "penalty_every_step" else total
            log_prob = source.view(B, K * V).gather(1, best)
            lengths = new_length.view(B, K * V).gather(1, best)
            finished = finished.gather(1, beam)
            rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        finished = finished | (token == eos_id)
        if t >= max_len:
            finished[:] = True
        history = tokens if slip == "history_not_reordered" else tokens[rows]
        tokens = torch.cat([history, token.reshape(B * K, 1)], dim=1)
        done = finished[:, 0] if slip == "stop_when_best_finishes" else finished.all(dim=1)
        for b in range(B):
            if results[b] is None and bool(done[b]):
                if slip == "final_by_log_prob":
                    pick = int(log_prob[b].argmax())
                else:
                    pick = int((log_prob[b] / _lp(lengths[b], alpha)).argmax())
                results[b] = tokens.view(B, K, -1)[b, pick, 1:]
        if all(r is not None for r in results):
            break
    model.train(was_training)
    out = torch.full((B, t), pad, dtype=torch.long)
    for b, r in enumerate(results):
        out[b, : len(r)] = r
    return out


# ---------------------------------------------------------------- mistakes


def _slip(name: str):
    def search(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, name)

    search.__name__ = f"beam_{name}"
    return search


beam_all_beams_start = _slip("all_beams_start")
beam_bos_in_length = _slip("bos_in_length")
beam_penalty_every_step = _slip("penalty_every_step")
beam_final_by_log_prob = _slip("final_by_log_prob")
beam_alpha_ignored = _slip("alpha_ignored")
beam_finished_not_frozen = _slip("finished_not_frozen")
beam_finished_length_grows = _slip("finished_length_grows")
beam_history_not_reordered = _slip("history_not_reordered")
beam_pad_allowed = _slip("pad_allowed")
beam_raw_logits = _slip("raw_logits")
beam_stop_when_best_finishes = _slip("stop_when_best_finishes")
beam_whole_batch_topk = _slip("whole_batch_topk")
beam_eos_not_counted = _slip("eos_not_counted")
beam_cache_not_reordered = _slip("cache_not_reordered")


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def beam_two_stage_topk_cached(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Top K tokens of each hypothesis first, then the best K of those K * K; a KV cache that
    follows the surviving rows; the book's gnmt_length_penalty."""
    was_training = model.training
    model.eval()
    V, pad, K, B = model.config.tgt_vocab_size, model.config.pad_id, beam_size, src.shape[0]
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    seqs = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    ended = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    answer = [None] * B
    for t in range(1, max_len + 1):
        logp = model.decode(seqs[:, -1:], memory, src_k, cache)[:, -1].log_softmax(-1)
        logp = logp.view(B, K, V).clone()
        logp[..., pad] = float("-inf")
        logp[ended] = float("-inf")
        logp[..., pad][ended] = 0.0
        total = score[..., None] + logp
        cand_len = torch.where(ended, length, torch.full_like(length, t))  # (B, K)
        ranked = total / gnmt_length_penalty(cand_len, length_penalty)[..., None]
        per_val, per_tok = ranked.topk(K, dim=-1)  # (B, K, K)
        _, sel = per_val.view(B, K * K).topk(K, dim=-1)  # (B, K)
        beam = sel // K
        tok = per_tok.view(B, K * K).gather(1, sel)
        score = total.gather(2, per_tok).view(B, K * K).gather(1, sel)
        length = cand_len.gather(1, beam)
        ended = ended.gather(1, beam) | (tok == eos_id) | (t >= max_len)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        cache.reorder(rows, cross=False)
        seqs = torch.cat([seqs[rows], tok.view(-1, 1)], 1)
        for b in range(B):
            if answer[b] is None and bool(ended[b].all()):
                final = score[b] / gnmt_length_penalty(length[b], length_penalty)
                answer[b] = seqs.view(B, K, -1)[b, int(final.argmax()), 1:]
        if all(a is not None for a in answer):
            break
    model.train(was_training)
    out = torch.full((B, t), pad, dtype=torch.long)
    for b, a in enumerate(answer):
        out[b, : len(a)] = a
    return out


@torch.no_grad()
def beam_per_sentence_hypothesis_list(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """One sentence at a time; the beam is a list of (tokens, log P, length, finished) that
    starts with the single BOS hypothesis; finished ones are carried over at no cost."""
    was_training = model.training
    model.eval()
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    outputs = []
    for row in src:
        one = row[None]
        memory = model.encode(one)
        beam = [([bos_id], torch.tensor(0.0), 0, False)]
        for t in range(1, max_len + 1):
            fed = torch.tensor([h[0] for h in beam])  # (n, t)
            n = len(beam)
            logp = model.decode(fed, memory.expand(n, -1, -1), one.expand(n, -1))[:, -1]
            logp = logp.log_softmax(-1)
            logp[:, pad] = float("-inf")
            totals, lens = [], []
            for i, (_, lp_i, length, done) in enumerate(beam):
                if done:
                    cont = torch.full((V,), float("-inf"))
                    cont[pad] = 0.0
                else:
                    cont = logp[i]
                totals.append(lp_i + cont)
                lens.append(length if done else t)
            total = torch.stack(totals)  # (n, V)
            lp = _lp(torch.tensor(lens), length_penalty)[:, None]
            _, best = (total / lp).view(-1).topk(min(beam_size, n * V))
            new_beam = []
            for index in best.tolist():
                i, tok = divmod(index, V)
                ids, _, _, done = beam[i]
                finished = done or tok == eos_id or t >= max_len
                new_beam.append((ids + [tok], total[i, tok], lens[i], finished))
            beam = new_beam
            if all(h[3] for h in beam):
                break
        scores = torch.stack([h[1] / _lp(torch.tensor(h[2]), length_penalty) for h in beam])
        outputs.append(beam[int(scores.argmax())][0][1:])
    model.train(was_training)
    width = max(len(o) for o in outputs)
    return torch.tensor([o + [pad] * (width - len(o)) for o in outputs], dtype=torch.long)


def beam_with_return_scores(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    return_scores: bool = False,
):
    """The shared batched search with no slip, plus an optional return_scores (default off)."""
    out = _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)
    if return_scores:
        return out, None
    return out


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_from_bos",
        beam_all_beams_start,
        "mistake",
        "I start every one of the K hypotheses with log P = 0, so at the first step the K "
        "beams pick the same tokens K times and the beam holds copies.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "My |Y| counts BOS: an open hypothesis at step t has length t + 1 in the penalty.",
    ),
    BlindCase(
        CHECK,
        "penalty_applied_every_step",
        beam_penalty_every_step,
        "mistake",
        "I keep the length-normalized score as the running score of each hypothesis, so the "
        "penalty is divided in again at every step.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_final_by_log_prob,
        "mistake",
        "The pruning uses the length penalty but the final answer is the finished hypothesis "
        "with the highest raw log P.",
    ),
    BlindCase(
        CHECK,
        "length_penalty_argument_ignored",
        beam_alpha_ignored,
        "mistake",
        "I call the penalty with the default alpha 0.6 instead of passing length_penalty.",
    ),
    BlindCase(
        CHECK,
        "finished_hypotheses_keep_growing",
        beam_finished_not_frozen,
        "mistake",
        "I mark hypotheses that produced EOS as finished but do not restrict them to PAD, so "
        "they are extended by real tokens after their EOS.",
    ),
    BlindCase(
        CHECK,
        "finished_length_keeps_counting",
        beam_finished_length_grows,
        "mistake",
        "A finished hypothesis is extended by PAD at no cost, but its length still grows "
        "with t, so its penalty keeps changing.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "After topk I append each new token to row k's history without taking the history of "
        "its parent beam.",
    ),
    BlindCase(
        CHECK,
        "pad_not_excluded",
        beam_pad_allowed,
        "mistake",
        "PAD is not removed from the candidates, so a hypothesis can generate PAD.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_as_log_probs",
        beam_raw_logits,
        "mistake",
        "I add the raw logits instead of log_softmax(logits) to the running score.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finishes",
        beam_stop_when_best_finishes,
        "mistake",
        "A sentence stops as soon as its best-ranked hypothesis has finished, although open "
        "hypotheses could still overtake it.",
    ),
    BlindCase(
        CHECK,
        "topk_over_whole_batch",
        beam_whole_batch_topk,
        "mistake",
        "I take topk(B * K) over all sentences' candidates at once instead of K per sentence; "
        "right for one sentence, but sentences steal each other's beams.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted_in_length",
        beam_eos_not_counted,
        "mistake",
        "My |Y| leaves out the EOS token: a hypothesis that ends at step t has length t - 1.",
    ),
    BlindCase(
        CHECK,
        "cache_not_reordered",
        beam_cache_not_reordered,
        "mistake",
        "I use the key/value cache and reorder the token history after topk, but forgot "
        "cache.reorder(rows), so each row keeps the keys of its old hypothesis.",
    ),
    BlindCase(
        CHECK,
        "two_stage_topk_with_cache",
        beam_two_stage_topk_cached,
        "correct",
        "The best K tokens of each hypothesis, then the best K of the K * K; a KV cache "
        "reordered with cache.reorder(rows, cross=False); the book's gnmt_length_penalty.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_hypothesis_list",
        beam_per_sentence_hypothesis_list,
        "correct",
        "One sentence at a time with a Python list of hypotheses that starts with BOS alone "
        "(no -inf rows); finished ones carried over at no cost.",
    ),
    BlindCase(
        CHECK,
        "batched_with_return_scores_arg",
        beam_with_return_scores,
        "correct",
        "All sentences batched, the prefix re-fed each step, sentences kept until all finish; "
        "an extra return_scores=False argument.",
    ),
]
