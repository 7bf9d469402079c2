"""The real harnesses, driven inside bubblewrap, on replies whose outcome only they decide.

Each case runs one reply through the system's own released code (swe-rex, langchain,
autogen-ext) and asserts the harness's verdict and the exact bytes left in the work dir.
Command timeouts are shortened (a parameter of every driver) to keep the suite fast.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from boundary_audit.harness import DriverOutcome, make_harness_transport
from boundary_audit.harness.install import Installation
from boundary_audit.sandbox import Sandbox
from boundary_audit.services.dockerd import DockerEngine

pytestmark = [pytest.mark.harness, pytest.mark.bwrap]
DEFAULT_OUTPUT = (
    "The script ran but produced no output to console. The POSIX exit code was: 0. If you were "
    "expecting output, consider revising the script to ensure content is printed to stdout."
)


def files(work: Any) -> dict[str, bytes]:
    return {p.relative_to(work).as_posix(): p.read_bytes() for p in sorted(work.rglob("*"))}


@pytest.fixture
def run(
    harness_env: Callable[[str], Installation], harness_box: Sandbox
) -> Callable[..., tuple[DriverOutcome, dict[str, bytes]]]:
    def go(system: str, reply: str, **params: Any) -> tuple[DriverOutcome, dict[str, bytes]]:
        harness_env(system)
        transport = make_harness_transport(system, **params)
        try:
            with harness_box.workspace() as ws:
                outcome = transport.drive(reply, ws, harness_box)
                return outcome, files(ws.work)
        finally:
            transport.close()

    return go


Run = Callable[..., tuple[DriverOutcome, dict[str, bytes]]]


# --- SWE-agent: SWE-agent's action layer, then swe-rex's pexpect session -----------------------


def test_swe_agent_intercepts_an_exact_exit_and_runs_nothing(run: Run) -> None:
    outcome, left = run("swe-agent", "  exit\n", timeout=3)
    assert (outcome.status, outcome.observation, outcome.exit_code, left) == (
        "exit-command",
        "Exited",
        None,
        {},
    )


def test_without_the_agent_layer_exit_kills_swe_rexs_shell(run: Run) -> None:
    outcome, left = run("swe-agent", "exit", timeout=3, preprocess=False)
    assert (outcome.status, left) == ("shell-exited", {})


def test_swe_agent_blocks_by_prefix(run: Run) -> None:
    outcome, left = run("swe-agent", "visible=1; echo ok > v.txt", timeout=3)
    assert outcome.status == "blocked" and left == {}
    assert outcome.observation == (
        "Operation 'visible=1; echo ok > v.txt' is not supported by this environment."
    )


def test_heredoc_takes_the_bashlex_fallback_and_readline_eats_the_tab(run: Run) -> None:
    outcome, left = run("swe-agent", "cat <<'EOF' > Makefile\nall:\n\techo hi\nEOF", timeout=3)
    assert (outcome.status, outcome.exit_code) == ("executed", 0)
    assert outcome.notes == ("bashlex fallback: ended on 'UNIQUESTRING29234'",)
    assert left == {"Makefile": b"all:\necho hi\n"}


def test_a_tab_in_a_quoted_escape_survives_the_pty(run: Run) -> None:
    outcome, left = run("swe-agent", "printf 'a\\tb\\n' > t.txt; cat t.txt", timeout=3)
    assert (outcome.status, outcome.observation, left) == (
        "executed",
        "a\tb\n",
        {"t.txt": b"a\tb\n"},
    )


def test_an_unterminated_quote_is_rejected_by_bash_n_before_anything_runs(run: Run) -> None:
    outcome, left = run("swe-agent", "echo 'unterminated > u.txt", timeout=3)
    assert (outcome.status, left) == ("syntax-error", {})
    assert outcome.observation == "bash: line 1: unexpected EOF while looking for matching `''\n"


def test_a_reply_that_reads_stdin_waits_on_the_pty_until_the_timeout(run: Run) -> None:
    outcome, left = run("swe-agent", 'read x; echo "got:$x" > r.txt', timeout=2)
    assert (outcome.status, outcome.exit_code, left) == ("timeout", None, {})
    assert outcome.observation.startswith(
        "The command 'read x; echo \"got:$x\" > r.txt' was cancelled because it took more "
        "than 2.0 seconds."
    )


# --- LangChain: ShellToolMiddleware's pipe session ---------------------------------------------


def test_langchain_shell_starts_with_an_empty_environment(run: Run) -> None:
    reply = 'echo "home=${HOME-unset} obs=${BA_OBS-unset}" > e.txt'
    outcome, left = run("langchain", reply, timeout=3)
    assert (outcome.status, outcome.observation, outcome.exit_code) == (
        "executed",
        "<no output>",
        0,
    )
    assert left == {"e.txt": b"home=unset obs=unset\n"}
    _, passed_env = run("langchain", reply, timeout=3, env="sandbox")
    assert passed_env == {"e.txt": b"home=/tmp/home obs=/tmp/obs\n"}


def test_output_without_a_final_newline_hides_the_line_start_marker(run: Run) -> None:
    outcome, left = run("langchain", "printf abc > out.txt; printf abc", timeout=2)
    assert (outcome.status, outcome.exit_code) == ("timeout", None)
    assert outcome.observation == "Error: Command timed out after 2.0 seconds."
    assert left == {"out.txt": b"abc"}
    ended, _ = run("langchain", "printf abc > out.txt; printf 'abc\\n'", timeout=2)
    assert (ended.status, ended.observation) == ("executed", "abc\n")


def test_a_stdin_reader_eats_the_next_line_of_the_reply(run: Run) -> None:
    outcome, left = run("langchain", 'read x; echo "got:$x" > r.txt\necho line2 > l.txt', timeout=3)
    assert outcome.status == "executed"
    assert left == {"r.txt": b"got:echo line2 > l.txt\n"}


def test_stderr_lines_are_prefixed_and_the_exit_code_appended(run: Run) -> None:
    outcome, _ = run("langchain", "echo out; echo err >&2; (exit 3)", timeout=3)
    assert (outcome.status, outcome.exit_code) == ("executed", 3)
    body, tail = outcome.observation.split("\n\n")
    assert sorted(body.splitlines()) == ["[stderr] err", "out"] and tail == "Exit code: 3"


def test_an_empty_command_is_a_tool_error(run: Run) -> None:
    outcome, _ = run("langchain", "", timeout=3)
    assert outcome.status == "tool-error"
    assert outcome.observation == (
        "Shell tool expects a 'command' string when restart is not requested."
    )


# --- AutoGen: fence extraction, then the command-line executor --------------------------------


def test_only_sh_and_python_fences_are_extracted_case_insensitively(run: Run) -> None:
    message = (
        "text\n```sh\necho one > 1.txt\n```\nmore\n```bash\necho two > 2.txt\n```\n"
        "```SH\necho three > 3.txt\n```\n"
    )
    outcome, left = run("autogen", message, timeout=5, fence="verbatim")
    assert outcome.notes == ("block 0: language 'sh', 17 chars", "block 1: language 'SH', 19 chars")
    assert (outcome.status, outcome.observation) == ("executed", DEFAULT_OUTPUT)
    assert left == {"1.txt": b"one\n", "3.txt": b"three\n"}


def test_no_fence_means_nothing_runs(run: Run) -> None:
    outcome, left = run("autogen", "no fence here", timeout=5, fence="verbatim")
    assert (outcome.status, outcome.observation, left) == ("no-code-blocks", "no fence here", {})


def test_a_filename_directive_names_the_script_and_must_stay_in_the_work_dir(run: Run) -> None:
    outcome, left = run("autogen", "# filename: keep.sh\necho kept > k.txt", timeout=5)
    assert (outcome.status, left) == ("executed", {"k.txt": b"kept\n"})  # keep.sh cleaned up
    outside, nothing = run("autogen", "# filename: ../x.sh\necho kept > k.txt", timeout=5)
    assert (outside.exit_code, nothing) == (1, {})
    assert outside.observation.endswith("Its output was:\nFilename is not in the workspace")


def test_sh_is_dash(run: Run) -> None:
    reply = (
        "[[ 1 == 1 ]] && echo bash > which.txt || echo dash > which.txt; echo -e 'a\\tb' > e.txt"
    )
    outcome, left = run("autogen", reply, timeout=5)
    assert outcome.exit_code == 0 and outcome.observation.endswith(".sh: 1: [[: not found\n")
    assert left == {"which.txt": b"dash\n", "e.txt": b"-e a\tb\n"}


def test_a_backtick_fence_inside_the_reply_cuts_the_block(run: Run) -> None:
    outcome, left = run("autogen", "printf 'a```b\\n' > m.txt", timeout=5)
    assert (outcome.exit_code, left) == (2, {})
    assert outcome.observation.endswith(": 1: Syntax error: Unterminated quoted string\n")


def test_the_script_file_sits_in_the_work_dir_while_it_runs_and_stdin_is_empty(run: Run) -> None:
    code = "ls > ls.txt; cat > s.txt\n"
    outcome, left = run("autogen", code, timeout=5)
    script = f"tmp_code_{hashlib.sha256(code.encode()).hexdigest()}.sh".encode()
    assert outcome.status == "executed"
    assert left == {"ls.txt": b"ls.txt\n" + script + b"\n", "s.txt": b""}


@pytest.mark.docker
def test_docker_executor_runs_in_a_container_and_keeps_its_script(
    run: Run, docker_engine: DockerEngine
) -> None:
    code = "[ -f /.dockerenv ] && echo container > where.txt; echo -e 'x' > e.txt\n"
    outcome, left = run(
        "autogen", code, timeout=10, executor="docker", docker_host=docker_engine.url
    )
    script = f"tmp_code_{hashlib.sha256(code.encode()).hexdigest()}.sh"
    assert (outcome.status, outcome.exit_code) == ("executed", 0)
    assert left == {"where.txt": b"container\n", "e.txt": b"-e x\n", script: code.encode()}
