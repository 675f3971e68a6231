"""Tests of transformer_tutorial.local_attention (chapter 20)."""

from __future__ import annotations

import time

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_tutorial.attention import attention
from transformer_tutorial.local_attention import (
    DividedSpaceTimeAttention,
    LocalSelfAttention,
    band_mask,
    fastest_seconds,
    local_attention,
    peak_memory_bytes,
    space_time_masks,
    space_time_scores,
)


def _qkv(B: int, H: int, T: int, Dh: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(B, H, T, Dh, generator=g, dtype=torch.float64).requires_grad_()
        for _ in range(3)
    )


def _full_reference(q, k, v, window, causal, key_padding):
    """The package's explicit attention under the band (and padding) mask."""
    mask = band_mask(q.shape[2], window, causal)  # (T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]  # (B, 1, T, T)
    return attention(q, k, v, mask)[0]


def _assert_same_values_and_gradients(q, k, v, window, causal, key_padding, block_size):
    full = _full_reference(q, k, v, window, causal, key_padding)
    local = local_attention(q, k, v, window, causal, key_padding, block_size)
    assert local.shape == full.shape
    torch.testing.assert_close(local, full, rtol=1e-10, atol=1e-10)
    grad_out = torch.randn_like(full)
    grads_full = torch.autograd.grad(full, (q, k, v), grad_out)
    grads_local = torch.autograd.grad(local, (q, k, v), grad_out)
    for g_local, g_full in zip(grads_local, grads_full, strict=True):
        torch.testing.assert_close(g_local, g_full, rtol=1e-10, atol=1e-10)


def test_band_mask_values():
    expected = torch.tensor(
        [[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1], [0, 0, 0, 1, 1]],
        dtype=torch.bool,
    )
    assert torch.equal(band_mask(5, 1), expected)
    assert torch.equal(band_mask(5, 1, causal=True), expected.tril())
    assert torch.equal(band_mask(4, 0), torch.eye(4, dtype=torch.bool))
    assert band_mask(4, 10).all() and band_mask(0, 3).shape == (0, 0)
    t = torch.arange(9)
    offset = t[:, None] - t[None, :]
    assert torch.equal(band_mask(9, 3), offset.abs() <= 3)
    assert torch.equal(band_mask(9, 3, causal=True), (offset >= 0) & (offset <= 3))


@pytest.mark.parametrize("T", [1, 6, 8, 9, 17])  # multiples of the block (4, 8) and not
@pytest.mark.parametrize("window", [0, 1, 4, 8, 40])  # 0, small, = block, >= T
@pytest.mark.parametrize("causal", [False, True])
def test_equals_full_attention_with_band_mask(T, window, causal):
    q, k, v = _qkv(2, 3, T, 5, seed=T * 100 + window)
    _assert_same_values_and_gradients(q, k, v, window, causal, None, None)


