"""Tests of the translation command line (transformer_tutorial.translate): good input is translated
line by line in order; every kind of bad input ends with a message and exit status 2, never a
traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from transformer_tutorial.decoding import greedy_decode, translate
from transformer_tutorial.sequences import BOS_ID, EOS_ID
from transformer_tutorial.tokens import encode, encode_pairs, train_tokenizer
from transformer_tutorial.training import (
    LabelSmoothingLoss,
    make_batches,
    make_optimizer,
    noam_scheduler,
    train_step,
)
from transformer_tutorial.transformer import Transformer, TransformerConfig
from transformer_tutorial.translator.checkpoint import (
    average_checkpoints,
    last_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from transformer_tutorial.translator.translate import main

PAIRS = [
    ("Ein Hund läuft im Schnee.", "A dog runs in the snow."),
    ("Zwei Kinder spielen im Park.", "Two children play in the park."),
    ("Eine Frau liest ein Buch.", "A woman reads a book."),
    ("Ein Mann fährt Fahrrad.", "A man rides a bike."),
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    """A small model trained for a few steps on four sentence pairs (max_len 24)."""
    torch.manual_seed(0)
    tokenizer = train_tokenizer([s for p in PAIRS * 5 for s in p], vocab_size=90, min_frequency=1)
    V = tokenizer.get_vocab_size()
    config = TransformerConfig(
        src_vocab_size=V, tgt_vocab_size=V, d_model=32, num_heads=2, num_encoder_layers=1,
        num_decoder_layers=1, d_ff=64, dropout=0.0, max_len=24, share_embeddings=True,
        norm_first=True,
    )  # fmt: skip
    model = Transformer(config)
    optimizer = make_optimizer(model, lr=1.0)
    scheduler = noam_scheduler(optimizer, d_model=32, warmup=10)
    (batch,) = make_batches(encode_pairs(tokenizer, PAIRS), max_tokens=200)
    for _ in range(150):
        train_step(model, batch, LabelSmoothingLoss(0.0), optimizer, scheduler)
    run = tmp_path_factory.mktemp("run")
    save_checkpoint(run / "checkpoints", model, config, tokenizer, step=150)
    return run


pytestmark = pytest.mark.usefixtures("one_thread")  # see conftest.py


def run_main(args, capsys, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_translates_arguments_greedy_and_beam(checkpoint, capsys):
    model, _, tokenizer, _ = load_checkpoint(checkpoint)
    sources = [de for de, _ in PAIRS]
    for beam in ("1", "3"):
        code, out, err = run_main(
            ["--checkpoint", str(checkpoint), "--beam-size", beam, *sources], capsys
        )
        assert code == 0, err
        lines = out.splitlines()
        assert lines == translate(model, tokenizer, sources, beam_size=int(beam))
    # The model has learnt its four sentences: greedy search reproduces (nearly) all of them.
    code, out, _ = run_main(["--checkpoint", str(checkpoint), *sources], capsys)
    assert sum(a == b for a, b in zip(out.splitlines(), [en for _, en in PAIRS], strict=True)) >= 3


def test_the_length_penalty_is_the_runs_unless_given(checkpoint, tmp_path, capsys, monkeypatch):
    """A checkpoint records the length penalty its run was evaluated with (``meta.json``); the
    command uses it unless ``--length-penalty`` says otherwise, and 0.6 when nothing records it."""
    import transformer_tutorial.translator.translate as command

    used = []

    def spy(*args, length_penalty, **kwargs):
        used.append(length_penalty)
        return translate(*args, length_penalty=length_penalty, **kwargs)

    monkeypatch.setattr(command, "translate", spy)
    model, config, tokenizer, _ = load_checkpoint(checkpoint)
    recorded = tmp_path / "run"
    save_checkpoint(recorded / "checkpoints", model, config, tokenizer, step=1,
                    meta={"length_penalty": 1.4})  # fmt: skip
    for run, extra, alpha in [
        (checkpoint, [], 0.6),  # nothing recorded: the paper's alpha
        (recorded, [], 1.4),  # the run's
        (recorded, ["--length-penalty", "0.2"], 0.2),  # the command line's
    ]:
        used.clear()
        code, _, err = run_main(
            ["--checkpoint", str(run), "--beam-size", "2", *extra, "Hallo"], capsys
        )
        assert code == 0, err
        assert used == [alpha]
    # A damaged record is refused with a message, not used.
    broken = tmp_path / "broken"
    save_checkpoint(broken / "checkpoints", model, config, tokenizer, step=1,
                    meta={"length_penalty": "wide"})  # fmt: skip
    code, _, err = run_main(["--checkpoint", str(broken), "--beam-size", "2", "Hallo"], capsys)
    assert code == 2 and "recorded in the checkpoint" in err and "--length-penalty" in err


@pytest.fixture(scope="module")
def untrained_checkpoint(tmp_path_factory) -> Path:
    """An untrained model: it rarely produces EOS, so most sentences run to their limit, source
    length + 50 (its 96 positions do not cut it). Its output layer is scaled up, which widens
    the margins between candidate tokens, so that the last-bit changes of a batch's other
    matrix shapes cannot change a choice."""
    torch.manual_seed(0)
    tokenizer = train_tokenizer([s for p in PAIRS * 5 for s in p], vocab_size=90, min_frequency=1)
    V = tokenizer.get_vocab_size()
    torch.manual_seed(UNTRAINED_SEED)
    config = TransformerConfig(
        src_vocab_size=V, tgt_vocab_size=V, d_model=32, num_heads=2, num_encoder_layers=1,
        num_decoder_layers=1, d_ff=64, dropout=0.0, max_len=96, share_embeddings=True,
        tie_output=False,
    )  # fmt: skip
    model = Transformer(config)
    with torch.no_grad():
        model.output.weight.mul_(4.0)
    run = tmp_path_factory.mktemp("untrained")
    save_checkpoint(run / "checkpoints", model, config, tokenizer, step=0)
    return run


UNTRAINED_SEED = 0


def test_a_line_is_translated_the_same_alone_and_in_any_batch(untrained_checkpoint, capsys):
    """The output for a line must not depend on the other lines or on --batch-size."""
    model, _, tokenizer, _ = load_checkpoint(untrained_checkpoint)
    lines = [de for de, _ in PAIRS] + ["Hund.", "Zwei Kinder spielen im Park, ein Hund läuft."]
    ids = [s + [EOS_ID] for s in encode(tokenizer, lines)]
    # Sharp: some lines run to their own limit (no EOS) and have longer neighbours.
    at_limit = []
    for s in ids:
        out = greedy_decode(model, torch.tensor([s]), None, BOS_ID, EOS_ID)[0]
        if len(out) == len(s) + 50 and EOS_ID not in out.tolist():
            at_limit.append(len(s))
    assert at_limit and min(at_limit) < max(map(len, ids))
    for beam in ("1", "3"):
        options = ["--checkpoint", str(untrained_checkpoint), "--beam-size", beam]
        code, alone, err = run_main([*options, "--batch-size", "1", *lines], capsys)  # each alone
        assert code == 0, err
        alone = alone.splitlines()
        for order in (list(range(len(lines))), list(range(len(lines)))[::-1]):
            for batch in ("3", "64"):
                code, out, err = run_main(
                    [*options, "--batch-size", batch, *[lines[i] for i in order]], capsys
                )
                assert code == 0, err
                assert out.splitlines() == [alone[i] for i in order], (beam, order, batch)


def test_stdin_keeps_order_and_echoes_empty_lines(checkpoint, capsys, monkeypatch):
    text = f"{PAIRS[0][0]}\n\n   \n{PAIRS[1][0]}\r\n{PAIRS[2][0]}"  # no final newline
    code, out, err = run_main(
        ["--checkpoint", str(checkpoint), "--batch-size", "2"], capsys, text.encode(), monkeypatch
    )
    assert code == 0, err
    model, _, tokenizer, _ = load_checkpoint(checkpoint)
    a, b, c = translate(model, tokenizer, [PAIRS[0][0], PAIRS[1][0], PAIRS[2][0]])
    assert out.split("\n") == [a, "", "", b, c, ""]
    # Only empty lines: as many empty lines out.
    code, out, _ = run_main(["--checkpoint", str(checkpoint)], capsys, b"\n\n", monkeypatch)
    assert code == 0 and out == "\n\n"


def test_invalid_utf8_on_stdin_is_an_error(checkpoint, capsys, monkeypatch):
    data = b"Ein Hund\n" + "Größe".encode("latin-1") + b"\n"
    code, out, err = run_main(["--checkpoint", str(checkpoint)], capsys, data, monkeypatch)
    assert code == 2 and out == ""
    assert "not valid UTF-8" in err and "line 2" in err


def test_overlong_lines_are_cut_with_a_warning(checkpoint, capsys):
    long = " ".join(["Ein Hund läuft im Schnee"] * 20)
    code, out, err = run_main(["--checkpoint", str(checkpoint), PAIRS[0][0], long], capsys)
    assert code == 0
    assert len(out.splitlines()) == 2 and out.splitlines()[0]
    assert "warning: line 2 has" in err and "cut to its first 23 tokens" in err


def test_average_translates_with_the_mean_of_the_last_checkpoints(checkpoint, tmp_path, capsys):
    model, config, tokenizer, _ = load_checkpoint(checkpoint)
    folder = tmp_path / "run" / "checkpoints"
    save_checkpoint(folder, model, config, tokenizer, step=150, keep_last=None)
    torch.manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5 * torch.randn_like(p))  # a later checkpoint, far from the first
    save_checkpoint(folder, model, config, tokenizer, step=151, keep_last=None)
    sources = [de for de, _ in PAIRS]
    averaged, _, _, meta = average_checkpoints(last_checkpoints(folder, 2))
    assert meta["averaged_steps"] == [150, 151]
    expected = {
        "1": translate(model, tokenizer, sources),
        "2": translate(averaged, tokenizer, sources),
    }
    assert expected["1"] != expected["2"]  # the option changes what is translated with
    for count, lines in expected.items():
        code, out, err = run_main(
            ["--checkpoint", str(tmp_path / "run"), "--average", count, *sources], capsys
        )
        assert code == 0, err
        assert out.splitlines() == lines
    for count, fragment in (("3", "needs 3 up to step-000151"), ("0", "--average")):
        code, out, err = run_main(["--checkpoint", str(folder), "--average", count, "Hund"], capsys)
        assert code == 2 and out == "" and fragment in err and "Traceback" not in err, err


def test_bad_checkpoints_are_errors(checkpoint, tmp_path, capsys):
    def expect_error(path, fragment):
        code, out, err = run_main(["--checkpoint", str(path), "Ein Hund."], capsys)
        assert code == 2 and out == "", err
        assert fragment in err, err
        assert "Traceback" not in err

    expect_error(tmp_path / "missing", "does not exist")
    (tmp_path / "empty").mkdir()
    expect_error(tmp_path / "empty", "holds no checkpoint")

    step = next((checkpoint / "checkpoints").glob("step-*"))

    def copy(name, checksums=False):
        """A copy of the checkpoint, by default without its checksums (as written before they
        existed), so that the checks behind them are reached."""
        target = tmp_path / name
        target.mkdir()
        for f in step.iterdir():
            (target / f.name).write_bytes(f.read_bytes())
        meta = json.loads((target / "meta.json").read_text())
        if not checksums:
            del meta["sha256"]
        (target / "meta.json").write_text(json.dumps(meta))
        return target

    # Any change to a saved file is caught by its checksum, whatever the change.
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        changed = copy(f"changed-{name}", checksums=True)
        data = bytearray((changed / name).read_bytes())
        data[len(data) // 2] ^= 1  # one bit
        (changed / name).write_bytes(bytes(data))
        expect_error(changed, f"{name} is not the file that was saved")

    corrupt = copy("corrupt")
    (corrupt / "model.safetensors").write_bytes(b"\x00" * 100)
    expect_error(corrupt, "not a readable safetensors file")

    mismatch = copy("mismatch")
    config = json.loads((mismatch / "config.json").read_text())
    config["d_model"], config["num_heads"] = 64, 4  # the stored weights are 32 wide
    (mismatch / "config.json").write_text(json.dumps(config))
    expect_error(mismatch, "do not fit")

    bad_config = copy("bad_config")
    (bad_config / "config.json").write_text('{"d_model": "wide"}')
    expect_error(bad_config, "config")


@pytest.mark.slow  # starts real processes: `make unit` skips it, `make test` runs it
def test_no_traceback_from_the_real_command(checkpoint, tmp_path):
    """The same through a real process: stdin bytes, exit status, stderr."""
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "transformer_tutorial.translate", "--checkpoint"]
    ok = subprocess.run([*cmd, str(checkpoint)], input=f"{PAIRS[3][0]}\n\n".encode(),
                        capture_output=True, env=env, timeout=300)  # fmt: skip
    lines = ok.stdout.decode().split("\n")
    assert ok.returncode == 0 and len(lines) == 3 and lines[0] and lines[1:] == ["", ""]
    bad = subprocess.run([*cmd, str(checkpoint)], input=b"\xff\xfe\n", capture_output=True,
                         env=env, timeout=300)  # fmt: skip
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr and b"UTF-8" in bad.stderr
    missing = subprocess.run([*cmd, str(tmp_path / "nope"), "Hallo"], capture_output=True,
                             env=env, timeout=300)  # fmt: skip
    assert missing.returncode == 2 and b"Traceback" not in missing.stderr


def test_a_byte_order_mark_on_stdin_is_not_part_of_the_first_line(checkpoint, capsys, monkeypatch):
    text = f"{PAIRS[0][0]}\n{PAIRS[1][0]}\n"
    args = ["--checkpoint", str(checkpoint)]
    plain = run_main(args, capsys, text.encode(), monkeypatch)
    marked = run_main(args, capsys, b"\xef\xbb\xbf" + text.encode(), monkeypatch)
    assert plain[0] == marked[0] == 0
    assert marked[1] == plain[1]  # the same translations, first line included


def test_work_is_bounded_by_tokens_and_does_not_change_the_output(checkpoint, capsys):
    lines = [p[0] for p in PAIRS] * 3
    args = ["--checkpoint", str(checkpoint), "--beam-size", "2", *lines]
    code, wide, err = run_main(args, capsys)
    assert code == 0, err
    code, narrow, err = run_main([*args, "--max-tokens", "300"], capsys)  # a few lines per batch
    assert code == 0 and narrow == wide, err
    code, out, err = run_main(
        [*args[:2], "--beam-size", "20", "--max-tokens", "500", lines[0]], capsys
    )
    assert code == 2 and "--max-tokens" in err and "lower the beam size" in err
