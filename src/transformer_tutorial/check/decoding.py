"""Decoding checks: greedy search (chapter 15), and the small translators and sources on which
every decoding check (greedy search, beam search, the key/value cache) runs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from ..decoding import greedy_decode
from ..sequences import BOS_ID, UNK_ID
from ..transformer import (
    Transformer,
    TransformerConfig,
)
from .engine import check
from .verdict import Verdict, Wrong, say

# --- the cases every decoding check runs on ------------------------------------------------------------


@dataclass
class Case:
    """A small random translator and sources on which decoding shows the usual mistakes."""

    model: Transformer
    src: Tensor  # (B, S) source ids, four of the six sentences padded
    max_len: int  # tokens to generate at most
    eos: int  # a token the model produces: sentences end at different steps, some never

    @property
    def pad(self) -> int:
        return self.model.config.pad_id


MESSAGES = {
    "decode-shape": "return token ids of shape (B, T') = ({rows}, T'), not {got}.",
    "decode-float": "return token ids as integers (torch.long), not {dtype}.",
    "first-difference": "sentence {i} differs from {what} from step {t} on: {right} expected, "
    "yours {s} (src {shape}, max_len = {max_len}, EOS = {eos}).",
    "output-differs": "the output differs from {what}.",
    "book-greedy": "the book's greedy search",
    "alone-differs": "sentence {i} comes out differently in the batch ({batch}) than alone "
    "({alone}): each sentence must be decoded as if it were alone.",
}

MISTAKES = {
    "greedy-not-deterministic": "two calls on the same model and sources gave different tokens: "
    "greedy search takes the most probable token (argmax) at each step, so the same call gives "
    "the same sentence. Sampling from the softmax (that belongs to chapter 18), or state kept "
    "from one call to the next (a global, a default argument that is a list), does this.",
    "greedy-not-argmax": "sentence {b}'s token at step {t} is {token}, the model's choice number "
    "{rank} after BOS and your own tokens before it, where greedy search takes the most probable "
    "one, {best}: the argmax over the vocabulary of the last position's logits, PAD excluded. A "
    "sample or another rank does this; so do an index shifted by a slice (the argmax of logits[:, "
    "1:] without adding the 1 back), scores normalised over another axis (a softmax over the "
    "batch), a decoder fed something other than BOS and the tokens so far, or a decoder given "
    "another src than the sentences' own (decode uses src for its padding mask: a src without "
    "its PAD, such as torch.ones_like(src), lets the source's padding be attended to).",
    "greedy-wrong-start": "your search starts from {token} (id {id}) instead of BOS: with that "
    "first input every token is the most probable one, so only the start is wrong. The "
    "decoder's first input is bos_id ({bos}), e.g. torch.full((B, 1), bos_id).",
    "greedy-no-eval": "handed a model in training mode, your search keeps dropout on: the "
    "tokens change from call to call. Call model.eval() before decoding (the book's "
    "greedy_decode does), so that every dropout layer lets everything through.",
    "greedy-pad-columns": "every token is right, but your output is {width} columns wide where "
    "the longest sentence has {longest} tokens (EOS included): its last {extra} column(s) hold "
    "only PAD. T' is the longest sentence's length: stop the loop once every sentence has "
    "ended, or cut the columns after it.",
    # the mistakes of greedy and beam search alike (common_mistake, alone_mistake)
    "greedy-with-bos": "your output starts with BOS (id {bos}): return only the generated "
    "tokens, (B, T') without BOS.",
    "greedy-pad-logit-finite": "right while some logits are above 0, but when every logit is "
    "negative (here the output layer's bias is -100: the same argmax) your search picks PAD (id "
    "{pad}) as a word: excluding PAD with a finite logit, such as 0, lets it win once the other "
    "logits are lower. Give it -inf: logits[:, pad] = float('-inf').",
    "greedy-pad-as-word": "sentence {i} has PAD (id {pad}) at step {t}, inside the sentence: "
    "padding is not a word. Either PAD was not given the score -inf before choosing a token (on "
    "the vocabulary axis of the last position's logits: logits[:, -1, pad] or logits[..., pad]; "
    "-inf on a whole position makes argmax pick id 0), or the ids were read wrong (in beam "
    "search, from a flat top-k index over (K, V): beam = i // V, token = i % V). PAD only fills a "
    "row after its EOS.",
    "greedy-no-stop": "sentence {i} goes on after its EOS at step {t} (then {after}...): a "
    "sentence (a hypothesis) that has produced EOS (id {eos}) is finished; only PAD may follow.",
    "greedy-eos-dropped": "your sentences end without their EOS (id {eos}): sentence {i} should "
    "be {want}, yours is {got}. EOS is part of the output: keep it, and pad after it.",
    "greedy-off-by-one": "off by one: sentence {i} never produces EOS, so it stops after "
    "max_len = {max_len} tokens; yours has {n}.",
    "greedy-past-max-len": "sentence {i} has {n} tokens, more than max_len = {max_len}: "
    "max_len is the most tokens a sentence may have, whatever else stops the loop. Run at most "
    "max_len steps.",
    "greedy-first-stop": "sentence {i} comes out differently in the batch ({batch}) than alone "
    "({alone}): each sentence must be decoded as if it were alone. Does your loop stop when the "
    "first sentence ends, instead of when every sentence has?",
    # greedy search's own (_greedy_variant)
    "greedy-last-token-only": "your decoder is fed only the last token at each step, so it "
    "forgets the prefix: without a cache, feed the whole prefix (BOS and every token so far) "
    "and take the logits of its last position, model.decode(tokens, memory, src)[:, -1].",
    "greedy-first-position": "the next token is chosen from the logits of the first position "
    "([:, 0], the one after BOS) at every step: it comes from the last position, "
    "model.decode(tokens, memory, src)[:, -1].",
}

BOOK_OUTPUTS: dict[tuple[str, int], list] = {}  # the book's searches' outputs on the cases
_MADE: dict[tuple[int, int], Case] = {}  # each case as first made, copied for every check


def decoding_case(seed: int = 3, src_seed: int = 1) -> Case:
    """A copy for each check, so that nothing a reader's code does to it carries over."""
    if (seed, src_seed) not in _MADE:
        with torch.random.fork_rng(devices=[]):  # the reader's random numbers stay as they were
            _MADE[seed, src_seed] = _make_case(seed, src_seed)
    return copy.deepcopy(_MADE[seed, src_seed])


