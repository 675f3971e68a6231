"""The trained translators that ship with the package: ``tools/ship_model.py`` makes one from a
finished run (float16 weights, the same translations, its provenance), and the translate command
and ``load_checkpoint`` find it by its pair's name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from test_train_cli import run_train

from transformer_tutorial.translator import checkpoint

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a real (tiny) training run
def test_a_shipped_model_is_found_by_name_and_translates_like_its_run(tmp_path, data_dir,
                                                                      monkeypatch):  # fmt: skip
    run_dir = tmp_path / "run"
    result = run_train(data_dir, run_dir, "--max-steps", "30", "--dropout", "0.0")
    assert result.returncode == 0, result.stderr
    shipped = tmp_path / "pretrained"
    monkeypatch.setattr(checkpoint, "SHIPPED", shipped)
    monkeypatch.setenv("TRANSFORMER_TUTORIAL_DATA", str(data_dir))
    sys.path.insert(0, str(ROOT / "tools"))
    import ship_model

    monkeypatch.setattr(ship_model, "SHIPPED", shipped)
    assert ship_model.main([str(run_dir), "de-en"]) == 0
    provenance = json.loads((shipped / "de-en" / "provenance.json").read_text())
    assert provenance["steps"] == 30 and provenance["pair"] == "de-en"
    assert abs(provenance["test_bleu_float32"] - provenance["test_bleu_float16"]) <= 0.1
    assert checkpoint.shipped_models() == ["de-en"]
    weights = (shipped / "de-en" / "model.safetensors").read_bytes()
    assert b'"F16"' in weights[:4096] and b'"F32"' not in weights[:4096]  # the header's dtypes
    ours, _, tokenizer, meta = checkpoint.load_checkpoint("de-en")  # by name
    run, _, _, _ = checkpoint.load_checkpoint(run_dir)
    assert next(ours.parameters()).dtype == torch.float32  # widened on loading
    for name, weight in run.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[name], weight.half().float(), msg=name)
    assert meta["length_penalty"] == json.loads((run_dir / "results.json").read_text())[
        "length_penalty"]  # fmt: skip


def test_a_name_that_is_neither_a_path_nor_a_shipped_model_says_what_to_give(tmp_path,
                                                                              monkeypatch):  # fmt: skip
    monkeypatch.setattr(checkpoint, "SHIPPED", tmp_path / "none")
    with pytest.raises(checkpoint.CheckpointError, match="does not exist; give a checkpoint"):
        checkpoint.load_checkpoint("xx-yy")


@pytest.mark.skipif(not checkpoint.shipped_models(), reason="no translator shipped yet")
def test_the_shipped_translators_translate_from_the_command_line():
    for pair, sentence in (
        ("de-en", "Ein Hund läuft über die Wiese."),
        ("zh-en", "一只狗在草地上跑。"),
    ):
        if pair not in checkpoint.shipped_models():
            continue
        done = subprocess.run(
            [sys.executable, "-m", "transformer_tutorial.translate", "--checkpoint", pair, sentence],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.split()) >= 3  # a sentence, not nothing
        provenance = json.loads((checkpoint.SHIPPED / pair / "provenance.json").read_text())
        assert provenance["test_bleu_float16"] > 20
