"""Crashes on purpose, for the tests: make this process die with SIGKILL (as a power cut, an
out-of-memory kill or ``kill -9`` would) at a chosen moment, by wrapping a library function.

The product code knows nothing of this; a test runs a child process that imports this module,
arms one crash, and then runs the real command::

    import crashes; crashes.kill_before_step(11); main([...])
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from transformer_tutorial import training


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def before_step(step: int, act: Callable[[], None]) -> None:
    """Call ``act`` when training update number ``step`` (counted in this process) is about to
    start: everything after update ``step - 1`` (its checkpoint, the validation of a finished
    pass) is done, nothing of update ``step``."""
    original, calls = training.train_step, [0]

    def train_step(*args, **kwargs):
        calls[0] += 1
        if calls[0] == step:
            act()
        return original(*args, **kwargs)

    training.train_step = train_step  # the loop looks the name up in its module at every step


def kill_before_step(step: int) -> None:
    """Die (SIGKILL) when update ``step`` is about to start."""
    before_step(step, _die)


def kill_while_saving(step: int) -> None:
    """Die while the checkpoint of ``step`` is being written: its files are complete in their
    temporary directory, which has not yet been renamed into place."""
    original = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(src).name.startswith(f".step-{step:06d}."):
            _die()
        return original(src, dst, *args, **kwargs)

    os.replace = replace


def signal_before_step(step: int, signum: int) -> None:
    """Send this process ``signum`` (SIGTERM, SIGINT) when update ``step`` is about to start, as
    a scheduler or a user would, and let the process handle it."""
    before_step(step, lambda: os.kill(os.getpid(), signum))


def kill_during_evaluation() -> None:
    """Die while the finished run translates its test set (before any result is written)."""
    from transformer_tutorial.translator import report

    def translate(*args, **kwargs):
        _die()

    report.translate = translate


def kill_at_replace(n: int) -> None:
    """Die just before this process's ``n``-th ``os.replace``: the moment every file of the
    run (tokenizer, options, checkpoints, ``latest``, records) is put in place."""
    original, calls = os.replace, [0]

    def replace(src, dst, *args, **kwargs):
        calls[0] += 1
        if calls[0] == n:
            _die()
        return original(src, dst, *args, **kwargs)

    os.replace = replace
