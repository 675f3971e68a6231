"""Decoding checks: greedy search, beam search and the key/value cache (chapter 15)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import partial

import torch
from torch import Tensor

from ..decoding import beam_search, greedy_decode
from ..sequences import BOS_ID
from ..transformer import (
    KVCache,
    Transformer,
    TransformerConfig,
)
from .engine import check
from .tensors import close, randn
from .verdict import Verdict, Wrong

# --- greedy search and beam search ------------------------------------------------------------


@dataclass
class _Case:
    """A small random translator and sources on which decoding shows the usual mistakes."""

    model: Transformer
    src: Tensor  # (B, S) source ids, four of the six sentences padded
    max_len: int  # tokens to generate at most
    eos: int  # a token the model produces: sentences end at different steps, some never

    @property
    def pad(self) -> int:
        return self.model.config.pad_id


MISTAKES = {
    "kv-cache-whole-buffer": "a new cache's first append_self of one position returned {got} "
    "positions: return only the positions appended so far, (B, H, T_past + T_new, Dh) -- "
    "attention would read the unfilled rest of a buffer as keys. Slice a preallocated buffer "
    "to its filled length, or concatenate.",
    "greedy-not-deterministic": "two calls on the same model and sources gave different tokens: "
    "greedy search takes the most probable token (argmax) at each step; sampling from the "
    "softmax belongs to chapter 18.",
    "greedy-no-eval": "handed a model in training mode, your search keeps dropout on: the "
    "tokens change from call to call. Call model.eval() before decoding (the book's "
    "greedy_decode does), so that every dropout layer lets everything through.",
}

_BOOK: dict[tuple[str, int], list] = {}  # the book's searches' outputs on the cases
_MADE: dict[tuple[int, int], _Case] = {}  # each case as first made, copied for every check


def _decoding_case(seed: int = 3, src_seed: int = 1) -> _Case:
    """A copy for each check, so that nothing a reader's code does to it carries over."""
    if (seed, src_seed) not in _MADE:
        with torch.random.fork_rng(devices=[]):  # the reader's random numbers stay as they were
            _MADE[seed, src_seed] = _make_case(seed, src_seed)
    return copy.deepcopy(_MADE[seed, src_seed])


def _make_case(seed: int, src_seed: int) -> _Case:
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=17,
        tgt_vocab_size=19,
        d_model=16,
        num_heads=4,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        max_len=20,
        tie_output=False,
    )
    model = Transformer(config).eval()
    pad, max_len = config.pad_id, 10
    src = torch.randint(3, 17, (6, 7), generator=torch.Generator().manual_seed(src_seed))  # (B, S)
    for b, real in ((1, 3), (3, 5), (4, 2), (5, 6)):
        src[b, real:] = pad
    with torch.no_grad():
        model.output.weight.mul_(4.0)  # wide margins between the best and the second token
        free = greedy_decode(model, src, max_len, BOS_ID, None)  # (B, max_len): no EOS yet
        eos = int(free[0, 3])  # sentence 0 ends by step 3, the others later or never
        ended = greedy_decode(model, src, max_len, BOS_ID, eos)  # (B, T')
        word = int(ended[(ended != pad) & (ended != eos)].mode().values)
        # PAD scores 1.5 times the commonest word: where that word wins, PAD would beat it if
        # it were allowed, which shows a search that forgets to exclude padding
        model.output.weight[pad] = 1.5 * model.output.weight[word]
    return _Case(model, src, max_len, eos)


# Four random translators (seeds of the weights and of the sources), chosen so that every beam
# search mistake below gives another output than the right search on at least one of them, and
# no two mistakes give the same outputs on all of them (but the _ALIASES): one random model
# misses many (a search without a finished state is right on 11 of 30 models of this size; a
# length penalty that counts BOS on 28 of 30). tests/test_check.py checks that this still holds.
_SEEDS = ((3, 1), (2, 102), (4, 104), (5, 105))
# the beam searches tried: (translator, beam_size, length_penalty); beam_size 1 is greedy search
_BEAM_PROBES = ((0, 3, 0.6), (1, 2, 1.5), (2, 3, 0.6), (3, 4, 1.0), (0, 1, 0.6))


def _cases() -> list[_Case]:
    return [_decoding_case(*seeds) for seeds in _SEEDS]


def _sentences(result: object, rows: int, pad: int) -> list[list[int]]:
    """Token ids ``(rows, T')`` as one list per sentence, trailing padding dropped."""
    if not (isinstance(result, Tensor) and result.dim() == 2 and result.shape[0] == rows):
        got = tuple(result.shape) if isinstance(result, Tensor) else type(result).__name__
        raise Wrong(f"return token ids of shape (B, T') = ({rows}, T'), not {got}.")
    if result.is_floating_point():
        raise Wrong(f"return token ids as integers (torch.long), not {result.dtype}.")
    sentences = result.tolist()
    for tokens in sentences:
        while tokens and tokens[-1] == pad:
            tokens.pop()
    return sentences


