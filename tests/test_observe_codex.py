"""The Codex CLI observed with no driver code: its class, hops and damage are the Codex row's.

The npm-installed Codex 0.171.0 (`boundary-audit harness install codex`, the same install its
driver uses) is run by `boundary-audit observe` as a black box: a config template points its
provider at the mock (`tests/fixtures/observe/configs/codex.toml`), nothing of
`harness/drivers/codex.py` or `harness/inside/drive_codex.py` is used. It must come out as the
Codex row of reports/table8.md (the adapter path `codex:shell-command`): native, shell-string,
`bash -lc R`, one parse, no difference in any compared field or probe, and damage equal, task
by task, to that path's on the same tasks and replies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.adapters import load_adapters, path_transports
from boundary_audit.harness.drivers.codex import LAUNCHER
from boundary_audit.harness.install import Installation, npm_dir
from boundary_audit.pipelines.matrix import measure, run_matrix
from boundary_audit.sandbox import Limits
from boundary_audit.sandbox.bwrap import BwrapSandbox
from boundary_audit.tasks import load_reply_set, load_tasks

CONFIG = Path(__file__).resolve().parent / "fixtures" / "observe" / "configs" / "codex.toml"
SELECT = "write-file,heredoc-write,ssh-nested,session-exit"

pytestmark = [pytest.mark.bwrap, pytest.mark.harness, pytest.mark.slow]


def test_codex_observed_as_a_black_box_is_the_codex_row_of_table8(
    harness_env: Callable[..., Installation], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install = harness_env("codex")
    launcher = npm_dir(install.path) / LAUNCHER
    out = tmp_path / "codex.json"
    code = cli.main([
        "observe", "--name", "codex", "--expose", str(install.path),
        "--config-template", f"{CONFIG}:.codex/config.toml", "--compare", "codex:shell-command",
        "--select", SELECT, "--format", "json", "-o", str(out), "--",
        "node", str(launcher), "exec", "--skip-git-repo-check", "-s", "danger-full-access",
        "--json", "Run the command.",
    ])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert (doc["contract"], doc["differences"]) == ("native", [])
    path = doc["path"]
    lc = {"name": "raw", "params": {"shell": "bash", "flags": "-lc"}}
    assert (path["class"], path["shell_parses"], path["transport"]) == ("shell-string", 1, lc)
    assert [(t["shape"], t["tool"], t["reply"]) for t in doc["turns"]] == [
        ("tool", "exec_command", 0), ("tool", "exec_command", 1), ("final", "", None)]  # fmt: skip
    for chain in doc["chains"]:
        hops = [(h["via"], h["parses"], h["argv"]) for h in chain["hops"]]
        assert [(v, p) for v, p, _ in hops] == [
            ("launched", False), ("model", False), ("argv", False), ("argv", True),
            ("spawned", False)]  # fmt: skip
        assert hops[0][2][:2] == ["node", str(launcher)]
        assert re.fullmatch(r".*/codex-linux-[^/]+/vendor/[^/]+/bin/codex", hops[1][2][0])
        assert hops[1][2][1:3] == ["exec", "--skip-git-repo-check"]
        assert hops[2][2][:2] == ["/proc/self/exe", "--codex-run-as-process-setup"]
        assert hops[3][2] == ["/bin/bash", "-lc", chain["reply"]]
        assert hops[4][2] == [chain["token"], chain["label"], "a b", "c d", "42"]
    facts = {f["probe"]: f["outcome"] for f in doc["facts"]}
    adapter = load_adapters(["codex"])[0].path("shell-command")
    carried = {k: v for k, v in adapter.expect.items() if k != "operators"}
    assert {k: facts[k] for k in carried} == carried  # login=yes, shell=bash, stdin=separate...
    assert [p["probe"] for p in doc["skipped_probes"]] == ["operators"]  # piped on: no marker

    row = doc["table8"]["rows"][0]
    observed = {m["reply_set"]: m for m in row["measures"]}
    tasks = load_tasks(SELECT)
    suite = load_tasks()
    sets = [load_reply_set(s, suite).restricted(tasks) for s in ("oracle", "naive")]
    reference = next(
        t for t in path_transports(load_adapters(["codex"])) if t.path.id == "shell-command"
    )
    with BwrapSandbox(Limits(timeout_s=30)) as sandbox:
        matrix = run_matrix(tasks, sets, [reference], sandbox)
    for s in sets:
        want = measure(matrix.records, reference.label, s.name)
        got = observed[s.name]
        assert (got["passed_raw"], got["passed_boundary"], got["damage_pp"], got["errors"]) == (
            want.passed_raw, want.passed_boundary, want.damage_pp, 0)  # fmt: skip
        assert got["broken"] == list(want.broken) == []
