"""The suite's transports run from a copy of the project under /tmp, its interpreter there too.

A clone under /tmp with its own venv was the case the sandbox broke: the workspace is bound at
/tmp inside, so the drivers' interpreter (`.../.venv/bin/python`) vanished and every run
through a session, tmux or ssh failed with `env: ...: No such file or directory`, exit 127.
The sandbox now re-exposes the running Python and package when they live under /tmp; this
copies the package and its data folders to a fresh directory under /tmp, gives it a venv of
its own there (its dependencies from the suite's site-packages, the package only from the
copy), and pushes a hostile task through every transport with an in-sandbox driver and the
one-shot ones: every run is carried out, and passes where the transport does not damage it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ("tasks", "probes", "system_adapters", "specimens", "contracts")
TRANSPORTS = ("session", "session-pipe", "tmux-keys", "tmux-literal", "ssh", "stdin", "script-sh")


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.tmux
@pytest.mark.sshd
def test_the_transports_run_from_a_copy_of_the_project_under_tmp(tmp_path: Path) -> None:
    assert str(tmp_path.resolve()).startswith("/tmp/"), tmp_path
    clone = tmp_path / "clone"
    shutil.copytree(
        ROOT / "boundary_audit",
        clone / "boundary_audit",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for folder in DATA:
        shutil.copytree(ROOT / folder, clone / folder)
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]  # the suite's dependencies, not its package
    Path(site, "000-clone.pth").write_text(f"{clone}\n{deps}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    show = "import boundary_audit, sys; print(boundary_audit.__file__, sys.prefix)"
    where = subprocess.run(
        [str(python), "-c", show], cwd=tmp_path, env=env, check=True, capture_output=True,
        text=True,
    ).stdout.split()  # fmt: skip
    assert where == [str(clone / "boundary_audit" / "__init__.py"), str(venv)]
    out = tmp_path / "probe.json"
    argv = [str(python), "-m", "boundary_audit", "probe", "--replies", "oracle"]
    argv += [a for t in TRANSPORTS for a in ("--transport", t)]
    argv += ["--select", "write-file-t3,heredoc-write-t1", "--format", "json", "-o", str(out)]
    res = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=600)
    assert res.returncode == 0, res.stderr.decode()[-3000:]
    doc = json.loads(out.read_text(encoding="utf-8"))
    runs = doc["runs"]
    assert sorted({r["transport"] for r in runs}) == sorted(("raw", *TRANSPORTS))
    assert [r for r in runs if r["reason"].startswith("error: ")] == []
    assert doc["skipped"] == []
    # ssh is the study's `ssh host "R"` (R between double quotes): its damage is by design
    failed = [(r["transport"], r["task_id"]) for r in runs if not r["passed"]]
    assert failed == [("ssh", "write-file-t3"), ("ssh", "heredoc-write-t1")]
