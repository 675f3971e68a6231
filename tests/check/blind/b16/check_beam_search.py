"""Blind set B16, check_beam_search (chapter 15): beam search as readers write it.

Most mistakes share one reader's beam search (the whole prefix fed at every step, every sentence
kept in the batch until all have finished) and differ from it in one place, named by ``slip``.
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
    beam_size: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    length_penalty: float,
    slip: str = "",
) -> Tensor:
    if slip != "no_eval":
        model.eval()
    if slip == "alpha_fixed":
        length_penalty = 0.6
    pad, V, K, B = model.config.pad_id, model.config.tgt_vocab_size, beam_size, src.shape[0]
    memory = model.encode(src)
    if slip == "repeat":
        memory, src = memory.repeat(K, 1, 1), src.repeat(K, 1)  # (B*K, S, D)
    else:
        memory, src = memory.repeat_interleave(K, 0), src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    score = torch.zeros(B, K) if slip == "same_start" else torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    length = torch.zeros(B, K, dtype=torch.long)
    finished = torch.zeros(B, K, dtype=torch.bool)
    only_pad = torch.full((V,), float("-inf"))
    only_pad[pad] = 0.0
    for t in range(1, max_len + 1):
        log_p = model.decode(tokens, memory, src)[:, -1].log_softmax(-1)  # (B*K, V)
        if slip != "pad_allowed":
            log_p[:, pad] = float("-inf")
        log_p = log_p.view(B, K, V)
        if slip != "no_finished":
            log_p = torch.where(finished[..., None], only_pad, log_p)
        total = score[..., None] + log_p  # (B, K, V)
        grown = t + 1 if slip == "bos_in_length" else t
        cand_len = torch.full((B, K, V), grown, dtype=torch.long)
        if slip == "eos_not_counted":
            cand_len[..., eos_id] -= 1
        if slip not in ("no_finished", "finished_grow"):
            cand_len = torch.where(finished[..., None], length[..., None], cand_len)
        if slip == "no_penalty":
            ranked = total
        elif slip == "lp_times_alpha":
            ranked = total / (((5.0 + cand_len.float()) / 6.0) * length_penalty)
        else:
            ranked = total / _lp(cand_len, length_penalty)
        best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
        if slip == "divide_by_k":
            beam, token = best // K, best % K
        else:
            beam, token = best // V, best % V
        if slip == "compound":
            score = ranked.view(B, K * V).gather(1, best)  # the ranked score, kept
        else:
            score = total.view(B, K * V).gather(1, best)
        length = cand_len.view(B, K * V).gather(1, best)
        if slip != "no_finished":
            finished = finished.gather(1, beam) | (token == eos_id)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        if slip != "no_finished" and finished.all():
            break
    if slip in ("no_penalty", "final_log_p"):
        final = score
    elif slip == "lp_times_alpha":
        final = score / (((5.0 + length.float()) / 6.0) * length_penalty)
    else:
        final = score / _lp(length, length_penalty)
    choice = final.argmax(dim=1)  # (B,)
    out = tokens.view(B, K, -1)[torch.arange(B), choice, 1:]
    if slip == "no_finished":  # cut each output after its first EOS
        after = (out == eos_id).long().cumsum(1) - (out == eos_id).long() > 0
        out = out.masked_fill(after, pad)
    return out


# ---------------------------------------------------------------- mistakes


def beam_same_start(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "same_start")


def beam_bos_in_length(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "bos_in_length")


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "eos_not_counted")


def beam_no_penalty(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_penalty")


def beam_alpha_fixed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "alpha_fixed")


def beam_lp_times_alpha(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "lp_times_alpha")


def beam_no_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_finished")


def beam_finished_grow(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "finished_grow")


def beam_compound(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "compound")


def beam_divide_by_k(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "divide_by_k")


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pad_allowed")


def beam_repeat(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "repeat")


def beam_final_log_p(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "final_log_p")


def beam_no_eval(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_eval")


# ---------------------------------------------------------------- correct variants


def beam_full_batch(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """The whole prefix at every step; sentences stay in the batch until all have finished."""
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_with_cache(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
    use_cache: bool = True,
) -> Tensor:
    """One token per step with the key/value cache, reordered to follow the surviving beams."""
    was_training = model.training
    model.eval()
    pad, V, K, B = model.config.pad_id, model.config.tgt_vocab_size, beam_size, src.shape[0]
    memory = model.encode(src).repeat_interleave(K, dim=0)
    src = src.repeat_interleave(K, dim=0)
    cache = model.new_cache() if use_cache else None
    hyps = torch.full((B, K, 1), bos_id, dtype=torch.long)
    log_p = torch.tensor([0.0] + [-float("inf")] * (K - 1)).repeat(B, 1)  # (B, K)
    lengths = torch.zeros(B, K)
    done = torch.zeros(B, K, dtype=torch.bool)
    for t in range(1, max_len + 1):
        fed = hyps[:, :, -1:].reshape(B * K, 1) if use_cache else hyps.reshape(B * K, t)
        step = model.decode(fed, memory, src, cache, last_only=True)[:, -1]
        step = step.log_softmax(-1).view(B, K, V).clone()
        step[..., pad] = -float("inf")
        step[done] = -float("inf")  # a finished hypothesis: PAD only, at no cost
        step[..., pad][done] = 0.0
        cand = log_p.unsqueeze(-1) + step
        cand_len = torch.where(done, lengths, torch.full_like(lengths, t)).unsqueeze(-1)
        penalty = ((5.0 + cand_len) / 6.0) ** length_penalty  # (B, K, 1)
        top = (cand / penalty).flatten(1).topk(K, dim=1).indices
        parent, word = top.div(V, rounding_mode="floor"), top.remainder(V)
        log_p = cand.flatten(1).gather(1, top)
        lengths = cand_len.squeeze(-1).gather(1, parent)
        done = done.gather(1, parent) | (word == eos_id)
        hyps = torch.cat([hyps.gather(1, parent[..., None].expand(-1, -1, t)), word[..., None]], 2)
        if cache is not None:
            cache.reorder((torch.arange(B)[:, None] * K + parent).flatten(), cross=False)
        if done.all():
            break
    final = log_p / ((5.0 + lengths) / 6.0) ** length_penalty
    best = final.argmax(-1)
    model.train(was_training)
    return hyps[torch.arange(B), best, 1:]


@torch.no_grad()
def beam_python_lists(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """Each sentence alone, its hypotheses as Python lists, candidates sorted by score."""
    model.eval()
    pad = model.config.pad_id

    def lp(n: int) -> float:
        return ((5 + n) / 6) ** length_penalty

    results = []
    for i in range(src.shape[0]):
        s = src[i : i + 1]
        memory = model.encode(s)
        beams = [([bos_id], 0.0, False)]  # (tokens, log P, finished)
        for t in range(1, max_len + 1):
            candidates = []
            open_beams = [b for b in beams if not b[2]]
            if open_beams:
                fed = torch.tensor([b[0] for b in open_beams])
                n_open = len(open_beams)
                logits = model.decode(fed, memory.expand(n_open, -1, -1), s.expand(n_open, -1))
                rows = iter(logits[:, -1].log_softmax(-1).tolist())
            for tokens, logp, finished in beams:
                if finished:  # it waits, PAD only, and keeps its length
                    n = sum(1 for w in tokens[1:] if w != pad)
                    candidates.append((logp / lp(n), tokens + [pad], logp, True))
                    continue
                for w, step in enumerate(next(rows)):
                    if w != pad:
                        total = logp + step
                        candidates.append((total / lp(t), tokens + [w], total, w == eos_id))
            candidates.sort(key=lambda c: c[0], reverse=True)
            beams = [(c[1], c[2], c[3]) for c in candidates[:beam_size]]
            if all(b[2] for b in beams):
                break
        best = max(beams, key=lambda b: b[1] / lp(sum(1 for w in b[0][1:] if w != pad)))
        results.append(best[0][1:])
    width = max(len(r) for r in results)
    return torch.tensor([r + [pad] * (width - len(r)) for r in results], dtype=torch.long)


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_same_start,
        "mistake",
        "I gave all K copies of BOS the score 0, so the first step fills the beam with copies "
        "of the same few tokens.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "My |Y| in the length penalty counts BOS too.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "My |Y| counts the words only, not the EOS at the end.",
    ),
    BlindCase(
        CHECK,
        "no_length_penalty",
        beam_no_penalty,
        "mistake",
        "I ranked the hypotheses by log P alone and never divided by lp(Y).",
    ),
    BlindCase(
        CHECK,
        "alpha_hard_coded",
        beam_alpha_fixed,
        "mistake",
        "I wrote the paper's alpha = 0.6 into the penalty and ignored length_penalty.",
    ),
    BlindCase(
        CHECK,
        "lp_times_alpha",
        beam_lp_times_alpha,
        "mistake",
        "I typed ((5 + |Y|) / 6) * alpha instead of ** alpha.",
    ),
    BlindCase(
        CHECK,
        "no_finished_hypotheses",
        beam_no_finished,
        "mistake",
        "I did not mark hypotheses that produced EOS as finished: they go on growing like the "
        "others, and I cut the chosen output after its first EOS at the end.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_grow,
        "mistake",
        "A finished hypothesis gets PAD at no cost, but I still counted each PAD in its length.",
    ),
    BlindCase(
        CHECK,
        "penalty_compounded",
        beam_compound,
        "mistake",
        "I kept the ranked score log P / lp as the hypothesis's score, so the next step adds to "
        "an already divided score and the penalty is applied again at every step.",
    ),
    BlindCase(
        CHECK,
        "beam_index_divided_by_k",
        beam_divide_by_k,
        "mistake",
        "I split the flat top-k index with // K and % K instead of // V and % V.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I let PAD compete like any other token.",
    ),
    BlindCase(
        CHECK,
        "memory_repeat_not_interleave",
        beam_repeat,
        "mistake",
        "I copied memory and src with .repeat(K, 1, 1), so row b*K + k belongs to another "
        "sentence of the batch.",
    ),
    BlindCase(
        CHECK,
        "final_choice_by_log_p",
        beam_final_log_p,
        "mistake",
        "At the end I returned the hypothesis with the largest log P, not log P / lp.",
    ),
    BlindCase(
        CHECK,
        "no_eval",
        beam_no_eval,
        "mistake",
        "I forgot model.eval(), so dropout is on during the search.",
    ),
    BlindCase(
        CHECK,
        "full_batch_no_cache",
        beam_full_batch,
        "correct",
        "No cache: the whole prefix fed at every step; finished sentences stay in the batch "
        "(they only get PAD at no cost) until every sentence has finished.",
    ),
    BlindCase(
        CHECK,
        "cache_reordered_gather",
        beam_with_cache,
        "correct",
        "Hypotheses kept as (B, K, t) and followed with gather, the key/value cache reordered "
        "with cross=False, an extra use_cache argument, the model's mode restored.",
    ),
    BlindCase(
        CHECK,
        "python_lists_per_sentence",
        beam_python_lists,
        "correct",
        "Each sentence searched alone with Python lists of (tokens, log P, finished), the "
        "candidates sorted by log P / lp, padded to one width at the end.",
    ),
]
