"""Faults and odd input around the training command: every one ends in a message that says what
is wrong and what to do (exit status 2), or in a run that resumes to the same result -- never a
traceback, never a silent wrong answer."""

from __future__ import annotations

import errno
import fcntl
import gzip
import json
import os
import signal
import stat

import pytest
import torch
from test_train_cli import TINY, run_train

from transformer_tutorial.tokens import train_tokenizer
from transformer_tutorial.transformer import Transformer, TransformerConfig
from transformer_tutorial.translator.checkpoint import save_checkpoint
from transformer_tutorial.translator.train import main


def train(capsys, *args: str) -> tuple[int, str]:
    code = main([*TINY, *args])
    return code, capsys.readouterr().err


def test_a_run_dir_that_is_a_file(tmp_path, capsys):
    (tmp_path / "run").write_text("not a folder")
    code, err = train(capsys, "--run-dir", str(tmp_path / "run"), "--max-steps", "1")
    assert code == 2 and "is a file" in err and "Traceback" not in err


def test_a_second_training_is_refused_while_the_first_holds_the_run_dir(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with open(run_dir / ".lock", "w") as holder:  # what a running training holds
        holder.write("4242\n")
        holder.flush()
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, err = train(capsys, "--run-dir", str(run_dir), "--max-steps", "1")
    assert code == 2 and "in use by another training (process 4242)" in err
    assert not (run_dir / "args.json").exists()  # nothing of the run was touched


def test_a_started_run_is_not_overwritten_and_a_fresh_dir_cannot_be_resumed(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    code, err = train(capsys, "--run-dir", str(run_dir), "--resume")
    assert code == 2 and "holds no run to continue" in err
    (run_dir / "args.json").write_text(json.dumps({"preset": "tiny"}))  # killed before step 1
    code, err = train(capsys, "--run-dir", str(run_dir), "--max-steps", "1")
    assert code == 2 and "already holds a run" in err and "--resume" in err


def test_a_finished_run_without_checkpoints_is_not_started_again(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "args.json").write_text(json.dumps({"preset": "tiny"}))
    (run_dir / "results.json").write_text('{"test_bleu": 30.0}')  # its checkpoints deleted
    code, err = main(["--run-dir", str(run_dir), "--resume"]), capsys.readouterr().err
    assert code == 2 and "holds a finished run" in err and "new --run-dir" in err
    assert "translating needs a checkpoint" in err and "Traceback" not in err
    assert (run_dir / "results.json").read_text() == '{"test_bleu": 30.0}'


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--max-minutes", "0", "positive number of minutes"),
        ("--max-minutes", "-1", "positive number of minutes"),
        ("--max-minutes", "nan", "positive number of minutes"),
        ("--train-sentences", "0", "at least 1"),
        ("--train-sentences", "-5", "at least 1"),
        ("--keep-checkpoints", "0", "at least 1"),
        ("--length-penalty", "nan", "between 0 and 10"),
        ("--dropout", "1.0", "below 1"),
        ("--clip-norm", "inf", "positive"),
        ("--target-vocab-size", "-1", "0 (one vocabulary for both languages) or a size"),
    ],
)
def test_options_that_would_mean_something_odd_are_refused(tmp_path, capsys, option, value, words):
    code, err = train(capsys, "--run-dir", str(tmp_path / "run"), option, value)
    assert code == 2 and option in err and words in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()  # checked before anything is written


def test_resume_keeps_the_model_it_was_trained_as(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "args.json").write_text(json.dumps({"preset": "tiny", "heads": 4, "pair": "de-en"}))
    code, err = train(capsys, "--run-dir", str(run_dir), "--resume", "--heads", "8")
    assert code == 2 and "--heads 8 differs from this run's 4" in err
    code, err = main(["--run-dir", str(run_dir), "--resume", "--preset", "base"]), None
    assert code == 2 and "--preset base differs" in capsys.readouterr().err
    (run_dir / "args.json").write_text('{"preset": "ti')  # cut short
    code, err = train(capsys, "--run-dir", str(run_dir), "--resume")
    assert code == 2 and "args.json is damaged" in err


