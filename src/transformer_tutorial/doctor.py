"""Check the environment the book and the package run in, and say what is wrong.

Hand-written (not generated from a notebook).

    python -m transformer_tutorial.doctor

prints the versions that matter, the device a run would use and whether a small Transformer
runs on it, where the Multi30k data was found (or exactly what is missing), whether figures can
write Chinese, and one line of verdict. Paste its output into every bug report.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from dataclasses import dataclass

import torch

from .runtime import pick_device

REQUIRED = ("torch", "numpy", "tokenizers", "sacrebleu", "safetensors", "tqdm")
OPTIONAL = ("matplotlib", "jupyter-book", "nbval", "jupyterlab")


@dataclass
class Finding:
    """One line of the report: what was checked, what was found, and whether it is a problem."""

    topic: str
    detail: str
    ok: bool = True
    essential: bool = True  # a failed essential check makes the verdict "not ready"


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_versions() -> list[Finding]:
    findings = [Finding("python", f"{platform.python_version()} ({sys.executable})")]
    findings.append(Finding("platform", f"{platform.platform()} ({platform.machine()})"))
    for dist in REQUIRED:
        v = _version(dist)
        detail = v or f"missing: pip install {dist}"
        findings.append(Finding(dist, detail, ok=v is not None))
    for dist in OPTIONAL:
        v = _version(dist)
        findings.append(Finding(dist, v or "not installed (optional)", essential=False))
    package = _version("transformer-tutorial")
    where = os.path.dirname(os.path.abspath(__file__))
    findings.append(Finding("transformer-tutorial", f"{package or 'not installed'} ({where})"))
    return findings


def describe_torch() -> list[Finding]:
    cuda = torch.version.cuda
    build = f"CUDA {cuda}" if cuda else "CPU-only"
    findings = [Finding("torch build", build)]
    cpu = torch.backends.cpu.get_cpu_capability()
    findings.append(
        Finding(
            "cpu",
            f"{os.cpu_count()} cores, torch uses {torch.get_num_threads()} threads, "
            f"kernels: {cpu}, MKL: {torch.backends.mkl.is_available()}",
        )
    )
    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        findings.append(Finding("gpu", names))
    elif cuda:
        findings.append(
            Finding("gpu", "this torch is built for CUDA but sees no GPU", essential=False)
        )
    return findings


def check_forward(device: torch.device) -> Finding:
    """Run a tiny Transformer on ``device`` and compare it with the CPU."""
    from .transformer import Transformer, TransformerConfig

    torch.manual_seed(0)
    config = TransformerConfig(
        src_vocab_size=20,
        tgt_vocab_size=20,
        d_model=16,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=32,
        dropout=0.0,
        max_len=16,
    )
    model = Transformer(config).eval()
    src = torch.randint(1, 20, (2, 7))
    tgt = torch.randint(1, 20, (2, 5))
    try:
        with torch.no_grad():
            reference = model(src, tgt)
            out = model.to(device)(src.to(device), tgt.to(device)).cpu()
    except Exception as err:  # noqa: BLE001 (the report must name any failure)
        return Finding(f"forward on {device}", f"failed: {type(err).__name__}: {err}", ok=False)
    if out.shape != reference.shape or not torch.isfinite(out).all():
        return Finding(f"forward on {device}", f"bad output {tuple(out.shape)}", ok=False)
    err = (out - reference).abs().max().item()
    return Finding(
        f"forward on {device}",
        f"ok, output {tuple(out.shape)}, max difference from the CPU {err:.1e}",
        ok=err < 1e-3,
    )


def check_data() -> Finding:
    from .data import DataNotFoundError, multi30k_files

    try:
        files = multi30k_files("test", download=False)
    except DataNotFoundError as err:
        return Finding(
            "multi30k data",
            "not found; chapters 14-16 and the translator need it (they download it when "
            "there is a network).\n" + str(err),
            ok=False,
            essential=False,
        )
    return Finding("multi30k data", str(files["de"].parent))


def check_cjk_font() -> Finding:
    try:
        from .plotting import CJK_INSTALL_HINT, find_cjk_font
    except ImportError:
        return Finding("chinese in figures", "matplotlib not installed", essential=False)
    font = find_cjk_font()
    if font is None:
        return Finding("chinese in figures", CJK_INSTALL_HINT, ok=False, essential=False)
    return Finding("chinese in figures", font)


def run_checks() -> list[Finding]:
    findings = check_versions() + describe_torch()
    device = pick_device("auto")
    findings.append(Finding("device", f"{device} (what --device auto picks)"))
    findings.append(check_forward(device))
    findings.append(check_data())
    findings.append(check_cjk_font())
    return findings


def verdict(findings: list[Finding]) -> str:
    broken = [f.topic for f in findings if not f.ok and f.essential]
    warnings = [f.topic for f in findings if not f.ok and not f.essential]
    if broken:
        return f"NOT READY: fix {', '.join(broken)} (see above)."
    if warnings:
        return f"READY, with warnings about {', '.join(warnings)}."
    return "READY: everything the book needs is here."


def report(findings: list[Finding]) -> str:
    width = max(len(f.topic) for f in findings)
    lines = []
    for f in findings:
        mark = "ok " if f.ok else ("!! " if f.essential else "?? ")
        first, *rest = f.detail.splitlines() or [""]
        lines.append(f"{mark}{f.topic:<{width}}  {first}")
        lines += [" " * (width + 5) + line for line in rest]
    lines.append(verdict(findings))
    return "\n".join(lines)


def main() -> int:
    findings = run_checks()
    print(report(findings))
    return 1 if any(not f.ok and f.essential for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
