"""Mistakes in greedy search, beam search and the key/value cache (chapter 15).

The searches are written as a reader would, without the book's cache: one vectorised over the
batch and its hypotheses, one that loops over the sentences with a list of hypotheses each.
"""

from __future__ import annotations

import math
from functools import partial

import torch

from transformer_tutorial import check
from transformer_tutorial.decoding import beam_search, greedy_decode
from transformer_tutorial.transformer import LayerCache

from . import Correct, Mistake

# --- greedy search ---------------------------------------------------------------------------------


@torch.no_grad()
def greedy_by_hand(model, src, max_len, bos_id, eos_id, mistake=None):
    """Correct without ``mistake``, written differently: no cache, the whole prefix at every
    step, finished sentences kept in the batch and fed PAD."""
    if mistake != "train":
        model.eval()
    memory = model.encode(src)
    pad = model.config.pad_id
    start = eos_id if mistake == "wrong-start" else bos_id  # the two ids mixed up
    tokens = torch.full((src.shape[0], 1), start)  # (B, 1)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len + (mistake == "off-by-one") - (mistake == "one-less")):
        fed = tokens[:, -1:] if mistake == "last-token-only" else tokens
        logits = model.decode(fed, memory, src)[:, 0 if mistake == "first-position" else -1]
        if mistake != "pad-as-word":
            logits[:, pad] = -math.inf
        step = logits.argmax(-1).masked_fill(done, pad)  # (B,)
        if mistake == "eos-dropped":
            step = step.masked_fill(step == eos_id, pad)
        tokens = torch.cat([tokens, step[:, None]], dim=1)
        if mistake != "no-stop":
            done |= (step == eos_id) | ((step == pad) & (mistake == "eos-dropped"))
        if done.all() or (mistake == "first-stop" and done.any()):
            break
    return tokens if mistake == "with-bos" else tokens[:, 1:]


def greedy_with(mistake):
    return partial(greedy_by_hand, mistake=mistake)


@torch.no_grad()
def greedy_per_sentence(model, src, max_len, bos_id, eos_id):
    """Correct, one sentence at a time, its padding cut off; as wide as the longest output."""
    model.eval()
    pad = model.config.pad_id
    out = torch.full((src.shape[0], max_len), pad)
    for b in range(src.shape[0]):
        sentence = src[b : b + 1, : int((src[b] != pad).sum())]
        memory, tokens = model.encode(sentence), [bos_id]
        for t in range(max_len):
            logits = model.decode(torch.tensor([tokens]), memory, sentence)[0, -1]
            logits[pad] = -math.inf
            tokens.append(int(logits.argmax()))
            out[b, t] = tokens[-1]
            if tokens[-1] == eos_id:
                break
    longest = int((out != pad).sum(-1).max())  # no PAD inside a sentence: its length
    return out[:, :longest]


_GREEDY = [
    ("with-bos", "starts with BOS"),
    ("no-stop", "goes on after its EOS"),
    ("pad-as-word", "padding is not a word"),
    ("first-stop", "differently in the batch"),
    ("off-by-one", "off by one"),  # one step more
    ("one-less", "off by one"),
    ("last-token-only", "fed only the last token"),
    ("first-position", "logits of the first position"),
    ("eos-dropped", "end without their EOS"),
    ("wrong-start", "starts from eos_id"),
]

# --- beam search -----------------------------------------------------------------------------------


def _lp(length, alpha, mistake):
    if mistake == "plain-power":
        return length.clamp(min=1) ** alpha
    if mistake == "lp-bracket":
        return (5 + length / 6) ** alpha
    return ((5 + length + (mistake == "bos-in-length")) / 6) ** alpha


