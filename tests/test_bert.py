"""Tests of the small BERT (chapter 17): the 80/10/10 masking rule and its proportions, the inputs,
the encoder against torch.nn.TransformerEncoderLayer with copied weights (values and gradients),
the tied masked-language-model head, padding invariance, the loss at chosen positions only, the
BERT-base parameter count, the word-order task, and the errors people see."""

from __future__ import annotations

import copy
import math
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from transformer_tutorial.bert import (
    IGNORE_INDEX,
    Bert,
    BertConfig,
    BertVocab,
    accuracy,
    add_bert_tokens,
    bert_base_config,
    bert_inputs,
    finetune,
    mask_tokens,
    mlm_eval_loss,
    mlm_eval_losses,
    mlm_loss,
    pretrain_mlm,
    shuffle_words,
    swap_neighbours,
    word_order_examples,
)
from transformer_tutorial.reference import attention_pairs, to_torch_encoder_layer
from transformer_tutorial.tokens import train_tokenizer
from transformer_tutorial.transformer import EncoderLayer, count_parameters

pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.py

# A vocabulary of 40 ids: 0-3 the book's specials, 4-36 ordinary, 37-39 [CLS] [SEP] [MASK].
VOCAB = BertVocab(
    vocab_size=40, pad_id=0, cls_id=37, sep_id=38, mask_id=39, special_ids=(0, 1, 2, 3, 37, 38, 39)
)
ORDINARY = set(range(4, 37))


def sentences(n: int, seed: int = 0, max_words: int = 12) -> torch.Tensor:
    """``[CLS] words [SEP]`` rows of random lengths, right-padded: ``(n, max_words + 2)``."""
    g = torch.Generator().manual_seed(seed)
    rows = torch.zeros(n, max_words + 2, dtype=torch.long)
    lengths = torch.randint(1, max_words + 1, (n,), generator=g)
    for r, L in enumerate(lengths.tolist()):
        rows[r, 0], rows[r, L + 1] = VOCAB.cls_id, VOCAB.sep_id
        rows[r, 1 : L + 1] = torch.randint(4, 37, (L,), generator=g)
    return rows


def small_model(seed: int = 0, **overrides) -> Bert:
    torch.manual_seed(seed)
    config = dict(vocab_size=40, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0)
    return Bert(BertConfig(**(config | overrides)))


def within(count: int, n: int, p: float, sigmas: float = 5.0) -> bool:
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


# --- the masking rule -------------------------------------------------------------------------


def test_masking_proportions_are_15_and_80_10_10():
    tokens = sentences(20000, seed=1)  # about 130,000 real tokens
    inputs, labels = mask_tokens(tokens, VOCAB, torch.Generator().manual_seed(0))
    real = torch.isin(tokens, torch.tensor(sorted(ORDINARY)))
    chosen = labels != IGNORE_INDEX
    n_real, n_chosen = int(real.sum()), int(chosen.sum())
    masked = int((inputs[chosen] == VOCAB.mask_id).sum())
    unchanged = int((inputs[chosen] == tokens[chosen]).sum())
    randomized = n_chosen - masked - unchanged
    p_same = 0.1 / len(ORDINARY)  # a random draw that equals the original counts as unchanged
    assert n_real > 100_000
    assert within(n_chosen, n_real, 0.15)
    assert within(masked, n_chosen, 0.8)
    assert within(unchanged, n_chosen, 0.1 + p_same)
    assert within(randomized, n_chosen, 0.1 - p_same)


def test_masking_proportions_test_can_fail():
    """The statistical check rejects a rule with 70/20/10 instead of 80/10/10."""
    tokens = sentences(20000, seed=1)
    inputs, labels = mask_tokens(
        tokens, VOCAB, torch.Generator().manual_seed(0), mask_prob=0.7, random_prob=0.2
    )
    chosen = labels != IGNORE_INDEX
    masked = int((inputs[chosen] == VOCAB.mask_id).sum())
    assert not within(masked, int(chosen.sum()), 0.8)