def _common_mistake(got: list, want: list, case: _Case) -> str | None:
    """A mistake of greedy and beam search alike, seen in the sentences ``got``."""
    pad, eos, L = case.pad, case.eos, case.max_len
    if all(s[:1] == [BOS_ID] for s in got) and [s[1:] for s in got] == want:
        return (f"your output starts with BOS (id {BOS_ID}): return only the generated tokens, "
                "(B, T') without BOS.")  # fmt: skip
    for i, s in enumerate(got):
        if pad in s:
            return (f"sentence {i} has PAD (id {pad}) at step {s.index(pad)}, inside the "
                    "sentence: padding is not a word. Give it the score -inf before choosing "
                    "a token; PAD only fills a row after its EOS.")  # fmt: skip
    for i, s in enumerate(got):
        if eos in s[:-1]:
            t = s.index(eos)
            return (f"sentence {i} goes on after its EOS at step {t} (then {s[t + 1 : t + 4]}"
                    f"...): a sentence (a hypothesis) that has produced EOS (id {eos}) is "
                    "finished; only PAD may follow.")  # fmt: skip
    cut = [s[:-1] if s[-1:] == [eos] else s for s in want]
    if got == cut and cut != want:
        i = next(i for i, s in enumerate(want) if s[-1:] == [eos])
        return (f"your sentences end without their EOS (id {eos}): sentence {i} should be "
                f"{want[i]}, yours is {got[i]}. EOS is part of the output: keep it, and pad "
                "after it.")  # fmt: skip
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if eos not in right + s and abs(len(s) - L) == 1 and s[: L - 1] == right[: L - 1]:
            return (f"off by one: sentence {i} never produces EOS, so it stops after "
                    f"max_len = {L} tokens; yours has {len(s)}.")  # fmt: skip
    return None


def _first_difference(got: list, want: list, what: str, case: _Case) -> str:
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if s != right:
            pairs = enumerate(zip(s, right, strict=False))
            t = next((t for t, (a, b) in pairs if a != b), min(len(s), len(right)))
            return (f"sentence {i} differs from {what} from step {t} on: {right} expected, "
                    f"yours {s} (src {tuple(case.src.shape)}, max_len = {case.max_len}, "
                    f"EOS = {case.eos}).")  # fmt: skip
    return f"the output differs from {what}."


def _alone_mistake(fn: Callable, got: list, case: _Case, **kwargs) -> str | None:
    """Decode each sentence of ``case`` alone (its padding cut off) with ``fn``: it must come
    out as in the batch, where it came out as ``got``."""
    model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
    for i, n in enumerate((src != pad).sum(dim=1).tolist()):
        sentence = src[i : i + 1, :n]  # (1, n)
        if kwargs:
            out = fn(model, sentence, kwargs["beam_size"], L, bos_id=BOS_ID, eos_id=eos,
                     length_penalty=kwargs["length_penalty"])  # fmt: skip
        else:
            out = fn(model, sentence, L, BOS_ID, eos)
        alone = _sentences(out, 1, pad)[0]
        if alone != got[i]:
            early = len(got[i]) < len(alone) and eos not in got[i]
            return (
                f"sentence {i} comes out differently in the batch ({got[i]}) than alone "
                f"({alone}): each sentence must be decoded as if it were alone."
                + (" Does your loop stop when the first sentence ends, instead of when "
                   "every sentence has?" if early else "")
            )  # fmt: skip
    return None


@torch.no_grad()
def _greedy_variant(case: _Case, mistake: str) -> list[list[int]]:
    """Greedy search with one typical ``mistake`` (a key of ``_GREEDY_MISTAKES``)."""
    model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
    memory = model.encode(src)  # (B, S, D)
    tokens = torch.full((src.shape[0], 1), BOS_ID)  # (B, t)
    done = torch.zeros(src.shape[0], dtype=torch.bool)  # (B,)
    for _ in range(L):
        fed = tokens[:, -1:] if mistake == "last-token-only" else tokens
        logits = model.decode(fed, memory, src)[:, 0 if mistake == "first-position" else -1]
        logits[:, pad] = float("-inf")
        step = logits.argmax(-1).masked_fill(done, pad)  # (B,)
        tokens = torch.cat([tokens, step[:, None]], dim=1)
        done |= step == eos
        if done.all():
            break
    return _sentences(tokens[:, 1:], len(src), pad)


_GREEDY_MISTAKES = {
    "last-token-only": "your decoder is fed only the last token at each step, so it forgets the "
    "prefix: without a cache, feed the whole prefix (BOS and every token so far) and take the "
    "logits of its last position, model.decode(tokens, memory, src)[:, -1].",
    "first-position": "the next token is chosen from the logits of the first position "
    "([:, 0], the one after BOS) at every step: it comes from the last position, "
    "model.decode(tokens, memory, src)[:, -1].",
}