@torch.no_grad()
def beam_by_hand(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty, mistake=None):
    """Correct without ``mistake``, written differently: no cache (unless the mistake is about
    it), a (B, K, t) tensor of hypotheses, finished ones extended by PAD at no cost."""
    model.eval()
    B, K, V, pad = src.shape[0], beam_size, model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = src.repeat_interleave(K, dim=0)  # (B*K, S)
    hyps = torch.full((B, K, 1), bos_id)  # (B, K, t)
    score = torch.zeros(B, K)  # log P
    if mistake != "copies":
        score[:, 1:] = -math.inf
    length = torch.zeros(B, K)
    ended = torch.zeros(B, K, dtype=torch.bool)
    alpha = 0.0 if mistake in ("no-penalty", "penalty-at-end") else length_penalty
    cache = model.new_cache() if mistake == "no-cache-reorder" else None
    for t in range(1, max_len + 1):
        fed = hyps.view(B * K, -1)[:, -1:] if cache is not None else hyps.view(B * K, -1)
        logits = model.decode(fed, memory, src_k, cache)[:, -1]  # (B*K, V)
        if mistake == "raw-logits":
            logp = logits.view(B, K, V).clone()
        elif mistake == "probabilities":
            logp = logits.softmax(-1).view(B, K, V)
        else:
            logp = logits.log_softmax(dim=0 if mistake == "softmax-over-batch" else -1)
            logp = logp.view(B, K, V)
        pad_cost = logp[..., pad].clone()
        if mistake != "pad-allowed":
            logp[..., pad] = -math.inf
        if mistake == "drop-finished":
            logp[..., eos_id] = -math.inf
        if mistake != "extend-finished":
            only_pad = torch.where(torch.arange(V) == pad, 0.0, -math.inf).expand(B, K, V)
            if mistake == "pad-costs":
                only_pad = only_pad.clone()
                only_pad[..., pad] = pad_cost
            logp = torch.where(ended[..., None], only_pad, logp)
        grows = ~ended if mistake != "pad-in-length" else torch.ones_like(ended)
        new_len = torch.where(grows, torch.tensor(float(t)), length)  # (B, K)
        cand_len = new_len[..., None].expand(B, K, V).clone()
        if mistake == "eos-not-in-length":
            cand_len[..., eos_id] = torch.where(ended, length, torch.tensor(t - 1.0))
        total = score[..., None] + logp  # (B, K, V)
        ranked = total / _lp(cand_len, alpha, mistake)
        if mistake == "topk-over-batch":
            best = ranked.reshape(-1).topk(B * K).indices  # (B*K,): mixes the sentences
            rows, token = best // V, (best % V).view(B, K)
            score = total.reshape(-1)[best].view(B, K)
            length = cand_len.reshape(-1)[best].view(B, K)
            ended = ended.reshape(-1)[rows].view(B, K) | (token == eos_id)
            hyps = torch.cat([hyps.view(B * K, -1)[rows].view(B, K, -1), token[..., None]], 2)
        else:
            best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
            beam, token = best // V, best % V
            kept = ranked if mistake == "penalty-carried" else total
            score = kept.view(B, K * V).gather(1, best)
            length = cand_len.view(B, K * V).gather(1, best)
            ended = ended.gather(1, beam) | (token == eos_id)
            if mistake != "no-parent":
                hyps = hyps.gather(1, beam[..., None].expand_as(hyps))
            hyps = torch.cat([hyps, token[..., None]], 2)
        if ended.all():
            break
    final_alpha = 0.0 if mistake in ("no-penalty", "pick-by-log-p") else length_penalty
    final = score if mistake == "penalty-carried" else score / _lp(length, final_alpha, mistake)
    pick = final.argmax(dim=1)  # (B,)
    if mistake == "last-beam":
        pick = torch.full((B,), K - 1)
    return hyps[torch.arange(B), pick, 1:]  # (B, t)


def beam_with(mistake):
    return partial(beam_by_hand, mistake=mistake)


@torch.no_grad()
def beam_per_sentence(
    model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty, mistake=None
):
    """Correct without ``mistake``, written differently: a loop over the sentences, each with a
    list of hypotheses (tokens, log P, finished), the candidates sorted by log P / lp."""
    model.eval()
    pad = model.config.pad_id
    out = torch.full((src.shape[0], max_len), pad)

    def rank(hypothesis):  # log P / lp(|Y|), |Y| counts EOS, not BOS
        seq, score, _ = hypothesis
        return score / ((5 + len(seq) - 1) / 6) ** length_penalty

    for b in range(src.shape[0]):
        sentence = src[b : b + 1, : int((src[b] != pad).sum())]
        memory = model.encode(sentence)  # (1, S, D)
        beams, first = [([bos_id], 0.0, False)], None
        for _ in range(max_len):
            grow = [h for h in beams if not h[2] or mistake == "no-finished"]  # same length
            tokens = torch.tensor([seq for seq, _, _ in grow])  # (k, t)
            k = len(grow)
            logp = model.decode(tokens, memory.expand(k, -1, -1), sentence.expand(k, -1))
            logp = iter(logp[:, -1].log_softmax(-1).tolist())  # (k, V)
            candidates = []
            for seq, score, done in beams:
                if done and mistake != "no-finished":
                    candidates.append((seq, score, True))
                    continue
                for v, p in enumerate(next(logp)):
                    if v != pad:
                        candidates.append((seq + [v], score + p, done or v == eos_id))
            beams = sorted(candidates, key=rank, reverse=True)[:beam_size]
            if mistake == "first-finished" and any(done for _, _, done in beams):
                first = next(h for h in beams if h[2])
                break
            if all(done for _, _, done in beams):
                break
        best = first or max(beams, key=rank)
        seq = best[0][1:]
        if mistake == "no-finished" and eos_id in seq:
            seq = seq[: seq.index(eos_id) + 1]  # cut at the first EOS
        out[b, : len(seq)] = torch.tensor(seq)
    return out


