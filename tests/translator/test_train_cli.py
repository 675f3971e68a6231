"""Tests of the training command line (transformer_tutorial.train), on tiny models and data.

Each test runs the real command in a subprocess on a few hundred captions in Multi30k's and
Tatoeba's file layouts (``conftest.py``): the records it writes, resuming after SIGKILL, two
processes under torchrun against one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from transformer_tutorial.translator.checkpoint import load_checkpoint
from transformer_tutorial.translator.vocab import TokenizerPair

TESTS = Path(__file__).resolve().parent  # armed_train.py, crashes.py and instruments.py live here
TINY = [
    "--vocab-size", "300", "--d-model", "32", "--layers", "1", "--heads", "2", "--d-ff", "64",
    "--target-vocab-size", "200", "--max-tokens", "600", "--warmup", "10", "--beam-size", "2",
    "--no-progress", "--log-every", "1",
]  # fmt: skip


def run_train(
    data_dir: Path,
    run_dir: Path,
    *extra: str,
    env: dict | None = None,
    torchrun: int = 0,
    tiny=True,
    kill_before_step: int | None = None,
    signal_at: tuple[int, int] | None = None,
    kill_during_evaluation: bool = False,
    kill_at_replace: int | None = None,
    sigint: str = "default",
    plain_sgd: float | None = None,
):
    """Run the training command on ``data_dir``. A fault (``kill_before_step`` ...) runs it in
    a Python process that meets it; ``sigint`` says how that process treats SIGINT: "default"
    (KeyboardInterrupt, as when started from a terminal) or "ignored" (as a script's background
    job inherits it), whatever the disposition this test process was itself started with.
    ``plain_sgd`` trains with SGD instead of Adam, at that multiple of the schedule's rate
    (``instruments.use_plain_sgd``)."""
    arm = None  # the real command, in a process that meets the fault
    if kill_before_step is not None:
        arm = f"crashes.kill_before_step({kill_before_step})"
    elif signal_at is not None:
        arm = f"crashes.signal_before_step({signal_at[0]}, {int(signal_at[1])})"
    elif kill_during_evaluation:
        arm = "crashes.kill_during_evaluation()"
    elif kill_at_replace is not None:
        arm = f"crashes.kill_at_replace({kill_at_replace})"
    elif plain_sgd is not None:
        arm = f"instruments.use_plain_sgd({plain_sgd})"
    python = [sys.executable]
    if torchrun:
        python += ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={torchrun}"]
    if arm is not None:
        launcher = [*python, str(TESTS / "armed_train.py")]
        env = {"ARM": arm, "SIGINT": sigint} | (env or {})
    else:
        launcher = [*python, "-m", "transformer_tutorial.train"]
    options = [*(TINY if tiny else []), *extra]
    cmd = [*launcher, "--data-dir", str(data_dir), "--run-dir", str(run_dir), *options]
    full_env = os.environ | {"OMP_NUM_THREADS": "1"} | (env or {})
    return subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=600)


def final_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    latest = (run_dir / "checkpoints" / "latest").read_text().strip()
    return load_file(str(run_dir / "checkpoints" / latest / "model.safetensors"))


@pytest.mark.slow  # a real training run: `make unit` skips it, `make test` runs it
def test_training_lowers_the_loss_and_writes_its_records(tmp_path, data_dir):
    run_dir = tmp_path / "run"
    result = run_train(data_dir, run_dir, "--max-steps", "40", "--checkpoint-every", "20")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr

    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in train] == list(range(1, 41))
    for r in train:
        assert {
            "step",
            "epoch",
            "loss",
            "lr",
            "grad_norm",
            "tokens",
            "tokens_per_s",
            "elapsed_s",
        } <= set(r)
    first, last = sum(r["loss"] for r in train[:5]) / 5, sum(r["loss"] for r in train[-5:]) / 5
    assert last < first - 0.5, (first, last)  # the loss falls
    vals = [r for r in records if r["kind"] == "val"]
    assert vals and all({"val_loss", "val_bleu", "epoch", "step"} <= set(r) for r in vals)
    assert vals[-1]["val_loss"] < vals[0]["val_loss"] or len(vals) == 1
    assert [r["kind"] for r in records].count("test") == 1

    results = json.loads((run_dir / "results.json").read_text())
    for key in ("test_bleu", "sacrebleu_signature", "beam_size", "command", "git_commit",
                "hardware", "wall_time_s", "steps", "config", "val_bleu", "test_sentences"):  # fmt: skip
        assert key in results, key
    assert results["steps"] == 40 and results["test_sentences"] == 12
    assert results["command"].startswith("python -m transformer_tutorial.train --data-dir")
    assert "tok:13a" in results["sacrebleu_signature"]
    assert results["hardware"]["cpu_cores"] >= 1 and results["hardware"]["device"] == "cpu"
    assert results["wall_time_s"] > 0

    samples = json.loads((run_dir / "samples.json").read_text())
    assert len(samples) == 10 and {"source", "reference", "hypothesis"} <= set(samples[0])
    maps = json.loads((run_dir / "attention.json").read_text())
    assert len(maps) == 3
    for m in maps:
        enc = torch.tensor(m["encoder_self_attention"])  # (L, H, S, S)
        cross = torch.tensor(m["decoder_cross_attention"])  # (L, H, T, S)
        S, T = len(m["source_tokens"]), len(m["target_tokens"])
        assert enc.shape == (1, 2, S, S) and cross.shape == (1, 2, T, S)
        assert m["source_tokens"][-1] == "<eos>" and m["target_tokens"][0] == "<bos>"
        assert torch.allclose(enc.sum(-1), torch.ones(1, 2, S), atol=1e-3)
        assert torch.allclose(cross.sum(-1), torch.ones(1, 2, T), atol=1e-3)

    # The finished run cannot be started over by accident.
    again = run_train(data_dir, run_dir, "--max-steps", "2")
    assert again.returncode == 2 and "--resume" in again.stderr and "Traceback" not in again.stderr
    # Nor by --resume once its checkpoints are deleted to free disk space.
    kept = {f: (run_dir / f).read_bytes() for f in ("results.json", "metrics.jsonl")}
    shutil.rmtree(run_dir / "checkpoints")
    again = run_train(data_dir, run_dir, "--resume", tiny=False)
    assert again.returncode == 2 and "holds a finished run" in again.stderr, again.stderr
    assert "new --run-dir" in again.stderr and "Traceback" not in again.stderr
    assert kept == {f: (run_dir / f).read_bytes() for f in kept}


@pytest.mark.slow  # a real training run: `make unit` skips it, `make test` runs it
def test_a_run_killed_with_sigkill_resumes_to_the_same_weights(tmp_path, data_dir):
    args = ("--max-steps", "14", "--checkpoint-every", "4", "--dropout", "0.1")
    whole = run_train(data_dir, tmp_path / "whole", *args)
    assert whole.returncode == 0, whole.stderr

    killed_dir = tmp_path / "killed"
    killed = run_train(data_dir, killed_dir, *args, kill_before_step=11)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (killed_dir / "checkpoints" / "latest").read_text().strip() == "step-000008"
    assert not (killed_dir / "results.json").exists()

    # --resume alone: every other option comes back from the run's args.json.
    resumed = run_train(data_dir, killed_dir, "--resume", tiny=False)
    assert resumed.returncode == 0, resumed.stderr
    a, b = final_weights(tmp_path / "whole"), final_weights(killed_dir)
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name  # bit for bit
    # The log reads like one run: every step once.
    steps = [json.loads(line)["step"] for line in (killed_dir / "metrics.jsonl").read_text().splitlines()
             if json.loads(line)["kind"] == "train"]  # fmt: skip
    assert steps == list(range(1, 15))
    assert json.loads((killed_dir / "results.json").read_text())["resumed"] is True


@pytest.mark.slow  # a real training run: `make unit` skips it, `make test` runs it
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed missing")
def test_two_processes_match_one_process_on_the_same_global_batches(tmp_path, data_dir):
    """torchrun with two processes takes the steps one process takes: each step's global batch
    is the same sentences, split in two, and the gradients the two processes average are the
    gradient of the whole batch. What differs is only the order in which the floats are summed.

    The steps are taken with plain SGD (``instruments.use_plain_sgd``), whose update is linear
    in the gradient, so that difference stays at the size of rounding in every weight, on every
    CPU. (Adam would turn the rounding noise of a zero gradient into a full-size step whose sign
    depends on the summation order; which coordinates that hits depends on the CPU's kernels.)
    A missing average (gradients summed) or a batch not split the same way changes the weights by
    the size of a step, ten thousand times the tolerance."""
    args = (
        "--max-steps", "5", "--checkpoint-every", "5", "--dropout", "0.0", "--max-tokens", "900",
    )  # fmt: skip
    # The single process runs PyTorch's generic (non-vectorised) kernels, the two others the
    # CPU's own: the comparison then also spans the kernel paths that differ between CPUs (a
    # guarantee that holds only where the kernels agree fails here, on any machine).
    generic = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
    single = run_train(data_dir, tmp_path / "one", *args, plain_sgd=100.0, env=generic)
    assert single.returncode == 0, single.stderr
    double = run_train(data_dir, tmp_path / "two", *args, torchrun=2, plain_sgd=100.0)
    assert double.returncode == 0, double.stderr + double.stdout
    assert (tmp_path / "one" / "tokenizer.json").read_text() == (
        tmp_path / "two" / "tokenizer.json"
    ).read_text()
    results = json.loads((tmp_path / "two" / "results.json").read_text())
    assert results["hardware"]["world_size"] == 2
    # Train records of both runs show the same global token counts step by step, and the same
    # gradient norms (of the averaged gradient, before clipping) to rounding. (The logged loss
    # of a two-process run is rank 0's half of the batch, so it is not compared.)
    train = [
        [json.loads(line) for line in (tmp_path / d / "metrics.jsonl").read_text().splitlines()
         if json.loads(line)["kind"] == "train"]
        for d in ("one", "two")
    ]  # fmt: skip
    assert [r["tokens"] for r in train[0]] == [r["tokens"] for r in train[1]]
    assert [r["step"] for r in train[1]] == [1, 2, 3, 4, 5]
    for a, b in zip(*train, strict=True):
        assert b["grad_norm"] == pytest.approx(a["grad_norm"], rel=1e-5), (a, b)
        assert b["lr"] == a["lr"]
    a, b = final_weights(tmp_path / "one"), final_weights(tmp_path / "two")
    start = final_weights_at_init(data_dir, tmp_path / "init")
    assert a.keys() == b.keys() == start.keys()
    moved = max((a[name] - start[name]).abs().max().item() for name in a)
    assert moved > 1e-2  # the steps are real: the tolerance below is far smaller than a step
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=2e-6, rtol=1e-5, msg=name)
    one, _, _, _ = load_checkpoint(tmp_path / "one")
    two, _, _, _ = load_checkpoint(tmp_path / "two")
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, 0, 0]])
    tgt = torch.tensor([[2, 11, 12, 13], [2, 14, 0, 0]])
    with torch.no_grad():
        torch.testing.assert_close(one(src, tgt), two(src, tgt), atol=1e-5, rtol=1e-5)


def final_weights_at_init(data_dir: Path, run_dir: Path) -> dict[str, torch.Tensor]:
    """The weights the runs above start from: the same command stopped before its first step
    takes effect (one step at a learning rate of zero)."""
    result = run_train(data_dir, run_dir, "--max-steps", "1", "--checkpoint-every", "1",
                       "--dropout", "0.0", "--max-tokens", "900", plain_sgd=0.0)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return final_weights(run_dir)


@pytest.mark.slow  # a real training run: `make unit` skips it, `make test` runs it
def test_time_budget_and_bf16_autocast(tmp_path, data_dir):
    """--max-minutes stops after the step that crosses it; bf16 autocast runs on the CPU."""
    run_dir = tmp_path / "run"
    result = run_train(data_dir, run_dir, "--max-minutes", "0.0001", "--precision", "bf16")
    assert result.returncode == 0, result.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["steps"] == 1 and results["precision"] == "torch.bfloat16"
    assert (run_dir / "checkpoints" / "latest").read_text().strip() == "step-000001"


def test_missing_data_is_a_clear_error(tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "TRANSFORMER_TUTORIAL_DATA": str(empty),
           "HOME": str(tmp_path), "https_proxy": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}  # fmt: skip
    result = run_train(empty, tmp_path / "run", "--max-steps", "1", env=env)
    assert result.returncode == 2
    assert "Multi30k split 'train'" in result.stderr and "Traceback" not in result.stderr


def test_resume_without_a_checkpoint_is_a_clear_error(tmp_path, data_dir):
    result = run_train(data_dir, tmp_path / "fresh", "--max-steps", "1", "--resume")
    assert result.returncode == 2
    assert "holds no run to continue" in result.stderr and "Traceback" not in result.stderr
    shutil.rmtree(tmp_path / "fresh", ignore_errors=True)


@pytest.mark.slow  # a real training run: `make unit` skips it, `make test` runs it
@pytest.mark.parametrize("pair", ["en-zh", "zh-en"])
def test_chinese_english_through_the_same_command(tmp_path, data_dir, pair):
    run_dir = tmp_path / pair
    result = run_train(data_dir, run_dir, "--pair", pair, "--max-steps", "6")
    assert result.returncode == 0, result.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["pair"] == pair and results["test_sentences"] == 12
    assert results["test_set"].startswith("tatoeba cmn-eng")
    target_tokenizer = "tok:zh" if pair.endswith("zh") else "tok:13a"
    assert target_tokenizer in results["sacrebleu_signature"]
    assert results["references"] == "Unicode NFKC"
    samples = json.loads((run_dir / "samples.json").read_text())
    chinese_side = "reference" if pair.endswith("zh") else "source"
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in s[chinese_side]) for s in samples)
    _, _, tokenizers, _ = load_checkpoint(run_dir)
    for tokenizer in (tokenizers.source, tokenizers.target):
        assert tokenizer.normalizer.normalize_str("你好，世界！") == "你好,世界!"  # NFKC
    # --resume restores the pair from args.json: the finished run is evaluated again, not mixed.
    again = run_train(data_dir, run_dir, "--resume", tiny=False)
    assert again.returncode == 0, again.stderr
    assert json.loads((run_dir / "results.json").read_text())["pair"] == pair


@pytest.mark.slow
def test_linear_schedule_runs_and_the_choices_benchmark_compares_runs(
    tmp_path, data_dir, monkeypatch
):
    runs = {"paper": tmp_path / "paper", "linear": tmp_path / "linear"}
    for name, run_dir in runs.items():
        extra = ["--lr-schedule", "linear" if name == "linear" else "inverse-sqrt"]
        result = run_train(data_dir, run_dir, "--max-steps", "6", "--checkpoint-every", "2", *extra)
        assert result.returncode == 0, result.stderr
    lr = {
        name: [r["lr"] for r in map(json.loads, (d / "metrics.jsonl").open()) if "lr" in r]
        for name, d in runs.items()
    }
    assert lr["linear"][-1] < lr["paper"][-1] / 3  # falling to zero, not still warming up
    val = [json.loads(line) for line in (runs["linear"] / "metrics.jsonl").open()]
    assert [r["step"] for r in val if r["kind"] == "val"][-1] == 6  # the final model's record
    sys.path.insert(0, str(TESTS.parents[1] / "benchmarks"))
    monkeypatch.setenv("TRANSFORMER_TUTORIAL_DATA", str(data_dir))  # the benchmarks read it
    import choices

    payload = choices.main(
        [str(runs["paper"]), str(runs["linear"]), "--average", "2"]
        + ["--length-penalties", "0", "2", "--beam-size", "2"]
    )
    paper, linear = payload["runs"]
    assert paper["changes"] == "(baseline)" and linear["changes"] == "--lr-schedule linear"
    for r in (paper, linear):
        assert r["steps"] == 6 and r["early_step"] == 6
        assert 0 <= r["val_bleu_early"] <= 100 and 0 <= r["val_bleu_average_last_2"] <= 100
        short, long = r["length_penalty_sweep"]
        assert (short["length_penalty"], long["length_penalty"]) == (0, 2)
        assert short["ratio"] <= long["ratio"]  # a larger alpha favours longer outputs
    import throughput

    speed = throughput.main([str(runs["linear"]), "--sentences", "4", "--repeats", "1"])
    assert [r["search"] for r in speed["results"]] == ["greedy", "beam 4"]
    assert all(r["sentences"] == 4 and r["sentences_per_second"] > 0 for r in speed["results"])


def test_separate_vocabularies_train_checkpoint_translate_and_resume(tmp_path, data_dir):
    run_dir = tmp_path / "separate"
    result = run_train(data_dir, run_dir, "--max-steps", "6")  # TINY: --target-vocab-size 200
    assert result.returncode == 0, result.stderr
    model, config, tokenizer, _ = load_checkpoint(run_dir)
    assert isinstance(tokenizer, TokenizerPair)
    assert (config.src_vocab_size, config.tgt_vocab_size) == (300, 200)
    assert not config.share_embeddings and model.src_embed is not model.tgt_embed
    assert model.output.weight is model.tgt_embed.embedding.weight  # still tied to the target
    german, english = tokenizer.source.get_vocab(), tokenizer.target.get_vocab()
    umlauts = [any(ch in piece for piece in vocab for ch in "äöü") for vocab in (german, english)]
    assert umlauts == [True, False]  # each vocabulary learned from its own language only
    attention = json.loads((run_dir / "attention.json").read_text())
    assert all(t in english for a in attention for t in a["target_tokens"])
    translated = subprocess.run(
        [sys.executable, "-m", "transformer_tutorial.translate", "--checkpoint", str(run_dir)],
        input="Ein Hund läuft.\n", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert translated.returncode == 0, translated.stderr
    assert len(translated.stdout.splitlines()) == 1
    # A resumed run keeps its two vocabularies; asking for another size is refused.
    refused = run_train(data_dir, run_dir, "--resume", "--target-vocab-size", "250", tiny=False)
    assert refused.returncode == 2 and "--target-vocab-size 250 differs" in refused.stderr
    again = run_train(data_dir, run_dir, "--resume", "--max-steps", "8", tiny=False)
    assert again.returncode == 0, again.stderr
    _, config_after, tokenizer_after, meta = load_checkpoint(run_dir)
    assert meta["step"] == 8 and config_after == config
    assert tokenizer_after.target.to_str() == tokenizer.target.to_str()


@pytest.mark.slow  # two short training runs
def test_target_vocab_size_0_shares_one_vocabulary_and_older_runs_resume_shared(tmp_path, data_dir):
    run_dir = tmp_path / "shared"
    result = run_train(data_dir, run_dir, "--target-vocab-size", "0", "--max-steps", "4")
    assert result.returncode == 0, result.stderr
    model, config, tokenizer, _ = load_checkpoint(run_dir)
    assert not isinstance(tokenizer, TokenizerPair)
    assert config.src_vocab_size == config.tgt_vocab_size == tokenizer.get_vocab_size() == 300
    assert config.share_embeddings and model.src_embed is model.tgt_embed
    assert not (run_dir / "target_tokenizer.json").exists()
    # A run saved before the option existed has no value for it: it resumes with its one shared
    # vocabulary, not the preset's two.
    saved_path = run_dir / "args.json"
    saved = json.loads(saved_path.read_text())
    del saved["target_vocab_size"]
    saved_path.write_text(json.dumps(saved))
    again = run_train(data_dir, run_dir, "--resume", "--max-steps", "6", tiny=False)
    assert again.returncode == 0, again.stderr
    _, config_after, tokenizer_after, meta = load_checkpoint(run_dir)
    assert meta["step"] == 6 and config_after == config
    assert not isinstance(tokenizer_after, TokenizerPair)
    assert json.loads(saved_path.read_text())["target_vocab_size"] == 0
