"""Blind set B30, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_beam_search"


def _penalty(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


def _beam_one(
    model: Transformer,
    src: Tensor,
    K: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    all_start: bool = False,
    bos_in_length: bool = False,
    eos_not_counted: bool = False,
    final_by_log_prob: bool = False,
    no_finished: bool = False,
    penalty_at_end_only: bool = False,
    multiply_penalty: bool = False,
    pad_allowed: bool = False,
    raw_logits: bool = False,
    penalty_accumulated: bool = False,
    steps: int | None = None,
    per_hypothesis_topk: bool = False,
) -> list[int]:
    """Beam search of one sentence ``src`` ``(1, S)`` over the whole prefix at every step, K
    rows; each keyword is one reader's choice (the defaults are right)."""
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    memory = model.encode(src).repeat(K, 1, 1)  # (K, S, D)
    src_k = src.repeat(K, 1)
    tokens = torch.full((K, 1), bos_id, dtype=torch.long)
    log_prob = torch.zeros(K) if all_start else torch.full((K,), float("-inf"))
    log_prob[0] = 0.0
    finished = torch.zeros(K, dtype=torch.bool)
    lengths = torch.zeros(K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    n_steps = max_len if steps is None else steps
    for t in range(1, n_steps + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]  # (K, V)
        step = logits.clone() if raw_logits else logits.log_softmax(-1)
        if not pad_allowed:
            step[:, pad] = float("-inf")
        if not no_finished:
            step = torch.where(finished[:, None], only_pad, step)
        total = log_prob[:, None] + step  # (K, V)
        new_length = torch.where(finished, lengths, t + 1 if bos_in_length else t)
        new_length = new_length[:, None].expand(K, V).clone()
        if eos_not_counted:
            new_length[:, eos_id] = torch.where(finished, lengths, t - 1)
        lp = _penalty(new_length, alpha)
        if penalty_at_end_only:
            ranked = total
        elif multiply_penalty:
            ranked = total * lp
        else:
            ranked = total / lp
        if per_hypothesis_topk:
            cand_scores, cand_tokens = ranked.topk(K, dim=-1)  # (K, K) each
            pick = cand_scores.view(-1).topk(K).indices
            beam = pick // K
            token = cand_tokens.view(-1)[pick]
            best = beam * V + token
        else:
            best = ranked.view(-1).topk(K).indices
            beam, token = best // V, best % V
        source = ranked if penalty_accumulated else total
        log_prob = source.view(-1)[best]
        lengths = new_length.view(-1)[best]
        finished = finished[beam]
        if not no_finished:
            finished = finished | (token == eos_id)
        if t >= n_steps:
            finished[:] = True
        tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
        if finished.all():
            break
    if final_by_log_prob:
        pick = int(log_prob.argmax())
    elif penalty_accumulated:
        pick = int(log_prob.argmax())  # the stored scores already hold the penalty
    else:
        pick = int((log_prob / _penalty(lengths, alpha)).argmax())
    return tokens[pick, 1:].tolist()


def _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, **slips) -> Tensor:
    was_training = model.training
    model.eval()
    with torch.no_grad():
        outs = [
            _beam_one(
                model, src[b : b + 1], beam_size, max_len, bos_id, eos_id, length_penalty, **slips
            )
            for b in range(src.shape[0])
        ]
    model.train(was_training)
    width = max(len(o) for o in outs)
    result = torch.full((len(outs), width), model.config.pad_id, dtype=torch.long)
    for b, out in enumerate(outs):
        result[b, : len(out)] = torch.tensor(out, dtype=torch.long)
    return result


# ---------------------------------------------------------------- mistakes


def beam_all_hypotheses_start(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_start=True)


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True)


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_not_counted=True
    )


def beam_final_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, final_by_log_prob=True
    )


def beam_never_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, no_finished=True)


def beam_penalty_at_end(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_at_end_only=True
    )


def beam_multiplied_penalty(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, multiply_penalty=True
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_allowed=True)


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, raw_logits=True)


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_accumulated=True
    )


def beam_one_step_short(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, steps=max_len - 1)