@torch.no_grad()
def beam_eos_is_a_word(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty):
    """No finished state, as a first beam search often is: EOS is a token like the others,
    every hypothesis grows until max_len, and the best one is cut after its first EOS."""
    B, K, V, pad = src.shape[0], beam_size, model.config.tgt_vocab_size, model.config.pad_id
    memory = model.encode(src).repeat_interleave(K, 0)
    src_k = src.repeat_interleave(K, 0)
    hyps = torch.full((B * K, 1), bos_id)  # (B*K, t)
    score = torch.zeros(B, K)
    score[:, 1:] = -math.inf
    for t in range(1, max_len + 1):
        logp = model.decode(hyps, memory, src_k)[:, -1].log_softmax(-1)  # (B*K, V)
        logp[:, pad] = -math.inf
        total = (score.view(-1, 1) + logp).view(B, K * V)
        top = (total / ((5 + t) / 6) ** length_penalty).topk(K, dim=-1).indices  # (B, K)
        score = total.gather(1, top)
        rows = (torch.arange(B)[:, None] * K + top // V).view(-1)
        hyps = torch.cat([hyps[rows], (top % V).view(-1, 1)], dim=1)
    out = torch.full((B, max_len), pad)
    for b, best in enumerate(hyps.view(B, K, -1)[:, 0, 1:].tolist()):
        best = best[: best.index(eos_id) + 1] if eos_id in best else best
        out[b, : len(best)] = torch.tensor(best)
    return out


@torch.no_grad()
def beam_finished_list(model, src, beam_size, max_len, *, bos_id, eos_id, length_penalty):
    """Finished hypotheses kept apart, as several libraries do: beam_size open hypotheses
    always go on; one that ends with EOS among the best beam_size joins a list of finished
    ones; a sentence is done when that list has beam_size entries."""
    model.eval()
    pad = model.config.pad_id
    out = torch.full((src.shape[0], max_len), pad)
    for b in range(src.shape[0]):
        sentence = src[b : b + 1, : int((src[b] != pad).sum())]
        memory = model.encode(sentence)
        beams, finished = [([bos_id], 0.0)], []
        for t in range(1, max_len + 1):
            tokens = torch.tensor([seq for seq, _ in beams])
            k = len(beams)
            logp = model.decode(tokens, memory.expand(k, -1, -1), sentence.expand(k, -1))
            rows = logp[:, -1].log_softmax(-1).tolist()
            candidates = [
                (seq + [v], score + p)
                for (seq, score), row in zip(beams, rows, strict=True)
                for v, p in enumerate(row)
                if v != pad
            ]
            candidates.sort(key=lambda c: c[1], reverse=True)
            beams = []
            for rank, (seq, score) in enumerate(candidates):
                if len(beams) == beam_size:
                    break
                if seq[-1] == eos_id:
                    if rank < beam_size and len(finished) < beam_size:
                        finished.append((seq, score / ((5 + t) / 6) ** length_penalty))
                else:
                    beams.append((seq, score))
            if len(finished) >= beam_size:
                break
        if len(finished) < beam_size:
            lp = ((5 + len(beams[0][0]) - 1) / 6) ** length_penalty
            finished += [(seq, score / lp) for seq, score in beams]
        best = max(finished, key=lambda c: c[1])[0][1:]
        out[b, : len(best)] = torch.tensor(best)
    return out


@torch.no_grad()
def beam_stops_at_first_sentence(model, src, beam_size, max_len, **kwargs):
    """The package's search, but the batch's loop stops when its first sentence is done."""
    limit = 1 + min(
        len(beam_search(model, src[b : b + 1], beam_size, max_len, **kwargs)[0])
        for b in range(src.shape[0])
    )
    return beam_search(model, src, beam_size, max_len, **kwargs)[:, : limit - 1]


_BEAM = [
    ("copies", "copies of one hypothesis"),
    ("no-penalty", "the penalty is not applied"),
    ("pad-in-length", "keeps growing after a hypothesis's EOS"),
    ("penalty-at-end", "applied only to choose among the final hypotheses"),
    ("pick-by-log-p", "the final choice ranks as log P alone does"),
    ("penalty-carried", "the length penalty compounds"),
    ("bos-in-length", "the length penalty counts BOS"),
    ("eos-not-in-length", "the length penalty does not count EOS"),
    ("plain-power", "|Y| ** length_penalty"),
    ("lp-bracket", "a bracket misplaced"),
    ("raw-logits", "adds up raw logits"),
    ("probabilities", "adds up probabilities"),
    ("softmax-over-batch", "the log-softmax runs over the wrong axis"),
    ("pad-allowed", "padding is not a word"),
    ("extend-finished", "goes on after its EOS"),
    ("drop-finished", "not be dropped"),
    ("pad-costs", "a finished hypothesis pays for its padding"),
    ("topk-over-batch", "chosen over the whole batch"),
    ("no-parent", "appended to the hypothesis in its own row"),
    ("no-cache-reorder", "the key/value cache does not follow the hypotheses"),
    ("last-beam", "returns the last of the beam_size hypotheses"),
]

# --- the key/value cache ---------------------------------------------------------------------------


def cat_cache(axis=2, history=True, reorder_axis=0, window=None):
    """A cache that joins the new keys and values to the old with ``torch.cat`` (correct with
    the defaults, written differently from the book's preallocated buffers). ``window``: keep
    only the last ``window`` positions, as local attention would."""

    class Cache:
        def __init__(self):
            self.k = self.v = None

        def append_self(self, k, v):
            if self.k is None:
                self.k, self.v = k, v
            else:
                self.k, self.v = torch.cat([self.k, k], axis), torch.cat([self.v, v], axis)
            if window is not None:
                self.k, self.v = self.k[:, :, -window:], self.v[:, :, -window:]
            return (self.k, self.v) if history else (k, v)

        def reorder(self, index):
            if reorder_axis is not None:
                self.k = self.k.index_select(reorder_axis, index)
                self.v = self.v.index_select(reorder_axis, index)

    return Cache


class CacheThatCopiesOnlyKeys(LayerCache):
    """Right alone, wrong in the decoder: the returned values are the keys."""

    def append_self(self, k, v):
        keys, _ = super().append_self(k, v)
        return keys, keys


class CacheInClassLists:
    """The history in lists made once, in the class: every cache shares them."""

    keys: list = []  # noqa: RUF012 (the mistake)
    values: list = []  # noqa: RUF012

    def append_self(self, k, v):
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index):
        self.keys[:] = [k.index_select(0, index) for k in self.keys]
        self.values[:] = [v.index_select(0, index) for v in self.values]


