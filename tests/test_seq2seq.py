"""Tests of transformer_tutorial.seq2seq (chapter 4): the synthetic task, the encoder–decoder,
teacher forcing vs greedy inference, padding, and the evaluation."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.seq2seq import (
    BOS_ID,
    EOS_ID,
    NUM_SPECIALS,
    PAD_ID,
    Decoder,
    Encoder,
    Seq2Seq,
    Seq2SeqConfig,
    TransductionTask,
    accuracy_by_length,
    greedy_generate,
    last_hidden,
    make_batch,
    make_rnn,
    score_outputs,
    sequence_loss,
    train_seq2seq,
)
from transformer_tutorial.sequences import pad_sequences

RNN_TYPES = ["gru", "lstm", "rnn"]

pytestmark = pytest.mark.usefixtures("one_thread")


S = NUM_SPECIALS  # the first symbol's id
V = NUM_SPECIALS + 10  # the task's vocabulary: the special tokens and ten digits


def small_model(rnn_type: str = "gru", seed: int = 0) -> Seq2Seq:
    torch.manual_seed(seed)
    return Seq2Seq(Seq2SeqConfig(vocab_size=V, embed_dim=8, hidden_dim=12, rnn_type=rnn_type))


# --- the task -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["reverse", "copy"])
def test_task_samples_lengths_symbols_and_targets(kind):
    task = TransductionTask(kind=kind, num_symbols=7, min_len=2, max_len=6)
    sources, targets = task.sample(200, torch.Generator().manual_seed(0))
    lengths = {len(s) for s in sources}
    assert lengths == set(range(2, 7))  # every length in [min_len, max_len] occurs
    for s, t in zip(sources, targets, strict=True):
        assert s.dtype == torch.long
        assert ((s >= NUM_SPECIALS) & (s < task.vocab_size)).all()  # symbols only
        assert torch.equal(t, s.flip(0) if kind == "reverse" else s)
    fixed, _ = task.sample(5, length=9)  # a fixed length may lie outside the training range
    assert all(len(s) == 9 for s in fixed)
    assert task.vocab_size == NUM_SPECIALS + 7


def test_task_sampling_is_reproducible_with_a_generator():
    task = TransductionTask()
    a, _ = task.sample(10, torch.Generator().manual_seed(3))
    b, _ = task.sample(10, torch.Generator().manual_seed(3))
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(
    "kwargs", [{"kind": "sort"}, {"min_len": 0}, {"min_len": 5, "max_len": 4}, {"num_symbols": 0}]
)
def test_task_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        TransductionTask(**kwargs)


def test_task_rejects_bad_length():
    with pytest.raises(ValueError, match="length"):
        TransductionTask().sample(3, length=0)


def test_to_text_drops_specials_and_stops_at_eos():
    task = TransductionTask()
    assert task.to_text(torch.tensor([BOS_ID, S, S + 1, S + 9, EOS_ID, S + 2])) == "0 1 9"
    assert task.to_text(torch.tensor([PAD_ID, PAD_ID])) == ""


def test_make_batch_shifts_targets_by_one():
    sources = [torch.tensor([3, 4, 5]), torch.tensor([6])]
    targets = [s.flip(0) for s in sources]
    batch = make_batch(sources, targets)
    assert batch.src.tolist() == [[3, 4, 5], [6, 0, 0]]
    assert batch.src_lengths.tolist() == [3, 1]
    assert batch.tgt_in.tolist() == [[BOS_ID, 5, 4, 3], [BOS_ID, 6, 0, 0]]
    assert batch.tgt_out.tolist() == [[5, 4, 3, EOS_ID], [6, EOS_ID, 0, 0]]
    with pytest.raises(ValueError, match="pairs"):
        make_batch(sources, targets[:1])


# --- building blocks ------------------------------------------------------------------------


def test_make_rnn_and_last_hidden():
    assert isinstance(make_rnn("lstm", 3, 4), nn.LSTM)
    assert make_rnn("gru", 3, 4).batch_first
    with pytest.raises(ValueError, match="rnn_type"):
        make_rnn("transformer", 3, 4)
    h, cell = torch.randn(1, 2, 4), torch.randn(1, 2, 4)
    assert torch.equal(last_hidden(h), h[0])
    assert torch.equal(last_hidden((h, cell)), h[0])  # the LSTM's context is h, not the cell


@pytest.mark.parametrize("rnn_type", RNN_TYPES)
def test_encoder_final_state_is_the_state_at_the_last_real_token(rnn_type):
    torch.manual_seed(0)
    encoder = Encoder(vocab_size=V, embed_dim=5, hidden_dim=6, rnn_type=rnn_type)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    outputs, state = encoder(src, torch.tensor([4, 2]))
    assert outputs.shape == (2, 4, 6)
    assert torch.allclose(last_hidden(state), outputs[torch.arange(2), torch.tensor([3, 1])])
    assert (outputs[1, 2:] == 0).all()


@settings(max_examples=25, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 9), min_size=1, max_size=5),
    rnn_type=st.sampled_from(RNN_TYPES),
    seed=st.integers(0, 1000),
)
def test_padding_never_changes_encoder_or_decoder_outputs(lengths, rnn_type, seed):
    """A pair's logits are the same alone and in a padded batch, whatever fills the padding."""
    g = torch.Generator().manual_seed(seed)
    task = TransductionTask(min_len=1, max_len=9)
    pairs = [task.sample(1, g, length=L) for L in lengths]
    sources, targets = [p[0][0] for p in pairs], [p[1][0] for p in pairs]
    model = small_model(rnn_type, seed)
    batch = make_batch(sources, targets)
    # Garbage in the padded source positions must not matter either.
    src = batch.src.clone()
    pad = src == PAD_ID
    src[pad] = torch.randint(NUM_SPECIALS, V, (int(pad.sum()),), generator=g)
    with torch.no_grad():
        batched = model(src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
        for b, (s, t) in enumerate(zip(sources, targets, strict=True)):
            alone = make_batch([s], [t])
            single = model(alone.src, alone.src_lengths, alone.tgt_in)[0]  # (L + 1, V)
            assert torch.allclose(batched[b, : len(t) + 1], single, atol=1e-5)


@pytest.mark.parametrize(
    "src, lengths, match",
    [
        (torch.tensor([3, 4, 5]), torch.tensor([3]), "shape"),
        (torch.tensor([[3, 4, 5]]), torch.tensor([3, 3]), "src_lengths"),
        (torch.tensor([[3, 4, 5]]), torch.tensor([0]), "length"),
        (torch.tensor([[3, 4, 5]]), torch.tensor([4]), "length"),
        (torch.tensor([[3.0, 4.0]]), torch.tensor([2]), "dtype"),
    ],
)
def test_encoder_errors_are_readable(src, lengths, match):
    encoder = Encoder(vocab_size=V, embed_dim=4, hidden_dim=4)
    with pytest.raises(ValueError, match=match):
        encoder(src, lengths)


def test_decoder_feeds_the_same_context_to_every_step():
    torch.manual_seed(0)
    decoder = Decoder(vocab_size=V, embed_dim=4, hidden_dim=6)
    tgt_in = torch.tensor([[BOS_ID, 3, 4, 5]])
    context, state = torch.randn(1, 6), torch.randn(1, 1, 6)
    logits, final = decoder(tgt_in, context, state)
    assert logits.shape == (1, 4, V) and final.shape == (1, 1, 6)
    # Running the steps one at a time gives the same logits: teacher forcing is just batching.
    step_state, steps = state, []
    for t in range(4):
        step_logits, step_state = decoder(tgt_in[:, t : t + 1], context, step_state)
        steps.append(step_logits)
    assert torch.allclose(torch.cat(steps, dim=1), logits, atol=1e-6)
    # A different context changes every step, including the first.
    other, _ = decoder(tgt_in, torch.randn(1, 6), state)
    assert not torch.isclose(other, logits).all(dim=-1).any()


# --- teacher forcing vs inference -----------------------------------------------------------


@pytest.mark.parametrize("rnn_type", RNN_TYPES)
def test_teacher_forcing_on_own_outputs_reproduces_greedy_decoding(rnn_type):
    model = small_model(rnn_type, seed=1)
    batch = make_batch(*TransductionTask(max_len=8).sample(6, torch.Generator().manual_seed(2)))
    generated = greedy_generate(model, batch.src, batch.src_lengths, max_len=10)  # (B, T')
    B, T = generated.shape
    tgt_in = torch.cat([torch.full((B, 1), BOS_ID), generated[:, :-1]], dim=1)
    with torch.no_grad():
        forced = model(batch.src, batch.src_lengths, tgt_in).argmax(dim=-1)
    is_eos = (generated == EOS_ID).long()
    real = (is_eos.cumsum(dim=1) - is_eos) == 0  # up to and including the first <eos>
    assert torch.equal(forced[real], generated[real])


class ScriptedModel(nn.Module):
    """Emits fixed token sequences, one per row: checks greedy_generate's bookkeeping alone."""

    def __init__(self, scripts: list[list[int]], vocab_size: int = V):
        super().__init__()
        self.scripts, self.vocab_size = scripts, vocab_size

    def start(self, src, src_lengths):
        return 0

    def decode_step(self, prev, step):
        logits = torch.zeros(len(self.scripts), self.vocab_size)
        for b, script in enumerate(self.scripts):
            logits[b, script[min(step, len(script) - 1)]] = 1.0
        return logits, step + 1


def test_greedy_generate_stops_at_eos_and_pads_after_it():
    model = ScriptedModel([[5, 6, EOS_ID, 7, 7], [8, EOS_ID, 9, 9, 9]])
    src, lengths = torch.tensor([[3], [3]]), torch.tensor([1, 1])
    out = greedy_generate(model, src, lengths, max_len=10)
    assert out.tolist() == [[5, 6, EOS_ID], [8, EOS_ID, PAD_ID]]  # stops when every row is done
    cut = greedy_generate(ScriptedModel([[4, 4, 4, 4, 4]]), src[:1], lengths[:1], max_len=3)
    assert cut.tolist() == [[4, 4, 4]]  # no <eos>: cut at max_len


# --- loss, training, evaluation -------------------------------------------------------------


def test_sequence_loss_ignores_padding():
    logits = torch.randn(2, 3, V)
    tgt = torch.tensor([[4, 5, EOS_ID], [6, EOS_ID, PAD_ID]])
    real = tgt != PAD_ID
    expected = torch.nn.functional.cross_entropy(logits[real], tgt[real])
    assert torch.allclose(sequence_loss(logits, tgt), expected)
    changed = logits.clone()
    changed[1, 2] = 100 * torch.randn(V)  # the padded position
    assert torch.allclose(sequence_loss(changed, tgt), expected)


def test_score_outputs_exact_and_token_accuracy():
    tgt_out = torch.tensor([[6, 5, 4, EOS_ID], [7, EOS_ID, PAD_ID, PAD_ID]])
    perfect = torch.tensor([[6, 5, 4, EOS_ID], [7, EOS_ID, PAD_ID, PAD_ID]])
    assert score_outputs(perfect, tgt_out) == {"exact": 1.0, "token_acc": 1.0}
    # Row 0 one digit wrong; row 1 right digit but no <eos> (too long): 3 of 4 tokens, 0 exact.
    flawed = torch.tensor([[6, 10, 4, EOS_ID, PAD_ID], [7, 7, 7, 7, 7]])
    assert score_outputs(flawed, tgt_out) == {"exact": 0.0, "token_acc": 0.75}
    # Stopping early: the missing tokens count as wrong.
    short = torch.tensor([[6, EOS_ID], [7, EOS_ID]])
    assert score_outputs(short, tgt_out) == {"exact": 0.5, "token_acc": 0.5}


class OracleReverser(nn.Module):
    """A perfect model of the reversal task, written by hand, to test the evaluation code."""

    def __init__(self, vocab_size: int = V):
        super().__init__()
        self.vocab_size = vocab_size

    def _answers(self, src, src_lengths):
        return [
            torch.cat([s[:L].flip(0), torch.tensor([EOS_ID])])
            for s, L in zip(src, src_lengths, strict=True)
        ]

    def start(self, src, src_lengths):
        return (self._answers(src, src_lengths), 0)

    def decode_step(self, prev, state):
        answers, t = state
        logits = torch.zeros(len(answers), self.vocab_size)
        for b, a in enumerate(answers):
            logits[b, a[min(t, len(a) - 1)]] = 1.0
        return logits, (answers, t + 1)

    def forward(self, src, src_lengths, tgt_in):
        answers, _ = self.start(src, src_lengths)
        padded, _ = pad_sequences(answers)
        logits = torch.zeros(*tgt_in.shape, self.vocab_size)
        logits.scatter_(2, padded[:, : tgt_in.shape[1], None], 1.0)
        return logits


def test_accuracy_by_length_scores_a_perfect_model_one():
    rows = accuracy_by_length(
        OracleReverser(), TransductionTask(), [5, 9], n_per_length=8, generator=torch.Generator()
    )
    assert [r["length"] for r in rows] == [5, 9]
    for r in rows:
        assert r["exact"] == r["token_acc"] == r["forced_token_acc"] == 1.0
        assert r["bleu"] == pytest.approx(100.0)


def test_accuracy_by_length_of_an_untrained_model_is_low_but_valid():
    rows = accuracy_by_length(small_model(), TransductionTask(), [12], n_per_length=16)
    r = rows[0]
    assert 0.0 <= r["exact"] <= r["token_acc"] < 0.5
    assert 0.0 <= r["bleu"] <= 100.0


def test_training_reduces_the_loss():
    model = small_model("gru", seed=0)
    task = TransductionTask(min_len=2, max_len=4)
    losses = train_seq2seq(
        model, task, steps=60, batch_size=32, lr=1e-2, generator=torch.Generator().manual_seed(0)
    )
    assert len(losses) == 60
    assert sum(losses[-10:]) / 10 < 0.8 * sum(losses[:10]) / 10
    assert not model.training  # returned in eval mode
