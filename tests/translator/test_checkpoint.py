"""Tests of transformer_tutorial.checkpoint: round trip, atomic writes, clear errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from transformer_tutorial.tokens import train_tokenizer
from transformer_tutorial.training import (
    LabelSmoothingLoss,
    collate,
    make_optimizer,
    noam_scheduler,
    train_step,
)
from transformer_tutorial.transformer import Transformer, TransformerConfig
from transformer_tutorial.translator.checkpoint import (
    CheckpointError,
    average_checkpoints,
    last_checkpoints,
    latest_checkpoint,
    load_checkpoint,
    load_training_state,
    load_weights,
    resolve_checkpoint,
    save_checkpoint,
)

TEXTS = ["Ein Hund läuft.", "A dog runs.", "Zwei Kinder spielen.", "Two children play."] * 10


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(TEXTS, vocab_size=60, min_frequency=1)


def tiny_config(tokenizer, **overrides) -> TransformerConfig:
    V = tokenizer.get_vocab_size()
    fields = dict(
        src_vocab_size=V, tgt_vocab_size=V, d_model=16, num_heads=2, num_encoder_layers=1,
        num_decoder_layers=1, d_ff=32, dropout=0.0, max_len=32, share_embeddings=True,
    )  # fmt: skip
    return TransformerConfig(**(fields | overrides))


def trained_model(tokenizer, config):
    torch.manual_seed(0)
    model = Transformer(config)
    optimizer = make_optimizer(model, lr=1.0)
    scheduler = noam_scheduler(optimizer, d_model=config.d_model, warmup=4)
    batch = collate([([5, 6, 7], [8, 9]), ([10, 11], [12, 13, 14])])
    for _ in range(3):
        train_step(model, batch, LabelSmoothingLoss(0.1), optimizer, scheduler)
    return model, optimizer, scheduler, batch


def test_round_trip_restores_model_optimizer_and_scheduler(tmp_path, tokenizer):
    config = tiny_config(tokenizer)
    model, optimizer, scheduler, batch = trained_model(tokenizer, config)
    path = save_checkpoint(
        tmp_path, model, config, tokenizer, step=3,
        training_state={"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()},
        meta={"epoch": 0, "batch_in_epoch": 3},
    )  # fmt: skip
    assert path == tmp_path / "step-000003"
    assert latest_checkpoint(tmp_path) == path
    assert sorted(p.name for p in path.iterdir()) == [
        "config.json", "meta.json", "model.safetensors", "state.pt", "tokenizer.json"
    ]  # fmt: skip
    loaded, loaded_config, loaded_tok, meta = load_checkpoint(tmp_path)
    assert loaded_config == config and meta["step"] == 3 and meta["epoch"] == 0
    assert loaded_tok.to_str() == tokenizer.to_str()
    for (name, a), (_, b) in zip(
        model.state_dict().items(), loaded.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    # Shared embeddings stay one tensor after loading.
    assert loaded.output.weight is loaded.src_embed.embedding.weight
    # The training state resumes exactly: one more step from the copy equals one more step here.
    state = load_training_state(path)
    optimizer2 = make_optimizer(loaded, lr=1.0)
    scheduler2 = noam_scheduler(optimizer2, d_model=config.d_model, warmup=4)
    optimizer2.load_state_dict(state["optimizer"])
    scheduler2.load_state_dict(state["scheduler"])
    loss = LabelSmoothingLoss(0.1)
    r1 = train_step(model, batch, loss, optimizer, scheduler)
    r2 = train_step(loaded.train(), batch, loss, optimizer2, scheduler2)
    assert r1["lr"] == r2["lr"] and r1["loss"] == r2["loss"]
    for a, b in zip(model.parameters(), loaded.parameters(), strict=True):
        assert torch.equal(a, b)


def test_latest_pointer_and_pruning(tmp_path, tokenizer):
    config = tiny_config(tokenizer)
    model = Transformer(config)
    for step in (1, 2, 3, 4):
        save_checkpoint(tmp_path, model, config, tokenizer, step=step, keep_last=2)
    assert sorted(p.name for p in tmp_path.glob("step-*")) == ["step-000003", "step-000004"]
    assert (tmp_path / "latest").read_text().strip() == "step-000004"
    # A leftover temporary directory (a killed save) is ignored, then cleaned up by the next save.
    (tmp_path / ".step-000005.abc").mkdir()
    assert latest_checkpoint(tmp_path).name == "step-000004"
    save_checkpoint(tmp_path, model, config, tokenizer, step=5, keep_last=2)
    assert not list(tmp_path.glob(".step-*"))
    # Without the pointer, the highest complete step wins.
    (tmp_path / "latest").unlink()
    assert latest_checkpoint(tmp_path).name == "step-000005"


def test_resolve_accepts_run_dir_checkpoint_dir_and_step_dir(tmp_path, tokenizer):
    config = tiny_config(tokenizer)
    path = save_checkpoint(
        tmp_path / "run" / "checkpoints", Transformer(config), config, tokenizer, step=7
    )
    for given in (
        tmp_path / "run",
        tmp_path / "run" / "checkpoints",
        path,
        path / "model.safetensors",
    ):
        assert resolve_checkpoint(given) == path
    with pytest.raises(CheckpointError, match="does not exist"):
        resolve_checkpoint(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        resolve_checkpoint(tmp_path / "empty")


def test_averaging_is_the_mean_of_the_weights_of_the_checkpoints_up_to_one(tmp_path, tokenizer):
    config = tiny_config(tokenizer)
    folder = tmp_path / "run" / "checkpoints"
    model, optimizer, scheduler, batch = trained_model(tokenizer, config)
    states = {}
    for step in (3, 4, 5, 6):  # one more training step between checkpoints
        train_step(model, batch, LabelSmoothingLoss(0.1), optimizer, scheduler)
        save_checkpoint(folder, model, config, tokenizer, step=step, keep_last=None)
        states[step] = {k: v.clone() for k, v in model.state_dict().items()}
    # The checkpoint a path means, and the ones saved before it: never the ones after.
    assert [p.name for p in last_checkpoints(folder / "step-000005", 2)] == [
        "step-000004", "step-000005"
    ]  # fmt: skip
    chosen = last_checkpoints(tmp_path / "run", 3)  # a run directory means its latest
    assert [p.name for p in chosen] == ["step-000004", "step-000005", "step-000006"]
    averaged, averaged_config, _, meta = average_checkpoints(chosen)
    assert averaged_config == config and meta["step"] == 6
    assert meta["averaged_steps"] == [4, 5, 6]
    moved = 0
    for name, tensor in averaged.state_dict().items():
        mean = (states[4][name] + states[5][name] + states[6][name]) / 3
        torch.testing.assert_close(tensor, mean, rtol=0, atol=1e-6)
        moved += not torch.equal(states[4][name], states[6][name])
        if torch.equal(states[4][name], states[6][name]):  # kept bit for bit, not recomputed
            assert torch.equal(tensor, states[6][name])
    assert moved > 10  # the weights really differ between the checkpoints
    # Tied weights stay tied: the output projection is still the target embedding.
    assert averaged.output.weight.data_ptr() == averaged.tgt_embed.embedding.weight.data_ptr()
    alone, _, _, _ = average_checkpoints(last_checkpoints(folder, 1))
    for a, b in zip(alone.state_dict().values(), states[6].values(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(CheckpointError, match="needs 5 up to step-000006, but .* has 4"):
        last_checkpoints(folder, 5)
    with pytest.raises(ValueError, match="1 or more"):
        last_checkpoints(folder, 0)
    other = tiny_config(tokenizer, d_ff=64)
    save_checkpoint(folder, Transformer(other), other, tokenizer, step=7, keep_last=None)
    with pytest.raises(CheckpointError, match="another model config"):
        average_checkpoints(last_checkpoints(folder, 2))


def test_a_crash_while_saving_leaves_the_previous_checkpoint(tmp_path, tokenizer):
    """SIGKILL in the middle of writing step 2: `latest` still names step 1, which loads."""
    config = tiny_config(tokenizer)
    tokenizer.save(str(tmp_path / "tok.json"))
    (tmp_path / "config.json").write_text(json.dumps(config.__dict__))
    script = textwrap.dedent(
        f"""
        import json, torch
        from tokenizers import Tokenizer
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import crashes
        from transformer_tutorial.translator.checkpoint import save_checkpoint
        from transformer_tutorial.transformer import Transformer, TransformerConfig
        crashes.kill_while_saving(2)
        config = TransformerConfig(**json.load(open({str(tmp_path / "config.json")!r})))
        tok = Tokenizer.from_file({str(tmp_path / "tok.json")!r})
        model = Transformer(config)
        save_checkpoint({str(tmp_path / "ckpt")!r}, model, config, tok, step=1)
        save_checkpoint({str(tmp_path / "ckpt")!r}, model, config, tok, step=2)
        """
    )
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    ckpt = tmp_path / "ckpt"
    assert (ckpt / "latest").read_text().strip() == "step-000001"
    assert not (ckpt / "step-000002").exists()
    assert list(ckpt.glob(".step-000002.*"))  # the half-written temporary directory
    assert latest_checkpoint(ckpt).name == "step-000001"
    load_checkpoint(ckpt)  # loads without error


def test_corrupt_and_mismatched_checkpoints_give_clear_errors(tmp_path, tokenizer):
    config = tiny_config(tokenizer)
    good = save_checkpoint(tmp_path / "a", Transformer(config), config, tokenizer, step=1)

    # Weights that do not fit the stored config.
    bigger = tiny_config(tokenizer, d_model=32)
    wrong = save_checkpoint(tmp_path / "b", Transformer(bigger), config, tokenizer, step=1)
    with pytest.raises(CheckpointError, match="do not fit"):
        load_checkpoint(wrong)
    # A config with fewer layers than the weights have.
    deeper = tiny_config(tokenizer, num_encoder_layers=2)
    extra = save_checkpoint(tmp_path / "c", Transformer(deeper), config, tokenizer, step=1)
    with pytest.raises(CheckpointError, match="unexpected"):
        load_checkpoint(extra)
    shallow = save_checkpoint(tmp_path / "d", Transformer(config), deeper, tokenizer, step=1)
    with pytest.raises(CheckpointError, match="lacks weights"):
        load_checkpoint(shallow)

    # Checksums catch every change below; without them (older checkpoints) the checks behind
    # them still say what is wrong.
    data = (good / "model.safetensors").read_bytes()
    (good / "model.safetensors").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(CheckpointError, match="not the file that was saved"):
        load_checkpoint(good)
    forget_checksums(good)

    # A truncated weights file.
    (good / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="safetensors"):
        load_checkpoint(good)
    (good / "model.safetensors").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="safetensors"):
        load_weights(Transformer(config), good / "model.safetensors")

    # A broken config and a broken tokenizer.
    ok = forget_checksums(
        save_checkpoint(tmp_path / "e", Transformer(config), config, tokenizer, step=1)
    )
    (ok / "config.json").write_text("{ not json")
    with pytest.raises(CheckpointError, match="config"):
        load_checkpoint(ok)
    (ok / "config.json").write_text(json.dumps({"src_vocab_size": 10, "colour": "red"}))
    with pytest.raises(CheckpointError, match="colour"):
        load_checkpoint(ok)
    ok2 = forget_checksums(
        save_checkpoint(tmp_path / "f", Transformer(config), config, tokenizer, step=1)
    )
    (ok2 / "tokenizer.json").write_text("[]")
    with pytest.raises(CheckpointError, match="tokenizer"):
        load_checkpoint(ok2)
    (ok2 / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="incomplete"):
        load_checkpoint(ok2)


def forget_checksums(checkpoint):
    """Make ``checkpoint`` look as if written before checksums existed; return it."""
    if checkpoint.is_dir() and (checkpoint / "meta.json").is_file():
        meta = json.loads((checkpoint / "meta.json").read_text())
        meta.pop("sha256", None)
        (checkpoint / "meta.json").write_text(json.dumps(meta))
    return checkpoint


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_training_state_is_never_unpickled_as_arbitrary_objects(tmp_path, tokenizer):
    config = tiny_config(tokenizer)
    path = save_checkpoint(
        tmp_path,
        Transformer(config),
        config,
        tokenizer,
        step=1,
        training_state={"x": torch.ones(2)},
    )
    assert torch.equal(load_training_state(path)["x"], torch.ones(2))
    torch.save({"x": Evil()}, path / "state.pt")
    with pytest.raises(CheckpointError, match="cannot be read"):
        load_training_state(path)
    (path / "state.pt").unlink()
    with pytest.raises(CheckpointError, match="cannot resume"):
        load_training_state(path)