@pytest.mark.parametrize("T, window, block_size", [(9, 2, 4), (16, 4, 8), (13, 3, 13), (5, 1, 50)])
@pytest.mark.parametrize("causal", [False, True])
def test_padding_mask_and_larger_blocks(T, window, block_size, causal):
    q, k, v = _qkv(3, 2, T, 4, seed=T)
    lengths = torch.tensor([T, max(T // 2, 1), 1])
    key_padding = torch.arange(T)[None, :] < lengths[:, None]  # (B, T), True = real frame
    _assert_same_values_and_gradients(q, k, v, window, causal, key_padding, block_size)


def test_query_that_sees_no_key_gets_zeros_not_nan():
    q, k, v = _qkv(1, 1, 12, 4)
    key_padding = torch.ones(1, 12, dtype=torch.bool)
    key_padding[0, :6] = False  # the first 6 frames are padding
    out = local_attention(q, k, v, 2, key_padding=key_padding)
    # frames 0..3 see only keys 0..5 (all padding): zero outputs, finite gradients
    assert torch.equal(out[0, 0, :4], torch.zeros(4, 4, dtype=out.dtype))
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    _assert_same_values_and_gradients(*_qkv(1, 1, 12, 4), 2, False, key_padding, None)


def test_value_dim_may_differ_and_dropout_applies():
    q, k = _qkv(1, 2, 10, 4)[:2]
    v = torch.randn(1, 2, 10, 7, dtype=torch.float64)
    out = local_attention(q, k, v, 3)
    assert out.shape == (1, 2, 10, 7)
    torch.testing.assert_close(out, _full_reference(q, k, v, 3, False, None))
    torch.manual_seed(0)
    dropped = local_attention(q, k, v, 3, dropout_p=0.5)
    assert not torch.allclose(dropped, out)


@settings(max_examples=25, deadline=None)
@given(
    T=st.integers(1, 24),
    window=st.integers(0, 30),
    extra_block=st.integers(0, 5),
    causal=st.booleans(),
    lengths=st.lists(st.integers(1, 24), min_size=1, max_size=3),
)
def test_property_equals_full_attention(T, window, extra_block, causal, lengths):
    q, k, v = _qkv(len(lengths), 2, T, 3, seed=T + 31 * window)
    key_padding = torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]  # (B, T)
    block = max(window, 1) + extra_block
    _assert_same_values_and_gradients(q, k, v, window, causal, key_padding, block)


@settings(max_examples=25, deadline=None)
@given(T=st.integers(2, 30), window=st.integers(0, 6), changed=st.data())
def test_property_causal_future_never_changes_the_past(T, window, changed):
    t = changed.draw(st.integers(0, T - 1))
    q, k, v = (x.detach() for x in _qkv(1, 2, T, 4, seed=T))
    q2, k2, v2 = (x.clone() for x in (q, k, v))
    for x in (q2, k2, v2):
        x[:, :, t] += 5.0  # change frame t in queries, keys and values
    out = local_attention(q, k, v, window, causal=True)
    out2 = local_attention(q2, k2, v2, window, causal=True)
    torch.testing.assert_close(out[:, :, :t], out2[:, :, :t], rtol=0, atol=0)
    # and a frame reaches no further than the window
    if t + window + 1 < T:
        torch.testing.assert_close(out[:, :, t + window + 1 :], out2[:, :, t + window + 1 :])


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 20), extra=st.integers(1, 10), window=st.integers(0, 8))
def test_property_padding_frames_never_change_real_outputs(T, extra, window):
    q, k, v = (x.detach() for x in _qkv(1, 2, T, 4, seed=T))
    out = local_attention(q, k, v, window)
    garbage = [100 * torch.randn(1, 2, extra, 4, dtype=torch.float64) for _ in range(3)]
    qp, kp, vp = (torch.cat([x, g], dim=2) for x, g in zip((q, k, v), garbage, strict=True))
    real = torch.arange(T + extra)[None, :] < T  # (1, T + extra)
    out_padded = local_attention(qp, kp, vp, window, key_padding=real)
    torch.testing.assert_close(out_padded[:, :, :T], out)


def test_stream_prefix_equals_whole_sequence_when_causal():
    q, k, v = (x.detach() for x in _qkv(1, 1, 20, 4))
    whole = local_attention(q, k, v, 3, causal=True)
    for t in (1, 7, 12):
        prefix = local_attention(q[:, :, :t], k[:, :, :t], v[:, :, :t], 3, causal=True)
        torch.testing.assert_close(prefix, whole[:, :, :t])


def test_local_self_attention_equals_multihead_with_band_mask():
    torch.manual_seed(0)
    layer = LocalSelfAttention(d_model=16, num_heads=4, window=3, causal=True).double().eval()
    x = torch.randn(2, 11, 16, dtype=torch.float64, requires_grad=True)
    real = torch.arange(11)[None, :] < torch.tensor([[11], [6]])  # (B, T)
    full = layer.mha(x, x, x, mask=band_mask(11, 3, causal=True) & real[:, None, None, :])[0]
    local = layer(x, key_padding=real)
    torch.testing.assert_close(local, full)
    grad_out = torch.randn_like(full)
    params = [x, *layer.parameters()]
    for g_local, g_full in zip(
        torch.autograd.grad(local, params, grad_out),
        torch.autograd.grad(full, params, grad_out),
        strict=True,
    ):
        torch.testing.assert_close(g_local, g_full)


