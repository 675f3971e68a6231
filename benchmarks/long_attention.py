"""Full against local attention as the sequence grows: time and peak memory of one call.

    python benchmarks/long_attention.py --json results/long_sequences/long_attention_cpu.json
    python benchmarks/long_attention.py --sizes 1024 2048 4096 --no-rss   # a quick look

Three ways to attend over ``T`` frames with the band ``|t - s| <= window`` (one head, ``B = H =
1``, float32, no gradient), as chapter 20 compares them:

* ``full``: ``transformer_tutorial.attention.attention`` with ``band_mask(T, window)``;
* ``SDPA + band``: ``F.scaled_dot_product_attention`` with the same boolean mask;
* ``local``: ``transformer_tutorial.local_attention.local_attention`` (blocked, no mask).

The two full versions build their mask inside the measured call. Time: the process's CPU time
(``time.process_time``, which on a shared machine leaves out the time spent waiting for a core),
the fastest of ``--repeats`` interleaved runs; with one thread (the default) it is the wall time
of a quiet machine. Peak memory, two ways: PyTorch's profiler (``peak_memory_bytes``,
the allocator's running total), and, unless ``--no-rss``, a fresh Python process per method
and length that reports how far its resident set's high-water mark (Linux's ``VmHWM``) rose
during one call (see ``rss_child`` for why not ``resource.getrusage``). Each length also checks that local attention equals full attention.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from common import command_line, environment, markdown_table, write_json

from transformer_tutorial.attention import attention
from transformer_tutorial.local_attention import (
    band_mask,
    fastest_seconds,
    local_attention,
    peak_memory_bytes,
)

METHODS = ("full", "SDPA + band", "local")


def contenders(T: int, window: int, head_dim: int) -> dict:
    """The three methods as functions of no argument, on random ``(1, 1, T, head_dim)`` inputs."""
    q, k, v = (torch.randn(1, 1, T, head_dim) for _ in range(3))  # (B, H, T, Dh)
    return {
        "full": lambda: attention(q, k, v, band_mask(T, window))[0],
        "SDPA + band": lambda: F.scaled_dot_product_attention(
            q, k, v, attn_mask=band_mask(T, window)
        ),
        "local": lambda: local_attention(q, k, v, window),
    }


def _proc_status_bytes(field: str) -> int:
    """A memory line of /proc/self/status (Linux), e.g. ``VmRSS``, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return 1024 * int(line.split()[1])  # the kernel writes kB
    raise RuntimeError(f"{field} not in /proc/self/status: the RSS check needs Linux")


def rss_child(method: str, T: int, window: int, head_dim: int, threads: int) -> None:
    """In a fresh process: how many bytes the resident set's high-water mark rose in one call.

    ``resource.getrusage(...).ru_maxrss`` cannot say it: Linux carries the parent's peak into a
    child across fork and exec, so a child of a big benchmark process starts with a peak above
    anything it allocates. The kernel's own high-water mark of this process, ``VmHWM``, is reset
    to the current resident set by writing 5 to /proc/self/clear_refs.
    """
    torch.set_num_threads(threads)
    with torch.no_grad():
        contenders(64, window, head_dim)[method]()  # load the code paths on a tiny input
        fn = contenders(T, window, head_dim)[method]
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
        before = _proc_status_bytes("VmRSS")
        fn()
        peak = _proc_status_bytes("VmHWM")
    print(peak - before)


def rss_bytes(method: str, T: int, window: int, head_dim: int, threads: int) -> int:
    args = [sys.executable, __file__, "--rss-child", method, str(T)]
    args += ["--window", str(window), "--head-dim", str(head_dim), "--threads", str(threads)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return int(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--window", type=int, default=64, help="band half-width w (frames)")
    parser.add_argument("--head-dim", type=int, default=32, help="Dh")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per method and T")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    parser.add_argument("--no-rss", action="store_true", help="skip the resident-set check")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("--rss-child", nargs=2, metavar=("METHOD", "T"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rss_child:
        method, T = args.rss_child
        rss_child(method, int(T), args.window, args.head_dim, args.threads)
        return {}

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    start = time.perf_counter()
    results = []
    for T in args.sizes:
        with torch.no_grad():
            fns = contenders(T, args.window, args.head_dim)
            difference = (fns["full"]() - fns["local"]()).abs().max().item()
            seconds = fastest_seconds(fns, repeats=args.repeats)
            for method, fn in fns.items():
                row = {
                    "T": T,
                    "method": method,
                    "seconds": seconds[method],
                    "peak_bytes": peak_memory_bytes(fn),
                    "rss_bytes": None
                    if args.no_rss
                    else rss_bytes(method, T, args.window, args.head_dim, args.threads),
                    "max_abs_difference_local_vs_full": difference,
                }
                results.append(row)
                print(
                    f"T = {T:6d} {method:>12}: {1e3 * row['seconds']:9.1f} ms, profiler "
                    f"{row['peak_bytes'] / 2**20:8.1f} MiB, resident set "
                    f"{(row['rss_bytes'] or 0) / 2**20:8.1f} MiB",
                    flush=True,
                )
        assert difference < 1e-5, f"local attention differs from full attention by {difference}"
    headers = ["T", "method", "CPU ms", "profiler MiB", "resident set MiB"]
    table = [
        [
            r["T"],
            r["method"],
            f"{1e3 * r['seconds']:.1f}",
            f"{r['peak_bytes'] / 2**20:.1f}",
            "" if r["rss_bytes"] is None else f"{r['rss_bytes'] / 2**20:.1f}",
        ]
        for r in results
    ]
    print(markdown_table(headers, table))
    payload = {
        "benchmark": "long_attention",
        "command": command_line("long_attention", argv),
        "settings": {
            "window": args.window,
            "head_dim": args.head_dim,
            "batch": 1,
            "heads": 1,
            "dtype": "float32",
            "repeats": args.repeats,
            "threads": args.threads,
            "time": "CPU time of the process (time.process_time), fastest of the interleaved "
            "repeats, seconds",
            "peak_bytes": "torch.profiler(profile_memory=True), running total of the allocator",
            "rss_bytes": "rise of VmHWM (reset by /proc/self/clear_refs) over VmRSS during one "
            "call in a fresh process",
        },
        "environment": environment(torch.device("cpu")),
        "wall_seconds": time.perf_counter() - start,
        "results": results,
    }
    write_json(args.json, payload)
    return payload


if __name__ == "__main__":
    main()
