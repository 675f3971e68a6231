"""Run a blind set of reader mistakes (tests/check/blind/<set>/) through the checks and print,
per check, what was caught, which correct variants passed, and each verdict beside what the
case says was done, so that whether a verdict names the mistake can be judged by reading it.

    python tools/measure_checker.py b1            # the table, then every mistake's verdict
    python tools/measure_checker.py b1 --table    # the table only
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "check"))

from blind import BlindCase, load  # noqa: E402

from transformer_tutorial import check  # noqa: E402


def verdict_of(case: BlindCase) -> check.Verdict:
    """The check's verdict on one case, without printing it."""
    with contextlib.redirect_stdout(io.StringIO()):
        return getattr(check, case.check)(case.code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", help="the blind set: b1 or b2")
    parser.add_argument("--table", action="store_true", help="print the table only")
    args = parser.parse_args()
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lines = []
    for case in load(args.set):
        verdict = verdict_of(case)
        row = rows[case.check]
        row[case.kind] += 1
        row["bug"] += "bug in the checker" in verdict.message
        if case.kind == "correct":
            row["passed"] += verdict.ok
            if not verdict.ok:
                lines.append(f"  REJECTED {case.check}/{case.name}: {verdict.message}")
            continue
        row["caught"] += not verdict.ok
        row["id"] += verdict.mistake is not None
        lines += [
            f"{case.check}/{case.name}" + (" NOT CAUGHT" if verdict.ok else ""),
            f"  what:    {case.what}",
            f"  verdict: {verdict.message}" + (f"  [{verdict.mistake}]" if verdict.mistake else ""),
        ]
    header = f"{'check':32} {'caught':>9} {'correct ok':>11} {'named id':>9} {'bug':>4}"
    print(header)
    total: dict[str, int] = defaultdict(int)
    for name in sorted(rows):
        row = rows[name]
        for key, value in row.items():
            total[key] += value
        print(f"{name:32} {row['caught']:>4} / {row['mistake']:<3} {row['passed']:>4} / "
              f"{row['correct']:<4} {row['id']:>9} {row['bug']:>4}")  # fmt: skip
    print(f"{'total':32} {total['caught']:>4} / {total['mistake']:<3} {total['passed']:>4} / "
          f"{total['correct']:<4} {total['id']:>9} {total['bug']:>4}")  # fmt: skip
    if not args.table:
        print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
