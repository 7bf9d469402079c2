"""`boundary-audit scan` end to end against git repositories the tests build.

Exit codes (0, 2, 3, 4, 6, 10), report to stdout or --output, the stderr summary line with
the full sha, environment aliases, config and baseline from the command line, determinism,
and a remote target served by a real git daemon.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boundary_audit import cli
from boundary_audit.errors import ExitCode
from tests.support.git_daemon import GitDaemon
from tests.support.gitrepos import add_commit, make_repo

HARNESS = b"""import json
import subprocess


def run_tool(tool_call):
    args = json.loads(tool_call.function.arguments)
    return subprocess.run(args["command"], shell=True, capture_output=True)


def run_remote(tool_call):
    cmd = json.loads(tool_call.function.arguments)["command"]
    return subprocess.run(["bash", "-c", f'ssh sandbox "{cmd}"'])


def version():
    return subprocess.run(["git", "rev-parse", "HEAD"])
"""
SHELL_LINE, NESTED_LINE = 7, 12
SHELL_CODE, NESTED_CODE = "BA101", "BA102"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("target") / "harness"
    sha = make_repo(
        path,
        {
            "agent/tools.py": HARNESS,
            "README.md": b"# demo\n",
            "logo.png": b"\x89PNG\x00\x00binary",
            "bin/agent": b"\x7fELF\x02\x01\x01\x00binary",
        },
    )
    return path, sha


def _scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run a static-only scan (probing has its own tests); return (code, stdout, stderr)."""
    rc = cli.main(["scan", "--no-probe", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def _summary(
    target: str, sha: str, findings: int, suppressed: int = 0, skipped: int = 1, extra: str = ""
) -> str:
    word = "finding" if findings == 1 else "findings"
    files = "file" if skipped == 1 else "files"
    return (
        f"scanned {target}@{sha}: {findings} {word} ({suppressed} suppressed{extra}), "
        f"{skipped} {files} skipped\n"
    )


def test_default_terminal_report_and_summary_line(
    repo: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, sha = repo
    rc, out, err = _scan(capsys, str(path), "-j", "1")
    assert rc == ExitCode.OK
    assert err == _summary(str(path), sha, 2)
    rows = [line.split()[:5] for line in out.splitlines() if line.startswith("[")]
    assert rows == [
        ["[1]", "shell-string", f"agent/tools.py:{SHELL_LINE}", "native", "not"],
        ["[2]", "nested-string", f"agent/tools.py:{NESTED_LINE}", "native", "not"],
    ]  # static only: "not probed", no damage claimed
    assert "1 skipped (1 binary); --show-skipped lists them" in out and "\x1b[" not in out
    rc, out, _ = _scan(capsys, str(path), "-j", "1", "--show-skipped", "--details")
    assert "  bin/agent: binary\n" in out
    assert "logo.png" not in out  # its name rules out every scanned language: not read
    assert f"[1] BA101 shell-string-sink at agent/tools.py:{SHELL_LINE}@{sha[:7]}\n" in out


def test_json_to_file_carries_classes_lines_and_commit(
    repo: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, sha = repo
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    rc, out, err = _scan(capsys, f"{path}@{sha[:10]}", "--format", "json", "-o", str(report))
    assert (rc, out) == (0, "")
    assert err == _summary(str(path), sha, 2)
    doc = json.loads(report.read_text(encoding="utf-8"))
    assert doc["commit"] == sha and doc["target"] == f"{path}@{sha[:10]}"
    assert doc["command"] == f"boundary-audit scan {path}@{sha} --format json --no-probe"
    assert [
        (f["code"], f["path"], f["line"], f["class"], f["model_controlled"])
        for f in doc["findings"]
    ] == [
        (SHELL_CODE, "agent/tools.py", SHELL_LINE, "shell-string", True),
        (NESTED_CODE, "agent/tools.py", NESTED_LINE, "nested-string", True),
    ]
    assert doc["skipped"] == [{"path": "bin/agent", "reason": "binary"}]


@pytest.mark.parametrize(
    ("args", "code", "gate_line"),
    [
        (
            ["--fail-on", "nested-string"],
            ExitCode.GATE,
            "gate tripped: 1 active model-controlled finding of class nested-string\n",
        ),
        (
            ["--fail-on", "shell-string", "--fail-on", "NESTED-STRING"],
            ExitCode.GATE,
            "gate tripped: 2 active model-controlled findings of class nested-string, shell-string\n",  # noqa: E501
        ),
        (["--fail-on", "script-file"], ExitCode.OK, ""),
        (
            ["--fail-on", "shell-string", "--no-exit-codes"],
            ExitCode.OK,
            "gate ignored (--no-exit-codes): 1 active model-controlled finding of class shell-string\n",  # noqa: E501
        ),
        (
            ["--fail-on", "shell-string", "--min-severity", "high", "--min-confidence", "high"],
            ExitCode.OK,
            None,
        ),
    ],
)
def test_fail_on_gate(
    repo: tuple[Path, str],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    gate_line: str | None,
) -> None:
    path, sha = repo
    rc, _, err = _scan(capsys, str(path), "-j", "1", "-f", "json", *args)
    assert rc == code
    lines = err.splitlines(keepends=True)
    if gate_line is None:
        assert lines == [_summary(str(path), sha, 0, extra=", 2 below threshold")]
    else:
        assert lines[0] == _summary(str(path), sha, 2)
        assert "".join(lines[1:]) == gate_line


def test_environment_aliases(
    repo: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = repo
    monkeypatch.setenv("BOUNDARY_AUDIT_FORMAT", "markdown")
    monkeypatch.setenv("BOUNDARY_AUDIT_FAIL_ON", "script-file nested-string")
    monkeypatch.setenv("BOUNDARY_AUDIT_JOBS", "1")
    rc, out, err = _scan(capsys, str(path))
    assert rc == ExitCode.GATE
    assert out.startswith(f"# boundary-audit static scan: {path}\n")
    assert err.endswith("of class nested-string\n")
    monkeypatch.setenv("BOUNDARY_AUDIT_NO_EXIT_CODES", "1")
    assert _scan(capsys, str(path))[0] == ExitCode.OK


def test_same_input_gives_byte_identical_reports(
    repo: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One worker or two, first run or second: the same bytes (renderers are pure; their own
    determinism over every format is tested on the shared sample report)."""
    path, _ = repo
    outs = {}
    for fmt, jobs in (("json", "1"), ("json", "2"), ("sarif", "1"), ("sarif", "2")):
        target = tmp_path / f"{fmt}-{jobs}.out"
        assert _scan(capsys, str(path), "-f", fmt, "-j", jobs, "-o", str(target))[0] == 0
        outs[fmt, jobs] = target.read_bytes()
    assert outs["json", "1"] == outs["json", "2"]
    assert outs["sarif", "1"] == outs["sarif", "2"]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["scan", "{tmp}/no-such-dir"], ExitCode.SOURCE, "boundary-audit: error: "),
        (["scan", "{repo}@0000000"], ExitCode.SOURCE, "boundary-audit: error: "),
        (["scan", "{repo}", "--format", "yaml"], ExitCode.USAGE, "Invalid value for '--format'"),
        (["scan", "{repo}", "--fail-on", "shell"], ExitCode.USAGE, "Invalid value for '--fail-on'"),
        (["scan", "{repo}", "--jobs", "0"], ExitCode.USAGE, "Invalid value for '--jobs'"),
        (
            ["scan", "{repo}", "--config", "{tmp}/missing.toml"],
            ExitCode.INPUT,
            "boundary-audit: error: {tmp}/missing.toml: cannot read config: ",
        ),
        (
            ["scan", "{repo}", "--baseline", "{tmp}/bad.json"],
            ExitCode.INPUT,
            "boundary-audit: error: {tmp}/bad.json: not a JSON baseline: ",
        ),
        (
            ["scan", "{repo}", "-o", "{tmp}/no/such/dir/r.txt"],
            ExitCode.RUN,
            "boundary-audit: error: {tmp}/no/such/dir/r.txt: cannot write report: ",
        ),
    ],
)
def test_errors_have_their_exit_codes(
    repo: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    fill = {"tmp": str(tmp_path), "repo": str(repo[0])}
    rc = cli.main(["scan", "--no-probe", "-j", "1", *(a.format(**fill) for a in argv[1:])])
    out, err = capsys.readouterr()
    assert rc == code
    assert message.format(**fill) in err
    assert "Traceback" not in err and out == ""


def test_config_from_the_target_and_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cfg-harness"
    code = NESTED_CODE
    pyproject = (
        f'[project]\nname = "demo"\n\n[tool.boundary-audit.checks.{code}]\n'
        f'ignore = ["agent/tools.py:{NESTED_LINE}"]\n'
    )
    sha = make_repo(path, {"agent/tools.py": HARNESS, "pyproject.toml": pyproject.encode()})
    rc, out, err = _scan(capsys, str(path), "-j", "1", "-f", "json", "--fail-on", "nested-string")
    assert rc == ExitCode.OK
    assert err == _summary(str(path), sha, 2, suppressed=1, skipped=0)
    nested = [f for f in json.loads(out)["findings"] if f["class"] == "nested-string"]
    assert nested[0]["suppressed"] == {
        "kind": "config",
        "reason": f"checks.{code}.ignore 'agent/tools.py:{NESTED_LINE}' in "
        f"{sha[:7]}:pyproject.toml",
    }
    assert (
        _scan(capsys, str(path), "-j", "1", "--no-ignores", "--fail-on", "nested-string")[0]
        == ExitCode.GATE
    )
    override = tmp_path / "override.toml"
    override.write_text(f"[checks.{code}]\ndisable = true\n")
    rc, out, err = _scan(capsys, str(path), "-j", "1", "-f", "json", "--config", str(override))
    assert rc == 0 and [f["class"] for f in json.loads(out)["findings"]] == ["shell-string"]
    broken = tmp_path / "broken"
    make_repo(broken, {"boundary-audit.toml": b"[checks.BA000]\ndisable = true\n"})
    rc, _, err = _scan(capsys, str(broken), "-j", "1")
    assert rc == ExitCode.INPUT
    assert err.splitlines()[0].endswith(":boundary-audit.toml: checks.BA000: unknown check code")
    assert err.splitlines()[1].startswith("  hint: the scanned repository's own configuration")


def test_baseline_accepts_moved_code_and_reports_new_sinks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bl-harness"
    sha1 = make_repo(path, {"agent/tools.py": HARNESS})
    baseline = tmp_path / "baseline.json"
    rc, _, err = _scan(capsys, str(path), "-j", "1", "--write-baseline", str(baseline))
    assert rc == 0 and err == _summary(str(path), sha1, 2, skipped=0)
    assert len(json.loads(baseline.read_text())["entries"]) == 2
    moved = (
        b"# a comment that shifts every line\n\n"
        + HARNESS
        + (
            b"\n\ndef run_again(tool_call):\n"
            b"    line = json.loads(tool_call.function.arguments)['command']\n"
            b"    return subprocess.run(['bash', '-c', f'ssh other \"{line}\"'])\n"
        )
    )
    sha2 = add_commit(path, {"agent/tools.py": moved})
    rc, out, err = _scan(
        capsys,
        str(path),
        "-j",
        "1",
        "-f",
        "json",
        "--baseline",
        str(baseline),
        "--fail-on",
        "nested-string",
        "--fail-on",
        "shell-string",
    )
    assert rc == ExitCode.GATE
    assert err.splitlines()[0] == _summary(str(path), sha2, 3, suppressed=2, skipped=0).strip()
    active = [(f["line"], f["class"]) for f in json.loads(out)["findings"] if not f["suppressed"]]
    assert active == [(len(moved.splitlines()), "nested-string")]


def test_inline_suppression_is_counted_and_no_ignores_overrides_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = HARNESS.decode().splitlines()
    reason = "commands are vetted upstream"
    lines[SHELL_LINE - 1] += f"  # boundary-audit: ignore[{SHELL_CODE}] {reason}"
    path = tmp_path / "inline"
    sha = make_repo(path, {"agent/tools.py": ("\n".join(lines) + "\n").encode()})
    rc, out, err = _scan(capsys, str(path), "-j", "1", "-f", "json", "--fail-on", "shell-string")
    assert rc == ExitCode.OK and err == _summary(str(path), sha, 2, suppressed=1, skipped=0)
    shell = next(f for f in json.loads(out)["findings"] if f["class"] == "shell-string")
    assert shell["suppressed"] == {"kind": "inline", "reason": reason}
    rc, out, err = _scan(
        capsys, str(path), "-j", "1", "-f", "json", "--no-ignores", "--fail-on", "shell-string"
    )
    assert rc == ExitCode.GATE and err.startswith(_summary(str(path), sha, 2, skipped=0))


def test_uncommitted_changes_are_noted_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dirty"
    sha = make_repo(path, {"agent/tools.py": HARNESS})
    (path / "agent" / "tools.py").write_bytes(HARNESS + b"# edited\n")
    rc, _, err = _scan(capsys, str(path), "-j", "1", "-f", "json")
    lines = err.splitlines()
    assert rc == 0 and len(lines) == 2
    assert lines[0].startswith(f"note: {path} has 1 uncommitted change(s); scanned HEAD")
    assert lines[1] + "\n" == _summary(str(path), sha, 2, skipped=0)


def test_remote_target_over_git_daemon(
    git_daemon: GitDaemon, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sha = make_repo(git_daemon.base / "harness.git", {"agent/tools.py": HARNESS}, bare=True)
    url = git_daemon.url("harness.git")
    cache = tmp_path / "cache"
    rc, out, err = _scan(capsys, f"{url}@main", "-j", "1", "--cache-dir", str(cache), "-f", "sarif")
    assert rc == 0 and err == _summary(url, sha, 2, skipped=0)
    run = json.loads(out)["runs"][0]
    assert run["versionControlProvenance"] == [{"repositoryUri": url, "revisionId": sha}]
    git_daemon.stop()
    rc, _, err = _scan(capsys, f"{url}@{sha}", "-j", "1", "--cache-dir", str(cache), "--offline")
    assert rc == 0 and err == _summary(url, sha, 2, skipped=0)
