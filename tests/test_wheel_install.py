"""The product works from an installed wheel, far from the repository: build it, install it into
a fresh venv under /tmp, and run `demo` there (the data folders must be inside the wheel, the
sandbox must find an interpreter that lives under /tmp)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.bwrap
def test_the_wheel_installs_and_runs_the_demo_outside_the_repository(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(dist), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = dist.glob("boundary_audit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for folder in ("tasks", "probes", "system_adapters", "specimens"):
        assert any(n.startswith(f"boundary_audit/_bundled/{folder}/") for n in names), folder
    assert not any(".." in n or n.startswith("/") for n in names)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # NOTE: the dependencies come from pip's cache of this machine (the suite's own venv was
    # installed from the same registries), the package only from the wheel.
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    out = tmp_path / "report"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(
        [str(venv / "bin" / "boundary-audit"), "demo", "--output-dir", str(out),
         "--select", "write-file-t3", "--no-probes"],
        cwd=tmp_path, env=env, capture_output=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    table = json.loads((out / "table8.json").read_text())
    assert table["schema"] == "boundary-audit/table8/v1"
    measures = [m for row in table["rows"] for m in row["measures"]]
    assert measures and [m["errors"] for m in measures] == [0] * len(measures)
    scan = json.loads((out / "scan.json").read_text())
    assert scan["schema"] == "boundary-audit/v1" and scan["findings"]
    import_check = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import boundary_audit as b; print(b.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert import_check.stdout.startswith(str(venv))
