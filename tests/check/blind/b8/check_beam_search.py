"""Blind set B8, check_beam_search (chapter 15): beam search as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from transformer_tutorial.transformer import Transformer

from .. import BlindCase

CHECK = "check_beam_search"


def _lp(length: Tensor, alpha: float, slip: str) -> Tensor:
    length = length.to(torch.float64)
    if slip == "no_penalty":
        return torch.ones_like(length)
    if slip == "plain_length_norm":
        return length.clamp(min=1) ** alpha
    return ((5.0 + length) / 6.0) ** alpha


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
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """Beam search one sentence at a time, the whole prefix fed at every step; ``slip`` names
    one reader's mistake."""
    was_training = model.training
    model.eval()
    pad, V, K = model.config.pad_id, model.config.tgt_vocab_size, beam_size
    only_pad = torch.full((V,), float("-inf"), dtype=dtype)
    only_pad[pad] = 0.0
    outputs = []
    for b in range(src.shape[0]):
        s = src[b : b + 1].expand(K, -1)
        memory = model.encode(src[b : b + 1]).expand(K, -1, -1)
        tokens = torch.full((K, 1), bos_id, dtype=torch.long)
        log_p = torch.full((K,), float("-inf"), dtype=dtype)
        log_p[0] = 0.0
        if slip == "all_beams_from_bos":
            log_p[:] = 0.0
        lengths = torch.zeros(K, dtype=torch.long)
        finished = torch.zeros(K, dtype=torch.bool)
        for t in range(1, max_len + 1):
            logits = model.decode(tokens, memory, s)[:, -1].to(dtype)  # (K, V)
            step = logits if slip == "raw_logits" else logits.log_softmax(-1)
            if slip != "pad_allowed":
                step = step.index_fill(1, torch.tensor([pad]), float("-inf"))
            if slip != "no_finished_set":
                step = torch.where(finished[:, None], only_pad, step)
            total = log_p[:, None] + step  # (K, V)
            cand_len = torch.full((K, V), t, dtype=torch.long)
            if slip == "bos_in_length":
                cand_len += 1
            if slip == "eos_not_counted":
                cand_len[:, eos_id] -= 1
            if slip == "pad_counts_in_length":
                cand_len = torch.where(finished[:, None], lengths[:, None] + 1, cand_len)
            elif slip != "no_finished_set":
                cand_len = torch.where(finished[:, None], lengths[:, None], cand_len)
            penalty = _lp(cand_len, length_penalty, slip).to(dtype)
            ranked = total * penalty if slip == "penalty_multiplied" else total / penalty
            if slip == "top1_per_beam":
                token = ranked.argmax(-1)
                beam = torch.arange(K)
                best = beam * V + token
            else:
                best = ranked.reshape(-1).topk(K).indices
                beam, token = best // V, best % V
            log_p = (ranked if slip == "penalty_every_step" else total).reshape(-1)[best]
            lengths = cand_len.reshape(-1)[best]
            if slip == "no_finished_set":
                finished = torch.zeros(K, dtype=torch.bool)
            else:
                finished = finished[beam] | (token == eos_id)
            if t >= max_len:
                finished[:] = True
            if slip == "not_reordered":
                tokens = torch.cat([tokens, token[:, None]], dim=1)
            else:
                tokens = torch.cat([tokens[beam], token[:, None]], dim=1)
            if slip == "stop_when_top_ends" and token[0] == eos_id:
                outputs.append(tokens[0, 1:])
                break
            if bool(finished.all()):
                if slip == "penalty_every_step":
                    score = log_p
                else:
                    score = log_p / _lp(lengths, length_penalty, slip).to(dtype)
                pick = K - 1 if slip == "last_beam" else int(score.argmax())
                outputs.append(tokens[pick, 1:])
                break
    model.train(was_training)
    width = max(len(o) for o in outputs)
    out = torch.full((len(outputs), width), pad, dtype=torch.long)
    for i, o in enumerate(outputs):
        out[i, : len(o)] = o
    return out


