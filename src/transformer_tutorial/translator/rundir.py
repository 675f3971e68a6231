"""The run directory of a training: created, locked against a second training, and checked for
a run to continue (``--resume``) or one not to overwrite."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..runtime import Runtime
from .checkpoint import CheckpointError, latest_checkpoint, verify_checkpoint


def prepare_run_dir(args: argparse.Namespace, rt: Runtime) -> Path | None:
    """Create and lock the run directory; return the checkpoint to resume from (``None``: the
    run starts at step 0, a new run or one interrupted before its first checkpoint)."""
    ckpt_dir = args.run_dir / "checkpoints"
    if rt.is_main:
        if args.run_dir.exists() and not args.run_dir.is_dir():
            raise ValueError(f"--run-dir {args.run_dir} is a file; give a directory.")
        args.run_dir.mkdir(parents=True, exist_ok=True)
        lock_run_dir(args.run_dir)
    rt.barrier()
    latest = newest_sound_checkpoint(ckpt_dir) if ckpt_dir.is_dir() else None
    started = latest is not None or (args.run_dir / "args.json").is_file()
    if args.resume and not started:
        raise CheckpointError(
            f"--resume: {args.run_dir} holds no run to continue; start without --resume."
        )
    if not args.resume and started:
        raise ValueError(
            f"{args.run_dir} already holds a run; pass --resume to continue it or choose "
            "another --run-dir."
        )
    if args.resume and latest is None and (args.run_dir / "results.json").is_file():
        # a finished run whose checkpoints were deleted: starting again would overwrite its
        # results, metrics and samples
        raise CheckpointError(
            f"--resume: {args.run_dir} holds a finished run (results.json) but no checkpoint "
            f"in {ckpt_dir}, so there is nothing to continue, and starting again would "
            "overwrite its results. Its results and metrics stay readable; translating needs a "
            "checkpoint. To train again, choose a new --run-dir."
        )
    if args.resume and latest is None:
        print("no checkpoint yet: the run starts again from step 0", file=sys.stderr)
    return latest


def newest_sound_checkpoint(ckpt_dir: Path) -> Path | None:
    """The newest checkpoint whose files match their checksums; a damaged newer one is skipped
    with a warning (``None`` when there is no checkpoint at all)."""
    latest = latest_checkpoint(ckpt_dir)
    if latest is None:
        return None
    older = sorted((p for p in ckpt_dir.glob("step-*") if p.is_dir() and p < latest), reverse=True)
    problems = []
    for candidate in [latest, *older]:
        try:
            verify_checkpoint(candidate)
            for problem in problems:
                print(f"warning: {problem}; resuming from {candidate.name}", file=sys.stderr)
            return candidate
        except CheckpointError as err:
            problems.append(str(err))
    raise CheckpointError(problems[0] + " No older checkpoint is sound either.")


HELD_LOCKS: list = []  # open lock files: each holds its lock until the run ends or the process dies


def lock_run_dir(run_dir: Path) -> None:
    """Hold an exclusive lock on ``run_dir/.lock`` until the run ends (the system releases it
    when the process dies, however it dies), so that two trainings never share a directory."""
    import fcntl

    handle = open(run_dir / ".lock", "a+", encoding="utf-8")  # noqa: SIM115 (held open)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise ValueError(
            f"{run_dir} is in use by another training (process {holder}); wait for it to end, "
            "or choose another --run-dir."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    HELD_LOCKS.append(handle)


def release_run_dirs() -> None:
    """Give up the locks this process holds: its run directories are free again."""
    while HELD_LOCKS:
        HELD_LOCKS.pop().close()
