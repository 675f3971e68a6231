"""Blind set B25, check_beam_search (chapter 15): beam search with the GNMT length penalty as
readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _search(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    alpha: float,
    *,
    eval_mode: bool = True,
    all_beams_start: bool = False,
    bos_in_length: bool = False,
    eos_not_counted: bool = False,
    penalty_each_step: bool = False,
    pad_allowed: bool = False,
    rank_raw: bool = False,
    pick_raw: bool = False,
    stop_when_best_finished: bool = False,
    finished_leave_beam: bool = False,
    length_only: bool = False,
    keep_bos: bool = False,
) -> Tensor:
    """One sentence at a time, every hypothesis a Python list; the keywords are the slips."""
    if eval_mode:
        model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size

    def lp(n: int) -> float:
        return n**alpha if length_only else ((5.0 + n) / 6.0) ** alpha

    def score(h) -> float:
        return h[1] if penalty_each_step else h[1] / lp(h[3])

    rows = []
    with torch.no_grad():
        for b in range(src.shape[0]):
            one = src[b : b + 1]
            memory = model.encode(one)
            # a hypothesis: (tokens after BOS, log P, finished, |Y|)
            start = 1 if bos_in_length else 0
            hyps = [([], 0.0, False, start)] * (beam_size if all_beams_start else 1)
            done_list = []
            t = 0
            for t in range(1, max_len + 1):
                open_ = [h for h in hyps if not h[2]]
                cands = [(h[0] + [pad], h[1], True, h[3]) for h in hyps if h[2]]
                if open_:
                    fed = torch.tensor([[bos_id, *h[0]] for h in open_], device=src.device)
                    n = len(open_)
                    logits = model.decode(fed, memory.expand(n, -1, -1), one.expand(n, -1))
                    logp = logits[:, -1].log_softmax(-1)
                    if not pad_allowed:
                        logp[:, pad] = float("-inf")
                    for i, h in enumerate(open_):
                        for v in range(V):
                            length = h[3] + (0 if (eos_not_counted and v == eos_id) else 1)
                            total = h[1] + float(logp[i, v])
                            if penalty_each_step:
                                total = total / lp(length)
                            cands.append((h[0] + [v], total, v == eos_id, length))
                key = (lambda c: c[1]) if rank_raw else score
                cands.sort(key=key, reverse=True)
                if finished_leave_beam:
                    hyps = []
                    for c in cands:
                        if c[2]:
                            if c[0][-1] != pad:
                                done_list.append(c)
                        elif len(hyps) < beam_size:
                            hyps.append(c)
                    if not hyps:
                        break
                    continue
                hyps = cands[:beam_size]
                if t == max_len:
                    hyps = [(h[0], h[1], True, h[3]) for h in hyps]
                if stop_when_best_finished and hyps[0][2]:
                    break
                if all(h[2] for h in hyps):
                    break
            pool = done_list + hyps if finished_leave_beam else hyps
            best = max(pool, key=(lambda h: h[1]) if pick_raw else score)
            tokens = ([bos_id] if keep_bos else []) + best[0]
            rows.append(tokens)
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=src.device)


# ---------------------------------------------------------------- mistakes


def beam_all_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_beams_start=True
    )


def beam_bos_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, bos_in_length=True
    )


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_not_counted=True
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_each_step=True
    )


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pad_allowed=True)


def beam_rank_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, rank_raw=True)


def beam_pick_by_log_prob(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, pick_raw=True)


def beam_stop_when_best_finished(
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
        stop_when_best_finished=True,
    )


def beam_finished_leave(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_leave_beam=True
    )


def beam_plain_length_norm(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, length_only=True)


def beam_keeps_bos(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, keep_bos=True)


def beam_dropout_on(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eval_mode=False)


def beam_default_alpha_one(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=1.0):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def beam_alpha_keyword(model, src, beam_size, max_len, *, bos_id, eos_id, alpha=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, alpha)


# ---------------------------------------------------------------- correct variants


def beam_per_sentence_lists(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    was_training = model.training
    out = _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)
    model.train(was_training)
    return out


@torch.no_grad()
def beam_batched_two_stage(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """All sentences together, prefix recomputed; each hypothesis's best K tokens first, then
    the best K of those K * K candidates per sentence."""
    model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=src.device)
    log_p = torch.full((B, K), float("-inf"), device=src.device)
    log_p[:, 0] = 0.0
    finished = torch.zeros(B, K, dtype=torch.bool, device=src.device)
    length = torch.zeros(B, K, dtype=torch.long, device=src.device)
    only_pad = torch.full((V,), float("-inf"), device=src.device)
    only_pad[pad] = 0.0

    def penalty(n: Tensor) -> Tensor:
        return ((5.0 + n.to(log_p.dtype)) / 6.0) ** length_penalty

    for t in range(1, max_len + 1):
        step = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)
        step[:, pad] = float("-inf")
        step = torch.where(finished[..., None], only_pad, step.view(B, K, V))
        total = log_p[..., None] + step  # (B, K, V)
        new_len = torch.where(finished, length, torch.full_like(length, t))
        score = total / penalty(new_len)[..., None]
        top_s, top_v = score.topk(K, dim=-1)  # (B, K, K): each hypothesis's best K
        _, pick = top_s.view(B, K * K).topk(K, dim=-1)  # (B, K)
        beam = pick // K
        token = top_v.view(B, K * K).gather(1, pick)
        log_p = total.gather(1, beam[..., None].expand(-1, -1, V)).gather(2, token[..., None])
        log_p = log_p[..., 0]
        length = new_len.gather(1, beam)
        finished = finished.gather(1, beam) | (token == eos_id)
        if t == max_len:
            finished[:] = True
        rows = (torch.arange(B, device=src.device)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if finished.all():
            break
    best = (log_p / penalty(length)).argmax(dim=1)  # (B,)
    return tokens.view(B, K, -1)[torch.arange(B, device=src.device), best, 1:]


def beam_one_sentence_batched(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    use_cache: bool = False,
) -> Tensor:
    """The batched search on one sentence at a time, padded together; an unused use_cache."""
    outs = [
        beam_batched_two_stage(
            model,
            src[i : i + 1],
            beam_size,
            max_len,
            bos_id=bos_id,
            eos_id=eos_id,
            length_penalty=length_penalty,
        )[0]
        for i in range(src.shape[0])
    ]
    return torch.nn.utils.rnn.pad_sequence(
        outs, batch_first=True, padding_value=model.config.pad_id
    )


CASES = [
    BlindCase(
        CHECK,
        "every_beam_starts_from_bos",
        beam_all_start,
        "mistake",
        "I started with beam_size copies of BOS, all with log P = 0, so the first step fills "
        "the beam with copies of one hypothesis.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_counted,
        "mistake",
        "|Y| counts BOS as well, one more than the tokens generated.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted_in_length",
        beam_eos_not_counted,
        "mistake",
        "I did not count EOS in |Y|, since it is not a word.",
    ),
    BlindCase(
        CHECK,
        "penalty_applied_every_step",
        beam_penalty_every_step,
        "mistake",
        "I stored the penalised score and, at each step, added the new log-probability to it "
        "and divided by the penalty again.",
    ),
    BlindCase(
        CHECK,
        "pad_can_be_generated",
        beam_pad_allowed,
        "mistake",
        "I extended the open hypotheses by every token, PAD included.",
    ),
    BlindCase(
        CHECK,
        "ranked_by_log_prob",
        beam_rank_by_log_prob,
        "mistake",
        "I ranked the candidates by log P alone and used the penalty only to pick the final "
        "hypothesis.",
    ),
    BlindCase(
        CHECK,
        "final_pick_by_log_prob",
        beam_pick_by_log_prob,
        "mistake",
        "The beam is ranked with the penalty, but at the end I returned the hypothesis of "
        "largest log P.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_has_eos",
        beam_stop_when_best_finished,
        "mistake",
        "I stopped a sentence as soon as its best hypothesis had produced EOS.",
    ),
    BlindCase(
        CHECK,
        "finished_set_aside",
        beam_finished_leave,
        "mistake",
        "A finished hypothesis leaves the beam for a list of finished ones, and the beam is "
        "refilled with beam_size open ones until max_len.",
    ),
    BlindCase(
        CHECK,
        "length_to_the_alpha",
        beam_plain_length_norm,
        "mistake",
        "I divided by |Y| ** alpha instead of ((5 + |Y|) / 6) ** alpha.",
    ),
    BlindCase(
        CHECK,
        "bos_in_output",
        beam_keeps_bos,
        "mistake",
        "I returned the best hypothesis with its BOS at the front.",
    ),
    BlindCase(
        CHECK,
        "dropout_left_on",
        beam_dropout_on,
        "mistake",
        "I decoded under torch.no_grad but forgot model.eval().",
    ),
    BlindCase(
        CHECK,
        "default_alpha_one",
        beam_default_alpha_one,
        "mistake",
        "I gave length_penalty the default 1.0 instead of the paper's 0.6.",
    ),
    BlindCase(
        CHECK,
        "keyword_named_alpha",
        beam_alpha_keyword,
        "mistake",
        "I called the penalty's argument alpha, as in the formula, not length_penalty.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_lists",
        beam_per_sentence_lists,
        "correct",
        "One sentence at a time, hypotheses as Python lists sorted by score, the prefix "
        "recomputed; the training mode restored.",
    ),
    BlindCase(
        CHECK,
        "batched_two_stage_topk",
        beam_batched_two_stage,
        "correct",
        "All sentences at once without a cache; each hypothesis's top K tokens, then the top K "
        "of those; finished sentences keep running on PAD until all are done.",
    ),
    BlindCase(
        CHECK,
        "batched_code_one_sentence_each",
        beam_one_sentence_batched,
        "correct",
        "The batched search called on each sentence alone and the outputs padded together; "
        "an extra use_cache argument.",
    ),
]
