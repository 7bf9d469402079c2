"""Plain-directory backend: a fresh temp dir per run and a killed process group, no isolation.

Used where bubblewrap cannot run. It cannot stop a hostile reply from writing outside the work
dir, so selecting it prints a loud warning.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from boundary_audit import _subprocess
from boundary_audit.sandbox.interface import ExecResult, Sandbox, Workspace


class TempdirSandbox(Sandbox):
    """Runs each argv in its own session with a scrubbed environment, in a fresh temp dir."""

    name = "tempdir"
    isolated = False

    @contextmanager
    def workspace(self) -> Iterator[Workspace]:
        root = Path(tempfile.mkdtemp(prefix="ba-run-"))
        try:
            dirs = {n: root / n for n in ("work", "home", "obs", "bin", "tmp")}
            for d in dirs.values():
                d.mkdir()
            yield Workspace(
                run_id=uuid.uuid4().hex,
                root=root,
                **dirs,
                **{f"inner_{n}": str(p) for n, p in dirs.items()},
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def run(
        self,
        ws: Workspace,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        full_env = self.base_env(ws)
        full_env.update(env or {})
        old = os.umask(0o022)
        try:
            r = _subprocess.run(
                argv,
                timeout=timeout or self.limits.timeout_s,
                input=stdin,
                cwd=ws.work,
                env=full_env,
                output_cap=self.limits.output_bytes,
            )
        finally:
            os.umask(old)
        return ExecResult(
            exit_code=None if r.timed_out else r.returncode,
            stdout=r.stdout,
            stderr=r.stderr,
            timed_out=r.timed_out,
            truncated=r.truncated,
            duration_s=r.duration_s,
        )
