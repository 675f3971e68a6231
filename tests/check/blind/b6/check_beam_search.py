"""Blind set B6, check_beam_search (chapter 15): beam searches as readers write them.

Most mistakes share one batched search (no cache, every sentence kept until all are done) and
differ from it in one place, named by a keyword of ``_search``; two are written out on their own.
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
    alpha: float,
    *,
    all_from_bos: bool = False,
    raw_logits: bool = False,
    per_beam_topk: bool = False,
    lp=_lp,
    eos_not_counted: bool = False,
    finished_length_grows: bool = False,
    stop_when_top_finished: bool = False,
    repeat_not_interleave: bool = False,
    penalty_only_at_end: bool = False,
) -> Tensor:
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K, device = src.shape[0], beam_size, src.device
    if repeat_not_interleave:
        memory = model.encode(src).repeat(K, 1, 1)  # (K*B, S, D): sentence-major order lost
        src_k = src.repeat(K, 1)
    else:
        memory = model.encode(src).repeat_interleave(K, dim=0)  # row b*K + k
        src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=device)
    log_prob = torch.zeros(B, K, device=device)
    if not all_from_bos:
        log_prob[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool, device=device)
    lengths = torch.zeros(B, K, dtype=torch.long, device=device)
    only_pad = torch.full((V,), float("-inf"), device=device)
    only_pad[pad] = 0.0
    is_eos = torch.arange(V, device=device) == eos_id  # (V,)
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, src_k)[:, -1]  # (B*K, V)
        step = logits if raw_logits else logits.log_softmax(-1)
        step[:, pad] = float("-inf")
        step = torch.where(finished.view(-1, 1), only_pad, step).view(B, K, V)
        total = log_prob[..., None] + step  # (B, K, V)
        if finished_length_grows:
            new_len = torch.full((B, K, V), t, device=device)
        elif eos_not_counted:
            new_len = torch.where(finished[..., None], lengths[..., None], t - is_eos.long())
        else:
            new_len = torch.where(finished, lengths, t)[..., None].expand(B, K, V)
        ranked = total if penalty_only_at_end else total / lp(new_len, alpha)
        if per_beam_topk:
            token = ranked.argmax(-1)  # (B, K): every beam keeps its own best continuation
            beam = torch.arange(K, device=device).expand(B, K)
            best = beam * V + token
        else:
            best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
            beam, token = best // V, best % V
        log_prob = total.view(B, K * V).gather(1, best)
        lengths = new_len.reshape(B, K * V).gather(1, best)
        finished = finished.gather(1, beam) | (token == eos_id)
        rows = (torch.arange(B, device=device)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if finished.all() or (stop_when_top_finished and finished[:, 0].all()):
            break
    final = log_prob / lp(lengths, alpha)  # (B, K)
    pick = torch.zeros(B, dtype=torch.long) if stop_when_top_finished else final.argmax(-1)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B), pick, 1:]


# ---------------------------------------------------------------- mistakes


def beam_all_start_from_bos(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, all_from_bos=True
    )


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, raw_logits=True)


def beam_topk_per_beam(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, per_beam_topk=True
    )


def beam_penalty_precedence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    def lp(length: Tensor, alpha: float) -> Tensor:
        return (5.0 + length.float()) / 6.0**alpha  # brackets lost: (5 + |Y|) / (6 ** alpha)

    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, lp=lp)


def beam_eos_not_counted(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, eos_not_counted=True
    )


def beam_finished_length_grows(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, finished_length_grows=True
    )


def beam_stop_when_best_finished(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
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


def beam_fairseq_normalisation(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    def lp(length: Tensor, alpha: float) -> Tensor:
        return length.float() ** alpha  # fairseq's score / len ** lenpen

    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, lp=lp)


def beam_repeat_not_interleave(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, repeat_not_interleave=True
    )


def beam_penalty_only_at_end(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, penalty_only_at_end=True
    )


@torch.no_grad()
def beam_finished_set_aside(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """GNMT / Hugging Face style: a hypothesis that ends goes to a list of finished ones, and
    the beam is refilled with K open hypotheses."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    results = []
    for row in src:
        one = row[None]
        memory = model.encode(one)
        beams = [([bos_id], 0.0)]
        done: list[tuple[list[int], float]] = []
        for t in range(1, max_len + 1):
            fed = torch.tensor([b[0] for b in beams], device=src.device)
            logits = model.decode(
                fed, memory.expand(len(beams), -1, -1), one.expand(len(beams), -1)
            )
            logp = logits[:, -1].log_softmax(-1)
            logp[:, pad] = float("-inf")
            cands = []
            for i, (toks, score) in enumerate(beams):
                for tok, lp in enumerate(logp[i].tolist()):
                    if lp > float("-inf"):
                        total = score + lp
                        cands.append((total / ((5 + t) / 6) ** length_penalty, toks + [tok], total))
            cands.sort(key=lambda c: c[0], reverse=True)
            beams = []
            for _, toks, total in cands[: 2 * beam_size]:
                if toks[-1] == eos_id:
                    done.append((toks, total))
                elif len(beams) < beam_size:
                    beams.append((toks, total))
            if len(done) >= beam_size:
                break
        done += beams  # still open at the limit
        best = max(done, key=lambda d: d[1] / ((5 + len(d[0]) - 1) / 6) ** length_penalty)
        results.append(best[0][1:])
    width = max(len(r) for r in results)
    out = torch.full((len(results), width), pad, dtype=torch.long, device=src.device)
    for i, r in enumerate(results):
        out[i, : len(r)] = torch.tensor(r, device=src.device)
    model.train(was_training)
    return out


