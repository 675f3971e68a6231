"""Blind set B28, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.sequences import pad_sequences

from .. import BlindCase

CHECK = "check_beam_search"

NEG_INF = float("-inf")


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
    slip: str = "",
) -> Tensor:
    """Beam search over one sentence at a time, the prefix recomputed at every step. ``slip``
    names the one thing a reader got wrong ("" for none)."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    results = []
    for b in range(src.shape[0]):
        row = src[b : b + 1].expand(K, -1)  # (K, S)
        memory = model.encode(src[b : b + 1]).expand(K, -1, -1)  # (K, S, D)
        tokens = torch.full((K, 1), bos_id, dtype=torch.long)
        score = torch.full((K,), NEG_INF)
        score[0] = 0.0
        if slip == "all_start_zero":
            score = torch.zeros(K)
        finished = torch.zeros(K, dtype=torch.bool)
        lengths = torch.zeros(K, dtype=torch.long)
        only_pad = torch.full((V,), NEG_INF)
        only_pad[pad] = 0.0
        for t in range(1, max_len + 1):
            logits = model.decode(tokens, memory, row)[:, -1]  # (K, V)
            step = logits.clone() if slip == "raw_logits" else logits.log_softmax(-1)
            if slip != "pad_allowed":
                step[:, pad] = NEG_INF
            if slip != "no_finished":
                step = torch.where(finished[:, None], only_pad, step)
            total = score[:, None] + step  # (K, V)
            cand_len = torch.where(finished, lengths, t)[:, None].expand(K, V).clone()
            if slip == "length_grows_after_eos":
                cand_len[:] = t
            if slip == "bos_counted":
                cand_len = torch.where(finished[:, None], cand_len, t + 1)
            if slip == "eos_not_counted":
                cand_len[~finished, eos_id] -= 1
            if slip == "no_penalty_in_ranking":
                ranked = total
            else:
                ranked = total / _lp(cand_len, alpha)
            if slip == "per_beam_argmax" and t > 1:
                tok = ranked.argmax(-1)  # each hypothesis keeps its own best continuation
                beam = torch.arange(K)
                best = beam * V + tok
            else:
                best = ranked.reshape(-1).topk(K).indices
                beam, tok = best // V, best % V
            kept = ranked if slip == "penalty_every_step" else total
            score = kept.reshape(-1)[best]
            lengths = cand_len.reshape(-1)[best]
            finished = finished[beam]
            if slip != "no_finished":
                finished = finished | (tok == eos_id)
            if slip == "history_not_reordered":
                tokens = torch.cat([tokens, tok[:, None]], dim=1)
            else:
                tokens = torch.cat([tokens[beam], tok[:, None]], dim=1)
            if t >= max_len:
                finished[:] = True
            if slip == "stop_when_best_ends" and bool(finished[0]):
                break
            if finished.all():
                break
        if slip == "penalty_every_step":
            final = score
        else:
            final = score / _lp(lengths, alpha)
        choice = 0 if slip == "stop_when_best_ends" else int(final.argmax())
        results.append(tokens[choice, 1:])
    return pad_sequences(results, pad_value=pad)[0]


# ---------------------------------------------------------------- mistakes


def beam_no_finished(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_finished")


def beam_bos_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "bos_counted")


def beam_eos_not_counted(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "eos_not_counted"
    )


def beam_length_grows(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "length_grows_after_eos"
    )


def beam_penalty_every_step(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "penalty_every_step"
    )


def beam_rank_raw(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "no_penalty_in_ranking"
    )


def beam_all_start_zero(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "all_start_zero")


def beam_pad_allowed(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "pad_allowed")


def beam_raw_logits(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "raw_logits")


def beam_per_beam_argmax(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "per_beam_argmax"
    )


def beam_history_not_reordered(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6
):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "history_not_reordered"
    )