@check("greedy decoding", call="fn(model, src, max_len, bos_id, eos_id)")
def check_greedy_decode(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, max_len, bos_id, eos_id) -> (B, T')``: at each step the most probable
    token that is not PAD; a sentence ends with its EOS (kept) or after ``max_len`` tokens, and
    its row is padded with PAD after its end; BOS is not returned. Tried on four small random
    translators, and with each sentence alone."""
    cases, outputs = _cases(), []
    _expect_deterministic(fn, cases[0])
    for c, case in enumerate(cases):
        model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
        if ("greedy", c) not in _BOOK:  # the book's output, the same on every call
            ours = greedy_decode(model, src, L, BOS_ID, eos)
            _BOOK["greedy", c] = _sentences(ours, len(src), pad)
        want = _BOOK["greedy", c]
        got = _sentences(fn(model, src, L, BOS_ID, eos), len(src), pad)
        outputs.append(got)
        if got == want:
            continue
        words = _common_mistake(got, want, case) or _alone_mistake(fn, got, case)
        for mistake, sentence in _GREEDY_MISTAKES.items():
            if words is None and got == _greedy_variant(case, mistake):
                words = sentence
        raise Wrong(words or _first_difference(got, want, "the book's greedy search", case))
    words = _alone_mistake(fn, outputs[0], cases[0])
    if words:
        raise Wrong(words)
    _expect_eval_mode(fn, cases[0], outputs[0])
    return "tokens, the stop at EOS, max_len, padding, and each sentence alone are right."


def _expect_deterministic(fn: Callable, case: _Case) -> None:
    """Greedy search is a function of the model and the sources: two calls agree."""
    args = (case.src, case.max_len, BOS_ID, case.eos)
    first, second = (fn(copy.deepcopy(case.model), *args) for _ in range(2))
    if isinstance(first, Tensor) and isinstance(second, Tensor):
        if first.shape != second.shape or not torch.equal(first, second):
            raise Wrong.named(MISTAKES, "greedy-not-deterministic")


def _in_training_mode(model: Transformer) -> Transformer:
    """A copy of ``model`` in training mode with dropout 0.5 everywhere, as a model is when it
    comes straight from its training loop."""
    model = copy.deepcopy(model).train()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.5
        elif isinstance(getattr(module, "dropout", None), float):
            module.dropout = 0.5  # attention's dropout on its weights
    return model


def _expect_eval_mode(fn: Callable, case: _Case, want: list) -> None:
    """The search on a model handed over in training mode must equal the search in eval mode."""
    model = _in_training_mode(case.model)
    got = _sentences(fn(model, case.src, case.max_len, BOS_ID, case.eos), len(case.src), case.pad)
    if got != want and model.training:
        raise Wrong.named(MISTAKES, "greedy-no-eval")


def _beam_steps(case: _Case, K: int, alpha: float, mistake: str | None) -> Generator:
    """Beam search as the book's (``mistake=None``, with no cache), or with one typical
    ``mistake`` (a key of ``_BEAM_MISTAKES``), as a generator: it yields the tokens ``(B*K,
    t)`` it feeds the decoder and is sent the logits of their last position ``(B*K, V)``
    (``_beam_variants`` decodes all the variants together); it returns the best hypothesis
    of each sentence."""
    if mistake == "finished-list":
        return (yield from _finished_list_steps(case, K, alpha))
    src, L, eos, pad = case.src, case.max_len, case.eos, case.pad
    B, V, inf = src.shape[0], case.model.config.tgt_vocab_size, float("inf")
    hyps = torch.full((B, K, 1), BOS_ID)  # (B, K, t)
    fed = fed_before = hyps.view(B * K, 1)  # (B*K, t): what each decoder row has read
    score = torch.zeros(B, K)  # log P of each hypothesis
    if mistake != "copies":
        score[:, 1:] = -inf
    length = torch.zeros(B, K)  # tokens, EOS included
    ended = torch.zeros(B, K, dtype=torch.bool)
    a_rank = 0.0 if mistake in ("no-penalty", "penalty-at-end") else alpha
    a_end = 0.0 if mistake in ("no-penalty", "pick-by-log-p") else alpha
    bos = 1.0 if mistake == "bos-in-length" else 0.0

    def lp(n: Tensor, a: float) -> Tensor:
        return n.clamp(min=1) ** a if mistake == "plain-power" else ((5 + n + bos) / 6) ** a

    first = [None] * B  # first-finished: the first hypothesis of each sentence to finish
    only_pad = torch.full((V,), -inf)
    only_pad[pad] = 0.0
    for t in range(1, L + 1):
        logits = yield fed  # (B*K, V)
        if mistake == "raw-logits":
            logp = logits.view(B, K, V).clone()
        elif mistake == "probabilities":
            logp = logits.softmax(-1).view(B, K, V)
        elif mistake == "softmax-over-batch":
            logp = logits.log_softmax(0).view(B, K, V)
        else:
            logp = logits.log_softmax(-1).view(B, K, V)
        pad_cost = logp[..., pad].clone()  # (B, K)
        if mistake != "pad-allowed":
            logp[..., pad] = -inf
        if mistake == "drop-finished":
            logp[..., eos] = -inf
        finished_row = only_pad.expand(B, K, V).clone()
        if mistake == "pad-costs":
            finished_row[..., pad] = pad_cost
        if mistake not in _NO_FINISHED:
            logp = torch.where(ended[..., None], finished_row, logp)
        grows = torch.ones_like(ended) if mistake in (*_NO_FINISHED, "pad-in-length") else ~ended
        new_len = torch.where(grows, torch.tensor(float(t)), length)  # (B, K)
        cand_len = new_len[..., None].expand(B, K, V).clone()  # (B, K, V)
        if mistake == "eos-not-in-length":
            cand_len[..., eos] = torch.where(ended, length, torch.tensor(t - 1.0))
        total = score[..., None] + logp  # (B, K, V)
        ranked = total / lp(cand_len, a_rank)
        if mistake == "topk-over-batch":
            best = ranked.reshape(-1).topk(B * K).indices  # (B*K,): the whole batch's best
            rows, token = best // V, (best % V).view(B, K)
            score, length = total.reshape(-1)[best].view(B, K), cand_len.reshape(-1)[best]
            length, was = length.view(B, K), ended.reshape(-1)[rows].view(B, K)
            prev = hyps.view(B * K, -1)[rows].view(B, K, -1)
        else:
            best = ranked.view(B, K * V).topk(K, dim=-1).indices  # (B, K)
            beam, token = best // V, best % V
            carried = ranked if mistake == "penalty-carried" else total
            score = carried.view(B, K * V).gather(1, best)
            length = cand_len.view(B, K * V).gather(1, best)
            was = ended.gather(1, beam)
            prev = (
                hyps if mistake == "no-parent" else hyps.gather(1, beam[..., None].expand_as(hyps))
            )
        ended = was | (token == eos)
        hyps = torch.cat([prev, token[..., None]], dim=2)
        fed = hyps.view(B * K, -1)
        if mistake == "no-cache-reorder":  # a cache that is not reordered: each row goes on
            fed = torch.cat([fed_before, token.view(B * K, 1)], dim=1)  # with its own history
        fed_before = fed
        if mistake in ("first-finished", "no-finished"):  # each sentence stops by itself
            for b in range(B):
                if first[b] is None and mistake == "first-finished" and ended[b].any():
                    first[b] = hyps[b, int(ended[b].nonzero()[0]), 1:].tolist()
                if first[b] is None and mistake == "no-finished" and ended[b].all():
                    first[b] = hyps[b, int(score[b].argmax()), 1:].tolist()
            if all(f is not None for f in first):
                break
        if ended.all() and mistake != "no-finished-to-max-len":
            break
    final = score if mistake == "penalty-carried" else score / lp(length, a_end)  # (B, K)
    pick = torch.full((B,), K - 1) if mistake == "last-beam" else final.argmax(dim=1)  # (B,)
    out = hyps[torch.arange(B), pick, 1:].tolist()
    if mistake in ("first-finished", "no-finished"):
        out = [f if f is not None else o for f, o in zip(first, out, strict=True)]
    sentences = []
    for s in out:
        if mistake in _NO_FINISHED and eos in s:
            s = s[: s.index(eos) + 1]  # a search with no finished state cuts its output
        while s and s[-1] == pad:
            s.pop()
        sentences.append(s)
    return sentences


def _finished_list_steps(case: _Case, K: int, alpha: float) -> Generator:
    """The search of ``_beam_steps`` as several libraries write it: a hypothesis that ends
    with EOS leaves the beam for a list of finished ones (when it ranks among the best K),
    ``K`` open hypotheses always go on, and a sentence is done with ``K`` finished ones."""
    src, L, eos, pad = case.src, case.max_len, case.eos, case.pad
    B, V = src.shape[0], case.model.config.tgt_vocab_size
    hyps = torch.full((B, K, 1), BOS_ID)  # (B, K, t)
    score = torch.full((B, K), float("-inf"))
    score[:, 0] = 0.0
    finished: list[list] = [[] for _ in range(B)]  # (score / lp, tokens) of each sentence
    for t in range(1, L + 1):
        logits = yield hyps.view(B * K, -1)  # (B*K, V)
        logp = logits.log_softmax(-1).view(B, K, V)
        logp[..., pad] = float("-inf")
        total = (score[..., None] + logp).view(B, K * V)
        best = total.topk(2 * K, dim=-1).indices.tolist()  # (B, 2K): lp(t) is the same for all
        rows, tokens, scores = [], [], []
        for b in range(B):
            kept = []
            for rank, i in enumerate(best[b]):
                if len(kept) == K:
                    break
                if i % V == eos:
                    if rank < K and len(finished[b]) < K:
                        seq = hyps[b, i // V, 1:].tolist() + [eos]
                        finished[b].append((float(total[b, i]) / ((5 + t) / 6) ** alpha, seq))
                else:
                    kept.append(i)
            rows += [b * K + i // V for i in kept]
            tokens += [i % V for i in kept]
            scores += [float(total[b, i]) for i in kept]
        hyps = torch.cat([hyps.view(B * K, -1)[rows], torch.tensor(tokens)[:, None]], dim=1)
        hyps, score = hyps.view(B, K, -1), torch.tensor(scores).view(B, K)
        if all(len(f) >= K for f in finished):
            break
    out = []
    for b in range(B):
        lp = ((5 + hyps.shape[2] - 1) / 6) ** alpha
        open_ = [(float(score[b, k]) / lp, hyps[b, k, 1:].tolist()) for k in range(K)]
        pool = finished[b] if len(finished[b]) >= K else finished[b] + open_
        out.append(max(pool, key=lambda c: c[0])[1])
    return out


@torch.no_grad()
def _beam_variants(case: _Case, K: int, alpha: float, mistakes: list) -> dict:
    """The output of beam search with each of ``mistakes`` (``None``: none) on ``case``: all
    the searches run side by side, one decoder call per step for all of them."""
    model, B = case.model, case.src.shape[0]
    memory = model.encode(case.src).repeat_interleave(K, dim=0)  # (B*K, S, D)
    src_k = case.src.repeat_interleave(K, dim=0)  # (B*K, S)
    running, done = {m: _beam_steps(case, K, alpha, m) for m in mistakes}, {}
    fed = {m: next(steps) for m, steps in running.items()}  # (B*K, t) each, t = 1
    while running:
        n = len(running)
        logits = model.decode(torch.cat(list(fed.values())), memory.repeat(n, 1, 1),
                              src_k.repeat(n, 1))[:, -1]  # (n*B*K, V)  # fmt: skip
        for m, rows in zip(list(running), logits.split(B * K), strict=True):
            try:
                fed[m] = running[m].send(rows)
            except StopIteration as stop:
                done[m] = stop.value
                del running[m], fed[m]
    return done


# mistakes that give the same output as another one on every probe, or that are one mistake
# written another way: the sentence of the mistake they stand for is said
_ALIASES = {"pad-in-length": "no-penalty", "no-finished-to-max-len": "no-finished"}
_NO_FINISHED = ("no-finished", "no-finished-to-max-len")  # the loop stops: by sentence, at L
_VARIANTS: dict[int, dict] = {}  # the outputs of the mistakes of _BEAM_MISTAKES on each probe
_LP = "lp(Y) = ((5 + |Y|) / 6) ** length_penalty"
_BEAM_MISTAKES = {
    "copies": "your output is exactly greedy search's: the beams are copies of one hypothesis. "
    "At the first step there is only BOS: let one hypothesis grow from it (the others start at "
    "log-probability -inf), so that the first step keeps beam_size different tokens.",
    "no-penalty": "the length penalty is not applied: your output is what ranking by log P alone "
    f"gives (length_penalty = 0). Rank each hypothesis by log P(Y) / lp(Y), {_LP}, |Y| its "
    "length with EOS. If you do divide by lp, a finished hypothesis's length must stop growing "
    "(the PAD after its EOS does not count): when every hypothesis has the same length, the "
    "penalty changes nothing.",
    "penalty-at-end": "the length penalty is applied only to choose among the final "
    "hypotheses: during the search yours ranks by log P alone, so short hypotheses push the "
    "long ones out of the beam early. Rank every step's candidates by log P(Y) / lp(Y).",
    "pick-by-log-p": "the search ranks by log P / lp, but the final choice takes the hypothesis "
    "with the highest log P: the best hypothesis is the one with the highest log P(Y) / lp(Y), "
    "the same score as during the search.",
    "penalty-carried": "the length penalty compounds: yours keeps log P / lp as the running "
    "score and adds the next log-probability to it, dividing again at every step. Keep each "
    "hypothesis's log P (a plain sum of log-probabilities) and divide by lp(Y) only to rank.",
    "bos-in-length": "the length penalty counts BOS: |Y| in lp(Y) is the number of generated "
    f"tokens, EOS included and BOS not ({_LP}).",
    "eos-not-in-length": "the length penalty does not count EOS: the |Y| of a hypothesis that "
    f"ends with EOS includes its EOS ({_LP}).",
    "plain-power": f"the length penalty is |Y| ** length_penalty; the book's (GNMT's) is {_LP}.",
    "raw-logits": "yours adds up raw logits: log P(Y) is the sum of log-probabilities, "
    "logits.log_softmax(-1) at each step (the logits of two steps are not on one scale).",
    "probabilities": "yours adds up probabilities (softmax): log P(Y) is the sum of "
    "log-probabilities, logits.log_softmax(-1) at each step.",
    "softmax-over-batch": "the log-softmax runs over the wrong axis (the batch of hypotheses): "
    "each row's next-token distribution is over the vocabulary, logits.log_softmax(dim=-1).",
    "pad-allowed": "padding is not a word: give PAD the score -inf before choosing tokens; PAD "
    "only extends a finished hypothesis.",
    "drop-finished": "a finished hypothesis must stay in the beam and compete by its score, "
    "not be dropped (or EOS be forbidden).",
    "pad-costs": "a finished hypothesis pays for its padding: yours adds log P(PAD) each step, "
    "so finished hypotheses sink below open ones. Extend a finished hypothesis by PAD at no "
    "cost (log P + 0) and no change of length.",
    "no-finished": "your hypotheses go on growing after their EOS (no finished state), and the "
    "output is cut at the first EOS: a hypothesis that has produced EOS is finished. Keep it "
    "in the beam with its score and length frozen (extend it only by PAD, at no cost), so "
    "that it competes with the open ones as the sentence it is.",
    "topk-over-batch": "the best hypotheses are chosen over the whole batch, so one sentence's "
    "hypotheses take the places of another's: choose the beam_size best of each sentence's "
    "beam_size * V candidates, scores.view(B, K * V).topk(K, dim=-1).",
    "no-parent": "each new token is appended to the hypothesis in its own row, not to the one "
    "it extends: after topk, take the hypotheses (and their scores, lengths and finished "
    "flags) of the chosen beams, best // V, then append the tokens, best % V.",
    "no-cache-reorder": "the key/value cache does not follow the hypotheses: after choosing the "
    "best candidates, cache.reorder(rows) so that each row's cache holds the history of the "
    "hypothesis that row now continues.",
    "last-beam": "yours returns the last of the beam_size hypotheses, the worst ranked: return "
    "the best, the one with the highest log P(Y) / lp(Y).",
    "finished-list": "your finished hypotheses leave the beam for a list of their own while "
    "beam_size open ones go on (as several libraries do): in this book a finished hypothesis "
    "keeps its place in the beam and competes there, extended by PAD at no cost, and a "
    "sentence is done when all its beam_size hypotheses are finished.",
    "first-finished": "a sentence stops at its first finished hypothesis: the others go on and "
    "may end better. Stop when all of a sentence's hypotheses are finished (or at max_len), "
    "then return the best.",
}


def _beam_mistake(fn: Callable, got: list, want: list, probe: int, cases: list) -> str:
    """The mistake of a beam search that gave ``got`` on ``_BEAM_PROBES[probe]``: the variant
    that gives the reader's output on every probe, else a description of the first difference."""
    case = cases[_BEAM_PROBES[probe][0]]
    words = _common_mistake(got, want, case)
    if words:
        return words
    candidates = [*_BEAM_MISTAKES, *_ALIASES]  # the mistakes that give the reader's output
    for i in [probe] + [i for i in range(len(_BEAM_PROBES)) if i != probe]:
        c, K, alpha = _BEAM_PROBES[i]
        if i == probe:
            theirs = got
        else:  # the reader's code first: a crash is theirs
            out = fn(cases[c].model, cases[c].src, K, cases[c].max_len, bos_id=BOS_ID,
                     eos_id=cases[c].eos, length_penalty=alpha)  # fmt: skip
            theirs = _sentences(out, len(cases[c].src), cases[c].pad)
        known = _VARIANTS.setdefault(i, {})  # the same on every call: computed once
        missing = [m for m in candidates if m not in known]
        if missing:  # on a fresh copy of the case: the reader's code has run on cases[c]
            known |= _beam_variants(_decoding_case(*_SEEDS[c]), K, alpha, missing)
        candidates = [m for m in candidates if known[m] == theirs]
        if not candidates:
            break
    if candidates:
        return _BEAM_MISTAKES[_ALIASES.get(candidates[0], candidates[0])]
    c, K, alpha = _BEAM_PROBES[probe]
    words = _alone_mistake(fn, got, case, beam_size=K, length_penalty=alpha)
    if words:
        return words
    if K == 1:
        return "with beam_size = 1 beam search is greedy search, but " + _first_difference(
            got, want, "greedy search", case
        )
    return _first_difference(got, want, f"the book's beam search with beam_size = {K}", case)


@check(
    "beam search", call="fn(model, src, beam_size, max_len, bos_id=1, eos_id=2, length_penalty=0.6)"
)
def check_beam_search(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, beam_size, max_len, bos_id=..., eos_id=..., length_penalty=0.6) ->
    (B, T')``: the ``beam_size`` best hypotheses of each sentence, ranked by
    ``log P(Y) / ((5 + |Y|) / 6) ** length_penalty``; a hypothesis that has produced EOS is
    finished and keeps competing; the best one, without BOS, padded after its EOS. Tried on
    four small random translators with beam sizes 1 to 4 and length penalties 0.6 to 1.5, and
    with each sentence alone; a wrong output is compared with the usual mistakes' outputs."""
    cases, outputs = _cases(), []
    for i, (c, K, alpha) in enumerate(_BEAM_PROBES):
        case = cases[c]
        model, src, L, eos = case.model, case.src, case.max_len, case.eos
        out = fn(model, src, K, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
        got = _sentences(out, len(src), case.pad)
        if ("beam", i) not in _BOOK:  # the book's output, the same on every call
            ours = beam_search(model, src, K, L, bos_id=BOS_ID, eos_id=eos, length_penalty=alpha)
            _BOOK["beam", i] = _sentences(ours, len(src), case.pad)
        want = _BOOK["beam", i]
        outputs.append(got)
        if got != want:
            raise Wrong(_beam_mistake(fn, got, want, i, cases))
    c, K, alpha = _BEAM_PROBES[0]
    words = _alone_mistake(fn, outputs[0], cases[c], beam_size=K, length_penalty=alpha)
    if words:
        raise Wrong(words)
    return (  # the words chapter 15's stored run shows
        "beam_size = 1 is greedy search; beam_size = 3 with the length penalty, "
        "finished hypotheses and padding is right."
    )


# --- the key/value cache ------------------------------------------------------------------------

_AXES = {0: "batch", 1: "heads", 2: "positions", 3: "feature"}


def _history_mistake(name: str, got: object, parts: list[Tensor]) -> str:
    """Why ``got`` is not ``parts`` joined along the positions axis (dim 2)."""
    want = torch.cat(parts, dim=2)
    shapes = " then ".join(str(tuple(p.shape)) for p in parts)
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if len(parts) > 1 and close(got, parts[-1]):
        return (f"append_self returns only the new {name}, not the history: after appending "
                f"{shapes} it must return all of them, {tuple(want.shape)} -- attention at "
                "step t reads the keys and values of every position 0..t.")  # fmt: skip
    for d in (0, 1, 3):
        if close(got, torch.cat(parts, dim=d)):
            return (f"the {name} are appended along the {_AXES[d]} axis (dim {d}): after "
                    f"appending {shapes} yours are {tuple(got.shape)}; new positions go on "
                    f"dim 2 of (B, H, T, Dh), giving {tuple(want.shape)}.")  # fmt: skip
    return (f"after appending {shapes} the {name} returned should be all of them in order "
            f"along dim 2, {tuple(want.shape)}; yours differ.")  # fmt: skip


_NAMES = ("keys", "values")


def _append(cache, new: tuple, pieces: tuple, explain=_history_mistake) -> None:
    """Call the reader's ``append_self(k, v)``: each of its two results must be the pieces so
    far and the new one joined along the positions; otherwise ``explain`` says why not."""
    result = cache.append_self(*new)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Wrong("append_self should return a pair (all keys, all values) so far.")
    for name, got, parts, latest in zip(_NAMES, result, pieces, new, strict=True):
        parts.append(latest)
        if not (isinstance(got, Tensor) and close(got, torch.cat(parts, dim=2))):
            raise Wrong(explain(name, got, parts))


def _reorder_mistake(name: str, got: object, parts: list, before: dict, index: Tensor) -> str:
    """Why the {name} returned by the first ``append_self`` after ``reorder(index)`` are
    ``got``; ``before[name]`` are all of them before the reorder, ``parts[-1]`` the new ones."""
    order, old, new = index.tolist(), before[name], parts[-1]
    if not isinstance(got, Tensor):
        return f"append_self should return tensors, got {type(got).__name__} for the {name}."
    if close(got, torch.cat([old, new], dim=2)):
        return (f"reorder({order}) left the cached {name} as they were: row 0 must now hold "
                f"what row {order[0]} held. In beam search a hypothesis that continues another "
                "one would attend to the wrong history, and its next step would differ from "
                "recomputing its prefix.")  # fmt: skip
    for d in (1, 2):
        if close(got, torch.cat([old.index_select(d, index), new], dim=2)):
            return (f"reorder picks the {name} along the {_AXES[d]} axis (dim {d}), but it "
                    f"must keep batch rows, dim 0 of (B, H, T, Dh): after reorder({order}) row "
                    f"0 holds what row {order[0]} held.")  # fmt: skip
    return f"after reorder({order}) and one more append_self the {name} are not the right rows."


class _InDecoder:
    """The reader's cache as one decoder block's ``LayerCache``; the projected memory of
    cross-attention, which the reader does not write, is kept here."""

    def __init__(self, theirs) -> None:
        self.theirs = theirs
        self.cross_k: Tensor | None = None
        self.cross_v: Tensor | None = None

    def append_self(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        return self.theirs.append_self(k, v)

    def reorder(self, index: Tensor, cross: bool = True) -> None:
        self.theirs.reorder(index)
        if cross and self.cross_k is not None:
            self.cross_k = self.cross_k.index_select(0, index)
            self.cross_v = self.cross_v.index_select(0, index)


def _decoder_mistake(cls: type) -> str | None:
    """Decode with the reader's cache in the book's decoder, one token a step, then reorder
    the rows; compare every step's logits with recomputing the whole prefix."""
    case = _decoding_case()
    model, src = case.model, case.src
    B, V = src.shape[0], model.config.tgt_vocab_size
    g = torch.Generator().manual_seed(4)
    tokens = torch.randint(3, V, (B, 8), generator=g)  # (B, T): what the decoder is fed
    tokens[:, 0] = BOS_ID
    index, when = torch.arange(B).flip(0) // 2 * 2, 4  # (B,): rows repeat, as in beam search
    with torch.no_grad():
        memory = model.encode(src)  # (B, S, D)
        cache = KVCache(layers=[_InDecoder(cls()) for _ in model.decoder.layers])
        for t in range(tokens.shape[1]):
            if t == when:  # reorder, as beam search does: rows take another row's history
                cache.reorder(index)
                tokens, memory, src = tokens[index], memory[index], src[index]
            step = model.decode(tokens[:, t : t + 1], memory, src, cache)[:, -1]  # (B, V)
            again = model.decode(tokens[:, : t + 1], memory, src)[:, -1]  # (B, V)
            if not close(step, again, 1e-4):
                moved = f", after cache.reorder({index.tolist()}) at step {when}" * (t >= when)
                return (f"in the book's decoder with your cache, the logits of step {t} (the "
                        f"token at position {t}) differ from recomputing the whole prefix by up "
                        f"to {float((step - again).abs().max()):.3g}{moved}: the cache must keep "
                        "the keys and values of every position for the whole output.")  # fmt: skip
    return None


@check("key/value cache", build="cls()", call="",
       methods=("cache.append_self(k, v)", "cache.reorder(index)"))  # fmt: skip
def check_kv_cache(cls: type) -> Verdict:
    """``cls()``: an empty cache of one decoder block's self-attention keys and values.
    ``cache.append_self(k, v)`` takes the new positions' keys and values ``(B, H, T_new, Dh)``
    and returns all of them so far, ``(B, H, T_past + T_new, Dh)`` each; ``cache.reorder(index)``
    keeps batch rows ``index`` (a 1-D long tensor, rows may repeat), as beam search needs."""
    B, H, Dh = 3, 3, 4  # B = H: a reorder along the wrong axis still runs

    def new(T_new: int, seed: int) -> tuple[Tensor, Tensor]:
        """New keys and values ``(B, H, T_new, Dh)`` each, float32 as in the model."""
        k, v = randn(2, B, H, T_new, Dh, seed=seed).float()
        return k, v

    first, second = cls(), cls()  # two blocks' caches: each has its own history
    first.append_self(*new(1, 40))
    keys = second.append_self(*new(1, 41))
    if isinstance(keys, tuple) and isinstance(keys[0], Tensor) and keys[0].shape[2] not in (1, 2):
        raise Wrong.named(MISTAKES, "kv-cache-whole-buffer", got=keys[0].shape[2])
    if isinstance(keys, tuple) and isinstance(keys[0], Tensor) and keys[0].shape[2] == 2:
        raise Wrong(
            "two caches share one history: a new cache's first append_self returned "
            f"{keys[0].shape[2]} positions, with the keys another cache was given. Make "
            "the lists or tensors in __init__ (self.k = None), not in the class body or as "
            "a default argument, which every instance shares."
        )
    cache, pieces = cls(), ([], [])
    for step, T_new in enumerate((1, 1, 2)):  # 4 positions: (B, H, 4, Dh)
        _append(cache, new(T_new, step), pieces)
    index = torch.tensor([2, 0, 0])  # beam 2 goes on in row 0, beam 0 in rows 1 and 2
    cache.reorder(index)
    before = {name: torch.cat(parts, dim=2) for name, parts in zip(_NAMES, pieces, strict=True)}
    pieces = tuple([old.index_select(0, index)] for old in before.values())
    _append(cache, new(1, 30), pieces, partial(_reorder_mistake, before=before, index=index))
    words = _decoder_mistake(cls)
    if words:
        raise Wrong(words)
    return (
        "append_self keeps every position's keys and values, reorder follows the batch "
        "rows, and the book's decoder with your cache gives the logits of recomputing."
    )
