"""Re-execute chapter notebooks in place and store their outputs, without timestamps.

    python tools/execute.py book/02_rnn.ipynb [more.ipynb ...]

Runs each notebook with its working directory set to book/, in the current Python environment,
and prints how long it took (the budget is 2 minutes per notebook on 2 CPU cores).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    nbformat.write(nb, path)
    return elapsed


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    for p in paths:
        seconds = execute(Path(p))
        print(f"{p}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