def beam_stop_when_best_ends(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    return _search(
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, "stop_when_best_ends"
    )


def beam_default_alpha_one(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=1.0):
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_finished_list(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """GNMT's way: a hypothesis that ends goes to a list, and the beam is refilled with open
    ones; the search ends when the list holds beam_size hypotheses or at max_len."""
    model.eval()
    pad, K = model.config.pad_id, beam_size
    results = []
    for b in range(src.shape[0]):
        memory = model.encode(src[b : b + 1])
        beams = [([bos_id], 0.0)]
        done: list[tuple[list[int], float]] = []
        for t in range(1, max_len + 1):
            tokens = torch.tensor([seq for seq, _ in beams])
            n = len(beams)
            logits = model.decode(tokens, memory.expand(n, -1, -1), src[b : b + 1].expand(n, -1))
            logp = logits[:, -1].log_softmax(-1)
            logp[:, pad] = NEG_INF
            candidates = []
            for i, (seq, s) in enumerate(beams):
                values, ids = logp[i].topk(K)
                candidates += [(seq + [int(w)], s + float(v)) for v, w in zip(values, ids)]
            candidates.sort(key=lambda c: c[1], reverse=True)
            beams = []
            for seq, s in candidates:
                if seq[-1] == eos_id or t == max_len:
                    done.append((seq, s))
                elif len(beams) < K:
                    beams.append((seq, s))
            if len(done) >= K or not beams:
                break

        def norm(h: tuple[list[int], float]) -> float:
            return h[1] / ((5 + len(h[0]) - 1) / 6) ** length_penalty

        best = max(done or beams, key=norm)
        results.append(best[0][1:])
    return pad_sequences(results, pad_value=pad)[0]


@torch.no_grad()
def beam_index_by_k(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B = src.shape[0]
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    tokens = torch.full((B * K, 1), bos_id)
    score = torch.full((B, K), NEG_INF)
    score[:, 0] = 0
    finished = torch.zeros(B, K, dtype=torch.bool)
    lengths = torch.zeros(B, K, dtype=torch.long)
    only_pad = torch.full((V,), NEG_INF)
    only_pad[pad] = 0
    for t in range(1, max_len + 1):
        logp = model.decode(tokens, memory, src_k)[:, -1].log_softmax(-1)
        logp[:, pad] = NEG_INF
        logp = torch.where(finished[..., None], only_pad, logp.view(B, K, V))
        total = score[..., None] + logp
        new_len = torch.where(finished, lengths, t)
        ranked = total / _lp(new_len, length_penalty)[..., None]
        best = ranked.view(B, K * V).topk(K, dim=-1).indices
        beam, tok = best // K, best % K  # which hypothesis, which token
        score = total.view(B, K * V).gather(1, best)
        lengths = new_len.gather(1, beam)
        finished = finished.gather(1, beam) | (tok == eos_id) | (t >= max_len)
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], tok.view(-1, 1)], 1)
        if finished.all():
            break
    final = score / _lp(lengths, length_penalty)
    pick = final.argmax(-1)
    return tokens.view(B, K, -1)[torch.arange(B), pick, 1:]


# ---------------------------------------------------------------- correct variants


def beam_per_sentence(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty=0.6):
    """One sentence at a time, the prefix recomputed at every step, then padded."""
    return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


