"""The pages of the book's table of contents, for the tests that check every page."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def toc_files() -> list[str]:
    """Every file _toc.yml names, as written there: the root, the chapters and, recursively,
    their sections (e.g. the solutions pages)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())

    def files_of(entries: list[dict]) -> list[str]:
        files = []
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            files += files_of(entry.get("sections", []))
        return files

    return [toc["root"]] + files_of([c for part in toc["parts"] for c in part["chapters"]])
