"""Blind set B9, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float, precedence_slip: bool = False) -> Tensor:
    if precedence_slip:
        return (5.0 + length.double()) / 6.0**alpha  # the power binds tighter than the division
    return ((5.0 + length.double()) / 6.0) ** alpha


@torch.no_grad()
def _beam(
    model,
    src: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    finished_set: bool = True,
    bos_in_length: bool = False,
    penalty_stored: bool = False,
    final_by_log_prob: bool = False,
    reorder: bool = True,
    one_start: bool = True,
    precedence_slip: bool = False,
    finished_length_grows: bool = False,
    mask_pad: bool = True,
    log_softmax: bool = True,
    mix_batch: bool = False,
    use_cache: bool = False,
) -> Tensor:
    """Batched beam search that keeps every sentence's K rows until all have finished; the
    keyword arguments switch on one slip each."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(B, K, dtype=torch.double)
    if one_start:
        log_prob[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"), dtype=torch.double)
    only_pad[pad] = 0.0
    cache = model.new_cache() if use_cache else None
    t = 0
    for t in range(1, max_len + 1):
        fed = tokens[:, -1:] if use_cache else tokens
        logits = model.decode(fed, memory, src_k, cache)[:, -1].double()
        step = logits.log_softmax(-1) if log_softmax else logits.clone()
        if mask_pad:
            step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        if finished_set:
            step = torch.where(finished[..., None], only_pad, step)
        total = log_prob[..., None] + step
        new_length = torch.full_like(lengths, t)
        if finished_set and not finished_length_grows:
            new_length = torch.where(finished, lengths, t)
        length_for_lp = new_length + 1 if bos_in_length else new_length
        ranked = total / _lp(length_for_lp, alpha, precedence_slip)[..., None]
        if mix_batch:
            _, flat = ranked.view(-1).topk(B * K)
            sentence, within = flat // (K * V), flat % (K * V)
            best = within.view(B, K)
            rows = (sentence * K + within // V).view(-1)
        else:
            _, best = ranked.view(B, K * V).topk(K, dim=-1)
            rows = (torch.arange(B)[:, None] * K + best // V).view(-1)
        beam, token = best // V, best % V
        chosen = ranked if penalty_stored else total
        log_prob = chosen.view(B, K * V).gather(1, best)
        lengths = new_length.gather(1, beam)
        finished = finished.gather(1, beam)
        finished |= token == eos_id
        if t >= max_len:
            finished[:] = True
        prefix = tokens[rows] if reorder else tokens
        tokens = torch.cat([prefix, token.view(B * K, 1)], dim=1)
        if cache is not None:
            cache.reorder(rows, cross=False)
        if finished_set and finished.all():
            break
    model.train(was_training)
    if penalty_stored or final_by_log_prob:
        scores = log_prob
    else:
        length_for_lp = lengths + 1 if bos_in_length else lengths
        scores = log_prob / _lp(length_for_lp, alpha, precedence_slip)
    best_beam = scores.argmax(dim=-1)
    hyps = tokens.view(B, K, -1)[torch.arange(B), best_beam, 1:]
    return hyps


# ---------------------------------------------------------------- mistakes


def beam_no_finished_set(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_set=False)


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def beam_penalty_every_step(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_stored=True
    )


def beam_final_pick_unpenalized(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, final_by_log_prob=True
    )


def beam_not_reordered(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, reorder=False)


def beam_k_copies_at_start(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, one_start=False)


def beam_penalty_precedence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, precedence_slip=True
    )


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_length_grows=True
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, mask_pad=False)


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, log_softmax=False)


def beam_alpha_hardcoded(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, 0.6)  # the paper's value


def beam_topk_over_batch(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, mix_batch=True)


# ---------------------------------------------------------------- correct variants


