"""Tests of the decoder-only language model (chapter 18): the GPT block against
torch.nn.TransformerEncoderLayer with a causal mask (values and gradients) and against the
package's EncoderLayer, causality, generation with the key/value cache against recomputing the
prefix, the sampling filters (temperature, top-k, top-p), bits per character, and errors."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.gpt import (
    GPT,
    GPTBlock,
    GPTConfig,
    bits_per_character,
    generate,
    lm_logits,
    sample_next,
    top_k_filter,
    top_p_filter,
    total_nats,
    train_for,
)
from transformer_tutorial.masks import causal_mask
from transformer_tutorial.reference import attention_pairs, to_torch_block
from transformer_tutorial.rnn import CharRNNLM, lm_batch
from transformer_tutorial.transformer import EncoderLayer

pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.py

V = 31


def tiny_gpt(seed: int = 0, dtype: torch.dtype = torch.float64, **overrides) -> GPT:
    torch.manual_seed(seed)
    config = dict(vocab_size=V, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0)
    config.update(max_len=40)
    config.update(overrides)
    return GPT(GPTConfig(**config)).to(dtype)


def random_tokens(B: int, T: int, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(4, V, (B, T), generator=g)


@pytest.mark.parametrize("norm_first", [True, False])
def test_block_equals_torch_encoder_layer_with_causal_mask(norm_first: bool) -> None:
    torch.manual_seed(0)
    block = GPTBlock(16, 4, 32, dropout=0.0, norm_first=norm_first).double()
    ref = to_torch_block(block)
    x = torch.randn(3, 9, 16, dtype=torch.float64, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    ours = block(x, causal_mask(9))  # (B, T, D)
    theirs = ref(x_ref, src_mask=~causal_mask(9))  # PyTorch: True = blocked
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-12)
    w = torch.randn_like(ours)
    (ours * w).sum().backward()
    (theirs * w).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=0, atol=1e-12)
    for name, mine, target in attention_pairs(block.self_attn, ref.self_attn):
        torch.testing.assert_close(torch.cat([p.grad for p in mine]), target.grad, msg=name)
    for name in ("linear1", "linear2"):
        ours_p, ref_p = getattr(block.feed_forward, name), getattr(ref, name)
        torch.testing.assert_close(ours_p.weight.grad, ref_p.weight.grad)
    torch.testing.assert_close(block.norm1.weight.grad, ref.norm1.weight.grad)
    torch.testing.assert_close(block.norm2.bias.grad, ref.norm2.bias.grad)


def test_block_is_the_encoder_layer() -> None:
    """Same class of sub-layers, same state dict, same output without a cache."""
    torch.manual_seed(0)
    block = GPTBlock(16, 4, 32, dropout=0.0).double()
    layer = EncoderLayer(16, 4, 32, dropout=0.0, norm_first=True).double()
    layer.load_state_dict(block.state_dict())  # strict: the same parameter names and shapes
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    assert isinstance(block, EncoderLayer)
    assert torch.equal(block(x, causal_mask(6)), layer(x, causal_mask(6)))


def test_block_without_mask_is_not_causal() -> None:
    """The causal mask is what makes the block a decoder: without it the past sees the future."""
    torch.manual_seed(0)
    block = GPTBlock(16, 4, 32, dropout=0.0).double()
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] = torch.randn(16, dtype=torch.float64)  # (a constant shift: LayerNorm undoes)
    assert not torch.allclose(block(x)[:, 0], block(changed)[:, 0])
    assert torch.equal(block(x, causal_mask(6))[:, :-1], block(changed, causal_mask(6))[:, :-1])


@settings(max_examples=20, deadline=None)
@given(T=st.integers(2, 12), cut=st.integers(1, 11), seed=st.integers(0, 1000))
def test_changing_future_tokens_never_changes_past_logits(T: int, cut: int, seed: int) -> None:
    cut = min(cut, T - 1)
    model = tiny_gpt()
    tokens = random_tokens(2, T, seed)
    future = tokens.clone()
    future[:, cut:] = random_tokens(2, T - cut, seed + 1)
    assert torch.equal(model(tokens)[:, :cut], model(future)[:, :cut])


def test_output_head_is_the_token_embedding() -> None:
    model = tiny_gpt()
    assert model.output.weight is model.embed.embedding.weight
    names = [n for n, _ in model.named_parameters()]
    assert "output.weight" not in names  # counted once


def test_cached_forward_equals_full_forward() -> None:
    model = tiny_gpt()
    tokens = random_tokens(2, 10)
    full = model(tokens)  # (B, T, V)
    cache = model.new_cache(capacity=2)  # small, so the buffers grow on the way
    parts = [model(tokens[:, :4], cache=cache)]
    parts += [model(tokens[:, t : t + 1], cache=cache) for t in range(4, 10)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, rtol=0, atol=1e-10)
    assert cache.length == 10


@pytest.mark.parametrize("settings_", [dict(temperature=0.0), dict(top_k=5, top_p=0.9)])
def test_cached_generation_gives_the_same_tokens(settings_: dict) -> None:
    model = tiny_gpt()
    prompt = random_tokens(3, 4)
    runs = [
        generate(
            model,
            prompt,
            25,
            generator=torch.Generator().manual_seed(7),
            use_cache=c,
            eos_id=-1,
            **settings_,
        )
        for c in (True, False)
    ]
    assert runs[0].shape == (3, 29)
    assert torch.equal(runs[0], runs[1])


def test_generation_stops_and_pads_after_eos() -> None:
    model = tiny_gpt()
    prompt = random_tokens(4, 3)
    out = generate(model, prompt, 30, generator=torch.Generator().manual_seed(0), eos_id=5)
    for row in out[:, 3:].tolist():
        if 5 in row:
            assert all(t == 0 for t in row[row.index(5) + 1 :])
    same = generate(
        model, prompt, 30, generator=torch.Generator().manual_seed(0), eos_id=5, use_cache=False
    )
    assert torch.equal(out, same)


def test_generation_beyond_max_len_is_refused() -> None:
    model = tiny_gpt(max_len=8)
    with pytest.raises(ValueError, match="max_len"):
        generate(model, random_tokens(1, 4), 10, temperature=0.0, eos_id=-1)


def test_seeded_generation_is_reproducible_and_seeds_differ() -> None:
    model = tiny_gpt()
    prompt = random_tokens(2, 2)
    a, b, c = (
        generate(model, prompt, 20, generator=torch.Generator().manual_seed(s), eos_id=-1)
        for s in (3, 3, 4)
    )
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


logit_rows = st.lists(st.floats(-5, 5, allow_nan=False, width=32), min_size=2, max_size=40).map(
    lambda xs: torch.tensor(xs, dtype=torch.float64)
)


@settings(max_examples=50, deadline=None)
@given(logits=logit_rows, data=st.data())
def test_top_k_keeps_exactly_k_highest(logits: torch.Tensor, data) -> None:
    k = data.draw(st.integers(1, logits.numel()))
    kept = top_k_filter(logits, k).isfinite()
    assert int(kept.sum()) == k
    assert logits[kept].min() >= logits[~kept].max() if k < logits.numel() else True


@settings(max_examples=50, deadline=None)
@given(logits=logit_rows, p=st.floats(0.01, 1.0))
def test_top_p_keeps_the_smallest_set_with_mass_p(logits: torch.Tensor, p: float) -> None:
    probs = logits.softmax(-1)
    kept = top_p_filter(logits, p).isfinite()
    mass = probs[kept].sum()
    assert mass >= p - 1e-9  # enough mass ...
    assert mass - probs[kept].min() < p + 1e-9  # ... and one token fewer would not be
    assert probs[kept].min() >= probs[~kept].max() if not kept.all() else True


def test_top_p_examples() -> None:
    logits = torch.tensor([0.5, 0.3, 0.15, 0.05]).log()
    kept = lambda p: top_p_filter(logits, p).isfinite().tolist()  # noqa: E731
    assert kept(0.5) == [True, False, False, False]
    assert kept(0.6) == [True, True, False, False]
    assert kept(0.9) == [True, True, True, False]
    assert kept(1.0) == [True, True, True, True]


def test_temperature_to_zero_is_greedy() -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 50, generator=g)
    greedy = logits.argmax(-1)
    assert torch.equal(sample_next(logits, temperature=0.0), greedy)
    assert torch.equal(sample_next(logits, temperature=1e-3, generator=g), greedy)
    hot = sample_next(logits, temperature=1.0, generator=g)
    assert not torch.equal(hot, greedy)  # at temperature 1 some rows differ


def test_sampling_frequencies_follow_the_filtered_distribution() -> None:
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).expand(20000, 4)
    draws = sample_next(logits, top_k=2, generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(draws, minlength=4).double() / 20000
    expected = torch.tensor([1.0, 0.0]).softmax(0)  # e / (e + 1), 1 / (e + 1)
    assert counts[2:].sum() == 0
    torch.testing.assert_close(counts[:2], expected.double(), atol=0.015, rtol=0)


def test_sampling_errors() -> None:
    logits = torch.zeros(1, 5)
    with pytest.raises(ValueError, match="temperature"):
        sample_next(logits, temperature=-1.0)
    with pytest.raises(ValueError, match="top_k"):
        top_k_filter(logits, 6)
    with pytest.raises(ValueError, match="top_p"):
        top_p_filter(logits, 0.0)


def test_config_and_input_errors() -> None:
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(vocab_size=10, d_model=10, num_heads=4)
    with pytest.raises(ValueError, match="dropout"):
        GPTConfig(vocab_size=10, dropout=1.0)
    model = tiny_gpt(max_len=8)
    with pytest.raises(ValueError, match="unsqueeze"):
        model(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="max_len"):
        model(random_tokens(1, 9))


def test_total_nats_and_bits_per_character() -> None:
    """A model that gives every token probability 1/V costs ln V nats per target."""
    model = tiny_gpt()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    seqs = [[2, 5, 6, 3], [2, 7, 3]]
    targets = 3 + 2
    assert total_nats(model, seqs) == pytest.approx(targets * math.log(V))
    assert bits_per_character(targets * math.log(V), 10) == pytest.approx(
        targets * math.log2(V) / 10
    )
    with pytest.raises(ValueError, match="num_characters"):
        bits_per_character(1.0, 0)


def test_lm_logits_reads_both_models() -> None:
    inputs, _, _ = lm_batch([[2, 5, 6, 3]])
    torch.manual_seed(0)
    rnn = CharRNNLM(V, embed_dim=8, hidden_size=8)
    assert lm_logits(rnn, inputs).shape == (1, 3, V)
    assert lm_logits(tiny_gpt(dtype=torch.float32), inputs).shape == (1, 3, V)


def test_train_for_lowers_the_loss_within_its_budget() -> None:
    model = tiny_gpt(dtype=torch.float32)
    seqs = [[2, *([5, 6, 7, 8] * 3), 3]] * 32  # one pattern, easy to learn
    before = total_nats(model, seqs)
    history = train_for(
        model,
        seqs,
        seconds=0.5,
        batch_size=8,
        lr=1e-2,
        generator=torch.Generator().manual_seed(0),
        evaluate=lambda m: total_nats(m, seqs),
        eval_every=0.3,
    )
    assert 0.5 <= history["seconds"][-1] < 2.5
    assert history["val"][-1] < 0.2 * before
    assert history["step"] == sorted(history["step"])


def test_train_for_stops_at_max_steps_whatever_the_clock_allows() -> None:
    seqs = [[2, 5, 6, 7, 3]] * 16
    history = train_for(
        tiny_gpt(dtype=torch.float32),
        seqs,
        seconds=math.inf,
        max_steps=7,
        batch_size=4,
        generator=torch.Generator().manual_seed(0),
        eval_every=math.inf,
    )
    assert history["step"] == [7]  # one record, at the end
    weights = [tiny_gpt(dtype=torch.float32) for _ in range(2)]
    for model in weights:
        train_for(
            model, seqs, seconds=math.inf, max_steps=5, generator=torch.Generator().manual_seed(1)
        )
    for a, b in zip(weights[0].parameters(), weights[1].parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)  # same steps, same weights


def test_benchmark_script_runs_and_records(tmp_path) -> None:
    """benchmarks/gpt_vs_rnn.py end to end on 200 captions, tiny models, two seeds."""
    import importlib
    import json
    import sys
    from pathlib import Path

    benchmarks = str(Path(__file__).resolve().parents[1] / "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        script = importlib.import_module("gpt_vs_rnn")
        out = tmp_path / "run.json"
        args = "--limit 200 --seconds 0.2 --eval-every 0.2 --vocab-size 200 --hidden-size 16"
        args += " --lstm-char-size 8 --lstm-subword-size 8 --d-model 16 --d-model-char 16"
        payload = script.main(f"{args} --layers 1 --seeds 0 1 --json {out}".split())
        pieces = [  # the same runs as separate processes: seed 0 whole, seed 1 in two pieces
            "--seeds 1 --models gpt-char rnn-char",
            "--seeds 0",
            "--seeds 1 --models gpt-subword lstm-subword lstm-char",
        ]
        parts = [tmp_path / f"part{i}.json" for i in range(len(pieces))]
        for piece, part in zip(pieces, parts, strict=True):
            script.main(f"{args} --layers 1 {piece} --json {part}".split())
        merged = script.main(["--merge", *map(str, parts), "--json", str(tmp_path / "all.json")])
    finally:
        sys.path.remove(benchmarks)
    assert json.loads(out.read_text()) == json.loads(json.dumps(payload))
    assert payload["val_captions"] == 200 and payload["command"].startswith("python benchmarks/")
    assert set(payload["models"]) == set(script.MODELS)
    assert sorted((r["model"], r["seed"]) for r in payload["runs"]) == sorted(
        (m, s) for m in script.MODELS for s in (0, 1)
    )
    assert merged["settings"]["seeds"] == [0, 1] and len(merged["runs"]) == len(payload["runs"])
    assert [(r["model"], r["seed"]) for r in merged["runs"]] == [
        (r["model"], r["seed"]) for r in payload["runs"]
    ]
    for run in payload["runs"]:
        h = run["history"]
        assert h["cpu_seconds"][-1] >= 0.2 and len(h["step"]) == len(h["val_bits_per_character"])
        assert all(0 < v < 10 for v in h["val_bits_per_character"])