class CacheInLists:
    """Correct: lists of the steps' keys and values, joined when asked."""

    def __init__(self):
        self.keys, self.values = [], []

    def append_self(self, k, v):
        self.keys.append(k)
        self.values.append(v)
        return torch.cat(self.keys, dim=2), torch.cat(self.values, dim=2)

    def reorder(self, index):
        self.keys = [k.index_select(0, index) for k in self.keys]
        self.values = [v.index_select(0, index) for v in self.values]


_CACHE = [
    ("heads-axis", cat_cache(axis=1), "appended along the heads axis (dim 1)"),
    ("batch-axis", cat_cache(axis=0), "appended along the batch axis (dim 0)"),
    ("feature-axis", cat_cache(axis=3), "appended along the feature axis (dim 3)"),
    ("no-history", cat_cache(history=False), "returns only the new keys"),
    ("no-reorder", cat_cache(reorder_axis=None), "left the cached keys as they were"),
    ("reorder-heads", cat_cache(reorder_axis=1), "along the heads axis (dim 1), but it must keep"),
    ("reorder-t", cat_cache(reorder_axis=2), "along the positions axis (dim 2), but it must keep"),
    ("values-are-keys", CacheThatCopiesOnlyKeys, "returns the keys twice"),
    ("shared-history", CacheInClassLists, "two caches share one history"),
]


class CacheBuffer:
    """Writes into a preallocated buffer of 64 positions and returns all of it."""

    def __init__(self):
        self.k = self.v = None
        self.t = 0

    def append_self(self, k, v):
        if self.k is None:
            self.k = k.new_zeros(*k.shape[:2], 64, k.shape[-1])
            self.v = v.new_zeros(*v.shape[:2], 64, v.shape[-1])
        n = k.shape[2]
        self.k[:, :, self.t : self.t + n], self.v[:, :, self.t : self.t + n] = k, v
        self.t += n
        return self.k, self.v

    def reorder(self, index):
        self.k, self.v = self.k[index], self.v[index]


