"""`boundary-audit fleet`: a plan's units on a real Dask cluster equal one machine's scan, and
survive what a fleet meets — a rerun, a worker killed mid-run, the client killed, Ctrl-C, a
worker whose sandbox is broken, a target that moved.

Every fleet here is the real command in its own process (a local cluster of worker processes,
or an external `dask scheduler` with a `dask worker`), auditing three specimen repositories
served by a loopback `git daemon`, with the oracle and naive reply sets through the boundary
each scan derived.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from boundary_audit._data import iter_files
from boundary_audit.fleet.store import Store, StoreError
from boundary_audit.report.fleet.json_v1 import CROSSOVER_KEYS
from boundary_audit.tasks import load_tasks
from tests.support.git_daemon import GitDaemon, free_port, wait_for_port
from tests.support.gitrepos import add_commit, make_repo

pytestmark = [pytest.mark.bwrap]

SELECT = "write-file-t1,env-pass-t2,heredoc-write-t1,stdin-reader-t1"
SPECIMENS = {"nested": "python_nested", "codeblocks": "python_codeblocks", "stdin": "python_stdin"}
UNITS = 54
"""3 scans, 3 targets, and the runs: 4 tasks x 2 reply sets through raw and through each of
the three derived boundaries (one task of each specimen is skipped as not applicable)."""


def _specimen(folder: str) -> dict[str | bytes, str | bytes]:
    return {rel: node.read_bytes() for rel, node in iter_files("specimens") if
            rel.startswith(folder + "/")}  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("fleet")
    daemon = GitDaemon(base / "served")
    daemon.start()
    shas = {
        name: make_repo(base / "served" / f"{name}.git", _specimen(folder), bare=True)
        for name, folder in SPECIMENS.items()
    }
    try:
        yield {"base": base, "daemon": daemon, "shas": shas}
    finally:
        daemon.stop()


def _plan(world: dict[str, Any], where: Path, name: str = "ci", **extra: str) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    lines = [f'name = "{name}"', f'select = "{SELECT}"', 'sandbox = "bwrap"',
             'replies = ["oracle", "naive"]', "jobs = 2"]  # fmt: skip
    lines += [f"{k} = {v}" for k, v in extra.items()]
    for target in SPECIMENS:
        lines += ["[[targets]]", f'repo = "{world["daemon"].url(target + ".git")}"',
                  f'name = "{target}"']  # fmt: skip
    path = where / "plan.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(BOUNDARY_AUDIT_CACHE_DIR=str(tmp / "cache"), COLUMNS="120", **extra)
    return env


def _fleet(plan: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "boundary_audit", "fleet", str(plan), "--format", "json",
            "-o", str(plan.parent / "report.json"), *args]  # fmt: skip
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip


def _finish(proc: subprocess.Popen[bytes], timeout: float = 240) -> tuple[int, str]:
    _out, err = proc.communicate(timeout=timeout)
    return proc.returncode, err.decode()


def _report(plan: Path) -> dict[str, Any]:
    doc = json.loads((plan.parent / "report.json").read_text())
    doc.pop("command")
    doc.pop("diff")
    return doc


def _wait_units(store: Path, at_least: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 180
    while Store(store).finished() < at_least:
        assert proc.poll() is None, _finish(proc)
        assert time.monotonic() < deadline, "the fleet stored no units"
        time.sleep(0.05)


def _workers(pid: int) -> list[psutil.Process]:
    """The cluster's worker processes: the client's own spawned children. Not deeper: a
    worker's static scan forks its pool, and a forked child keeps the worker's command line."""
    found = []
    for child in psutil.Process(pid).children():
        try:
            line = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "spawn_main" in line and "resource_tracker" not in line:
            found.append(child)
    return found


def _valid_store(store: Path, temps: bool = False) -> int:
    """Every unit file is a whole unit (StoreError otherwise); no temporary is left unless
    `temps` (a writer killed mid-write leaves one, never a unit; the next run sweeps it)."""
    kept = Store(store)
    files = sorted((store / "units").glob("*/*.json"))
    for path in files:
        assert kept.get(path.stem) is not None
    if not temps:
        assert list(store.rglob(".tmp-*")) == []
    return len(files)


@pytest.fixture(scope="module")
def baseline(world: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The plan on two workers from an empty store: the report every other run must equal."""
    tmp = tmp_path_factory.mktemp("baseline")
    plan = _plan(world, tmp / "two")
    code, err = _finish(_fleet(plan, "--workers", "2", env=_env(tmp)))
    assert code == 0, err
    assert err.splitlines()[-1] == (
        f"boundary-audit: fleet ci: 3 targets, 3 boundaries; {UNITS}/{UNITS} units done "
        f"({UNITS} run now, 0 from the store)"
    )
    return {"tmp": tmp, "plan": plan, "report": _report(plan), "stderr": err}


