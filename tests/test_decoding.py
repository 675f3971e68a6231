"""Tests of decoding (chapter 15): cached == uncached, greedy == beam search with one beam, beam
outputs end in EOS or at max_len with consistent scores, the length penalty, BLEU, and errors."""

from __future__ import annotations

import pytest
import sacrebleu
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.decoding import (
    beam_search,
    corpus_bleu,
    gnmt_length_penalty,
    greedy_decode,
    output_limit,
    translate,
)
from transformer_tutorial.sequences import pad_sequences
from transformer_tutorial.tokens import encode
from transformer_tutorial.transformer import Transformer, TransformerConfig

PAD, BOS, EOS = 0, 2, 3


pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.py


def make_model(seed: int = 0, norm_first: bool = False) -> Transformer:
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=17,
        tgt_vocab_size=19,
        d_model=16,
        num_heads=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=32,
        dropout=0.1,  # decoding must switch dropout off by itself
        max_len=20,
        tie_output=False,
        norm_first=norm_first,
    )
    model = Transformer(config)
    with torch.no_grad():  # sharper output distributions than the initial ones, so beams differ
        model.output.weight.mul_(4.0)
    return model


def sources(seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, 17, (4, 6), generator=g)
    src[1, 3:] = PAD
    src[3, 5:] = PAD
    return src


def an_eos_the_model_produces(model: Transformer, src: torch.Tensor, step: int) -> int:
    """A token that greedy search really emits, so that some sentences finish early."""
    tokens = greedy_decode(model, src, 10, BOS, None)
    return int(tokens[0, step])


def teacher_forced_log_prob(model, src, out, eos_id):
    """log P(out | src) summed up to and including the first EOS, and that length."""
    tgt_in = torch.cat([torch.full((out.shape[0], 1), BOS), out[:, :-1]], dim=1)
    with torch.no_grad():
        logp = model.eval()(src, tgt_in).log_softmax(-1).gather(2, out[..., None])[..., 0]
    is_eos = out == eos_id
    ended = is_eos.any(dim=1)
    lengths = torch.where(ended, is_eos.int().argmax(dim=1) + 1, out.shape[1])
    keep = torch.arange(out.shape[1])[None, :] < lengths[:, None]
    return (logp * keep).sum(dim=1), lengths


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 1000), step=st.integers(0, 6), norm_first=st.booleans())
def test_cached_greedy_equals_recomputing_the_prefix(seed, step, norm_first):
    model = make_model(seed, norm_first)
    src = sources(seed)
    eos = an_eos_the_model_produces(model, src, step)
    fast, fast_logits = greedy_decode(model, src, 12, BOS, eos, use_cache=True, return_logits=True)
    slow, slow_logits = greedy_decode(model, src, 12, BOS, eos, use_cache=False, return_logits=True)
    assert torch.equal(fast, slow)
    torch.testing.assert_close(fast_logits, slow_logits, atol=1e-5, rtol=1e-5)
    assert model.training, "decoding restores the mode it found"


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 1000), step=st.integers(0, 6))
def test_greedy_equals_beam_search_with_one_beam(seed, step):
    model = make_model(seed)
    src = sources(seed)
    eos = an_eos_the_model_produces(model, src, step)
    assert torch.equal(
        greedy_decode(model, src, 12, BOS, eos),
        beam_search(model, src, 1, 12, bos_id=BOS, eos_id=eos),
    )


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 1000),
    step=st.integers(0, 6),
    beam_size=st.integers(2, 5),
    alpha=st.sampled_from([0.0, 0.6, 1.0]),
)
def test_beam_outputs_end_in_eos_or_max_len_and_scores_are_consistent(seed, step, beam_size, alpha):
    model = make_model(seed)
    src = sources(seed)
    eos = an_eos_the_model_produces(model, src, step)
    max_len = 12
    out, scores = beam_search(
        model,
        src,
        beam_size,
        max_len,
        bos_id=eos * 0 + BOS,
        eos_id=eos,
        length_penalty=alpha,
        return_scores=True,
    )
    assert out.shape[0] == 4 and out.shape[1] <= max_len
    for row in out:
        ends = (row == eos).nonzero()
        if len(ends):  # after EOS: only padding
            assert (row[ends[0, 0] + 1 :] == PAD).all()
        else:  # no EOS: it ran to max_len
            assert len(row) == max_len and (row != PAD).all()
    log_prob, lengths = teacher_forced_log_prob(model, src, out, eos)
    torch.testing.assert_close(
        scores, log_prob / gnmt_length_penalty(lengths, alpha), atol=1e-4, rtol=1e-4
    )