def beam_finished_list(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """GNMT's way: a hypothesis that ends goes to a list, and K open ones go on."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    outs = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            one = src[b : b + 1]
            memory = model.encode(one)
            beams = [([bos_id], 0.0)]
            done = []
            for t in range(1, max_len + 1):
                prev = [h for h, _ in beams]
                n = len(prev)
                logits = model.decode(
                    torch.tensor(prev), memory.expand(n, -1, -1), one.expand(n, -1)
                )
                step = logits[:, -1].log_softmax(-1)
                step[:, pad] = float("-inf")
                total = torch.tensor([s for _, s in beams])[:, None] + step  # (n, V)
                lp = float(_penalty(torch.tensor(t), length_penalty))
                best = (total / lp).view(-1).topk(beam_size).indices.tolist()
                beams = []
                for i in best:
                    h, tok, score = prev[i // V], i % V, float(total.view(-1)[i])
                    if tok == eos_id or t == max_len:
                        done.append((h + [tok], score / lp))
                    else:
                        beams.append((h + [tok], score))
                if len(done) >= beam_size or not beams:
                    break
            outs.append(max(done, key=lambda d: d[1])[0][1:])
    model.train(was_training)
    width = max(len(o) for o in outs)
    result = torch.full((len(outs), width), pad, dtype=torch.long)
    for b, out in enumerate(outs):
        result[b, : len(out)] = torch.tensor(out)
    return result


def beam_returns_scores(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    tokens = _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)
    return tokens, torch.zeros(len(tokens))  # tokens and scores, as the book's return_scores


# ---------------------------------------------------------------- correct variants


def beam_full_prefix(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_topk_per_hypothesis(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    return _beam(
        model,
        src,
        beam_size,
        max_len,
        bos_id,
        eos_id,
        length_penalty,
        per_hypothesis_topk=True,
    )


@torch.no_grad()
def beam_cached_per_sentence(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    rows = []
    for b in range(src.shape[0]):
        one = src[b : b + 1].repeat(K, 1)
        memory = model.encode(src[b : b + 1]).repeat(K, 1, 1)
        cache = model.new_cache()
        hyps = torch.full((K, 1), bos_id, dtype=torch.long)
        score = torch.tensor([0.0] + [float("-inf")] * (K - 1))
        length = torch.zeros(K, dtype=torch.long)
        ended = torch.zeros(K, dtype=torch.bool)
        for t in range(1, max_len + 1):
            lp = model.decode(hyps[:, -1:], memory, one, cache)[:, -1].log_softmax(-1)
            lp[:, pad] = float("-inf")
            lp[ended] = float("-inf")
            lp[ended, pad] = 0.0  # a finished hypothesis: padding, for free
            cand = score[:, None] + lp  # (K, V)
            cand_len = torch.where(ended, length, torch.full_like(length, t))  # (K,)
            norm = cand / (((5 + cand_len.float()) / 6) ** length_penalty)[:, None]
            top = norm.flatten().topk(K).indices
            parent, tok = top.div(V, rounding_mode="floor"), top.remainder(V)
            score, length = cand.flatten()[top], cand_len[parent]
            ended = ended[parent] | (tok == eos_id) | (t == max_len)
            hyps = torch.cat([hyps[parent], tok[:, None]], dim=1)
            cache.reorder(parent, cross=False)
            if bool(ended.all()):
                break
        final = score / ((5 + length.float()) / 6) ** length_penalty
        rows.append(hyps[int(final.argmax()), 1:])
    model.train(was_training)
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width), pad, dtype=torch.long)
    for b, r in enumerate(rows):
        out[b, : len(r)] = r
    return out


CASES = [
    BlindCase(
        CHECK,
        "all_hypotheses_start",
        beam_all_hypotheses_start,
        "mistake",
        "All K hypotheses start from BOS with log-probability 0, so the first step keeps K "
        "copies of the same tokens.",
    ),
    BlindCase(
        CHECK,
        "bos_in_length",
        beam_bos_in_length,
        "mistake",
        "I took |Y| as the length of the token row, BOS included.",
    ),
    BlindCase(
        CHECK,
        "eos_not_in_length",
        beam_eos_not_counted,
        "mistake",
        "I did not count the EOS in |Y|.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_final_by_log_prob,
        "mistake",
        "At the end I returned the hypothesis with the highest log P, forgetting the penalty "
        "there.",
    ),
    BlindCase(
        CHECK,
        "never_finished",
        beam_never_finished,
        "mistake",
        "I never mark a hypothesis as finished: after EOS it keeps growing with real tokens "
        "until max_len.",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_end",
        beam_penalty_at_end,
        "mistake",
        "I ranked the candidates by log P during the search and divided by the penalty only "
        "to choose the final hypothesis.",
    ),
    BlindCase(
        CHECK,
        "penalty_multiplied",
        beam_multiplied_penalty,
        "mistake",
        "I multiplied log P by lp(Y) instead of dividing.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not set PAD's log-probability to -inf for open hypotheses.",
    ),
    BlindCase(
        CHECK,
        "logits_summed",
        beam_raw_logits,
        "mistake",
        "I added up the raw logits instead of log_softmax.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalised score of each hypothesis and added the next log P to it.",
    ),
    BlindCase(
        CHECK,
        "one_step_short",
        beam_one_step_short,
        "mistake",
        "My loop runs max_len - 1 steps, as if BOS were one of the max_len tokens.",
    ),
    BlindCase(
        CHECK,
        "separate_finished_list",
        beam_finished_list,
        "mistake",
        "As GNMT does, a hypothesis that produces EOS leaves the beam for a finished list "
        "and K open ones go on; I stop once K have finished.",
    ),
    BlindCase(
        CHECK,
        "returns_tokens_and_scores",
        beam_returns_scores,
        "mistake",
        "I return (tokens, scores) like the book's function with return_scores.",
    ),
    BlindCase(
        CHECK,
        "full_prefix_per_sentence",
        beam_full_prefix,
        "correct",
        "One sentence at a time, K rows, the whole prefix decoded again at every step; no cache.",
    ),
    BlindCase(
        CHECK,
        "topk_per_hypothesis",
        beam_topk_per_hypothesis,
        "correct",
        "Each hypothesis first keeps its own K best tokens; the K best of those K * K "
        "candidates survive.",
    ),
    BlindCase(
        CHECK,
        "cache_per_sentence",
        beam_cached_per_sentence,
        "correct",
        "One sentence at a time with the model's cache, reordered after every step; finished "
        "rows get -inf everywhere except PAD.",
    ),
]
