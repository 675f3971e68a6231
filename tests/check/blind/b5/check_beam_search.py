"""Blind set B5, check_beam_search (chapter 15): beam searches as readers write them.

The mistakes share one batched search, ``_search``, in which each reader's slip is switched on by
name; the correct variants are written out on their own.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.to(torch.float64)) / 6.0) ** alpha


@torch.no_grad()
def _search(model, src, K, max_len, bos_id, eos_id, alpha, slip: str) -> Tensor:
    """A batched beam search with one reader's slip ``slip`` in it."""
    model.eval()
    B, V, pad = src.shape[0], model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)  # (B*K, S)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B, K, dtype=torch.float64)
    if slip != "all_beams_start":
        score[:, 1:] = float("-inf")
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), float("-inf"), dtype=torch.float64)
    only_pad[pad] = 0.0
    cache = model.new_cache() if slip == "cache_not_reordered" else None
    for t in range(1, max_len + 1):
        fed = tokens[:, -1:] if cache is not None else tokens
        logp = model.decode(fed, memory, src_k, cache)[:, -1].double().log_softmax(-1)
        if slip != "pad_allowed":
            logp[:, pad] = float("-inf")
        logp = torch.where(finished[..., None], only_pad, logp.view(B, K, V))  # (B, K, V)
        total = score[..., None] + logp  # (B, K, V)
        step_len = {"bos_in_length": t + 1}.get(slip, t)
        new_len = torch.where(finished, lengths, step_len)  # (B, K)
        if slip == "finished_length_grows":
            new_len = torch.full_like(lengths, t)
        cand_len = new_len[..., None].expand(B, K, V).clone()  # (B, K, V)
        if slip == "eos_not_counted":
            cand_len[..., eos_id] -= (~finished).long()
        if slip in ("penalty_only_at_end", "final_by_log_prob"):
            ranked = total if slip == "penalty_only_at_end" else total / _lp(cand_len, alpha)
        else:
            ranked = total / _lp(cand_len, alpha)
        if slip == "each_beam_its_best":
            best_tok = ranked.argmax(-1)  # (B, K): every beam keeps its own best token
            beam = torch.arange(K).expand(B, K)
            idx = beam * V + best_tok
        else:
            idx = ranked.reshape(B, K * V).topk(K, dim=-1).indices  # (B, K)
            beam = idx // V
        tok = idx % V
        score = total.reshape(B, K * V).gather(1, idx)
        lengths = cand_len.reshape(B, K * V).gather(1, idx)
        finished = finished.gather(1, beam) | (tok == eos_id)
        if t >= max_len:
            finished[:] = True
        rows = (torch.arange(B)[:, None] * K + beam).reshape(-1)
        if slip == "history_not_reordered":
            tokens = torch.cat([tokens, tok.reshape(-1, 1)], dim=1)
        else:
            tokens = torch.cat([tokens[rows], tok.reshape(-1, 1)], dim=1)
        if slip == "stop_when_top_finished" and finished[:, 0].all():
            break
        if finished.all():
            break
    final = score if slip == "final_by_log_prob" else score / _lp(lengths, alpha)
    best = final.argmax(dim=1)  # (B,)
    return tokens.view(B, K, -1)[torch.arange(B), best, 1:]


def _slip(name: str):
    def search(
        model,
        src: Tensor,
        beam_size: int,
        max_len: int,
        *,
        bos_id: int,
        eos_id: int,
        length_penalty: float = 0.6,
    ) -> Tensor:
        return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, name)

    search.__name__ = f"beam_{name}"
    return search


def beam_returns_scores(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> tuple[Tensor, Tensor]:
    tokens = _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "")
    return tokens, torch.zeros(src.shape[0])  # (tokens, scores), as the book's return_scores


# ---------------------------------------------------------------- correct variants


