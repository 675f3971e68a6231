"""Blind set B33, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


def _beam_one(
    model,
    src: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    finished_set: bool = True,
    length_offset: int = 0,
    penalty_every_step: bool = False,
    final_by_log_prob: bool = False,
    all_start_at_zero: bool = False,
    lp=_lp,
    block_pad: bool = True,
    pad_has_cost: bool = False,
    finished_length_grows: bool = False,
    swap_flat_index: bool = False,
    reorder_history: bool = True,
    use_log_softmax: bool = True,
    two_stage_topk: bool = False,
    take_first_slot: bool = False,
    stop_when_first_finished: bool = False,
) -> Tensor:
    """One reader's beam search for a single sentence ``src (1, S)``, recomputing the prefix
    each step; the mistakes below are single changes to it, named by its keyword arguments.
    Returns the best hypothesis without BOS (EOS and the PAD after it included)."""
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    memory = model.encode(src).expand(K, -1, -1)  # (K, S, D)
    src_k = src.expand(K, -1)  # (K, S)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_prob = torch.full((K,), float("-inf"))
    log_prob[0] = 0.0
    if all_start_at_zero:
        log_prob[:] = 0.0
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]  # (K, V)
        step = logits.log_softmax(-1) if use_log_softmax else logits.clone()
        pad_score = step[:, pad].clone()
        if block_pad:
            step[:, pad] = float("-inf")
        if finished_set:
            done_rows = only_pad.expand(K, V).clone()
            if pad_has_cost:
                done_rows[:, pad] = pad_score
            step = torch.where(finished[:, None], done_rows, step)
        total = log_prob[:, None] + step  # (K, V)
        new_length = torch.full_like(lengths, t + length_offset)
        if finished_set and not finished_length_grows:
            new_length = torch.where(finished, lengths, new_length)
        ranked = total / lp(new_length, alpha)[:, None]
        if two_stage_topk:
            per_beam, per_token = ranked.topk(K, dim=-1)  # (K, K): the best K of each beam
            _, pick = per_beam.reshape(-1).topk(K)
            best = (pick // K) * V + per_token.reshape(-1)[pick]
        else:
            _, best = ranked.reshape(-1).topk(K)
        if swap_flat_index:
            beam, token = best % K, best // K
        else:
            beam, token = best // V, best % V
        log_prob = (ranked if penalty_every_step else total).reshape(-1)[best]
        lengths = new_length[beam]
        finished = finished[beam] if finished_set else torch.zeros_like(finished)
        finished = finished | (token == eos_id) if finished_set else finished
        if t == max_len:
            finished[:] = True
        previous = tokens[beam] if reorder_history else tokens
        tokens = torch.cat([previous, token[:, None]], dim=1)
        if finished.all() or (stop_when_first_finished and finished[0]):
            break
    if take_first_slot:
        best_hyp = 0
    elif final_by_log_prob:
        best_hyp = int(log_prob.argmax())
    else:
        best_hyp = int((log_prob / lp(lengths, alpha)).argmax())
    return tokens[best_hyp, 1:]


def _beam_all(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **slips):
    model.eval()
    with torch.no_grad():
        rows = [
            _beam_one(
                model, src[i : i + 1], beam_size, max_len, bos_id, eos_id, length_penalty, **slips
            )
            for i in range(src.shape[0])
        ]
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), model.config.pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


# ---------------------------------------------------------------- mistakes


def beam_no_finished_set(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_set=False
    )


def beam_bos_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, length_offset=1
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_every_step=True
    )


def beam_best_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, final_by_log_prob=True
    )


def beam_all_start_zero(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_start_at_zero=True
    )


def _lp_wrong_parenthesis(length: Tensor, alpha: float) -> Tensor:
    return (5.0 + length.float()) / 6.0**alpha


def beam_lp_parenthesis(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, lp=_lp_wrong_parenthesis
    )


def _lp_inverse(length: Tensor, alpha: float) -> Tensor:
    return 1.0 / _lp(length, alpha)  # so that dividing by it multiplies by the penalty


def beam_multiplied_by_lp(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, lp=_lp_inverse)


def beam_pad_generated(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, block_pad=False
    )


def beam_pad_extension_costs(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_has_cost=True
    )


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_length_grows=True
    )


def beam_alpha_ignored(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(model, src, beam_size, max_len, bos_id, eos_id, 0.6)


def beam_flat_index_swapped(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, swap_flat_index=True
    )


def beam_history_not_reordered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, reorder_history=False
    )


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, use_log_softmax=False
    )


def beam_stops_when_top_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam_all(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        stop_when_first_finished=True,
    )


def beam_no_eval(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    rows = [
        _beam_one(model, src[i : i + 1], beam_size, max_len, bos_id, eos_id, length_penalty)
        for i in range(src.shape[0])
    ]  # no model.eval()
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), model.config.pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r.detach()
    return out


# ---------------------------------------------------------------- correct variants


def beam_sentence_by_sentence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam_all(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def _lp_split_power(length: Tensor, alpha: float) -> Tensor:
    return (5.0 + length.float()) ** alpha / 6.0**alpha


def beam_two_stage_topk(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam_all(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        two_stage_topk=True,
        take_first_slot=True,
        lp=_lp_split_power,
    )


@torch.no_grad()
def beam_batched_cache(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """All sentences and beams as one batch of B * K rows with the model's key/value cache;
    finished sentences stay in the batch until every sentence has finished."""
    model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_rows = src.repeat_interleave(K, dim=0)
    cache = model.new_cache()
    hyps = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B, K)
    score[:, 1:] = float("-inf")
    done = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K)
    pad_only = torch.full((V,), float("-inf"))
    pad_only[pad] = 0.0
    for t in range(1, max_len + 1):
        logits = model.decode(hyps[:, -1:], memory, src_rows, cache=cache)[:, -1]
        logp = torch.log_softmax(logits, dim=-1)
        logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        logp = torch.where(done.unsqueeze(-1), pad_only, logp)
        cand = score.unsqueeze(-1) + logp  # (B, K, V)
        cand_len = torch.where(done, length, torch.full_like(length, t))
        penalty = ((5 + cand_len) / 6) ** length_penalty
        _, idx = (cand / penalty.unsqueeze(-1)).view(B, -1).topk(K, dim=-1)
        parent, tok = idx // V, idx % V
        score = cand.view(B, -1).gather(1, idx)
        length = cand_len.gather(1, parent)
        done = done.gather(1, parent) | (tok == eos_id)
        if t == max_len:
            done[:] = True
        rows = (torch.arange(B)[:, None] * K + parent).view(-1)
        hyps = torch.cat([hyps[rows], tok.view(-1, 1)], dim=1)
        cache.reorder(rows)
        if done.all():
            break
    final = score / ((5 + length) / 6) ** length_penalty  # (B, K)
    pick = final.argmax(dim=1)
    return hyps.view(B, K, -1)[torch.arange(B), pick, 1:]


CASES = [
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "I treated EOS as an ordinary token: every hypothesis keeps growing to max_len and the "
        "best one at the end wins.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_counted,
        "mistake",
        "I used the length of the token tensor, BOS included, for |Y|.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalized score of the survivors and added the next log-probabilities to "
        "it, so the penalty is applied again at every step.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_best_by_log_prob,
        "mistake",
        "At the end I returned the hypothesis with the highest log P, without the length penalty.",
    ),
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_start_zero,
        "mistake",
        "I started all K hypotheses with score 0.",
    ),
    BlindCase(
        CHECK,
        "length_penalty_parenthesis",
        beam_lp_parenthesis,
        "mistake",
        "I wrote the penalty as (5 + |Y|) / 6 ** alpha.",
    ),
    BlindCase(
        CHECK,
        "multiplied_by_penalty",
        beam_multiplied_by_lp,
        "mistake",
        "I multiplied log P by the length penalty instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        beam_pad_generated,
        "mistake",
        "I did not block PAD in the candidates of the open hypotheses.",
    ),
    BlindCase(
        CHECK,
        "pad_extension_has_cost",
        beam_pad_extension_costs,
        "mistake",
        "A finished hypothesis may only be extended by PAD, but I added the model's log P(PAD) "
        "to its score.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "I set every hypothesis's length to t, so the PAD after EOS counts in |Y|.",
    ),
    BlindCase(
        CHECK,
        "length_penalty_argument_ignored",
        beam_alpha_ignored,
        "mistake",
        "I wrote 0.6 in the penalty instead of using length_penalty.",
    ),
    BlindCase(
        CHECK,
        "flat_index_decoded_wrong",
        beam_flat_index_swapped,
        "mistake",
        "From the flat top-k index I took beam = index % K and token = index // K.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "I appended the new tokens to the rows as they were, without reordering the history by "
        "the parent beam.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_summed",
        beam_raw_logits,
        "mistake",
        "I added the raw logits to the scores instead of the log-softmax.",
    ),
    BlindCase(
        CHECK,
        "stops_when_top_finished",
        beam_stops_when_top_finished,
        "mistake",
        "I stop as soon as the hypothesis in the first slot has finished.",
    ),
    BlindCase(
        CHECK,
        "no_eval_mode",
        beam_no_eval,
        "mistake",
        "I forgot model.eval() (and torch.no_grad()).",
    ),
    BlindCase(
        CHECK,
        "sentence_by_sentence",
        beam_sentence_by_sentence,
        "correct",
        "Each sentence searched alone with its K hypotheses as a batch, recomputing the prefix "
        "each step; the outputs padded to the longest.",
    ),
    BlindCase(
        CHECK,
        "two_stage_topk_first_slot",
        beam_two_stage_topk,
        "correct",
        "The top K of each hypothesis first, then the top K of those K * K; the penalty as "
        "(5 + |Y|) ** alpha / 6 ** alpha; the first slot returned, since top-k sorts.",
    ),
    BlindCase(
        CHECK,
        "batched_with_cache",
        beam_batched_cache,
        "correct",
        "All sentences and beams in one batch with the model's cache; finished sentences stay "
        "in the batch until all are done.",
    ),
]