def beam_batched_recompute(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_batched_with_cache(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, use_cache=True)


@torch.no_grad()
def beam_lists_per_sentence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """Python lists of (tokens, log_prob, finished) per sentence, decoded one by one."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id

    def lp(n: int) -> float:
        return ((5.0 + n) / 6.0) ** length_penalty

    results, widths = [], []
    for b in range(src.shape[0]):
        s = src[b : b + 1]
        memory = model.encode(s)
        beams = [([], 0.0, False)]  # (tokens without BOS, log P, finished)
        steps = 0
        for t in range(1, max_len + 1):
            steps = t
            open_beams = [h for h in beams if not h[2]]
            logp = None
            if open_beams:
                fed = torch.tensor([[bos_id] + h[0] for h in open_beams])
                logp = (
                    model.decode(
                        fed, memory.expand(len(open_beams), -1, -1), s.expand(len(open_beams), -1)
                    )[:, -1]
                    .double()
                    .log_softmax(-1)
                )
            candidates = []
            i = 0
            for toks, score, done in beams:
                if done:
                    candidates.append((score / lp(len(toks)), toks, score, True))
                    continue
                for v in range(logp.shape[-1]):
                    if v == pad:
                        continue
                    total = score + float(logp[i, v])
                    candidates.append((total / lp(t), toks + [v], total, v == eos_id))
                i += 1
            candidates.sort(key=lambda c: c[0], reverse=True)
            beams = [(c[1], c[2], c[3] or t >= max_len) for c in candidates[:beam_size]]
            if all(h[2] for h in beams):
                break
        best = max(beams, key=lambda h: h[1] / lp(len(h[0])))
        results.append(best[0])
        widths.append(steps)
    model.train(was_training)
    width = max(widths)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "a hypothesis that produced EOS keeps being extended like any other (no finished set); "
        "only max_len stops the search",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "my |Y| in the length penalty counts the BOS token too (length + 1)",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I store the length-normalized score as the running score, so the penalty is applied "
        "again at every step",
    ),
    BlindCase(
        CHECK,
        "final_pick_unpenalized",
        beam_final_pick_unpenalized,
        "mistake",
        "the search ranks with the length penalty, but at the end I return the hypothesis with "
        "the highest raw log-probability",
    ),
    BlindCase(
        CHECK,
        "beams_not_reordered",
        beam_not_reordered,
        "mistake",
        "I append the chosen tokens to the rows in place without gathering the rows of the "
        "parent hypotheses, so token histories are mixed between beams",
    ),
    BlindCase(
        CHECK,
        "k_copies_at_start",
        beam_k_copies_at_start,
        "mistake",
        "all K hypotheses start with score 0, so the first step picks K copies of the same "
        "extensions",
    ),
    BlindCase(
        CHECK,
        "penalty_precedence",
        beam_penalty_precedence,
        "mistake",
        "I wrote (5 + length) / 6 ** alpha: the power applies to the 6 only",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "a finished hypothesis's length keeps growing with the padding it is extended by, so "
        "its penalty changes after EOS",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I forgot to give PAD a log-probability of -inf, so open hypotheses can generate PAD",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I add up the raw logits instead of log-softmax log-probabilities",
    ),
    BlindCase(
        CHECK,
        "alpha_hardcoded",
        beam_alpha_hardcoded,
        "mistake",
        "I hard-coded the paper's alpha = 0.6 and ignore the length_penalty argument",
    ),
    BlindCase(
        CHECK,
        "topk_over_batch",
        beam_topk_over_batch,
        "mistake",
        "I take the top B*K candidates over the whole flattened batch, so one sentence can "
        "take another's beams (right for a batch of one)",
    ),
    BlindCase(
        CHECK,
        "batched_recompute",
        beam_batched_recompute,
        "correct",
        "batched search that re-runs the decoder on the whole prefix and keeps finished "
        "sentences in the batch until every sentence is done; float64 scores",
    ),
    BlindCase(
        CHECK,
        "batched_with_cache",
        beam_batched_with_cache,
        "correct",
        "the same with model.new_cache() and cache.reorder(rows, cross=False) each step",
    ),
    BlindCase(
        CHECK,
        "lists_per_sentence",
        beam_lists_per_sentence,
        "correct",
        "each sentence alone with Python lists of (tokens, log P, finished) and a sort of the "
        "candidates, then padded to a common width",
    ),
]