def test_special_positions_are_never_chosen_and_others_untouched():
    tokens = sentences(500, seed=2)
    inputs, labels = mask_tokens(tokens, VOCAB, torch.Generator().manual_seed(1), select_prob=0.9)
    special = torch.isin(tokens, torch.tensor(VOCAB.special_ids))
    assert (labels[special] == IGNORE_INDEX).all()  # [CLS], [SEP], padding: never a label
    assert torch.equal(inputs[special], tokens[special])
    chosen = labels != IGNORE_INDEX
    assert torch.equal(labels[chosen], tokens[chosen])  # the label is the original token
    assert torch.equal(inputs[~chosen], tokens[~chosen])  # not chosen: left alone


def test_random_replacements_are_ordinary_tokens():
    tokens = sentences(500, seed=3)
    inputs, labels = mask_tokens(
        tokens,
        VOCAB,
        torch.Generator().manual_seed(2),
        select_prob=1.0,
        mask_prob=0.0,
        random_prob=1.0,
    )
    chosen = labels != IGNORE_INDEX
    assert set(inputs[chosen].tolist()) <= ORDINARY
    assert len(set(inputs[chosen].tolist())) == len(ORDINARY)  # every ordinary id can be drawn


def test_masking_is_reproducible_with_a_seeded_generator():
    tokens = sentences(50)
    a = mask_tokens(tokens, VOCAB, torch.Generator().manual_seed(5))
    b = mask_tokens(tokens, VOCAB, torch.Generator().manual_seed(5))
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_masking_rejects_impossible_shares():
    with pytest.raises(ValueError, match="mask_prob \\+ random_prob"):
        mask_tokens(sentences(2), VOCAB, mask_prob=0.8, random_prob=0.3)
    with pytest.raises(ValueError, match="select_prob"):
        mask_tokens(sentences(2), VOCAB, select_prob=1.5)


# --- inputs ----------------------------------------------------------------------------------


def test_bert_tokens_are_added_after_the_vocabulary_and_frame_each_sentence():
    tokenizer = train_tokenizer(["a dog runs on the grass .", "two dogs play ."] * 20, 60)
    before = tokenizer.get_vocab_size()
    vocab = add_bert_tokens(tokenizer)
    assert (vocab.cls_id, vocab.sep_id, vocab.mask_id) == (before, before + 1, before + 2)
    assert vocab.vocab_size == before + 3 and vocab.pad_id == 0
    assert set(vocab.special_ids) == {0, 1, 2, 3, before, before + 1, before + 2}
    ids = bert_inputs(tokenizer, vocab, ["a dog runs on the grass .", "two dogs play ."])
    assert all(row[0] == vocab.cls_id and row[-1] == vocab.sep_id for row in ids)
    assert tokenizer.decode(ids[1][1:-1]) == "two dogs play ."
    cut = bert_inputs(tokenizer, vocab, ["a dog runs on the grass ."], max_len=4)[0]
    assert len(cut) == 4 and cut[0] == vocab.cls_id and cut[-1] == vocab.sep_id
    assert vocab.mask_id in tokenizer.encode("a [MASK] runs").ids
    with pytest.raises(ValueError, match="max_len"):
        bert_inputs(tokenizer, vocab, ["a dog"], max_len=2)


# --- the model -------------------------------------------------------------------------------