def _make(slip: str):
    def my_beam_search(
        model: Transformer,
        src: Tensor,
        beam_size: int,
        max_len: int,
        *,
        bos_id: int,
        eos_id: int,
        length_penalty: float = 0.6,
    ) -> Tensor:
        return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty, slip)

    my_beam_search.__name__ = f"beam_{slip or 'right'}"
    return my_beam_search


# ---------------------------------------------------------------- correct variants


def beam_float64(
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
        model, src, beam_size, max_len, bos_id, eos_id, length_penalty, dtype=torch.float64
    )


@torch.no_grad()
def beam_batched_cache(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    """All sentences together, B * K rows, a KV cache reordered after every step; finished
    sentences stay in the batch (extended by PAD at no cost) until every one is done."""
    was_training = model.training
    model.eval()
    pad, V, K, B = model.config.pad_id, model.config.tgt_vocab_size, beam_size, src.shape[0]
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    cache = model.new_cache()
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long)
    log_p = torch.full((B, K), float("-inf"))
    log_p[:, 0] = 0.0
    lengths = torch.zeros(B, K, dtype=torch.long)
    finished = torch.zeros(B, K, dtype=torch.bool)
    for t in range(1, max_len + 1):
        logits = model.decode(tokens[:, -1:], memory, src_k, cache)[:, -1]
        step = logits.log_softmax(-1)
        step[:, pad] = float("-inf")
        step = step.view(B, K, V)
        pad_only = torch.full_like(step, float("-inf"))
        pad_only[..., pad] = 0.0
        step = torch.where(finished[..., None], pad_only, step)
        total = log_p[..., None] + step
        cand_len = torch.where(finished, lengths, torch.full_like(lengths, t))
        ranked = total / (((5.0 + cand_len.float()) / 6.0) ** length_penalty)[..., None]
        best = ranked.view(B, K * V).topk(K, dim=-1).indices
        beam, token = best // V, best % V
        log_p = total.view(B, K * V).gather(1, best)
        lengths = cand_len.gather(1, beam)
        finished = finished.gather(1, beam) | (token == eos_id)
        if t >= max_len:
            finished[:] = True
        rows = (torch.arange(B)[:, None] * K + beam).view(-1)
        tokens = torch.cat([tokens[rows], token.view(-1, 1)], dim=1)
        cache.reorder(rows, cross=False)
        if bool(finished.all()):
            break
    score = log_p / ((5.0 + lengths.float()) / 6.0) ** length_penalty
    pick = score.argmax(dim=1)
    model.train(was_training)
    return tokens.view(B, K, -1)[torch.arange(B), pick, 1:]