@torch.no_grad()
def beam_one_sentence_at_a_time(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Each sentence alone, hypotheses as Python lists; no cache, the prefix fed each step."""
    was_training = model.training
    model.eval()
    pad = model.config.pad_id

    def lp(n: int) -> float:
        return ((5 + n) / 6) ** length_penalty

    results: list[tuple[list[int], int]] = []
    for b in range(src.shape[0]):
        one = src[b : b + 1]
        memory = model.encode(one)
        # (tokens without BOS, log P, length, finished)
        beam: list[tuple[list[int], float, int, bool]] = [([], 0.0, 0, False)]
        for t in range(1, max_len + 1):
            candidates = [h for h in beam if h[3]]
            open_hyps = [h for h in beam if not h[3]]
            if open_hyps:
                fed = torch.tensor([[bos_id] + h[0] for h in open_hyps], device=src.device)
                mem = memory.expand(len(open_hyps), -1, -1)
                srcs = one.expand(len(open_hyps), -1)
                logp = model.decode(fed, mem, srcs)[:, -1].double().log_softmax(-1)
                logp[:, pad] = float("-inf")
                for h, row in zip(open_hyps, logp.tolist()):
                    for v, lv in enumerate(row):
                        if lv != float("-inf"):
                            candidates.append((h[0] + [v], h[1] + lv, t, v == eos_id))
            candidates.sort(key=lambda h: h[1] / lp(h[2]), reverse=True)
            beam = candidates[:beam_size]
            if t >= max_len:
                beam = [(h[0], h[1], h[2], True) for h in beam]
            if all(h[3] for h in beam):
                best = max(beam, key=lambda h: h[1] / lp(h[2]))
                results.append((best[0], t))
                break
    model.train(was_training)
    width = max(t for _, t in results)
    out = torch.full((src.shape[0], width), pad, dtype=torch.long, device=src.device)
    for b, (tokens, _) in enumerate(results):
        out[b, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
    return out


@torch.no_grad()
def beam_cached_two_stage_topk(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Batched with the model's key/value cache, reordered each step; candidates chosen by a
    top-K inside every beam first, then a top-K over those K * K."""
    was_training = model.training
    model.eval()
    B, K = src.shape[0], beam_size
    V, pad = model.config.tgt_vocab_size, model.config.pad_id
    dev = src.device
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    history = torch.full((B * K, 1), bos_id, dtype=torch.long, device=dev)
    log_p = torch.full((B, K), float("-inf"), device=dev)
    log_p[:, 0] = 0.0
    done = torch.zeros(B, K, dtype=torch.bool, device=dev)
    length = torch.zeros(B, K, dtype=torch.long, device=dev)
    finished_step = torch.zeros(B, dtype=torch.long, device=dev)
    for t in range(1, max_len + 1):
        step = model.decode(history[:, -1:], memory, src_k, cache, last_only=True)[:, -1]
        step = step.log_softmax(-1)
        step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        frozen = torch.full_like(step, float("-inf"))
        frozen[..., pad] = 0.0
        step = torch.where(done[..., None], frozen, step)
        total = log_p[..., None] + step
        cand_len = torch.where(done, length, torch.full_like(length, t))
        penalty = ((5.0 + cand_len.float()) / 6.0) ** length_penalty  # (B, K)
        ranked = total / penalty[..., None]
        inner_val, inner_tok = ranked.topk(K, dim=-1)  # (B, K, K): best K inside each beam
        _, pick = inner_val.view(B, K * K).topk(K, dim=-1)  # (B, K)
        parent = pick // K
        token = inner_tok.view(B, K * K).gather(1, pick)
        log_p = total.view(B, K * V).gather(1, parent * V + token)
        length = cand_len.gather(1, parent)
        done = done.gather(1, parent) | (token == eos_id)
        if t >= max_len:
            done[:] = True
        newly = done.all(dim=1) & (finished_step == 0)
        finished_step[newly] = t
        rows = (torch.arange(B, device=dev)[:, None] * K + parent).view(-1)
        cache.reorder(rows)
        history = torch.cat([history[rows], token.view(-1, 1)], dim=1)
        if bool(done.all()):
            break
    model.train(was_training)
    score = log_p / ((5.0 + length.float()) / 6.0) ** length_penalty
    best = score.argmax(1)
    out = history.view(B, K, -1)[torch.arange(B, device=dev), best, 1:].clone()
    for b in range(B):  # a sentence whose beam closed early is padded from then on
        out[b, int(finished_step[b]) :] = pad
    return out


_SLIPS = {
    "all_beams_start": "I started all K hypotheses from BOS with score 0, so the first step "
    "picks K copies of the same tokens.",
    "eos_not_counted": "In the length penalty I counted a hypothesis that ends with EOS without "
    "its EOS.",
    "bos_in_length": "In the length penalty I counted BOS as well, so |Y| is one too large.",
    "finished_length_grows": "A finished hypothesis's length keeps growing with the step, so its "
    "penalty changes after its EOS.",
    "penalty_only_at_end": "I ranked candidates by log P alone during the search and applied the "
    "length penalty only when choosing the final hypothesis.",
    "final_by_log_prob": "I ranked with the penalty during the search but chose the returned "
    "hypothesis by its raw log P.",
    "each_beam_its_best": "Each beam keeps its own best next token instead of the K best of all "
    "K * V candidates, so the search is K greedy searches.",
    "history_not_reordered": "I appended the chosen tokens to the rows in place without "
    "reordering the token history by their parent beams.",
    "cache_not_reordered": "I used the model's key/value cache but never called "
    "cache.reorder with the surviving rows.",
    "stop_when_top_finished": "I stop as soon as the top-ranked hypothesis of every sentence has "
    "produced EOS, while other hypotheses are still open.",
    "pad_allowed": "I never blocked PAD, so an open hypothesis can be extended by PAD like a word.",
}

CASES = [BlindCase(CHECK, name, _slip(name), "mistake", what) for name, what in _SLIPS.items()]
CASES += [
    BlindCase(
        CHECK,
        "returns_tokens_and_scores",
        beam_returns_scores,
        "mistake",
        "I return a tuple (tokens, scores) instead of the tokens alone.",
    ),
    BlindCase(
        CHECK,
        "one_sentence_at_a_time",
        beam_one_sentence_at_a_time,
        "correct",
        "Each sentence searched alone with Python lists of hypotheses and a sort, no "
        "cache, the prefix fed at each step.",
    ),
    BlindCase(
        CHECK,
        "cached_two_stage_topk",
        beam_cached_two_stage_topk,
        "correct",
        "Batched with the model's cache and reorder; the candidates picked by a top-K "
        "inside each beam, then a top-K over the K * K survivors.",
    ),
]