@torch.no_grad()
def beam_batched_keep_all(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """The whole batch at once and no cache; a sentence that is done stays in the batch."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B = src.size(0)
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    logp = torch.zeros(B, K)
    logp[:, 1:] = NEG_INF
    ended = torch.zeros(B, K, dtype=torch.bool)
    length = torch.zeros(B, K, dtype=torch.long)
    finished_row = torch.full((V,), NEG_INF)
    finished_row[pad] = 0.0
    t = 0
    while True:
        t += 1
        step = model.decode(tokens, memory, src_k)[:, -1].log_softmax(dim=-1)
        step[:, pad] = NEG_INF
        step = step.view(B, K, V)
        step = torch.where(ended.unsqueeze(-1), finished_row.expand(B, K, V), step)
        cand = logp.unsqueeze(-1) + step  # (B, K, V)
        cand_len = torch.where(ended, length, torch.full_like(length, t))  # (B, K)
        norm = cand / _lp(cand_len, length_penalty).unsqueeze(-1)
        flat = norm.view(B, -1).topk(K, dim=-1).indices  # (B, K)
        parent, word = flat.div(V, rounding_mode="floor"), flat.remainder(V)
        logp = cand.view(B, -1).gather(1, flat)
        length = cand_len.gather(1, parent)
        ended = ended.gather(1, parent) | (word == eos_id)
        if t >= max_len:
            ended[:] = True
        rows = (parent + torch.arange(B).unsqueeze(1) * K).flatten()
        tokens = torch.cat([tokens[rows], word.reshape(-1, 1)], dim=1)
        if bool(ended.all()):
            break
    score = logp / _lp(length, length_penalty)
    best = score.argmax(dim=1)  # (B,)
    model.train(was_training)
    return tokens.view(B, K, t + 1)[torch.arange(B), best, 1:]


@torch.no_grad()
def beam_with_cache(
    model,
    src: Tensor,
    beam_size: int = 4,
    max_len: int = 50,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """The package's key/value cache, one sentence at a time, with Python-side bookkeeping."""
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    outputs = []
    for b in range(len(src)):
        row = src[b : b + 1].repeat(K, 1)
        memory = model.encode(row)
        cache = model.new_cache()
        history = torch.full((K, 1), bos_id, dtype=torch.long)
        logp = torch.tensor([0.0] + [NEG_INF] * (K - 1))
        done = torch.zeros(K, dtype=torch.bool)
        n_tokens = torch.zeros(K, dtype=torch.long)
        for t in range(1, max_len + 1):
            logits = model.decode(history[:, -1:], memory, row, cache, last_only=True)[:, -1]
            step = torch.log_softmax(logits, dim=-1)
            step[:, pad] = NEG_INF
            step[done] = NEG_INF
            step[done, pad] = 0.0  # a finished hypothesis: padding, free
            total = logp[:, None] + step
            lens = n_tokens.where(done, torch.tensor(t))
            ranked = total / ((5.0 + lens.float()) / 6.0).pow(length_penalty)[:, None]
            top = ranked.flatten().topk(K).indices
            parent, word = top // V, top % V
            logp = total.flatten()[top]
            n_tokens = lens[parent]
            done = done[parent] | (word == eos_id) | (t == max_len)
            history = torch.cat([history[parent], word[:, None]], dim=1)
            cache.reorder(parent, cross=False)
            if done.all():
                break
        final = logp / ((5.0 + n_tokens.float()) / 6.0).pow(length_penalty)
        outputs.append(history[int(final.argmax()), 1:])
    return pad_sequences(outputs, pad_value=pad)[0]


CASES = [
    BlindCase(
        CHECK,
        "no_finished_hypotheses",
        beam_no_finished,
        "mistake",
        "I treat EOS as an ordinary token: a hypothesis goes on growing after it and the search "
        "runs to max_len.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_counted,
        "mistake",
        "My length for the penalty is the length of the token row, BOS included.",
    ),
    BlindCase(
        CHECK,
        "eos_not_counted",
        beam_eos_not_counted,
        "mistake",
        "I did not count the EOS in |Y| for the length penalty.",
    ),
    BlindCase(
        CHECK,
        "length_grows_after_eos",
        beam_length_grows,
        "mistake",
        "A finished hypothesis keeps its score, but its length keeps growing with the padding.",
    ),
    BlindCase(
        CHECK,
        "penalty_every_step",
        beam_penalty_every_step,
        "mistake",
        "I keep the penalised score as the running score, so the penalty is applied again at "
        "every step.",
    ),
    BlindCase(
        CHECK,
        "rank_by_log_prob",
        beam_rank_raw,
        "mistake",
        "I rank the candidates by log P alone during the search and apply the length penalty "
        "only to choose the final hypothesis.",
    ),
    BlindCase(
        CHECK,
        "all_beams_start_at_zero",
        beam_all_start_zero,
        "mistake",
        "All K starting hypotheses get score 0, so the first step picks K copies of one token.",
    ),
    BlindCase(
        CHECK,
        "pad_allowed",
        beam_pad_allowed,
        "mistake",
        "I did not forbid PAD, so an open hypothesis can be extended by it.",
    ),
    BlindCase(
        CHECK,
        "summed_raw_logits",
        beam_raw_logits,
        "mistake",
        "I added up the raw logits instead of the log-softmax.",
    ),
    BlindCase(
        CHECK,
        "per_beam_argmax",
        beam_per_beam_argmax,
        "mistake",
        "After the first step each hypothesis keeps only its own best continuation: K greedy "
        "searches instead of one top-K over all K * V candidates.",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "I appended the new tokens without reordering the token history by the parent hypotheses.",
    ),
    BlindCase(
        CHECK,
        "stop_when_best_ends",
        beam_stop_when_best_ends,
        "mistake",
        "I stop as soon as the top-ranked hypothesis has ended and return it.",
    ),
    BlindCase(
        CHECK,
        "default_alpha_one",
        beam_default_alpha_one,
        "mistake",
        "My length_penalty defaults to 1.0 instead of 0.6.",
    ),
    BlindCase(
        CHECK,
        "finished_list_gnmt",
        beam_finished_list,
        "mistake",
        "I keep finished hypotheses in a separate list as GNMT does, refill the beam with open "
        "ones, and stop once the list holds K of them.",
    ),
    BlindCase(
        CHECK,
        "flat_index_by_k",
        beam_index_by_k,
        "mistake",
        "I split the flat top-K index with // K and % K instead of // V and % V.",
    ),
    BlindCase(
        CHECK,
        "per_sentence",
        beam_per_sentence,
        "correct",
        "One sentence at a time, no cache (the prefix recomputed), then padded.",
    ),
    BlindCase(
        CHECK,
        "batched_keep_all",
        beam_batched_keep_all,
        "correct",
        "All sentences at once without a cache; a sentence whose hypotheses have all ended "
        "stays in the batch until every sentence is done.",
    ),
    BlindCase(
        CHECK,
        "cache_one_sentence",
        beam_with_cache,
        "correct",
        "The package's key/value cache, reordered after every step, one sentence at a time; "
        "defaults for beam_size and max_len.",
    ),
]