@pytest.mark.parametrize("beam_size", [2, 4])
def test_cached_beam_search_equals_uncached(beam_size):
    model = make_model(3)
    src = sources(3)
    eos = an_eos_the_model_produces(model, src, 2)
    a, sa = beam_search(model, src, beam_size, 12, bos_id=BOS, eos_id=eos, return_scores=True)
    b, sb = beam_search(
        model, src, beam_size, 12, bos_id=BOS, eos_id=eos, return_scores=True, use_cache=False
    )
    assert torch.equal(a, b)
    torch.testing.assert_close(sa, sb, atol=1e-5, rtol=1e-5)


def test_beam_search_finds_at_least_the_greedy_score_on_average():
    """Not a theorem for every sentence (a beam can prune the greedy path), but over a batch of
    random models the wider search should not be worse on its own objective."""
    better = 0
    for seed in range(6):
        model = make_model(seed)
        src = sources(seed)
        _, greedy_scores = beam_search(
            model, src, 1, 10, bos_id=BOS, eos_id=None, return_scores=True
        )
        _, beam_scores = beam_search(model, src, 4, 10, bos_id=BOS, eos_id=None, return_scores=True)
        better += int((beam_scores >= greedy_scores - 1e-5).sum())
    assert better >= 22  # of 24 sentences


def test_each_sentence_is_decoded_as_if_alone():
    model = make_model(5)
    src = sources(5)
    eos = an_eos_the_model_produces(model, src, 1)
    batch = beam_search(model, src, 3, 12, bos_id=BOS, eos_id=eos)
    for i in range(4):
        length = int((src[i] != PAD).sum())
        alone = beam_search(model, src[i : i + 1, :length], 3, 12, bos_id=BOS, eos_id=eos)
        assert torch.equal(alone[0], batch[i, : alone.shape[1]])
        assert (batch[i, alone.shape[1] :] == PAD).all()


def test_length_penalty():
    lengths = torch.tensor([1, 6, 20])
    assert torch.equal(gnmt_length_penalty(lengths, 0.0), torch.ones(3))
    torch.testing.assert_close(
        gnmt_length_penalty(lengths, 0.6), ((5 + lengths.float()) / 6) ** 0.6
    )
    assert gnmt_length_penalty(torch.tensor(1), 0.6) == 1.0  # one token: no penalty


def test_output_limit_respects_positions():
    model = make_model()
    src = sources()
    assert output_limit(model, src, None).tolist() == [20] * 4  # 6 + 50, cut to config.max_len
    assert output_limit(model, src, 7).tolist() == [7] * 4
    with pytest.raises(ValueError, match="max_len"):
        output_limit(model, src, 21)
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(model, src, 0, BOS, 3)
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(model, src, 0, 5, bos_id=BOS, eos_id=3)
    out = greedy_decode(model, src, None, BOS, None)
    assert out.shape == (4, 20)  # max_len = 20 needs positions 0..19: exactly what the model has


def test_output_limit_is_each_sentences_own_length_plus_50():
    model, _ = random_translator()
    src = torch.tensor([[5, 6, 3, PAD, PAD], [5, 6, 7, 8, 3], [4, PAD, PAD, PAD, PAD]])
    assert output_limit(model, src, None).tolist() == [53, 55, 51]  # padding not counted
    assert output_limit(model, src[:, :3], None).tolist() == [53, 53, 51]  # the same, less padded


# The same sentence must get the same translation alone and in any batch. An untrained model
# rarely produces EOS, so most sentences run to their limit: a limit taken from the padded batch
# width (instead of each sentence's own length + 50) would let a short sentence batched with a
# longer one write more tokens. Batching changes the shapes of the matrix products, and with
# them the last bits of the logits; exact equality of the tokens is meaningful only where the
# model's choices are not that close, so the output layer is scaled up (wide margins between
# the best and the second-best token) and the test checks the margins it relies on.
WORDS = ["<pad>", "<unk>", "<bos>", "<eos>", *"abcdefghijkl"]
SENTENCES = ["a", "b c d", "e f g h a b c", "l k j i h g f e d c b a", "c c", "d e f g h"]