def test_stacked_local_layers_reach_L_times_window():
    torch.manual_seed(0)
    T, w, L, t = 40, 3, 3, 20
    layers = [LocalSelfAttention(8, 2, window=w).eval() for _ in range(L)]
    x = torch.randn(1, T, 8)
    x2 = x.clone()
    x2[0, t] += 1.0
    with torch.no_grad():
        for layer in layers:
            x, x2 = layer(x), layer(x2)
    moved = ((x - x2).abs().amax(-1)[0] > 1e-6).nonzero().flatten().tolist()
    assert moved == list(range(t - L * w, t + L * w + 1))


def test_errors_say_what_to_do():
    q, k, v = _qkv(1, 1, 8, 4)
    with pytest.raises(ValueError, match="window must be an integer >= 0"):
        local_attention(q, k, v, -1)
    with pytest.raises(ValueError, match="window must be an integer"):
        local_attention(q, k, v, 2.5)
    with pytest.raises(ValueError, match="block_size"):
        local_attention(q, k, v, 4, block_size=3)
    with pytest.raises(ValueError, match=r"\(B, H, T, Dh\)"):
        local_attention(q[0], k[0], v[0], 2)
    with pytest.raises(ValueError, match="same \\(B, H, T\\)"):
        local_attention(q, k[:, :, :5], v[:, :, :5], 2)
    with pytest.raises(ValueError, match="same Dh"):
        local_attention(q, k[..., :3], v, 2)
    with pytest.raises(ValueError, match="key_padding must be a boolean"):
        local_attention(q, k, v, 2, key_padding=torch.ones(1, 8))
    with pytest.raises(ValueError, match="key_padding must be a boolean"):
        local_attention(q, k, v, 2, key_padding=torch.ones(1, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match="window"):
        band_mask(5, -2)
    with pytest.raises(ValueError, match="T must be"):
        band_mask(-1, 2)
    with pytest.raises(ValueError, match="window"):
        LocalSelfAttention(8, 2, window=-1)
    with pytest.raises(ValueError, match=r"\(B, T, d_model=8\)"):
        LocalSelfAttention(8, 2, window=1)(torch.randn(5, 8))
    with pytest.raises(ValueError, match=r"\(B, T, N, D=8\)"):
        DividedSpaceTimeAttention(8, 2)(torch.randn(2, 3, 8))
    with pytest.raises(ValueError, match="repeats"):
        fastest_seconds({"f": lambda: None}, repeats=0)


def test_empty_sequence():
    q, k, v = (torch.randn(2, 1, 0, 4) for _ in range(3))
    assert local_attention(q, k, v, 3).shape == (2, 1, 0, 4)


def test_local_attention_memory_grows_linearly_full_quadratically():
    def peaks(T):
        q, k, v = (torch.randn(1, 1, T, 8) for _ in range(3))
        with torch.no_grad():
            local = peak_memory_bytes(lambda: local_attention(q, k, v, 16))
            full = peak_memory_bytes(lambda: attention(q, k, v, band_mask(T, 16))[0])
        return local, full

    (local1, full1), (local2, full2) = peaks(128), peaks(512)
    assert 3.6 < local2 / local1 < 4.4  # 4x the length: 4x the memory
    assert 14 < full2 / full1 < 18  # 4x the length: 16x the memory
    assert full1 >= 4 * 128 * 128  # at least the float32 score matrix


def test_peak_memory_bytes_counts_a_known_allocation():
    n = 1 << 20
    peak = peak_memory_bytes(lambda: torch.ones(n, dtype=torch.float32) + 1)
    assert 8 * n <= peak <= 8 * n + 4096  # the ones and the result, 4 MiB each, both alive


def test_fastest_seconds_returns_the_minimum_of_its_repeats():
    ticks = iter(range(100))

    def clock() -> float:
        return float(next(ticks))

    result = fastest_seconds({"a": lambda: None}, repeats=3, clock=clock)
    assert result == {"a": 1.0}
    assert (
        fastest_seconds({"sleep": lambda: time.sleep(0.01)}, 1, time.perf_counter)["sleep"] >= 0.009
    )


def test_space_time_scores():
    counts = space_time_scores(16, 196)
    assert counts == {
        "full": 3136**2,
        "time": 196 * 16**2,
        "space": 16 * 196**2,
        "divided": 196 * 256 + 16 * 196**2,
    }
    same_position, same_frame = space_time_masks(16, 196)
    assert int(same_position.sum()) == counts["time"]
    assert int(same_frame.sum()) == counts["space"]


def test_divided_space_time_attention_equals_masked_full_attention():
    torch.manual_seed(0)
    B, T, N, D = 2, 3, 5, 8
    video = DividedSpaceTimeAttention(D, 2).double().eval()
    clip = torch.randn(B, T, N, D, dtype=torch.float64, requires_grad=True)
    same_position, same_frame = space_time_masks(T, N)
    ours = video(clip)
    tokens = clip.reshape(B, T * N, D)  # frame-major flattening
    tokens = tokens + video.time_attn(tokens, tokens, tokens, mask=same_position)[0]
    tokens = tokens + video.space_attn(tokens, tokens, tokens, mask=same_frame)[0]
    reference = tokens.view(B, T, N, D)
    torch.testing.assert_close(ours, reference)
    grad_out = torch.randn_like(ours)
    params = [clip, *video.parameters()]
    for g_ours, g_ref in zip(
        torch.autograd.grad(ours, params, grad_out),
        torch.autograd.grad(reference, params, grad_out),
        strict=True,
    ):
        torch.testing.assert_close(g_ours, g_ref)


def test_space_time_masks_layout():
    same_position, same_frame = space_time_masks(2, 3)
    # token f * 3 + p; frame 0 = tokens 0..2, frame 1 = tokens 3..5
    assert same_frame[0].tolist() == [True, True, True, False, False, False]
    assert same_position[1].tolist() == [False, True, False, False, True, False]


def test_benchmark_script_runs_and_its_record_matches_the_code(tmp_path):
    """benchmarks/long_attention.py end to end at tiny sizes; the recorded peaks (memory depends
    only on shapes and code) are what the code allocates today."""
    import importlib
    import json
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        script = importlib.import_module("long_attention")
    finally:
        sys.path.remove(str(root / "benchmarks"))
    out = tmp_path / "long.json"
    payload = script.main(f"--sizes 128 256 --repeats 1 --no-rss --json {out}".split())
    assert json.loads(out.read_text())["results"] == payload["results"]
    rows = {(r["T"], r["method"]): r for r in payload["results"]}
    assert set(rows) == {(T, m) for T in (128, 256) for m in script.METHODS}
    assert all(r["max_abs_difference_local_vs_full"] < 1e-5 for r in rows.values())
    assert rows[256, "full"]["peak_bytes"] > 3.5 * rows[128, "full"]["peak_bytes"]

    recorded = json.loads((root / "results/long_sequences/long_attention_cpu.json").read_text())
    settings = recorded["settings"]
    row = next(r for r in recorded["results"] if r["T"] == 1024 and r["method"] == "local")
    fn = script.contenders(1024, settings["window"], settings["head_dim"])["local"]
    with torch.no_grad():
        assert peak_memory_bytes(fn) == row["peak_bytes"]


@pytest.mark.parametrize("block_size", [None, 8, 16])
def test_the_readers_check_accepts_blocked_local_attention_for_any_block(block_size):
    """check_banded_attention (chapter 20's "Your turn") passes the book's blocked version with
    blocks as long as the largest window and longer than the probes' sequences, and names a band one frame
    too wide built from it."""
    from functools import partial

    from transformer_tutorial.check import check_banded_attention

    assert check_banded_attention(partial(local_attention, block_size=block_size)).ok

    def too_wide(q, k, v, window, causal=False, key_padding=None):
        return local_attention(q, k, v, window + 1, causal, key_padding)

    verdict = check_banded_attention(too_wide)
    assert not verdict.ok and "one frame too wide" in verdict.message
