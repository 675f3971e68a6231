import subprocess
import sys

from transformer_tutorial import doctor


def test_doctor_reports_versions_device_forward_and_a_verdict(monkeypatch, tmp_path):
    monkeypatch.setenv("TRANSFORMER_TUTORIAL_DATA", str(tmp_path))  # an empty data folder
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    findings = doctor.run_checks()
    topics = {f.topic: f for f in findings}
    assert topics["torch"].detail == __import__("torch").__version__
    assert topics["forward on cpu"].ok, topics["forward on cpu"].detail
    data = topics["multi30k data"]
    assert not data.ok and not data.essential and str(tmp_path) in data.detail
    text = doctor.report(findings)
    assert text.splitlines()[-1].startswith("READY, with warnings about")
    assert "multi30k data" in text.splitlines()[-1]


def test_verdict_names_what_is_broken():
    findings = [
        doctor.Finding("torch", "2.13.0"),
        doctor.Finding("tokenizers", "missing: pip install tokenizers", ok=False),
        doctor.Finding("chinese in figures", "no font", ok=False, essential=False),
    ]
    assert doctor.verdict(findings) == "NOT READY: fix tokenizers (see above)."
    assert doctor.verdict(findings[:1]) == "READY: everything the book needs is here."


def test_doctor_runs_as_a_module_and_exits_zero_when_ready():
    out = subprocess.run(
        [sys.executable, "-m", "transformer_tutorial.doctor"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "forward on cpu" in out.stdout and out.stdout.strip().splitlines()[-1].startswith(
        "READY"
    )