def random_translator(seed: int = 16):
    """An untrained model with a word-level tokenizer; its positions (64) allow every sentence
    of SENTENCES its full limit, source length + 50."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=len(WORDS),
        tgt_vocab_size=len(WORDS),
        d_model=16,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        dropout=0.1,
        max_len=64,
        tie_output=False,
    )
    model = Transformer(config)
    with torch.no_grad():
        model.output.weight.mul_(4.0)  # wide margins between the candidate tokens
    return model, tokenizer


def decode_rows(model, ids, rows, beam_size):
    """Decode the sentences ``ids[i] for i in rows`` as one padded batch."""
    src, _ = pad_sequences([ids[i] for i in rows], pad_value=PAD)  # (B, S)
    if beam_size == 1:
        return greedy_decode(model, src, None, BOS, EOS)
    return beam_search(model, src, beam_size, bos_id=BOS, eos_id=EOS)


def runs_to_its_limit(out: torch.Tensor, source_length: int) -> bool:
    """Did the output (of a sentence decoded alone) stop at source length + 50, without EOS?"""
    return int((out != PAD).sum()) == source_length + 50 and not (out == EOS).any()


@pytest.mark.parametrize("beam_size", [1, 3])
def test_a_sentence_is_decoded_the_same_alone_and_in_any_batch(beam_size):
    model, tokenizer = random_translator()
    ids = [s + [EOS] for s in encode(tokenizer, SENTENCES)]
    alone = [decode_rows(model, ids, [i], beam_size)[0] for i in range(len(ids))]
    # The test is sharp: sentences that run to their own limit, with longer neighbours, and
    # sentences that end with EOS.
    at_limit = [i for i in range(len(ids)) if runs_to_its_limit(alone[i], len(ids[i]))]
    assert 2 <= len(at_limit) < len(ids)
    assert min(len(ids[i]) for i in at_limit) < max(map(len, ids))
    if beam_size == 1:  # the premise of exact equality: no near-ties between the best two tokens
        for i in range(len(ids)):
            src = torch.tensor([ids[i]])
            _, logits = greedy_decode(model, src, None, BOS, EOS, return_logits=True)
            top2 = logits[0].topk(2, dim=-1).values  # (T', 2)
            assert (top2[:, 0] - top2[:, 1]).min() > 1e-2
    batches = [(0, 3), (3, 0), (1, 2, 3), (3, 2, 1), (4, 0), (5, 4, 3, 2, 1, 0), (2, 5, 0, 4, 1, 3)]
    for rows in batches:
        out = decode_rows(model, ids, rows, beam_size)
        for row, i in zip(out, rows, strict=True):
            n = alone[i].shape[0]
            assert torch.equal(row[:n], alone[i]), (rows, i)
            assert (row[n:] == PAD).all(), (rows, i)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_translate_gives_a_sentence_the_same_text_alone_and_in_any_batch(beam_size):
    """``translate`` (what the command line runs) sorts by length and batches: the text of
    each sentence must not depend on the batch size or on the other sentences."""
    model, tokenizer = random_translator()
    alone = [translate(model, tokenizer, [s], beam_size=beam_size)[0] for s in SENTENCES]
    for order in ([0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 5, 0, 4, 1, 3]):
        for batch_size in (2, 4, 6):
            out = translate(
                model, tokenizer, [SENTENCES[i] for i in order], beam_size, batch_size=batch_size
            )
            assert out == [alone[i] for i in order], (order, batch_size)


def test_corpus_bleu_matches_sacrebleu_and_has_a_signature():
    hyps = ["A man is riding a bike .", "Two dogs play in the snow."]
    refs = ["A man rides a bicycle.", "Two dogs are playing in the snow."]
    score, signature = corpus_bleu(hyps, refs)
    assert score.score == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert "tok:13a" in signature and "nrefs:1" in signature
    assert corpus_bleu(refs, refs)[0].score == pytest.approx(100.0)
    with pytest.raises(ValueError, match="one translation per reference"):
        corpus_bleu(hyps, refs[:1])


def test_translate_keeps_the_input_order():
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["<pad>", "<unk>", "<bos>", "<eos>", "a", "b", "c", "d", "e", "f"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    torch.manual_seed(0)
    config = TransformerConfig(
        src_vocab_size=10,
        tgt_vocab_size=10,
        d_model=16,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=16,
        dropout=0.0,
        max_len=12,
    )
    model = Transformer(config)
    sentences = ["a b c d e", "f", "c c"]
    greedy = translate(model, tokenizer, sentences, beam_size=1, max_len=6, batch_size=2)
    one_by_one = [translate(model, tokenizer, [s], beam_size=1, max_len=6)[0] for s in sentences]
    assert greedy == one_by_one and len(greedy) == 3
    beams = translate(model, tokenizer, sentences, beam_size=3, max_len=6, batch_size=2)
    assert beams == [translate(model, tokenizer, [s], beam_size=3, max_len=6)[0] for s in sentences]


@pytest.mark.parametrize("search", ["greedy", "beam"])
def test_decoding_works_in_double_precision(search):
    model = make_model().double()
    src = sources()
    eos = an_eos_the_model_produces(model, src, 2)
    if search == "greedy":
        tokens, logits = greedy_decode(model, src, 8, BOS, eos, return_logits=True)
        assert logits.dtype == torch.float64
    else:
        tokens, scores = beam_search(model, src, 3, 8, bos_id=BOS, eos_id=eos, return_scores=True)
        assert scores.dtype == torch.float64
    assert tokens.shape[0] == 4