def test_model_is_a_stack_of_the_package_encoder_layers():
    model = small_model()
    assert len(model.layers) == 2 and all(type(layer) is EncoderLayer for layer in model.layers)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_equals_torch_transformer_encoder_layers(norm_first):
    """With copied weights, our stack equals nn.TransformerEncoderLayer's: values and gradients."""
    model = small_model(norm_first=norm_first)
    refs = nn.ModuleList(to_torch_encoder_layer(ours) for ours in model.layers)
    assert all(ref.dropout.p == 0.0 and ref.norm_first == norm_first for ref in refs)
    tokens = sentences(4, seed=4)
    segments = (torch.arange(14) > 5).long().expand(4, 14)
    weighting = torch.randn(4, 14, 16, generator=torch.Generator().manual_seed(0))
    real = (tokens != 0).unsqueeze(-1)

    ours = model.encode(tokens, segments)
    (ours * weighting * real).sum().backward()
    our_grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    layer_grads = [
        {
            name: torch.cat([p.grad for p in mine])
            for name, mine, _ in attention_pairs(o.self_attn, r.self_attn)
        }
        for o, r in zip(model.layers, refs, strict=True)
    ]
    model.zero_grad()

    # the same embeddings, then PyTorch's blocks instead of ours
    x = model.embed_norm(model.positions(model.embed(tokens)) + model.segments(segments))
    for ref in refs:
        x = ref(x, src_key_padding_mask=tokens == 0)  # PyTorch: True = padding (blocked)
    if model.norm is not None:
        x = model.norm(x)
    (x * weighting * real).sum().backward()
    assert torch.allclose(ours[tokens != 0], x[tokens != 0], atol=1e-5)
    for i, (ours_layer, ref) in enumerate(zip(model.layers, refs, strict=True)):
        for name, _, theirs in attention_pairs(ours_layer.self_attn, ref.self_attn):
            assert torch.allclose(layer_grads[i][name], theirs.grad, atol=1e-5)
        for name in ("linear1", "linear2"):
            mine = our_grads[f"layers.{i}.feed_forward.{name}.weight"]
            assert torch.allclose(mine, getattr(ref, name).weight.grad, atol=1e-5)
        assert torch.allclose(
            our_grads[f"layers.{i}.norm2.weight"], ref.norm2.weight.grad, atol=1e-5
        )
    for name in ("embed.embedding.weight", "positions.embedding.weight", "segments.weight"):
        assert torch.allclose(our_grads[name], dict(model.named_parameters())[name].grad, atol=1e-5)


def test_mlm_head_is_tied_and_its_gradient_is_the_sum_of_both_uses():
    model = small_model()
    E = model.embed.embedding.weight
    assert model.mlm_head.output.weight is E
    assert count_parameters(model) == sum(p.numel() for p in model.parameters())  # counted once
    tokens = sentences(6, seed=5)
    inputs, labels = mask_tokens(tokens, VOCAB, torch.Generator().manual_seed(0), select_prob=0.5)
    (total,) = torch.autograd.grad(mlm_loss(model, inputs, labels), E)
    untied = copy.deepcopy(model)
    untied.mlm_head.output.weight = nn.Parameter(E.detach().clone())
    g_in, g_out = torch.autograd.grad(
        mlm_loss(untied, inputs, labels),
        [untied.embed.embedding.weight, untied.mlm_head.output.weight],
    )
    assert g_in.norm() > 0 and g_out.norm() > 0
    assert torch.allclose(total, g_in + g_out, atol=1e-6)
    # a training step moves the one shared matrix, seen from both modules
    torch.optim.SGD(model.parameters(), lr=0.1).zero_grad()
    before = E.detach().clone()
    mlm_loss(model, inputs, labels).backward()
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    assert not torch.equal(before, model.mlm_head.output.weight.detach())