# -- the plan ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('name = "x y"', "p.toml: name: letters, digits, '.', '_' and '-' only (at most 64)"),
        ('select = "nope-t9"', "p.toml: select: --select 'nope-t9' matches no task"),
        ('sandbox = "tempdir"', "p.toml: sandbox: tempdir runs replies with NO isolation; set "
                                "allow_tempdir = true to mean it"),
        ("jobs = 0", "p.toml: jobs: must be between 1 and 256"),
        ('name = "x"', "p.toml: no [[targets]] and no named transports: nothing to audit"),
        ('[[targets]]\nname = "a"', "p.toml: targets[0].repo: missing"),
        ('[[targets]]\nrepo = "nowhere"', "p.toml: targets[0].repo: invalid spec 'nowhere': not "
                                          "an existing path, a git URL or a GitHub owner/name"),
        ("[[targets", "p.toml: invalid TOML: Expected ']]' at the end of an array declaration "
                      "(at line 1, column 10)"),
    ],
)  # fmt: skip
def test_a_bad_plan_is_one_line_and_exit_4_before_anything_runs(
    tmp_path: Path, body: str, message: str
) -> None:
    (tmp_path / "p.toml").write_text(body + "\n")
    argv = [sys.executable, "-m", "boundary_audit", "fleet", "p.toml"]
    res = subprocess.run(argv, cwd=tmp_path, capture_output=True, env=_env(tmp_path), timeout=60)
    assert (res.returncode, res.stdout, res.stderr.decode()) == (
        4,
        b"",
        f"boundary-audit: error: {message}\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]  # no store, no clone


def test_a_unit_is_written_once_and_a_foreign_file_is_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "s").create()
    assert store.put("ab" + "0" * 62, {"kind": "run"}, {"n": 1}) is True
    assert store.put("ab" + "0" * 62, {"kind": "run"}, {"n": 2}) is False
    assert store.get("ab" + "0" * 62) == {"n": 1}
    path = store.unit_path("cd" + "0" * 62)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{half a unit")
    with pytest.raises(StoreError, match=r"/cd0+\.json: not a boundary-audit/fleet-unit/v1 file"):
        store.get("cd" + "0" * 62)


# -- one machine, one worker, two workers ------------------------------------------------------


def test_two_workers_equal_one_worker_and_each_target_equals_its_own_scan(
    world: dict[str, Any], baseline: dict[str, Any], tmp_path: Path
) -> None:
    plan = _plan(world, tmp_path / "one")
    shared_tmp = Path(tempfile.mkdtemp(prefix="ba-tmp-"))  # a /tmp of its own: mode 1777
    shared_tmp.chmod(0o1777)
    try:
        env = _env(tmp_path, TMPDIR=str(shared_tmp))
        code, err = _finish(_fleet(plan, "--workers", "1", env=env))
        # the cluster's scratch and lock files stay in the run's own directory
        assert not (shared_tmp / "dask-scratch-space").exists()
    finally:
        shutil.rmtree(shared_tmp)
    assert code == 0, err
    assert _report(plan) == baseline["report"]
    report = baseline["report"]
    assert (report["units"], report["complete"], report["failures"]) == (
        {"total": UNITS, "done": UNITS, "failed": 0},
        True,
        [],
    )
    assert [(t["name"], t["commit"], t["model_controlled"]) for t in report["targets"]] == [
        (name, world["shas"][name], 1) for name in SPECIMENS
    ]
    store = Store(baseline["plan"].parent / "ci.store")
    targets = [store.get(p.stem) for p in sorted((store.root / "units").glob("*/*.json"))]
    by_repo = {
        json.loads(t["scan_json"])["target"]: t["scan_json"]
        for t in targets
        if t is not None and "scan_json" in t
    }
    for name in SPECIMENS:
        url = world["daemon"].url(name + ".git")
        single = subprocess.run(
            [sys.executable, "-m", "boundary_audit", "scan", url, "--select", SELECT,
             "--sandbox", "bwrap", "--format", "json"],
            capture_output=True, env=_env(tmp_path), timeout=240,
        )  # fmt: skip
        assert single.returncode == 0, single.stderr.decode()
        assert by_repo[url] == single.stdout.decode()


def test_a_rerun_of_a_stored_plan_runs_nothing_and_starts_no_cluster(
    baseline: dict[str, Any],
) -> None:
    plan = baseline["plan"]
    code, err = _finish(_fleet(plan, env=_env(baseline["tmp"])))
    assert code == 0, err
    assert "connecting to a local cluster" not in err
    assert err.splitlines()[-1].endswith(f"({0} run now, {UNITS} from the store)")
    assert _report(plan) == baseline["report"]
    diff = json.loads((plan.parent / "report.json").read_text())["diff"]
    assert (diff["previous"], diff["changes"]) == (True, [])


# -- what a fleet meets ------------------------------------------------------------------------


def test_a_worker_killed_mid_run_loses_no_unit(
    world: dict[str, Any], baseline: dict[str, Any], tmp_path: Path
) -> None:
    plan = _plan(world, tmp_path)
    proc = _fleet(plan, "--workers", "2", "--batch", "2", env=_env(tmp_path))
    _wait_units(tmp_path / "ci.store", 8, proc)
    victims = _workers(proc.pid)
    assert len(victims) == 2
    victims[0].kill()
    code, err = _finish(proc)
    assert code == 0, err
    assert _report(plan) == baseline["report"]
    assert _valid_store(tmp_path / "ci.store") == UNITS


def test_the_client_killed_leaves_no_worker_and_a_rerun_finishes_it(
    world: dict[str, Any], baseline: dict[str, Any], tmp_path: Path
) -> None:
    plan = _plan(world, tmp_path)
    proc = _fleet(plan, "--workers", "2", "--batch", "2", env=_env(tmp_path))
    _wait_units(tmp_path / "ci.store", 8, proc)
    workers = _workers(proc.pid)
    assert len(workers) == 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    gone, alive = psutil.wait_procs(workers, timeout=60)
    assert alive == []
    kept = _valid_store(tmp_path / "ci.store", temps=True)
    assert 8 <= kept < UNITS
    code, err = _finish(_fleet(plan, "--workers", "2", env=_env(tmp_path)))
    assert code == 0, err
    assert err.splitlines()[-1].endswith(f"({UNITS - kept} run now, {kept} from the store)")
    assert _report(plan) == baseline["report"]
    assert _valid_store(tmp_path / "ci.store") == UNITS


def test_ctrl_c_stops_with_130_keeps_whole_units_and_a_rerun_finishes_it(
    world: dict[str, Any], baseline: dict[str, Any], tmp_path: Path
) -> None:
    plan = _plan(world, tmp_path)
    proc = _fleet(plan, "--workers", "2", "--batch", "2", env=_env(tmp_path))
    _wait_units(tmp_path / "ci.store", 8, proc)
    workers = _workers(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C reaches the whole group
    code, err = _finish(proc)
    assert code == 130, err
    assert "stopped; the store keeps every finished unit: run the same plan again" in err
    assert "Traceback" not in err
    assert psutil.wait_procs(workers, timeout=60)[1] == []
    kept = _valid_store(tmp_path / "ci.store")
    assert kept < UNITS
    assert not (tmp_path / "report.json").exists()
    code, err = _finish(_fleet(plan, "--workers", "2", env=_env(tmp_path)))
    assert code == 0, err
    assert _report(plan) == baseline["report"]


@pytest.fixture
def broken_worker(tmp_path: Path) -> Iterator[str]:
    """An external scheduler and one worker whose host has a bwrap that cannot start."""
    fake = Path(tempfile.mkdtemp(prefix="ba-fakebin-"))  # readable by the sandbox's own uid
    fake.chmod(0o755)
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new "
                                "namespace' >&2\nexit 1\n")  # fmt: skip
    (fake / "bwrap").chmod(0o755)
    port = free_port()
    dask = str(Path(sys.executable).parent / "dask")
    env = _env(
        tmp_path,
        DASK_DISTRIBUTED__LOGGING__DISTRIBUTED="error",
        DASK_TEMPORARY_DIRECTORY=str(tmp_path / "dask"),  # not the shared /tmp's scratch dir
    )
    logs = (tmp_path / "scheduler.log").open("wb")
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], env=env, stdout=logs, stderr=logs,
                              start_new_session=True)]  # fmt: skip
    try:
        wait_for_port(port, procs[0])
        worker_env = {**env, "PATH": f"{fake}:{env['PATH']}"}
        procs.append(subprocess.Popen(
            [dask, "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--nworkers", "1",
             "--no-dashboard", "--name", "badhost"],
            env=worker_env, stdout=logs, stderr=logs, start_new_session=True,
        ))  # fmt: skip
        yield f"tcp://127.0.0.1:{port}"
    finally:
        for p in reversed(procs):
            with pytest.raises(ProcessLookupError) if p.poll() is not None else _nothing():
                os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=30)
        logs.close()
        shutil.rmtree(fake)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_worker_with_a_broken_sandbox_is_an_error_never_damage(
    world: dict[str, Any], baseline: dict[str, Any], tmp_path: Path, broken_worker: str
) -> None:
    plan = _plan(world, tmp_path)
    code, err = _finish(_fleet(plan, "--scheduler", broken_worker, env=_env(tmp_path)))
    assert code == 6, err
    doc = json.loads((tmp_path / "report.json").read_text())
    assert (doc["complete"], doc["units"]) == (False, {"total": UNITS, "done": 3, "failed": 51})
    reason = doc["failures"][0]["reason"]
    assert re.fullmatch(
        r"sandbox 'bwrap' unavailable on worker [^:]+:\d+: bwrap cannot start: bwrap could not "
        r"set up the sandbox \(3 tries\): bwrap: No permissions to create new namespace",
        reason,
    )
    assert doc["failures"] == [  # the three scans need no sandbox and are kept
        {"kind": "run", "units": 48, "reason": reason},
        {"kind": "target", "units": 3, "reason": reason},
    ]
    for target in doc["targets"]:
        for boundary in target["boundaries"]:
            assert all(d["tasks"] == 0 for d in boundary["damage"]), boundary
    assert not (tmp_path / "ci.store" / "reports" / "last.json").exists()
    code, err = _finish(_fleet(plan, "--workers", "2", env=_env(tmp_path)))
    assert code == 0, err
    assert _report(plan) == baseline["report"]


