"""Blind set B22, check_beam_search (chapter 15): beam search as readers write it.

Most cases share one search written one sentence at a time (``_search``), with one slip put in
by name; the slip is described in each case's words.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float) -> Tensor:
    return ((5.0 + length.float()) / 6.0) ** alpha


def _one(model, src1: Tensor, K: int, max_len: int, bos: int, eos: int, alpha: float, slip):
    """Beam search of one sentence ``src1`` (1, S); returns (tokens without BOS, steps taken)."""
    pad = model.config.pad_id
    V = model.config.tgt_vocab_size
    dev = src1.device
    memory = model.encode(src1).expand(K, -1, -1)
    srcK = src1.expand(K, -1)
    tokens = torch.full((K, 1), bos, dtype=torch.long, device=dev)
    logp = torch.full((K,), float("-inf"), device=dev)
    logp[0] = 0.0
    if slip == "all_beams_start":
        logp[:] = 0.0
    finished = torch.zeros(K, dtype=torch.bool, device=dev)
    lengths = torch.zeros(K, dtype=torch.long, device=dev)
    only_pad = torch.full((V,), float("-inf"), device=dev)
    only_pad[pad] = 0.0
    limit = max_len - 1 if slip == "limit_one_short" else max_len
    for t in range(1, max_len + 1):
        logits = model.decode(tokens, memory, srcK)[:, -1]  # (K, V)
        if slip == "adds_probabilities":
            step = logits.softmax(-1)
        else:
            step = logits.log_softmax(-1)
        if slip != "pad_allowed":
            step[:, pad] = float("-inf")
        if slip != "no_finished_set":
            step = torch.where(finished[:, None], only_pad, step)
        total = logp[:, None] + step  # (K, V)
        if slip == "finished_length_grows":
            new_len = torch.full_like(lengths, t)
        elif slip == "bos_in_length":
            new_len = torch.where(finished, lengths, t + 1)
        else:
            new_len = torch.where(finished, lengths, t)
        if slip == "penalty_only_at_end":
            ranked = total
        elif slip == "penalty_precedence":
            ranked = total / ((5.0 + new_len.float()) / 6.0**alpha)[:, None]
        else:
            ranked = total / _lp(new_len, alpha)[:, None]
        if slip == "best_token_per_beam":
            top_val, top_tok = ranked.max(dim=-1)
            _, order = top_val.topk(K)
            beam, token = order, top_tok[order]
        else:
            _, best = ranked.reshape(-1).topk(K)
            if slip == "index_layout":
                beam, token = best % K, best // K
            else:
                beam, token = best // V, best % V
        if slip == "penalty_compounds":
            logp = ranked.reshape(-1)[beam * V + token]
        else:
            logp = total.reshape(-1)[beam * V + token]
        lengths = new_len[beam]
        finished = finished[beam]
        if slip != "no_finished_set":
            finished = finished | (token == eos)
        if t >= limit:
            finished[:] = True
        if slip == "history_not_reordered":
            tokens = torch.cat([tokens, token[:, None]], dim=1)
        else:
            tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
        if slip == "stop_when_top_finishes" and bool(finished[0]):
            return tokens[0, 1:], t
        if bool(finished.all()):
            scores = logp / _lp(lengths, alpha)
            return tokens[int(scores.argmax()), 1:], t
    scores = logp / _lp(lengths, alpha)
    return tokens[int(scores.argmax()), 1:], max_len


def _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, slip=None):
    was_training = model.training
    model.eval()
    pad = model.config.pad_id
    results = []
    with torch.no_grad():
        for i in range(src.shape[0]):
            results.append(
                _one(
                    model,
                    src[i : i + 1],
                    beam_size,
                    max_len,
                    bos_id,
                    eos_id,
                    length_penalty,
                    slip,
                )
            )
    model.train(was_training)
    width = max(steps for _, steps in results)
    out = torch.full((src.shape[0], width), pad, dtype=torch.long, device=src.device)
    for i, (row, _) in enumerate(results):
        out[i, : len(row)] = row
    return out


def _make(slip):
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
        return _search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, slip)

    search.__name__ = f"beam_{slip or 'right'}"
    return search


# ---------------------------------------------------------------- mistakes

beam_all_beams_start = _make("all_beams_start")
beam_bos_in_length = _make("bos_in_length")
beam_penalty_only_at_end = _make("penalty_only_at_end")
beam_penalty_compounds = _make("penalty_compounds")
beam_no_finished_set = _make("no_finished_set")
beam_finished_length_grows = _make("finished_length_grows")
beam_pad_allowed = _make("pad_allowed")
beam_penalty_precedence = _make("penalty_precedence")
beam_best_token_per_beam = _make("best_token_per_beam")
beam_index_layout = _make("index_layout")
beam_history_not_reordered = _make("history_not_reordered")
beam_limit_one_short = _make("limit_one_short")
beam_adds_probabilities = _make("adds_probabilities")
beam_stop_when_top_finishes = _make("stop_when_top_finishes")


def beam_alpha_keyword(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    alpha: float = 0.6,
) -> Tensor:
    return _search(model, src, beam_size, max_len, bos_id, eos_id, alpha)


# ---------------------------------------------------------------- correct variants

beam_per_sentence = _make(None)


def beam_two_stage_topk(
    model,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """The whole batch at once, full prefix each step; the top K of each beam first, then the
    top K of those K * K candidates."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    B, dev = src.shape[0], src.device
    with torch.no_grad():
        memory = model.encode(src).repeat_interleave(K, 0)
        srcK = src.repeat_interleave(K, 0)
        tokens = torch.full((B, K, 1), bos_id, dtype=torch.long, device=dev)
        logp = torch.zeros(B, K, device=dev)
        logp[:, 1:] = float("-inf")
        fin = torch.zeros(B, K, dtype=torch.bool, device=dev)
        length = torch.zeros(B, K, dtype=torch.long, device=dev)
        done = torch.zeros(B, dtype=torch.bool, device=dev)
        best = torch.full((B, max_len), pad, dtype=torch.long, device=dev)
        for t in range(1, max_len + 1):
            logits = model.decode(tokens.view(B * K, -1), memory, srcK)[:, -1]
            step = logits.log_softmax(-1).view(B, K, V)
            step[..., pad] = float("-inf")
            frozen = torch.full_like(step, float("-inf"))
            frozen[..., pad] = 0.0
            step = torch.where(fin[..., None], frozen, step)
            total = logp[..., None] + step  # (B, K, V)
            new_len = torch.where(fin, length, torch.full_like(length, t))
            score = total / _lp(new_len, length_penalty)[..., None]
            s1, tok1 = score.topk(K, dim=-1)  # (B, K, K): each beam's K best
            _, pick = s1.view(B, K * K).topk(K, dim=-1)  # (B, K)
            beam = pick // K
            token = tok1.view(B, K * K).gather(1, pick)
            logp = total[torch.arange(B)[:, None], beam, token]
            length = new_len.gather(1, beam)
            fin = fin.gather(1, beam) | (token == eos_id)
            if t >= max_len:
                fin[:] = True
            tokens = torch.cat(
                [tokens[torch.arange(B)[:, None], beam], token[..., None]], dim=-1
            )  # (B, K, t + 1)
            newly = fin.all(1) & ~done
            for b in newly.nonzero().flatten().tolist():
                k = int((logp[b] / _lp(length[b], length_penalty)).argmax())
                best[b, :t] = tokens[b, k, 1:]
            done |= newly
            if bool(done.all()):
                break
    model.train(was_training)
    return best[:, :t]


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
    """One sentence at a time with the model's KVCache, one token fed per step."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    rows, widths = [], []
    with torch.no_grad():
        for i in range(src.shape[0]):
            one = src[i : i + 1].expand(K, -1)
            memory = model.encode(src[i : i + 1]).expand(K, -1, -1)
            cache = model.new_cache()
            hyps = torch.full((K, 1), bos_id, dtype=torch.long, device=src.device)
            logp = torch.tensor([0.0] + [float("-inf")] * (K - 1), device=src.device)
            ended = torch.zeros(K, dtype=torch.bool, device=src.device)
            n = torch.zeros(K, dtype=torch.long, device=src.device)
            for t in range(1, max_len + 1):
                lp = model.decode(hyps[:, -1:], memory, one, cache)[:, -1].log_softmax(-1)
                lp[:, pad] = float("-inf")
                lp[ended] = float("-inf")
                lp[ended, pad] = 0.0
                cand = logp[:, None] + lp
                cand_len = torch.where(ended, n, t)
                flat = (cand / _lp(cand_len, length_penalty)[:, None]).flatten()
                idx = flat.topk(K).indices
                beam, tok = torch.div(idx, V, rounding_mode="floor"), idx % V
                logp, n, ended = cand.flatten()[idx], cand_len[beam], ended[beam] | (tok == eos_id)
                if t == max_len:
                    ended[:] = True
                hyps = torch.cat([hyps[beam], tok[:, None]], 1)
                cache.reorder(beam, cross=False)
                if ended.all():
                    break
            k = (logp / _lp(n, length_penalty)).argmax()
            rows.append(hyps[k, 1:])
            widths.append(t)
    model.train(was_training)
    out = torch.full((src.shape[0], max(widths)), pad, dtype=torch.long, device=src.device)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


CASES = [
    BlindCase(
        CHECK,
        "all_beams_start_from_bos",
        beam_all_beams_start,
        "mistake",
        "I started all K hypotheses with log P = 0, so the first step picks K copies.",
    ),
    BlindCase(
        CHECK,
        "bos_counted_in_length",
        beam_bos_in_length,
        "mistake",
        "The length in the penalty is the length of the token buffer, BOS included (t + 1).",
    ),
    BlindCase(
        CHECK,
        "penalty_only_at_end",
        beam_penalty_only_at_end,
        "mistake",
        "I ranked the candidates by raw log P during the search and used the length penalty "
        "only to pick the final hypothesis.",
    ),
    BlindCase(
        CHECK,
        "penalty_compounds",
        beam_penalty_compounds,
        "mistake",
        "I kept the penalised score as the running log P, so the penalty is divided in again "
        "at every step.",
    ),
    BlindCase(
        CHECK,
        "no_finished_set",
        beam_no_finished_set,
        "mistake",
        "I never mark hypotheses as finished: after EOS they keep growing until max_len.",
    ),
    BlindCase(
        CHECK,
        "finished_length_grows",
        beam_finished_length_grows,
        "mistake",
        "A finished hypothesis is extended by PAD, but its length in the penalty still grows "
        "with every step.",
    ),
    BlindCase(
        CHECK,
        "pad_generated",
        beam_pad_allowed,
        "mistake",
        "I did not set the PAD column to -inf, so an open hypothesis can choose PAD.",
    ),
    BlindCase(
        CHECK,
        "penalty_precedence",
        beam_penalty_precedence,
        "mistake",
        "I wrote (5 + |Y|) / 6 ** alpha without the brackets, so only 6 is raised to alpha.",
    ),
    BlindCase(
        CHECK,
        "best_token_per_beam",
        beam_best_token_per_beam,
        "mistake",
        "Each hypothesis is extended only by its own best token; the K hypotheses never "
        "compete for their extensions.",
    ),
    BlindCase(
        CHECK,
        "flat_index_layout",
        beam_index_layout,
        "mistake",
        "From the flat top-k index I took beam = i % K and token = i // K, as if the layout "
        "were (V, K).",
    ),
    BlindCase(
        CHECK,
        "history_not_reordered",
        beam_history_not_reordered,
        "mistake",
        "I append the new tokens but do not reorder the earlier tokens by the chosen beams.",
    ),
    BlindCase(
        CHECK,
        "limit_one_short",
        beam_limit_one_short,
        "mistake",
        "I finish every hypothesis at step max_len - 1, one token before the limit.",
    ),
    BlindCase(
        CHECK,
        "adds_probabilities",
        beam_adds_probabilities,
        "mistake",
        "I added softmax probabilities to the running score instead of log-probabilities.",
    ),
    BlindCase(
        CHECK,
        "stop_when_top_finishes",
        beam_stop_when_top_finishes,
        "mistake",
        "I stop as soon as the top-ranked hypothesis has produced EOS and return it, "
        "without waiting for the others.",
    ),
    BlindCase(
        CHECK,
        "alpha_keyword",
        beam_alpha_keyword,
        "mistake",
        "I named the length-penalty argument alpha instead of length_penalty.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_full_prefix",
        beam_per_sentence,
        "correct",
        "Each sentence searched alone with its K rows, the whole prefix re-run every step.",
    ),
    BlindCase(
        CHECK,
        "two_stage_topk_batched",
        beam_two_stage_topk,
        "correct",
        "The batch kept as (B, K, t); the top K tokens of each beam first, then the top K "
        "of the K * K candidates; finished sentences recorded but kept in the batch.",
    ),
    BlindCase(
        CHECK,
        "per_sentence_kv_cache",
        beam_with_cache,
        "correct",
        "Each sentence alone with the model's KVCache, reordered by the chosen beams "
        "(cross=False).",
    ),
]