def test_loss_uses_the_chosen_positions_only():
    model = small_model()
    tokens = sentences(6, seed=6)
    inputs, labels = mask_tokens(tokens, VOCAB, torch.Generator().manual_seed(0), select_prob=0.3)
    chosen = labels != IGNORE_INDEX
    expected = nn.functional.cross_entropy(model.mlm_logits(inputs)[chosen], labels[chosen])
    assert torch.allclose(mlm_loss(model, inputs, labels), expected, atol=1e-6)
    one = torch.full_like(labels, IGNORE_INDEX)
    r, c = chosen.nonzero()[0].tolist()
    one[r, c] = labels[r, c]
    logits = model.mlm_logits(inputs)[r, c]
    assert torch.allclose(
        mlm_loss(model, inputs, one),
        nn.functional.cross_entropy(logits[None], labels[r, c][None]),
        atol=1e-6,
    )
    with pytest.raises(ValueError, match="no position is chosen"):
        mlm_loss(model, inputs, torch.full_like(labels, IGNORE_INDEX))


def test_eval_losses_split_the_eval_loss_by_what_a_position_shows():
    model = small_model(dropout=0.1).train()
    rows = [[VOCAB.cls_id, *r[r > 3][r[r > 3] < 37].tolist(), VOCAB.sep_id] for r in sentences(400)]
    by_kind = mlm_eval_losses(model, rows, VOCAB, seed=3)
    assert model.training  # the mode is restored
    batch = sentences(400)  # the same rows, padded as mlm_eval_losses pads them
    inputs, labels = mask_tokens(batch, VOCAB, torch.Generator().manual_seed(3))
    chosen = labels != IGNORE_INDEX
    shown, original = inputs[chosen], labels[chosen]
    assert len(by_kind["[MASK]"]) == int((shown == VOCAB.mask_id).sum())
    assert len(by_kind["unchanged"]) == int((shown == original).sum())
    assert sum(map(len, by_kind.values())) == int(chosen.sum())
    assert min(map(len, by_kind.values())) > 0
    everything = torch.cat(list(by_kind.values())).mean()
    assert torch.allclose(everything, torch.tensor(mlm_eval_loss(model, rows, VOCAB, seed=3)))
    # At a [MASK] position the input holds nothing of the answer: the loss there is the loss
    # of the logits at that position, whatever the original token was.
    model.eval()
    with torch.no_grad():
        logits = model.mlm_logits(inputs)[chosen][shown == VOCAB.mask_id]
    expected = nn.functional.cross_entropy(
        logits, original[shown == VOCAB.mask_id], reduction="none"
    )
    assert torch.allclose(by_kind["[MASK]"], expected, atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(extra=st.integers(1, 6), seed=st.integers(0, 1000))
def test_padding_changes_nothing_at_real_positions(extra, seed):
    model = small_model(seed % 3).eval()
    tokens = sentences(3, seed=seed)
    wide = torch.cat([tokens, torch.zeros(3, extra, dtype=torch.long)], dim=1)
    real = tokens != 0
    with torch.no_grad():
        assert torch.allclose(
            model(wide)[:, : tokens.shape[1]][real], model(tokens)[real], atol=1e-5
        )
        assert torch.allclose(model.classify(wide), model.classify(tokens), atol=1e-5)


def test_every_position_sees_the_whole_sentence():
    """No causal mask: changing the last word changes the output at [CLS]."""
    model = small_model().eval()
    tokens = torch.tensor([[37, 5, 6, 7, 8, 38]])
    changed = tokens.clone()
    changed[0, 4] = 9
    with torch.no_grad():
        assert not torch.allclose(model(tokens)[0, 0], model(changed)[0, 0], atol=1e-4)


def test_segments_default_to_zero_and_change_the_output():
    model = small_model().eval()
    tokens = sentences(2, seed=7)
    with torch.no_grad():
        assert torch.equal(model(tokens), model(tokens, torch.zeros_like(tokens)))
        assert not torch.allclose(model(tokens), model(tokens, torch.ones_like(tokens)))


def test_attention_weights_are_distributions_that_skip_padding():
    model = small_model()
    tokens = sentences(3, seed=8)
    maps = model.attention_weights(tokens)
    assert len(maps) == 2 and maps[0].shape == (3, 4, 14, 14)
    assert model.training  # restored
    for w in maps:
        assert torch.allclose(w.sum(-1), torch.ones(3, 4, 14), atol=1e-5)
        pad_keys = (tokens == 0)[:, None, None, :].expand_as(w)  # (B, H, T, T) keys at padding
        assert w[pad_keys].abs().max() == 0


def test_bert_base_parameter_count():
    with torch.device("meta"):
        model = Bert(bert_base_config())
    V, D, F, N = 30522, 768, 3072, 12
    encoder = V * D + 512 * D + 2 * D + 2 * D + N * (4 * (D * D + D) + 2 * D * F + F + D + 4 * D)
    pooler = D * D + D
    mlm_extra = D * D + D + 2 * D + V  # transform, LayerNorm, bias (the matrix is tied)
    classifier = D * 2 + 2
    assert encoder + pooler == 109_482_240  # the paper's "110M"
    assert count_parameters(model) == encoder + pooler + mlm_extra + classifier


def test_config_and_input_errors_say_what_to_do():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        BertConfig(vocab_size=40, d_model=30, num_heads=4)
    with pytest.raises(ValueError, match="dropout"):
        BertConfig(vocab_size=40, dropout=1.0)
    model = small_model(max_len=10)
    with pytest.raises(ValueError, match="max_len"):
        model(torch.ones(1, 11, dtype=torch.long))
    with pytest.raises(ValueError, match="unsqueeze"):
        model(torch.ones(11, dtype=torch.long))
    with pytest.raises(ValueError, match="segments"):
        model(torch.ones(1, 5, dtype=torch.long), torch.zeros(1, 4, dtype=torch.long))


# --- training and the word-order task ---------------------------------------------------------


def test_pretraining_and_finetuning_learn_a_tiny_task():
    """MLM on runs of consecutive ids (a, a+1, ..., a+5): every hidden word follows from its
    neighbours, and the model learns to fill it in; fine-tuning then learns whether a < 20."""
    rng = random.Random(0)
    corpus = [[37, *range(a, a + 6), 38] for a in (rng.randrange(4, 31) for _ in range(300))]
    model = small_model(dropout=0.0)
    losses = pretrain_mlm(model, corpus, VOCAB, steps=150, batch_size=32, lr=1e-2, warmup=10)
    # from about ln(33) = 3.5 nats (a guess among the 33 ordinary ids) to well below
    assert sum(losses[-20:]) / 20 < 0.65 * sum(losses[:20]) / 20
    examples = [(s, int(s[1] < 20)) for s in corpus]
    finetune(model, examples, steps=60, batch_size=32, lr=3e-3, warmup=5, seed=0)
    assert accuracy(model, examples) > 0.9


def test_finetune_starts_from_the_same_head_for_the_same_seed():
    a, b = small_model(0), small_model(1)
    examples = [([37, 5, 6, 38], 0), ([37, 7, 8, 38], 1)]
    finetune(a, examples, steps=0, seed=3)
    finetune(b, examples, steps=0, seed=3)
    assert torch.equal(a.classifier.output.weight, b.classifier.output.weight)


def _corrupted_or_refused(corrupt, words: list[str], seed: int) -> list[str] | None:
    """The words ``corrupt`` makes of the sentence, or None where its inner words cannot be put
    in another order (and ``corrupt`` refused with a ValueError that says so)."""
    sentence = " ".join(words)
    if len(set(words[1:-1])) < 2:
        with pytest.raises(ValueError, match="cannot be put in another order"):
            corrupt(sentence, random.Random(seed))
        return None
    return corrupt(sentence, random.Random(seed)).split(" ")


@settings(max_examples=50, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["a", "man", "dog", "runs", "in", "the", "park"]), min_size=3, max_size=12
    ),
    seed=st.integers(0, 10_000),
)
def test_shuffle_words_keeps_the_ends_and_the_words(words, seed):
    out = _corrupted_or_refused(shuffle_words, words, seed)
    if out is None:
        return
    assert out != words and sorted(out) == sorted(words)
    assert out[0] == words[0] and out[-1] == words[-1]