def test_a_damaged_data_file_is_named(tmp_path, capsys, data_dir):
    broken = tmp_path / "data"
    broken.mkdir()
    for f in data_dir.glob("*.??"):
        (broken / f.name).write_bytes(f.read_bytes())
    good = gzip.compress((data_dir / "train.de").read_bytes())
    (broken / "train.de").unlink()
    (broken / "train.de.gz").write_bytes(good[: len(good) // 2])  # a cut-off download
    args = ["--data-dir", str(broken), "--run-dir", str(tmp_path / "run"), "--max-steps", "1"]
    code, err = train(capsys, *args)
    assert code == 2 and "train.de.gz is damaged" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "failure",
    [
        OSError(errno.ENOSPC, "No space left on device", "state.pt"),
        RuntimeError(
            "[enforce fail at inline_container.cc:672] . PytorchStreamWriter failed "
            "writing file data/0: file write failed"
        ),  # fmt: skip
    ],
)
def test_a_full_disk_is_a_message(tmp_path, capsys, data_dir, monkeypatch, failure):
    def full(*args, **kwargs):
        raise failure

    monkeypatch.setattr(torch, "save", full)  # the first checkpoint's training state
    args = ["--data-dir", str(data_dir), "--run-dir", str(tmp_path / "run"), "--max-steps", "2"]
    code, err = train(capsys, *args, "--checkpoint-every", "1")
    assert code == 2 and "no space left" in err and "--resume" in err and "Traceback" not in err


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_checkpoint_files_follow_the_umask(tmp_path, umask):
    tokenizer = train_tokenizer(["ein Hund", "a dog"] * 5, vocab_size=40, min_frequency=1)
    V = tokenizer.get_vocab_size()
    config = TransformerConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=8, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=16, max_len=8)  # fmt: skip
    before = os.umask(umask)
    try:
        path = save_checkpoint(tmp_path / "ckpt", Transformer(config), config, tokenizer, step=1)
    finally:
        os.umask(before)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(path) == 0o777 & ~umask
    for f in [*path.iterdir(), tmp_path / "ckpt" / "latest"]:
        assert mode(f) == 0o666 & ~umask, f.name


@pytest.mark.slow  # real training runs: `make unit` skips it, `make test` runs it
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_training_and_says_how_to_continue(tmp_path, data_dir, signum):
    args = ("--max-steps", "6", "--checkpoint-every", "2")
    stopped = run_train(data_dir, tmp_path / "run", *args, signal_at=(4, signum))
    assert stopped.returncode == 130 and "continue with --resume" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    resumed = run_train(data_dir, tmp_path / "run", "--resume", tiny=False)
    assert resumed.returncode == 0, resumed.stderr


@pytest.mark.slow  # a real training run: `make unit` skips it, `make test` runs it
def test_an_inherited_ignore_of_sigint_is_honoured(tmp_path, data_dir):
    """A script's background job (``train ... &``) starts with SIGINT ignored, so that Ctrl-C
    in the terminal does not reach it: the training keeps running to its end."""
    args = ("--max-steps", "4", "--checkpoint-every", "2")
    result = run_train(data_dir, tmp_path / "run", *args, signal_at=(3, signal.SIGINT),
                       sigint="ignored")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "results.json").is_file()


@pytest.mark.slow  # real training runs: `make unit` skips it, `make test` runs it
@pytest.mark.parametrize(
    "fault",
    [{"kill_before_step": 2}, {"kill_during_evaluation": True}],
    ids=["before-the-first-checkpoint", "during-the-evaluation"],
)
def test_a_killed_run_resumes_to_the_same_results(tmp_path, data_dir, fault):
    """Mid-training is test_train_cli's kill test; these are the stages around it."""
    args = ("--max-steps", "6", "--checkpoint-every", "3")
    whole = run_train(data_dir, tmp_path / "whole", *args)
    assert whole.returncode == 0, whole.stderr
    killed = run_train(data_dir, tmp_path / "killed", *args, **fault)
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed" / "results.json").exists()
    for _ in range(2):  # and a second resume of the finished run changes nothing
        resumed = run_train(data_dir, tmp_path / "killed", "--resume", tiny=False)
        assert resumed.returncode == 0, resumed.stderr
    a = json.loads((tmp_path / "whole" / "results.json").read_text())
    b = json.loads((tmp_path / "killed" / "results.json").read_text())
    for key in ("test_bleu", "val_bleu", "val_loss", "steps", "epochs", "train_tokens"):
        assert a[key] == b[key], key
    log = [
        json.loads(line)
        for line in (tmp_path / "killed" / "metrics.jsonl").read_text().splitlines()
    ]
    assert [r["kind"] for r in log].count("test") == 1
    assert [r["step"] for r in log if r["kind"] == "train"] == list(range(1, 7))


def small_checkpoint_parts():
    tokenizer = train_tokenizer(["ein Hund", "a dog"] * 5, vocab_size=40, min_frequency=1)
    V = tokenizer.get_vocab_size()
    config = TransformerConfig(src_vocab_size=V, tgt_vocab_size=V, d_model=8, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=16, max_len=8)  # fmt: skip
    return Transformer(config), config, tokenizer


def test_resume_skips_a_damaged_newest_checkpoint(tmp_path, capsys):
    from transformer_tutorial.translator.rundir import newest_sound_checkpoint

    model, config, tokenizer = small_checkpoint_parts()
    for step in (1, 2):
        save_checkpoint(tmp_path, model, config, tokenizer, step=step, keep_last=None)
    weights = tmp_path / "step-000002" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + b"\0" * 8)  # damaged after it was saved
    assert newest_sound_checkpoint(tmp_path).name == "step-000001"
    assert "step-000002/model.safetensors is not the file that was saved" in capsys.readouterr().err