def _make_case(seed: int, src_seed: int) -> Case:
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
    return Case(model, src, max_len, eos)


# Four random translators (seeds of the weights and of the sources), chosen so that every beam
# search mistake below gives another output than the right search on at least one of them, and
# no two mistakes give the same outputs on all of them (but the _ALIASES): one random model
# misses many (a search without a finished state is right on 11 of 30 models of this size; a
# length penalty that counts BOS on 28 of 30). tests/test_check.py checks that this still holds.
SEEDS = ((3, 1), (2, 102), (4, 104), (5, 105))
# the beam searches tried: (translator, beam_size, length_penalty); beam_size 1 is greedy search
BEAM_PROBES = ((0, 3, 0.6), (1, 2, 1.5), (2, 3, 0.6), (3, 4, 1.0), (0, 1, 0.6), (1, 3, 2.0),
               (2, 3, 2.0))  # fmt: skip


def decoding_cases() -> list[Case]:
    return [decoding_case(*seeds) for seeds in SEEDS]


def sentences(result: object, rows: int, pad: int) -> list[list[int]]:
    """Token ids ``(rows, T')`` as one list per sentence, trailing padding dropped."""
    if not (isinstance(result, Tensor) and result.dim() == 2 and result.shape[0] == rows):
        got = tuple(result.shape) if isinstance(result, Tensor) else type(result).__name__
        raise Wrong.differs(MESSAGES, "decode-shape", rows=rows, got=got)
    if result.is_floating_point():
        raise Wrong.differs(MESSAGES, "decode-float", dtype=result.dtype)
    sentences = result.tolist()
    for tokens in sentences:
        while tokens and tokens[-1] == pad:
            tokens.pop()
    return sentences


