"""Smoke tests of the benchmark scripts: each runs end to end with tiny sizes and reports
numbers that make sense. The benchmarks themselves are not tests (they print tables)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    """Import a script of benchmarks/ by name (they import their shared ``common`` helper)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_train_step_compares_equal_sized_models(bench, tmp_path, capsys):
    train_step = bench("train_step")
    out = tmp_path / "train_step.json"
    payload = train_step.main(
        "--sizes 1x16x2 2x32x4 --batch 3 --src-len 6 --tgt-len 5 --vocab 50 "
        f"--warmup 1 --repeats 2 --json {out}".split()
    )
    table = capsys.readouterr().out
    assert "| N=2, D=32, H=4 |" in table and "fused / nn.Transformer" in table
    assert json.loads(out.read_text()) == json.loads(json.dumps(payload))
    results = payload["results"]
    assert [(r["layers"], r["d_model"]) for r in results] == [(1, 16), (2, 32)]
    for r in results:
        assert r["ms_fused"] > 0 and r["ms_torch"] > 0 and r["ms_explicit"] > 0
        assert r["ratio_fused_over_torch"] == pytest.approx(r["ms_fused"] / r["ms_torch"])
    assert payload["environment"]["torch_threads"] == 2


def test_torch_reference_has_our_parameter_count_and_output_shape(bench):
    import torch

    from transformer_tutorial.transformer import Transformer, TransformerConfig

    train_step = bench("train_step")
    config = TransformerConfig(
        src_vocab_size=40, tgt_vocab_size=30, d_model=16, num_heads=2, d_ff=32, max_len=10,
        num_encoder_layers=2, num_decoder_layers=1,
    )  # fmt: skip
    ours, ref = Transformer(config), train_step.TorchTransformer(Transformer(config))
    n = sum(p.numel() for p in ours.parameters())
    assert n == sum(p.numel() for p in ref.parameters())
    src, tgt_in, tgt_out = train_step.make_batch(4, 7, 6, 30, torch.device("cpu"))
    assert (src == 0).any() and (tgt_in == 0).any(), "the batch should contain padding"
    assert ref(src, tgt_in).shape == ours(src, tgt_in).shape == (4, 6, 30)


def test_bad_size_is_rejected_with_a_clear_message(bench):
    train_step = bench("train_step")
    with pytest.raises(SystemExit):
        train_step.main(["--sizes", "6x512"])


def test_decoding_cache_matches_recompute_and_reports_speed(bench, capsys):
    decoding = bench("decoding")
    payload = decoding.main(
        "--layers 1 --d-model 16 --heads 2 --vocab 40 --batch 3 --src-len 5 "
        "--lengths 3 6 --beam 2 --warmup 0 --repeats 1".split()
    )
    table = capsys.readouterr().out
    assert "| greedy | 6 |" in table and "| beam 2 | 3 |" in table
    results = payload["results"]
    assert len(results) == 4
    for r in results:
        assert r["same_output"] is True
        assert r["tokens_per_second_cache"] > 0 and r["tokens_per_second_recompute"] > 0


def test_cuda_request_without_gpu_explains_itself(bench):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    decoding = bench("decoding")
    with pytest.raises(SystemExit, match="no CUDA GPU is visible"):
        decoding.main(["--device", "cuda"])


def test_quality_reads_the_committed_cpu_run(bench, capsys):
    quality = bench("quality")
    run = ROOT / "results" / "translator" / "tiny-cpu"
    payload = quality.main([str(run)])
    table = capsys.readouterr().out
    assert "| epoch | step | wall time (min) | val loss | val BLEU |" in table
    val = payload["validation"]
    assert val and all(v["kind"] == "val" for v in val)
    # One record after each pass (an int epoch), then perhaps the final model's, within a pass
    # (a float epoch, rounded: one step into pass 8 reads 7.0).
    passes = [v["epoch"] for v in val if isinstance(v["epoch"], int)]
    assert passes == list(range(1, len(passes) + 1))
    assert all(isinstance(v["epoch"], float) for v in val[len(passes) :])
    reached = payload["first_wall_time_s_at_val_bleu"]
    for level, seconds in reached.items():
        first = next((v for v in val if v["val_bleu"] >= float(level)), None)
        assert seconds == (None if first is None else first["elapsed_s"])
    results = json.loads((run / "results.json").read_text())
    assert payload["test"]["test_bleu"] == results["test_bleu"]


def test_quality_without_a_run_directory_explains_itself(bench, tmp_path):
    quality = bench("quality")
    with pytest.raises(SystemExit, match="metrics.jsonl"):
        quality.main([str(tmp_path)])