@settings(max_examples=50, deadline=None)
@given(
    words=st.lists(st.sampled_from(["a", "man", "dog", "runs", "in"]), min_size=3, max_size=12),
    seed=st.integers(0, 10_000),
)
def test_swap_neighbours_swaps_two_different_inner_neighbours(words, seed):
    out = _corrupted_or_refused(swap_neighbours, words, seed)
    if out is None:
        return
    changed = [i for i, (a, b) in enumerate(zip(out, words, strict=True)) if a != b]
    assert len(changed) == 2 and changed[1] == changed[0] + 1  # one pair of neighbours
    assert 0 < changed[0] and changed[1] < len(words) - 1  # the ends stay
    i, j = changed
    assert (out[i], out[j]) == (words[j], words[i])


def test_pretraining_masks_with_the_probabilities_it_is_given(monkeypatch):
    import transformer_tutorial.bert as bert

    seen = []
    real = bert.mask_tokens

    def recording(*args, **kwargs):
        seen.append((kwargs["mask_prob"], kwargs["random_prob"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(bert, "mask_tokens", recording)
    corpus = [[37, 5, 6, 7, 8, 38]] * 8
    pretrain_mlm(small_model(), corpus, VOCAB, steps=2, batch_size=4, mask_prob=1.0, random_prob=0)
    assert seen == [(1.0, 0)] * 2
    seen.clear()
    pretrain_mlm(small_model(), corpus, VOCAB, steps=1, batch_size=4)
    assert seen == [(0.8, 0.1)]  # BERT's rule by default


def test_word_order_examples_are_balanced_and_labelled_right():
    base = [f"A man number {i} walks in the park ." for i in range(2000)]
    examples = word_order_examples(base, seed=0)
    assert len(examples) == 2000
    assert within(sum(y for _, y in examples), 2000, 0.5)
    assert all(
        (text != original) == bool(y) for (text, y), original in zip(examples, base, strict=True)
    )
    assert word_order_examples(["Two dogs ."]) == []  # one inner word: nothing to shuffle
    swapped = word_order_examples(base, seed=0, corrupt=swap_neighbours)
    assert within(sum(y for _, y in swapped), 2000, 0.5)
    assert all(
        sum(a != b for a, b in zip(t.split(), o.split(), strict=True)) == 2 * y
        for (t, y), o in zip(swapped, base, strict=True)
    )


def test_benchmark_script_runs_saves_and_reloads(tmp_path):
    """benchmarks/bert_finetune.py end to end with a few steps: the swap task, always-[MASK]
    pre-training, weights saved as safetensors and loaded back (the tie included)."""
    import importlib
    import json
    import sys
    from pathlib import Path

    benchmarks = str(Path(__file__).resolve().parents[1] / "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        script = importlib.import_module("bert_finetune")
        weights, out = tmp_path / "bert.safetensors", tmp_path / "run.json"
        common = "--vocab-size 300 --finetune-steps 2 --seeds 1 --labelled 64 --task swap"
        first = script.main(
            f"{common} --pretrain-steps 3 --mask-prob 1.0 --random-prob 0.0 "
            f"--save-pretrained {weights} --json {out}".split()
        )
        again = script.main(f"{common} --load-pretrained {weights}".split())
    finally:
        sys.path.remove(benchmarks)
    assert json.loads(out.read_text()) == json.loads(json.dumps(first))
    assert first["settings"]["mask_prob"] == 1.0 and first["settings"]["task"] == "swap"
    assert [r["start"] for r in first["results"]] == ["pre-trained", "from scratch"]
    # the reloaded model is the saved one: the same validation MLM loss
    assert (
        again["pretraining"]["curve"][-1]["val_loss"]
        == first["pretraining"]["curve"][-1]["val_loss"]
    )
