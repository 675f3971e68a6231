"""Tests of transformer_tutorial.self_attention (chapter 8): the single-head SelfAttention against
its formula, permutation equivariance, masks, errors; the generated tagging grammar; the taggers."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.self_attention import (
    AMBIGUOUS,
    DETERMINERS,
    FILLERS,
    PRONOUNS,
    TAG_ID,
    TAGS,
    VOCAB,
    WORD_ID,
    SelfAttention,
    SelfAttentionTagger,
    TokenTagger,
    WindowTagger,
    accuracy_by_distance,
    encode_words,
    make_tagging_data,
    train_tagger,
)


def test_self_attention_equals_its_formula_and_loops():
    torch.manual_seed(0)
    sa = SelfAttention(d_in=5, d_k=3, d_v=4).double()
    x = torch.randn(2, 6, 5, dtype=torch.double)
    out, weights = sa(x)
    assert out.shape == (2, 6, 4) and weights.shape == (2, 6, 6)
    q, k, v = x @ sa.W_q, x @ sa.W_k, x @ sa.W_v
    expected_w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(3), dim=-1)
    torch.testing.assert_close(weights, expected_w)
    torch.testing.assert_close(out, expected_w @ v)
    # b^i = sum_j alpha'_{i,j} v^j, written as the notes' loops
    for b in range(2):
        for i in range(6):
            scores = torch.stack([q[b, i] @ k[b, j] / math.sqrt(3) for j in range(6)])
            alpha = scores.exp() / scores.exp().sum()
            b_i = sum(alpha[j] * v[b, j] for j in range(6))
            torch.testing.assert_close(out[b, i], b_i)


def test_only_parameters_are_the_three_matrices():
    sa = SelfAttention(d_in=5, d_k=3)
    assert {name for name, _ in sa.named_parameters()} == {"W_q", "W_k", "W_v"}
    assert sa.W_q.shape == (5, 3) and sa.W_v.shape == (5, 3)


@settings(max_examples=20, deadline=None)
@given(T=st.integers(1, 9), data=st.data())
def test_permutation_equivariance(T, data):
    """Without positions, permuting the input tokens permutes the outputs the same way."""
    seed = data.draw(st.integers(0, 10_000))
    perm = torch.tensor(data.draw(st.permutations(list(range(T)))))
    torch.manual_seed(seed)
    sa = SelfAttention(4, 3).double()
    x = torch.randn(2, T, 4, dtype=torch.double)
    out, w = sa(x)
    out_p, w_p = sa(x[:, perm])
    torch.testing.assert_close(out_p, out[:, perm])
    torch.testing.assert_close(w_p, w[:, perm][:, :, perm])


def test_identical_tokens_get_identical_outputs():
    torch.manual_seed(0)
    sa = SelfAttention(4, 4)
    x = torch.randn(1, 5, 4)
    x[0, 2] = x[0, 1]  # "A can can store food"
    out, _ = sa(x)
    torch.testing.assert_close(out[0, 1], out[0, 2])


def test_banded_mask_makes_a_local_operator_and_masked_rows_are_zero():
    torch.manual_seed(0)
    T, w = 12, 2
    pos = torch.arange(T)
    band = (pos[:, None] - pos[None, :]).abs() <= w
    sa = SelfAttention(3, 3)
    x = torch.randn(1, T, 3)
    x2 = x.clone()
    x2[0, 6] += 1.0
    with torch.no_grad():
        changed = (sa(x2, band)[0] - sa(x, band)[0]).abs().amax(-1)[0] > 1e-6
    assert changed.nonzero().flatten().tolist() == [4, 5, 6, 7, 8]
    mask = torch.ones(T, T, dtype=torch.bool)
    mask[3] = False
    x.requires_grad_(True)
    out, weights = sa(x, mask)
    assert torch.all(out[0, 3] == 0) and torch.all(weights[0, 3] == 0)
    out.sum().backward()
    assert not torch.isnan(x.grad).any()


def test_self_attention_errors():
    sa = SelfAttention(4, 2)
    with pytest.raises(ValueError, match=r"\(B, T, d_in=4\)"):
        sa(torch.randn(5, 4))
    with pytest.raises(ValueError, match=r"\(B, T, d_in=4\)"):
        sa(torch.randn(1, 5, 3))


def test_grammar_is_what_it_says():
    data = make_tagging_data(
        500, seq_len=16, max_distance=12, generator=torch.Generator().manual_seed(0)
    )
    N, T = data.tokens.shape
    assert (N, T) == (500, 16)
    rows = torch.arange(N)
    cue_pos = data.ambiguous_pos - data.distance
    assert (cue_pos >= 0).all() and (data.ambiguous_pos < T).all()
    assert data.distance.min() >= 1 and data.distance.max() <= 12
    cue = data.tokens[rows, cue_pos]
    word = data.tokens[rows, data.ambiguous_pos]
    pronoun_ids = torch.tensor([WORD_ID[w] for w in PRONOUNS])
    det_ids = torch.tensor([WORD_ID[w] for w in DETERMINERS])
    amb_ids = torch.tensor([WORD_ID[w] for w in AMBIGUOUS])
    filler_ids = torch.tensor([WORD_ID[w] for w in FILLERS])
    assert torch.isin(word, amb_ids).all()
    is_pronoun = torch.isin(cue, pronoun_ids)
    assert (is_pronoun | torch.isin(cue, det_ids)).all()
    tag = data.tags[rows, data.ambiguous_pos]
    assert (tag[is_pronoun] == TAG_ID["VERB"]).all() and (tag[~is_pronoun] == TAG_ID["NOUN"]).all()
    # every other token is a filler tagged INTJ
    other = torch.ones(N, T, dtype=torch.bool)
    other[rows, cue_pos] = False
    other[rows, data.ambiguous_pos] = False
    assert torch.isin(data.tokens[other], filler_ids).all()
    assert (data.tags[other] == TAG_ID["INTJ"]).all()
    # both labels occur, roughly balanced
    assert 0.4 < is_pronoun.float().mean() < 0.6
    assert "<pad>" == VOCAB[0] and len(TAGS) == 5


def test_grammar_arguments_checked_and_encode_words():
    with pytest.raises(ValueError, match="max_distance < seq_len"):
        make_tagging_data(3, seq_len=8, max_distance=8)
    assert encode_words("I saw a saw").tolist() == [[WORD_ID[w] for w in "I saw a saw".split()]]
    with pytest.raises(ValueError, match="not in the grammar"):
        encode_words("I saw a cat")


def test_window_tagger_sees_exactly_its_window():
    torch.manual_seed(0)
    tagger = WindowTagger(half_width=2)
    tokens = encode_words("uh um er well like so uh um er well")
    changed = tokens.clone()
    changed[0, 5] = WORD_ID["I"]
    with torch.no_grad():
        diff = (tagger(changed) - tagger(tokens)).abs().amax(-1)[0] > 0
    assert diff.nonzero().flatten().tolist() == [3, 4, 5, 6, 7]
    assert tagger(tokens).shape == (1, 10, len(TAGS))


def test_token_tagger_gives_equal_words_equal_logits():
    torch.manual_seed(0)
    logits = TokenTagger()(encode_words("I saw a saw"))
    torch.testing.assert_close(logits[0, 1], logits[0, 3])


def test_self_attention_tagger_learns_unseen_distances_and_window_does_not(one_thread):
    """The chapter's claim, small: trained on cue distances 1..4, tested on 5..7."""
    g = torch.Generator().manual_seed(1)
    train = make_tagging_data(1000, seq_len=10, max_distance=4, generator=g)
    test = make_tagging_data(600, seq_len=10, min_distance=5, max_distance=7, generator=g)
    torch.manual_seed(0)
    sa = SelfAttentionTagger()
    train_tagger(sa, train, steps=150, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    window = WindowTagger(half_width=9)
    train_tagger(window, train, steps=150, generator=torch.Generator().manual_seed(0))
    sa_acc = accuracy_by_distance(sa, test)
    window_acc = accuracy_by_distance(window, test)
    assert set(sa_acc) == {5, 6, 7}
    assert min(sa_acc.values()) > 0.95
    assert sum(window_acc.values()) / 3 < 0.8
    assert accuracy_by_distance(window, train)[4] > 0.95