def greedy_sampling(model, src, max_len, bos_id, eos_id, generator=None):
    """Samples each token from the softmax instead of taking the argmax."""
    model.eval()
    memory, pad = model.encode(src), model.config.pad_id
    tokens = torch.full((src.shape[0], 1), bos_id)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        probs = model.decode(tokens, memory, src)[:, -1].softmax(-1)
        probs[:, pad] = 0
        step = torch.multinomial(probs, 1, generator=generator).squeeze(1).masked_fill(done, pad)
        tokens = torch.cat([tokens, step[:, None]], dim=1)
        done |= step == eos_id
        if done.all():
            break
    return tokens[:, 1:]


def greedy_in_any_mode(model, src, max_len, bos_id, eos_id):
    """The book's search, without model.eval(): dropout stays on in a model in training mode."""
    return greedy_by_hand(model, src, max_len, bos_id, eos_id, mistake="train")


# entries that are another entry's mistake, written another way or caught by the same sentence
# (the beam search check names the mistakes of greedy and beam search alike by greedy-<mistake>)
SAME = {
    "greedy-one-less": "greedy-off-by-one",
    "beam-pad-in-length": "beam-no-penalty",
    "beam-pad-allowed": "greedy-pad-as-word",
    "beam-extend-finished": "greedy-no-stop",
    "beam-eos-is-a-word": "beam-no-finished",
    "beam-first-stop": "greedy-first-stop",
}


def _entry(checker, name, code, diagnosis):
    return Mistake(checker, name, code, diagnosis, mistake=SAME.get(name))


MISTAKES = (
    [_entry(check.check_greedy_decode, f"greedy-{m}", greedy_with(m), d) for m, d in _GREEDY]
    + [_entry(check.check_beam_search, f"beam-{m}", beam_with(m), d) for m, d in _BEAM]
    + [
        _entry(
            check.check_beam_search,
            "beam-no-finished",
            partial(beam_per_sentence, mistake="no-finished"),
            "no finished state",
        ),
        _entry(
            check.check_beam_search,
            "beam-eos-is-a-word",
            beam_eos_is_a_word,
            "no finished state",
        ),
        _entry(
            check.check_beam_search,
            "beam-finished-list",
            beam_finished_list,
            "leave the beam for a list of their own",
        ),
        _entry(
            check.check_beam_search,
            "beam-first-finished",
            partial(beam_per_sentence, mistake="first-finished"),
            "stops at its first finished hypothesis",
        ),
        _entry(
            check.check_beam_search,
            "beam-first-stop",
            beam_stops_at_first_sentence,
            "differently in the batch",
        ),
    ]
    + [Mistake(check.check_kv_cache, f"kv-cache-{m}", cls, d) for m, cls, d in _CACHE]
    + [
        Mistake(
            check.check_kv_cache,
            "kv-cache-window",
            cat_cache(window=5),
            "the cache stops growing: appending position 5",
            mistake="kv-cache-fixed-length",
        )
    ]
    + [Mistake(check.check_greedy_decode, "greedy-no-eval", greedy_in_any_mode, "model.eval()")]
    + [Mistake(check.check_greedy_decode, "greedy-not-deterministic", greedy_sampling, "argmax")]
    + [
        Mistake(
            check.check_greedy_decode,
            "greedy-not-argmax",
            lambda *args: greedy_sampling(*args, generator=torch.Generator().manual_seed(0)),
            "the model's choice number",
        )
    ]
    + [Mistake(check.check_kv_cache, "kv-cache-whole-buffer", CacheBuffer, "returned 64")]
)

CORRECT = [
    Correct(check.check_greedy_decode, "greedy-package", greedy_decode),
    Correct(check.check_greedy_decode, "greedy-by-hand", greedy_with(None)),
    Correct(check.check_greedy_decode, "greedy-per-sentence", greedy_per_sentence),
    Correct(check.check_beam_search, "beam-package", beam_search),
    Correct(check.check_beam_search, "beam-vectorised", beam_with(None)),
    Correct(check.check_beam_search, "beam-per-sentence", beam_per_sentence),
    Correct(check.check_kv_cache, "kv-cache-package", LayerCache),
    Correct(check.check_kv_cache, "kv-cache-torch-cat", cat_cache()),
    Correct(check.check_kv_cache, "kv-cache-lists", CacheInLists),
]