def test_averaging_scores_the_last_checkpoints_by_each_minute(bench, tmp_path, capsys, monkeypatch):
    import dataclasses

    import torch

    from transformer_tutorial.data import PAIRS
    from transformer_tutorial.decoding import translate
    from transformer_tutorial.tokens import train_tokenizer
    from transformer_tutorial.transformer import Transformer, TransformerConfig
    from transformer_tutorial.translator.checkpoint import load_checkpoint, save_checkpoint
    from transformer_tutorial.translator.report import score

    val = [("Ein Hund läuft.", "A dog runs."), ("Zwei Kinder spielen.", "Two children play.")]
    monkeypatch.setitem(
        PAIRS, "de-en", dataclasses.replace(PAIRS["de-en"], load=lambda *a, **k: val)
    )
    tokenizer = train_tokenizer([s for p in val * 5 for s in p], vocab_size=60, min_frequency=1)
    V = tokenizer.get_vocab_size()
    config = TransformerConfig(
        src_vocab_size=V, tgt_vocab_size=V, d_model=16, num_heads=2, num_encoder_layers=1,
        num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=24, share_embeddings=True,
    )  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    (run / "args.json").write_text(json.dumps({"pair": "de-en", "run_dir": str(run)}))
    train = [{"kind": "train", "step": s, "elapsed_s": 25.0 * s} for s in range(1, 9)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in train))
    torch.manual_seed(0)
    for step in range(1, 9):  # a checkpoint at every step, 25 s apart
        model = Transformer(config)
        save_checkpoint(run / "checkpoints", model, config, tokenizer, step=step, keep_last=None)
    out = tmp_path / "averaging.json"
    averaging = bench("averaging")
    payload = averaging.main([str(run), "--last", "1", "3", "--every", "2", "--json", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(payload))
    (result,) = payload["runs"]
    assert "run_dir" not in result["args"]
    rows = result["points"]
    # every whole minute of the run (200 s), and its end; only even steps (--every 2)
    assert [r["minutes"] for r in rows] == [1, 2, 3, pytest.approx(200 / 60)]
    assert [r["step"] for r in rows] == [2, 4, 6, 8]  # 50, 100, 150, 200 s
    assert "val_bleu_last_3" not in rows[0] and "val_bleu_last_3" not in rows[1]  # too few
    assert [rows[2]["steps_last_3"], rows[3]["steps_last_3"]] == [[2, 4, 6], [4, 6, 8]]
    for r in rows:
        model, _, tok, _ = load_checkpoint(run / "checkpoints" / f"step-{r['step']:06d}")
        alone = score(
            PAIRS["de-en"], translate(model, tok, [s for s, _ in val]), [t for _, t in val]
        )
        assert r["val_bleu"] == r["val_bleu_last_1"] == alone[0].score
    assert "| by | step | saved at (min) | alone | K = 1 | K = 3 |" in capsys.readouterr().out
    by_step = averaging.main([str(run), "--steps", "5", "7", "--last", "2"])["runs"][0]
    assert [(r["step"], r["steps_last_2"]) for r in by_step["points"]] == [(5, [4, 5]), (7, [6, 7])]


def test_cpu_step_times_the_translator_variants(bench, tmp_path, capsys):
    cpu_step = bench("cpu_step")
    out = tmp_path / "cpu_step.json"
    payload = cpu_step.main(
        ["--batch", "4", "--length", "6", "--warmup", "1", "--repeats", "2", "--profile-steps", "1"]
        + ["--json", str(out)]
    )
    assert json.loads(out.read_text()) == payload
    records = payload["results"]
    assert [r["variant"] for r in records] == list(cpu_step.VARIANTS)
    assert all(r["ms_per_step"] > 0 for r in records)
    assert records[0]["speed_up_over_before"] == 1.0
    assert "speed-up over before" in capsys.readouterr().out
    for shares in payload["profiles"].values():
        assert 0 < sum(shares.values()) <= 1 + 1e-9


def test_cores_step_times_threads_processes_and_the_probes(bench, tmp_path, capsys):
    cores_step = bench("cores_step")
    out = tmp_path / "cores_step.json"
    payload = cores_step.main(
        ["--warmup", "1", "--repeats", "2", "--probe-floats", "1000", "--json", str(out)]
    )
    assert json.loads(out.read_text()) == payload
    ms = payload["ms"]
    assert len(ms) == 10 and all(v > 0 for v in ms.values())
    assert "2 processes, 1 thread each, as torchrun runs them" in ms
    assert payload["gradient_floats"] == 1_758_208  # the preset's parameters (results.json)
    printed = capsys.readouterr().out
    assert "times the 2-thread step" in printed and "memory: add two 0.004 MB vectors" in printed


def test_the_readme_table_names_every_script_and_nothing_else():
    """benchmarks/README.md's table of scripts is where a reader looks first: it must not drift."""
    import re

    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    table = readme.split("| script | measures |")[1].split("\n\n")[0]
    named = set(re.findall(r"^\| `([\w.]+)` \|", table, flags=re.MULTILINE))
    scripts = {p.name for p in (ROOT / "benchmarks").iterdir() if p.suffix in (".py", ".sh")}
    assert named == scripts - {"common.py"}, sorted(named ^ (scripts - {"common.py"}))


@pytest.mark.browser
def test_web_translator_weighs_and_times_the_page_against_pytorch(bench, tmp_path, capsys):
    import torch

    from transformer_tutorial.tokens import train_tokenizer
    from transformer_tutorial.transformer import Transformer, TransformerConfig
    from transformer_tutorial.translator.checkpoint import save_checkpoint
    from transformer_tutorial.translator.vocab import TokenizerPair

    torch.manual_seed(0)
    de, en = ["Ein Hund läuft auf der Straße."] * 4, ["A dog runs on the street."] * 4
    pair = TokenizerPair(train_tokenizer(de, 40, 1), train_tokenizer(en, 40, 1))
    sizes = {"src_vocab_size": pair.source.get_vocab_size(), "tgt_vocab_size": 40}
    config = TransformerConfig(**sizes, d_model=16, num_heads=2, num_encoder_layers=1,
                               num_decoder_layers=1, d_ff=32, max_len=64, norm_first=True)  # fmt: skip
    ckpt = save_checkpoint(tmp_path, Transformer(config), config, pair, step=3)
    payload = bench("web_translator").main(
        ["--de-en", str(ckpt), "--sentences", "3", "--beam", "1", "2"]
    )
    out = capsys.readouterr().out
    assert "| de-en.js |" in out and "ms/sentence beam 2" in out
    row = payload["page"]["pairs"][0]
    assert row["greedy_equal_tokens"] == 1.0 and row["ms_per_sentence_beam1"] > 0
    assert row["console_errors"] == [] and payload["page"]["bytes"]["de-en.js"] > 0