def test_a_target_that_moved_is_diffed_against_the_last_report(
    world: dict[str, Any], tmp_path: Path
) -> None:
    served = tmp_path / "served"
    daemon = GitDaemon(served)
    daemon.start()
    try:
        make_repo(served / "t.git", _specimen("python_nested"), bare=True)
        plan = tmp_path / "plan.toml"
        plan.write_text(f'name = "moved"\nselect = "write-file-t1"\nsandbox = "bwrap"\n'
                        f'replies = ["oracle"]\n[[targets]]\nrepo = "{daemon.url("t.git")}"\n'
                        'name = "t"\n')  # fmt: skip
        code, err = _finish(_fleet(plan, env=_env(tmp_path)))
        assert code == 0, err
        first = json.loads((tmp_path / "report.json").read_text())
        (old,) = first["targets"][0]["boundaries"]
        add_commit(served / "t.git", _specimen("python_stdin"), delete=["python_nested/agent.py"],
                   message="swap the nested spawn for stdin")  # fmt: skip
        code, err = _finish(_fleet(plan, env=_env(tmp_path)))
        assert code == 0, err
        same = json.loads((tmp_path / "report.json").read_text())
        assert same["targets"][0]["commit"] == first["targets"][0]["commit"]  # pinned by cache
        code, err = _finish(_fleet(plan, "--refresh", env=_env(tmp_path)))
        assert code == 0, err
        moved = json.loads((tmp_path / "report.json").read_text())
        (new,) = moved["targets"][0]["boundaries"]
        assert moved["diff"]["previous"] is True
        assert [(c["kind"], c["target"], c["class"], c["location"])
                for c in moved["diff"]["changes"]] == [
            ("appeared", "t", new["class"], new["location"]),
            ("vanished", "t", old["class"], old["location"]),
        ]  # fmt: skip
        assert (old["class"], new["class"]) == ("nested-string", "shell-stdin")
    finally:
        daemon.stop()