# ---------------------------------------------------------------- correct variants


def beam_batched_no_cache(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
) -> Tensor:
    """All sentences and beams in one batch of B*K rows, the whole prefix fed at every step;
    a sentence whose hypotheses have all finished stays in the batch, extended by PAD."""
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_python_lists(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """One sentence at a time; hypotheses are (tokens, log P, length, finished) tuples, and a
    finished one competes as itself, with its own score."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id

    def lp(n: int) -> float:
        return ((5 + n) / 6) ** length_penalty

    outputs = []
    for row in src:
        one = row[None]
        memory = model.encode(one)
        hyps = [([bos_id], 0.0, 0, False)]
        for t in range(1, max_len + 1):
            open_ = [h for h in hyps if not h[3]]
            cands = [(h[1] / lp(h[2]), h) for h in hyps if h[3]]
            fed = torch.tensor([h[0] for h in open_], device=src.device)
            n = len(open_)
            logits = model.decode(fed, memory.expand(n, -1, -1), one.expand(n, -1))[:, -1]
            logp = logits.log_softmax(-1)
            logp[:, pad] = float("-inf")
            for h, row_logp in zip(open_, logp):
                for tok, value in enumerate(row_logp.tolist()):
                    if value == float("-inf"):
                        continue
                    total = h[1] + value
                    new = (h[0] + [tok], total, t, tok == eos_id)
                    cands.append((total / lp(t), new))
            cands.sort(key=lambda c: c[0], reverse=True)
            hyps = [h for _, h in cands[:beam_size]]
            if all(h[3] for h in hyps):
                break
        best = max(hyps, key=lambda h: h[1] / lp(h[2]))
        outputs.append((best[0][1:], t))
    width = max(t for _, t in outputs)
    out = torch.full((len(outputs), width), pad, dtype=torch.long, device=src.device)
    for i, (toks, _) in enumerate(outputs):
        out[i, : len(toks)] = torch.tensor(toks, device=src.device)
    model.train(was_training)
    return out


@torch.no_grad()
def beam_with_cache(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Batched with the model's KVCache: one token fed per step, the cache reordered to follow
    the surviving hypotheses."""
    was_training = model.training
    model.eval()
    pad, V = model.config.pad_id, model.config.tgt_vocab_size
    B, K, dev = src.shape[0], beam_size, src.device
    src_k = src.repeat_interleave(K, dim=0)
    memory = model.encode(src_k)  # the same as encoding once and repeating
    cache = model.new_cache()
    history = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    score = torch.tensor([0.0] + [float("-inf")] * (K - 1), device=dev).repeat(B, 1)  # (B, K)
    length = torch.zeros(B, K, device=dev)
    ended = torch.zeros(B, K, dtype=torch.bool, device=dev)
    for t in range(1, max_len + 1):
        logits = model.decode(history[:, -1:], memory, src_k, cache)[:, -1]
        logp = torch.log_softmax(logits, dim=-1)
        logp[:, pad] = float("-inf")
        logp = logp.view(B, K, V)
        frozen = torch.full_like(logp, float("-inf"))
        frozen[..., pad] = 0.0
        logp = torch.where(ended[..., None], frozen, logp)
        cand = score[..., None] + logp  # (B, K, V)
        cand_len = torch.where(ended, length, torch.full_like(length, t))[..., None]
        penalised = cand / ((5.0 + cand_len) / 6.0) ** length_penalty
        idx = penalised.flatten(1).topk(K, dim=1).indices  # (B, K)
        parent, tok = idx.div(V, rounding_mode="floor"), idx.remainder(V)
        score = cand.flatten(1).gather(1, idx)
        length = cand_len.expand(B, K, V).flatten(1).gather(1, idx)
        ended = ended.gather(1, parent) | (tok == eos_id)
        rows = (parent + K * torch.arange(B, device=dev)[:, None]).flatten()
        cache.reorder(rows, cross=False)
        history = torch.cat([history[rows], tok.reshape(-1, 1)], dim=1)
        if bool(ended.all()):
            break
    best = (score / ((5.0 + length) / 6.0) ** length_penalty).argmax(dim=1)  # (B,)
    model.train(was_training)
    return history.view(B, K, -1)[torch.arange(B, device=dev), best, 1:]


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_from_bos",
        beam_all_start_from_bos,
        "mistake",
        "All K hypotheses start from BOS with score 0, so the first step fills the beam with "
        "copies of the same tokens instead of K different ones.",
    ),
    BlindCase(
        CHECK,
        "raw_logits_as_scores",
        beam_raw_logits,
        "mistake",
        "I add the raw logits to the running score instead of the log-softmax log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "topk_within_each_beam",
        beam_topk_per_beam,
        "mistake",
        "Every hypothesis keeps only its own best continuation (argmax per beam), so the beam "
        "is K separate greedy searches instead of a top-K over all K * V candidates.",
    ),
    BlindCase(
        CHECK,
        "penalty_brackets_lost",
        beam_penalty_precedence,
        "mistake",
        "I wrote the length penalty as (5 + |Y|) / 6 ** alpha: the power applies to 6 only, "
        "not to (5 + |Y|) / 6.",
    ),
    BlindCase(
        CHECK,
        "eos_not_in_length",
        beam_eos_not_counted,
        "mistake",
        "|Y| in the length penalty does not count the EOS token.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "A finished hypothesis is extended by PAD at no cost, but its length keeps growing "
        "with every step, so the PAD tokens count in the length penalty.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_finished",
        beam_stop_when_best_finished,
        "mistake",
        "I stop as soon as the top-ranked hypothesis of every sentence has finished and "
        "return it, while other hypotheses are still open.",
    ),
    BlindCase(
        CHECK,
        "fairseq_length_normalisation",
        beam_fairseq_normalisation,
        "mistake",
        "I used fairseq's normalisation, log P / |Y| ** alpha, instead of GNMT's "
        "((5 + |Y|) / 6) ** alpha.",
    ),
    BlindCase(
        CHECK,
        "repeat_not_repeat_interleave",
        beam_repeat_not_interleave,
        "mistake",
        "I copied the memory and src for the beams with .repeat(K, 1, 1) but index the rows "
        "as b * K + k, so with several sentences a hypothesis reads another sentence's source.",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_the_end",
        beam_penalty_only_at_end,
        "mistake",
        "I rank the candidates by log P alone during the search and divide by the length "
        "penalty only when choosing the final hypothesis.",
    ),
    BlindCase(
        CHECK,
        "finished_set_aside",
        beam_finished_set_aside,
        "mistake",
        "Like GNMT / Hugging Face, a hypothesis that produces EOS leaves the beam for a list "
        "of finished ones and the beam is refilled with K open hypotheses; the search stops "
        "when K have finished.",
    ),
    BlindCase(
        CHECK,
        "batched_no_cache",
        beam_batched_no_cache,
        "correct",
        "All sentences and beams as B * K rows, no cache, the whole prefix fed every step; "
        "sentences that have finished stay in the batch and are extended by PAD.",
    ),
    BlindCase(
        CHECK,
        "python_lists_per_sentence",
        beam_python_lists,
        "correct",
        "One sentence at a time, hypotheses as Python tuples; candidates sorted by "
        "log P / lp, finished hypotheses competing as themselves.",
    ),
    BlindCase(
        CHECK,
        "batched_with_cache",
        beam_with_cache,
        "correct",
        "Batched with the model's KVCache, encoding the repeated source, reordering the "
        "cache with the parents' rows after each step.",
    ),
]
