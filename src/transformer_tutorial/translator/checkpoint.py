"""Checkpoints: save and load a model with everything needed to use it or to resume training.

A checkpoint is a directory::

    step-000120/
        model.safetensors   the weights (safetensors: plain tensors, no code is ever unpickled)
        config.json         the TransformerConfig, as JSON
        tokenizer.json      the tokenizer, in the `tokenizers` library's own format (the
                            source language's, when each language has its own)
        target_tokenizer.json   the target language's tokenizer, when each has its own
        state.pt            optimizer, scheduler, grad-scaler state and the data position
                            (read with torch.load(weights_only=True): tensors and plain values only)
        meta.json           step, epoch, batch position and anything else the trainer records

A run keeps its checkpoints in ``<run>/checkpoints/`` and names the newest complete one in the
file ``<run>/checkpoints/latest``.

Writing is atomic. Each checkpoint is written into a temporary directory beside its final place;
every file and the directory are flushed to disk (``fsync``) before one ``os.replace`` gives the
directory its name, and only then is ``latest`` replaced (again: temporary file, ``fsync``,
``os.replace``). A process killed at any moment leaves either the old ``latest`` or the new one,
never a half-written checkpoint under a final name; leftover temporary directories are ignored
and removed by the next save.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_model, save_model
from tokenizers import Tokenizer
from torch import nn

from ..transformer import Transformer, TransformerConfig
from .vocab import TokenizerPair, source_tokenizer, target_tokenizer

MODEL_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
TARGET_TOKENIZER_FILE = "target_tokenizer.json"
STATE_FILE = "state.pt"
META_FILE = "meta.json"
LATEST = "latest"
REQUIRED_FILES = (MODEL_FILE, CONFIG_FILE, TOKENIZER_FILE)
# The trained translators that ship with the package, one folder per pair ("de-en", "zh-en"),
# each a checkpoint with its provenance.json (tools/ship_model.py writes them).
SHIPPED = Path(__file__).resolve().parents[1] / "pretrained"


def shipped_models() -> list[str]:
    """The pairs whose trained translator ships with the package."""
    folders = SHIPPED.iterdir() if SHIPPED.is_dir() else []
    return sorted(p.name for p in folders if (p / MODEL_FILE).is_file())


class CheckpointError(RuntimeError):
    """A checkpoint is missing, incomplete, corrupt or does not fit its config; the message says
    which file and what to do."""


def _fsync_dir(path: Path) -> None:
    """Flush a directory entry to disk (the rename itself), where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. Windows cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def follow_umask(path: Path, directory: bool = False) -> None:
    """Give ``path`` the permissions an ordinary ``open``/``mkdir`` would: the temporary-file
    functions create 0600 files and 0700 folders, which a colleague could not read."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` so that readers see the old or the new content, never a mix."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        follow_umask(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def config_to_json(config: TransformerConfig) -> str:
    return json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True)


def config_from_json(text: str) -> TransformerConfig:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("config.json must hold a JSON object")
    fields = {f.name: f.type for f in dataclasses.fields(TransformerConfig)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(f"config.json has fields this version does not know: {unknown}")
    for name, value in data.items():
        kind = fields[name] if isinstance(fields[name], str) else fields[name].__name__
        expected = {"int": (int,), "float": (int, float), "bool": (bool,)}.get(kind)
        wrong_bool = isinstance(value, bool) and kind != "bool"
        if expected and (not isinstance(value, expected) or wrong_bool):
            raise ValueError(f"{name} must be {kind}, got {value!r}")
    return TransformerConfig(**data)


def _unwrap(model: nn.Module) -> nn.Module:
    """The plain model inside a DistributedDataParallel or torch.compile wrapper."""
    while True:
        if hasattr(model, "module") and isinstance(model.module, nn.Module):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod
        else:
            return model


def save_checkpoint(
    directory: str | os.PathLike,
    model: nn.Module,
    config: TransformerConfig,
    tokenizer: Tokenizer | TokenizerPair,
    *,
    step: int,
    training_state: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
    keep_last: int | None = 2,
) -> Path:
    """Write ``<directory>/step-<step>/`` atomically and point ``<directory>/latest`` at it.

    Args:
        directory: the run's checkpoint folder (created if needed).
        model: the model (DDP / compiled wrappers are unwrapped).
        config, tokenizer: saved beside the weights, so the checkpoint is self-contained.
        step: the number of optimizer updates done; names the checkpoint.
        training_state: state dicts to resume exactly, e.g.
            ``{"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}``; tensors and
            plain Python values only.
        meta: small JSON-serialisable facts (epoch, position in the epoch, seed, ...).
        keep_last: remove older ``step-*`` checkpoints beyond this many (``None``: keep all).

    Returns:
        The path of the new checkpoint directory.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"step-{step:06d}"
    final = directory / name
    tmp = Path(tempfile.mkdtemp(dir=directory, prefix=f".{name}."))
    try:
        follow_umask(tmp, directory=True)
        save_model(_unwrap(model), str(tmp / MODEL_FILE))
        (tmp / CONFIG_FILE).write_text(config_to_json(config), encoding="utf-8")
        source_tokenizer(tokenizer).save(str(tmp / TOKENIZER_FILE))
        if isinstance(tokenizer, TokenizerPair):
            tokenizer.target.save(str(tmp / TARGET_TOKENIZER_FILE))
        if training_state is not None:
            torch.save(training_state, tmp / STATE_FILE)
        checksums = {f.name: sha256(f) for f in sorted(tmp.iterdir())}
        (tmp / META_FILE).write_text(
            json.dumps(
                {"step": step, **(meta or {}), "sha256": checksums}, indent=2, sort_keys=True
            ),
            encoding="utf-8",
        )
        for f in tmp.iterdir():
            follow_umask(f)  # safetensors, like the temporary-file functions, writes 0600
            _fsync_file(f)
        _fsync_dir(tmp)
        if final.exists():  # the same step saved again (e.g. after a resume): replace it
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(directory)
    write_text_atomic(directory / LATEST, name + "\n")
    _cleanup(directory, keep_last)
    return final


def _cleanup(directory: Path, keep_last: int | None) -> None:
    for leftover in directory.glob(".step-*"):  # temporary directories of killed saves
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in directory.glob(f".{LATEST}.*.tmp"):  # a killed update of `latest`
        leftover.unlink(missing_ok=True)
    if keep_last is None:
        return
    complete = sorted(p for p in directory.glob("step-*") if p.is_dir())
    latest = latest_checkpoint(directory)
    for old in complete[:-keep_last]:
        if old != latest:
            shutil.rmtree(old, ignore_errors=True)


def latest_checkpoint(directory: str | os.PathLike) -> Path | None:
    """The newest complete checkpoint in a checkpoint folder, or ``None`` if there is none.

    Reads ``latest``; when that file is missing or names a directory that is gone, falls back to
    the highest-numbered ``step-*`` directory that has all its files.
    """
    directory = Path(directory)
    pointer = directory / LATEST
    if pointer.is_file():
        candidate = directory / pointer.read_text(encoding="utf-8").strip()
        if candidate.name.startswith("step-") and _is_complete(candidate):
            return candidate
    complete = sorted(p for p in directory.glob("step-*") if _is_complete(p))
    return complete[-1] if complete else None


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_checkpoint(checkpoint: str | os.PathLike) -> None:
    """Check every file of a checkpoint against the SHA-256 recorded in its ``meta.json`` when it
    was saved. (Checkpoints written before checksums existed have none and are not checked.)"""
    checkpoint = Path(checkpoint)
    try:
        recorded = json.loads((checkpoint / META_FILE).read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        recorded = None  # no readable meta.json: nothing to check against
    for name, expected in (recorded or {}).items():
        path = checkpoint / name
        try:
            actual = sha256(path) if path.is_file() else None
        except OSError as err:
            raise CheckpointError(f"{path} cannot be read ({err.strerror}).") from None
        if actual != expected:
            raise CheckpointError(
                f"{path} is not the file that was saved (its SHA-256 differs from the one in "
                f"{META_FILE}): it was changed, damaged or replaced. Use another checkpoint."
            )


def _is_complete(path: Path) -> bool:
    return path.is_dir() and all((path / f).is_file() for f in (*REQUIRED_FILES, META_FILE))


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """Find the checkpoint meant by ``path``: a checkpoint directory itself, a run's
    ``checkpoints/`` folder (its latest), or a run directory (the latest of its
    ``checkpoints/``), or the name of a translator that ships with the package (``"de-en"``,
    ``"zh-en"``) when no such path exists."""
    path = Path(path)
    if not path.exists() and str(path) in shipped_models():
        return SHIPPED / str(path)
    if not path.exists():
        shipped = ", ".join(shipped_models())
        raise CheckpointError(
            f"checkpoint {path} does not exist; give a checkpoint directory (with {MODEL_FILE}), "
            "a run directory written by `python -m transformer_tutorial.train`"
            + (f", or the name of a shipped translator: {shipped}." if shipped else ".")
        )
    if path.is_file():
        if path.name in (MODEL_FILE, CONFIG_FILE, TOKENIZER_FILE):
            return resolve_checkpoint(path.parent)
        raise CheckpointError(
            f"{path} is a file; give the checkpoint directory that holds "
            f"{', '.join(REQUIRED_FILES)}."
        )
    if (path / MODEL_FILE).exists() or (path / CONFIG_FILE).exists():
        return path
    for folder in (path, path / "checkpoints"):
        found = latest_checkpoint(folder) if folder.is_dir() else None
        if found is not None:
            return found
    raise CheckpointError(
        f"{path} holds no checkpoint: no {MODEL_FILE} in it and no complete step-* directory "
        f"in it or in {path / 'checkpoints'}."
    )


def load_checkpoint(
    path: str | os.PathLike, device: torch.device | str = "cpu"
) -> tuple[Transformer, TransformerConfig, Tokenizer | TokenizerPair, dict[str, Any]]:
    """Load a checkpoint for use: the model (in eval mode, on ``device``), its config, its
    tokenizer (a ``TokenizerPair`` when each language has its own) and its ``meta.json``.

    Raises:
        CheckpointError: with a message for people when a file is missing or unreadable, or when the
            weights do not fit the stored config.
    """
    ckpt = resolve_checkpoint(path)
    missing = [f for f in REQUIRED_FILES if not (ckpt / f).is_file()]
    if missing:
        raise CheckpointError(
            f"checkpoint {ckpt} is incomplete: {', '.join(missing)} missing. "
            "Use a complete checkpoint (the trainer writes them atomically; pick another step-*)."
        )
    verify_checkpoint(ckpt)
    try:
        config = config_from_json((ckpt / CONFIG_FILE).read_text(encoding="utf-8"))
    except (ValueError, TypeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{ckpt / CONFIG_FILE} is not a valid model config: {err}") from None
    except OSError as err:
        raise CheckpointError(f"{ckpt / CONFIG_FILE} cannot be read ({err.strerror}).") from None
    tokenizer = read_tokenizer(ckpt / TOKENIZER_FILE)
    if (ckpt / TARGET_TOKENIZER_FILE).is_file():
        tokenizer = TokenizerPair(tokenizer, read_tokenizer(ckpt / TARGET_TOKENIZER_FILE))
    model = Transformer(config)
    load_weights(model, ckpt / MODEL_FILE)
    meta: dict[str, Any] = {}
    if (ckpt / META_FILE).is_file():
        try:
            meta = json.loads((ckpt / META_FILE).read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            meta = {}
    sides = {  # the same tokenizer twice when both languages share it
        "source": (source_tokenizer(tokenizer), config.src_vocab_size),
        "target": (target_tokenizer(tokenizer), config.tgt_vocab_size),
    }
    for side, (side_tokenizer, model_size) in sides.items():
        if side_tokenizer.get_vocab_size() > model_size:
            raise CheckpointError(
                f"the {side} tokenizer of {ckpt} has {side_tokenizer.get_vocab_size()} tokens "
                f"but the model's {side} vocabulary only {model_size}; they belong to different "
                "runs."
            )
    return model.to(device).eval(), config, tokenizer, meta


def last_checkpoints(path: str | os.PathLike, count: int) -> list[Path]:
    """The checkpoint that ``path`` means (as for ``load_checkpoint``) and the ``count - 1``
    complete ``step-*`` directories saved before it in its folder, oldest first."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a whole number of checkpoints, 1 or more; got {count!r}")
    newest = resolve_checkpoint(path)
    up_to = [p for p in sorted(newest.parent.glob("step-*")) if _is_complete(p)]
    up_to = up_to[: up_to.index(newest) + 1] if newest in up_to else [newest]
    if len(up_to) < count:
        raise CheckpointError(
            f"averaging {count} checkpoints needs {count} up to {newest.name}, but "
            f"{newest.parent} has {len(up_to)}; ask for fewer, or train with a larger "
            "--keep-checkpoints."
        )
    return up_to[-count:]


def average_checkpoints(
    checkpoints: list[str | os.PathLike], device: torch.device | str = "cpu"
) -> tuple[Transformer, TransformerConfig, Tokenizer | TokenizerPair, dict[str, Any]]:
    """**Checkpoint averaging** (chapter 16): the last of ``checkpoints`` with its weights
    replaced by the mean of the weights of all of them.

    They must come from one run (the same config). A tensor that is equal in all of them (a
    buffer, say) is kept bit for bit. One checkpoint is ``load_checkpoint``. Returns what
    ``load_checkpoint`` does, with the last one's meta and ``"averaged_steps"``, the steps of
    the checkpoints averaged.

    Raises:
        CheckpointError: when one of them does not load or does not fit the others.
    """
    if not checkpoints:
        raise ValueError("give at least one checkpoint to average")
    *older, newest = checkpoints
    model, config, tokenizer, meta = load_checkpoint(newest, device)
    states = []
    for path in older:
        other, other_config, _, other_meta = load_checkpoint(path, device)
        if other_config != config:
            raise CheckpointError(
                f"{path} has another model config than {newest}: only checkpoints of one run "
                "can be averaged."
            )
        states.append((other.state_dict(), other_meta.get("step")))
    states.append((model.state_dict(), meta.get("step")))
    averaged = {}
    for name, tensor in states[-1][0].items():
        if not tensor.is_floating_point() or all(torch.equal(s[name], tensor) for s, _ in states):
            averaged[name] = tensor
        else:
            averaged[name] = torch.stack([s[name] for s, _ in states]).mean(dim=0)
    model.load_state_dict(averaged)
    return model, config, tokenizer, meta | {"averaged_steps": [step for _, step in states]}


def read_tokenizer(path: Path) -> Tokenizer:
    """A tokenizer file of a checkpoint, or a ``CheckpointError`` that says what is wrong."""
    try:
        return Tokenizer.from_file(str(path))
    except Exception as err:  # the tokenizers library raises a bare Exception on bad JSON
        raise CheckpointError(f"{path} is not a valid tokenizer: {err}") from None


def load_weights(model: nn.Module, path: str | os.PathLike) -> None:
    """Load a ``model.safetensors`` file into ``model`` with safetensors' ``load_model``, which
    restores tied weights (stored once); every name and shape must fit, or the error says which.
    """
    fix = (
        "The config.json and model.safetensors come from different models; use the files of one "
        "checkpoint together."
    )
    try:
        missing, unexpected = load_model(_unwrap(model), str(path), strict=False)
    except (SafetensorError, OSError) as err:
        raise CheckpointError(
            f"{path} is not a readable safetensors file ({err}); the checkpoint is corrupt, use "
            "another one."
        ) from None
    except RuntimeError as err:  # shapes that do not fit the model
        detail = " ".join(str(err).split())[:300]
        raise CheckpointError(
            f"the weights in {path} do not fit the model ({detail}). {fix}"
        ) from None
    if unexpected:
        names = ", ".join(sorted(unexpected)[:3])
        raise CheckpointError(
            f"the weights in {path} do not fit the model: unexpected {names} ... {fix}"
        )
    if missing:
        names = ", ".join(sorted(missing)[:3])
        raise CheckpointError(f"{path} lacks weights for {names} ... {fix}")


def load_training_state(checkpoint: str | os.PathLike) -> dict[str, Any]:
    """The ``state.pt`` of a checkpoint (optimizer, scheduler, ...), read with
    ``weights_only=True`` so that no arbitrary object is ever unpickled."""
    path = Path(checkpoint) / STATE_FILE
    if not path.is_file():
        raise CheckpointError(f"{path} is missing; this checkpoint cannot resume training.")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # corrupt or truncated pickle
        raise CheckpointError(f"{path} cannot be read ({err}); use another checkpoint.") from None


def read_meta(checkpoint: str | os.PathLike) -> dict[str, Any]:
    path = Path(checkpoint) / META_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path} cannot be read ({err}); use another checkpoint.") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("step"), int):
        raise CheckpointError(f"{path} does not describe a checkpoint; use another checkpoint.")
    return meta