def common_mistake(got: list, want: list, case: Case) -> Wrong | None:
    """A mistake of greedy and beam search alike, seen in the sentences ``got``."""
    pad, eos, L = case.pad, case.eos, case.max_len
    if (
        len(got) == len(want)
        and all(  # BOS first, then the right tokens (cut at max_len)
            s[:1] == [BOS_ID] and s[1:] in (w, w[: L - 1]) for s, w in zip(got, want, strict=True)
        )
    ):
        return Wrong.named(MISTAKES, "greedy-with-bos", bos=BOS_ID)
    for i, s in enumerate(got):
        if pad in s and eos not in s[: s.index(pad)]:  # after an EOS: going on (below)
            return Wrong.named(MISTAKES, "greedy-pad-as-word", i=i, pad=pad, t=s.index(pad))
    for i, s in enumerate(got):
        if eos in s[:-1] and want[i] == s[: s.index(eos) + 1]:  # right up to EOS, then more
            t = s.index(eos)
            return Wrong.named(MISTAKES, "greedy-no-stop", i=i, t=t, after=s[t + 1 : t + 4],
                               eos=eos)  # fmt: skip
    cut = [s[:-1] if s[-1:] == [eos] else s for s in want]
    if got == cut and cut != want:
        i = next(i for i, s in enumerate(want) if s[-1:] == [eos])
        return Wrong.named(MISTAKES, "greedy-eos-dropped", eos=eos, i=i, want=want[i], got=got[i])
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if eos not in right + s and abs(len(s) - L) == 1 and s[: L - 1] == right[: L - 1]:
            return Wrong.named(MISTAKES, "greedy-off-by-one", i=i, max_len=L, n=len(s))
    for i, s in enumerate(got):
        if len(s) > L:
            return Wrong.named(MISTAKES, "greedy-past-max-len", i=i, max_len=L, n=len(s))
    return None


def first_difference(got: list, want: list, what: str, case: Case) -> Wrong:
    """The first sentence where ``got`` differs from ``want``, the output of ``what`` (a
    message, said)."""
    for i, (s, right) in enumerate(zip(got, want, strict=True)):
        if s != right:
            pairs = enumerate(zip(s, right, strict=False))
            t = next((t for t, (a, b) in pairs if a != b), min(len(s), len(right)))
            return Wrong.differs(MESSAGES, "first-difference", i=i, what=what, t=t, right=right,
                                 s=s, shape=tuple(case.src.shape), max_len=case.max_len,
                                 eos=case.eos)  # fmt: skip
    return Wrong.differs(MESSAGES, "output-differs", what=what)


def alone_mistake(fn: Callable, got: list, case: Case, **kwargs) -> Wrong | None:
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
        alone = sentences(out, 1, pad)[0]
        if alone != got[i]:
            if len(got[i]) < len(alone) and eos not in got[i]:  # stopped early
                return Wrong.named(MISTAKES, "greedy-first-stop", i=i, batch=got[i], alone=alone)
            return Wrong.differs(MESSAGES, "alone-differs", i=i, batch=got[i], alone=alone)
    return None


@torch.no_grad()
def _greedy_variant(case: Case, mistake: str | None, start: int = BOS_ID) -> list[list[int]]:
    """Greedy search with one typical ``mistake`` (one of ``_GREEDY_MISTAKES``), or started
    from the token ``start``."""
    model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
    memory = model.encode(src)  # (B, S, D)
    tokens = torch.full((src.shape[0], 1), start)  # (B, t)
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
    return sentences(tokens[:, 1:], len(src), pad)


_GREEDY_MISTAKES = ("last-token-only", "first-position")  # greedy-<mistake> of MISTAKES


def _wrong_start(got: list, case: Case) -> Wrong | None:
    """Name a search that is right but for its first input: another special token than BOS."""
    for token, start in (("PAD", case.pad), ("<unk>", UNK_ID), ("eos_id", case.eos)):
        if got == _greedy_variant(case, None, start):
            return Wrong.named(MISTAKES, "greedy-wrong-start", token=token, id=start, bos=BOS_ID)
    return None