def test_a_config_with_a_value_of_the_wrong_type_is_named(tmp_path):
    from transformer_tutorial.translator.checkpoint import CheckpointError, load_checkpoint

    model, config, tokenizer = small_checkpoint_parts()
    path = save_checkpoint(tmp_path, model, config, tokenizer, step=1)
    meta = json.loads((path / "meta.json").read_text())
    del meta["sha256"]  # as written before checksums: the type check is what is left
    (path / "meta.json").write_text(json.dumps(meta))
    data = json.loads((path / "config.json").read_text()) | {"d_ff": 16.0}
    (path / "config.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="d_ff must be int, got 16.0"):
        load_checkpoint(path)


def test_a_metrics_line_cut_short_does_not_block_a_resume(tmp_path):
    from transformer_tutorial.translator.callbacks import MetricsLog

    log = tmp_path / "metrics.jsonl"
    log.write_text('{"kind": "train", "step": 1}\n{"kind": "train", "step": 2}\n{"kind": "tr')
    assert [r["step"] for r in MetricsLog(log, enabled=False, resume_from=None).read()] == [1, 2]
    log.write_text('{"kind": "train", "step": 1}\nnot json\n{"kind": "train", "step": 3}\n')
    with pytest.raises(ValueError, match="metrics.jsonl, line 2"):
        MetricsLog(log, enabled=False, resume_from=None).read()


@pytest.mark.slow  # one killed run per file write: `make unit` skips it, `make test` runs it
def test_a_kill_at_every_file_write_resumes_to_the_same_results(tmp_path, data_dir):
    """SIGKILL just before each ``os.replace`` of a short run, in turn; every killed run is
    resumed until it finishes, and ends with the uninterrupted run's results."""
    args = ("--max-steps", "4", "--checkpoint-every", "2", "--samples", "3")
    whole = run_train(data_dir, tmp_path / "whole", *args)
    assert whole.returncode == 0, whole.stderr
    expected = json.loads((tmp_path / "whole" / "results.json").read_text())
    keys = ("test_bleu", "val_bleu", "val_loss", "steps", "epochs", "train_tokens")
    for n in range(1, 60):
        run_dir = tmp_path / f"killed-{n}"
        first = run_train(data_dir, run_dir, *args, kill_at_replace=n)
        if first.returncode == 0:
            break  # the run makes fewer than n replacements: every one has been tried
        assert first.returncode == -signal.SIGKILL, first.stderr
        resume = ("--resume",) if (run_dir / "args.json").exists() else args
        resumed = run_train(data_dir, run_dir, *resume, tiny=not (run_dir / "args.json").exists())
        assert resumed.returncode == 0, (n, resumed.stderr)
        got = json.loads((run_dir / "results.json").read_text())
        assert {k: got[k] for k in keys} == {k: expected[k] for k in keys}, n
    else:
        pytest.fail("the run never finished without a kill")
    assert n > 8  # tokenizer, options, checkpoints, latest, records: many writes were tried


def test_an_unwritable_run_dir_is_a_message(tmp_path, capsys, data_dir, monkeypatch):
    """As when the run directory turns read-only after the tokenizer was written (tested with a
    refusing writer: permission checks do not apply to the root user that runs CI)."""
    import tempfile

    original = tempfile.mkstemp

    def refuse(*args, dir=None, **kwargs):  # noqa: A002 (tempfile's own name)
        if dir is not None and str(dir).endswith("run"):
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))
        return original(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    args = ["--data-dir", str(data_dir), "--run-dir", str(tmp_path / "run"), "--max-steps", "1"]
    code, err = train(capsys, *args)
    assert code == 2 and "cannot write" in err and "Permission denied" in err
    assert "Traceback" not in err


def test_the_time_budget_counts_the_time_before_a_resume(tmp_path, capsys, data_dir):
    """A run that has used its --max-minutes stops at once when resumed: the checkpoint records
    the elapsed time, and the resumed run counts on from it."""
    run_dir = tmp_path / "run"
    args = ["--data-dir", str(data_dir), "--run-dir", str(run_dir), "--checkpoint-every", "1"]
    code, err = train(capsys, *args, "--max-steps", "2")
    assert code == 0, err
    latest = run_dir / "checkpoints" / (run_dir / "checkpoints" / "latest").read_text().strip()
    meta = json.loads((latest / "meta.json").read_text())
    assert meta["elapsed_s"] > 0
    meta["elapsed_s"] = 3600.0  # as if the first part had taken an hour
    (latest / "meta.json").write_text(json.dumps(meta))
    code, err = train(capsys, "--data-dir", str(data_dir), "--run-dir", str(run_dir), "--resume",
                      "--max-steps", "50", "--max-minutes", "30")  # fmt: skip
    assert code == 0, err
    results = json.loads((run_dir / "results.json").read_text())
    assert results["steps"] == 3  # one step, then the budget (spent before the resume) stops it
    assert results["wall_time_s"] > 3600


def test_a_damaged_meta_json_is_named(tmp_path):
    from transformer_tutorial.translator.checkpoint import CheckpointError, read_meta

    model, config, tokenizer = small_checkpoint_parts()
    path = save_checkpoint(tmp_path, model, config, tokenizer, step=1)
    (path / "meta.json").write_text('{"step": ')
    with pytest.raises(CheckpointError, match="meta.json cannot be read"):
        read_meta(path)