def beam_k1_is_greedy(
    model: Transformer,
    src: Tensor,
    beam_size: int,
    max_len: int,
    *,
    bos_id: int,
    eos_id: int,
    length_penalty: float = 0.6,
) -> Tensor:
    if beam_size == 1:  # one hypothesis: every candidate has the same length, so greedy
        with torch.no_grad():
            was_training = model.training
            model.eval()
            pad = model.config.pad_id
            memory = model.encode(src)
            ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
            done = torch.zeros(src.shape[0], dtype=torch.bool)
            for _ in range(max_len):
                logits = model.decode(ys, memory, src)[:, -1]
                logits[:, pad] = float("-inf")
                nxt = torch.where(done, pad, logits.argmax(-1))
                ys = torch.cat([ys, nxt[:, None]], 1)
                done |= nxt == eos_id
                if bool(done.all()):
                    break
            model.train(was_training)
            return ys[:, 1:]
    return _beam(model, src, beam_size, max_len, bos_id, eos_id, length_penalty)


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "eos_does_not_finish",
        _make("no_finished_set"),
        "mistake",
        "I keep no finished set: a hypothesis that produced EOS is extended like any other, so "
        "every hypothesis runs to max_len and the output goes on after EOS.",
    ),
    _case(
        "all_beams_start_live",
        _make("all_beams_from_bos"),
        "mistake",
        "I started all K hypotheses with log P = 0, so at the first step the K copies of BOS "
        "each grow and the beam fills with duplicates.",
    ),
    _case(
        "pad_generated",
        _make("pad_allowed"),
        "mistake",
        "Open hypotheses may be extended by PAD like any token; I only blocked it for finished "
        "ones.",
    ),
    _case(
        "bos_counted_in_length",
        _make("bos_in_length"),
        "mistake",
        "My |Y| in the length penalty is the length of the token row with BOS, one more than "
        "the output.",
    ),
    _case(
        "eos_not_counted_in_length",
        _make("eos_not_counted"),
        "mistake",
        "I counted only the words in |Y|: a hypothesis ending with EOS gets the length without "
        "its EOS.",
    ),
    _case(
        "padding_lengthens_finished",
        _make("pad_counts_in_length"),
        "mistake",
        "Finished hypotheses are extended by PAD at no cost, but I add 1 to their length each "
        "step, so their penalty keeps growing.",
    ),
    _case(
        "penalty_compounded_each_step",
        _make("penalty_every_step"),
        "mistake",
        "I store the penalised score as the hypothesis's score and add the next log-prob to it, "
        "so the length penalty is applied again at every step.",
    ),
    _case(
        "no_length_penalty",
        _make("no_penalty"),
        "mistake",
        "I ranked by the summed log-probability alone and never used length_penalty.",
    ),
    _case(
        "penalty_multiplied",
        _make("penalty_multiplied"),
        "mistake",
        "I multiplied log P by lp(Y) instead of dividing, which favours short outputs even more.",
    ),
    _case(
        "length_to_the_alpha",
        _make("plain_length_norm"),
        "mistake",
        "I used |Y| ** alpha as the penalty instead of GNMT's ((5 + |Y|) / 6) ** alpha.",
    ),
    _case(
        "history_not_reordered",
        _make("not_reordered"),
        "mistake",
        "After topk I append each new token to row k of the old token tensor instead of to the "
        "hypothesis it extends (tokens[beam]); scores follow the beams, histories do not.",
    ),
    _case(
        "raw_logits_as_scores",
        _make("raw_logits"),
        "mistake",
        "I added the raw logits to the hypothesis scores instead of log_softmax of them.",
    ),
    _case(
        "top1_per_beam",
        _make("top1_per_beam"),
        "mistake",
        "Each hypothesis keeps its own best next token (argmax per row) instead of the K best "
        "of all K * V extensions; only beam 0 is ever alive.",
    ),
    _case(
        "stop_when_top_hypothesis_ends",
        _make("stop_when_top_ends"),
        "mistake",
        "I return as soon as the top-ranked hypothesis of a step ends with EOS, although open "
        "hypotheses could still end with a better score.",
    ),
    _case(
        "returns_last_beam",
        _make("last_beam"),
        "mistake",
        "At the end I return the hypothesis in the last row (beams[-1]) instead of the one with "
        "the best penalised score.",
    ),
    _case(
        "per_sentence_whole_prefix",
        _make(""),
        "correct",
        "One sentence at a time, K rows, the whole prefix fed at every step, no cache.",
    ),
    _case(
        "per_sentence_float64_scores",
        beam_float64,
        "correct",
        "The same per-sentence search with the scores and penalties kept in float64.",
    ),
    _case(
        "batched_cache_no_dropping",
        beam_batched_cache,
        "correct",
        "All sentences as B * K rows with a KV cache reordered each step; finished sentences stay "
        "in the batch until all are done.",
    ),
    _case(
        "k1_shortcut_to_greedy",
        beam_k1_is_greedy,
        "correct",
        "For beam_size == 1 it runs greedy search (the same result), otherwise the per-sentence "
        "beam search.",
    ),
]