@check("greedy decoding", call="fn(model, src, max_len, bos_id, eos_id)")
def check_greedy_decode(fn: Callable[..., Tensor]) -> Verdict:
    """``fn(model, src, max_len, bos_id, eos_id) -> (B, T')``: at each step the most probable
    token that is not PAD; a sentence ends with its EOS (kept) or after ``max_len`` tokens, and
    its row is padded with PAD after its end; BOS is not returned; ``T'`` is the longest
    sentence's length. Tried on four small random translators, and with each sentence alone."""
    cases, outputs, widths = decoding_cases(), [], []
    _expect_deterministic(fn, cases[0])
    for c, case in enumerate(cases):
        model, src, L, eos, pad = case.model, case.src, case.max_len, case.eos, case.pad
        if ("greedy", c) not in BOOK_OUTPUTS:  # the book's output, the same on every call
            ours = greedy_decode(model, src, L, BOS_ID, eos)
            BOOK_OUTPUTS["greedy", c] = sentences(ours, len(src), pad)
        want = BOOK_OUTPUTS["greedy", c]
        result = fn(model, src, L, BOS_ID, eos)
        got = sentences(result, len(src), pad)
        outputs.append(got)
        if got == want:
            widths.append((result.shape[1], max(map(len, got))))
            continue
        wrong = common_mistake(got, want, case)
        for mistake in _GREEDY_MISTAKES:
            if wrong is None and got == _greedy_variant(case, mistake):
                wrong = Wrong.named(MISTAKES, f"greedy-{mistake}")
        wrong = wrong or _wrong_start(got, case)
        if wrong is None:
            _expect_argmax(got, case)
            wrong = alone_mistake(fn, got, case)
        what = say(MESSAGES, "book-greedy")
        raise wrong if wrong is not None else first_difference(got, want, what, case)
    wrong = alone_mistake(fn, outputs[0], cases[0])
    if wrong is not None:
        raise wrong
    _expect_eval_mode(fn, cases[0], outputs[0])
    _expect_pad_excluded_when_all_negative(fn, outputs[0])
    for width, longest in widths:
        if width > longest:
            raise Wrong.named(MISTAKES, "greedy-pad-columns", width=width, longest=longest,
                              extra=width - longest)  # fmt: skip
    return "tokens, the stop at EOS, max_len, padding, and each sentence alone are right."


@torch.no_grad()
def _expect_argmax(got: list, case: Case) -> None:
    """Each of the reader's tokens must be the most probable one (PAD aside) after the reader's
    own prefix; name the first that is not."""
    model, pad = case.model.eval(), case.pad
    memory = model.encode(case.src)
    for b, tokens in enumerate(got):
        prefix = torch.tensor([[BOS_ID, *tokens]])  # (1, 1 + t)
        logits = model.decode(prefix, memory[b : b + 1], case.src[b : b + 1])[0, :-1]  # (t, V)
        logits[:, pad] = -float("inf")
        for t, token in enumerate(tokens):
            if token != pad and logits[t, token] < logits[t].max():
                rank = int((logits[t] > logits[t, token]).sum()) + 1
                raise Wrong.named(MISTAKES, "greedy-not-argmax", b=b, t=t, token=token,
                                  rank=rank, best=int(logits[t].argmax()))  # fmt: skip
            if token == case.eos:
                break


def _expect_deterministic(fn: Callable, case: Case) -> None:
    """Greedy search is a function of the model and the sources: two calls agree."""
    args = (case.src, case.max_len, BOS_ID, case.eos)
    first, second = (fn(copy.deepcopy(case.model), *args) for _ in range(2))
    if isinstance(first, Tensor) and isinstance(second, Tensor):
        if first.shape != second.shape or not torch.equal(first, second):
            raise Wrong.named(MISTAKES, "greedy-not-deterministic")


def in_training_mode(model: Transformer) -> Transformer:
    """A copy of ``model`` in training mode with dropout 0.5 everywhere, as a model is when it
    comes straight from its training loop."""
    model = copy.deepcopy(model).train()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.5
        elif isinstance(getattr(module, "dropout", None), float):
            module.dropout = 0.5  # attention's dropout on its weights
    return model


@torch.no_grad()
def _expect_pad_excluded_when_all_negative(fn: Callable, want: list) -> None:
    """Every logit far below 0 (the output layer given a bias of -100, which leaves the argmax
    as it was): PAD must still never be chosen, so its logit must be -inf, not just 0."""
    case = decoding_cases()[0]
    old = case.model.output
    case.model.output = torch.nn.Linear(old.in_features, old.out_features)
    case.model.output.weight.copy_(old.weight)
    case.model.output.bias.fill_(-100.0)
    result = fn(case.model, case.src, case.max_len, BOS_ID, case.eos)
    got = sentences(result, len(case.src), case.pad)
    if got != want:
        first = [row[:1] for row in result.tolist()]  # a PAD chosen first leaves an empty row
        if any(case.pad in s for s in got) or [case.pad] in first:
            raise Wrong.named(MISTAKES, "greedy-pad-logit-finite", pad=case.pad)
        raise first_difference(got, want, say(MESSAGES, "book-greedy"), case)


def _expect_eval_mode(fn: Callable, case: Case, want: list) -> None:
    """The search on a model handed over in training mode must equal the search in eval mode."""
    model = in_training_mode(case.model)
    got = sentences(fn(model, case.src, case.max_len, BOS_ID, case.eos), len(case.src), case.pad)
    if got != want and model.training:
        raise Wrong.named(MISTAKES, "greedy-no-eval")