def test_the_named_crossover_equals_the_crossover_command(tmp_path: Path) -> None:
    tasks = load_tasks(SELECT)
    lines = []
    for model, raw in (("m-naive", "naive"), ("m-oracle", "oracle")):
        for contract, field in (("raw", raw), ("disclosed", "oracle")):
            lines += [json.dumps({"task_id": t.id, "reply": getattr(t, field), "model": model,
                                  "contract": contract}) for t in tasks]  # fmt: skip
    (tmp_path / "replies.jsonl").write_text("\n".join(lines) + "\n")
    plan = tmp_path / "plan.toml"
    plan.write_text(f'name = "x"\nselect = "{SELECT}"\nsandbox = "bwrap"\n'
                    'replies = ["replies.jsonl"]\ntransports = ["nested"]\n')  # fmt: skip
    code, err = _finish(_fleet(plan, "--workers", "2", env=_env(tmp_path)))
    assert code == 0, err
    doc = json.loads((tmp_path / "report.json").read_text())
    (named,) = doc["crossovers"]
    ((row),) = doc["named"]
    assert (row["transport"], [m["reply_set"] for m in row["measures"]]) == ("nested", [
        "replies.jsonl#raw:m-naive", "replies.jsonl#raw:m-oracle",
        "replies.jsonl#disclosed:m-naive", "replies.jsonl#disclosed:m-oracle",
    ])  # fmt: skip
    single = subprocess.run(
        [sys.executable, "-m", "boundary_audit", "crossover", "-r", "replies.jsonl", "-t",
         "nested", "--select", SELECT, "--sandbox", "bwrap", "--format", "json", "--no-timings"],
        cwd=tmp_path, capture_output=True, env=_env(tmp_path), timeout=240,
    )  # fmt: skip
    assert single.returncode == 0, single.stderr.decode()
    expected = json.loads(single.stdout)
    # the command's one note is about its own flags (raw added to -t nested)
    assert expected["notes"] == ["transport 'raw' added: damage is measured against it"]
    assert named == {"scope": "named"} | {k: expected[k] for k in CROSSOVER_KEYS} | {"notes": []}
    assert [c["model"] for c in named["configurations"]] == ["m-naive", "m-oracle"]
