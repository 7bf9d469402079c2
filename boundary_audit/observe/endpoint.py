"""The model endpoint of one run: the conversation server, its relay into the workspace, the
variables and config files that point the harness at it.

`ModelEndpoint(replies, ws, ...)` is a context manager that, for one run in workspace `ws`:

1. starts `python -m boundary_audit.observe.model` (one `Conversation` of `replies`) on the
   host's 127.0.0.1, a `services.DaemonProcess` registered with the supervisor (a killed
   boundary-audit's guardian stops it), and waits for its `listening on` line;
2. relays a unix socket in the workspace to it (`transports._relay.UnixRelay`, given to the
   workspace's uid), which the in-sandbox `netrelay.py` listener on 127.0.0.1:`PORT` connects
   to: the harness reaches `http://127.0.0.1:PORT/v1` and nothing else (the run's network
   namespace has only its loopback);
3. gives the harness the usual variables (`ENV`: `OPENAI_BASE_URL`, `OPENAI_API_BASE`,
   `OPENAI_API_KEY`, ... and `BA_MODEL_URL`, `BA_MODEL`) and writes each `ConfigTemplate`
   into the workspace's home with its placeholders filled;
4. on exit stops the relay and the server and reads back what happened: every decision
   (`answers`), every request body, and per reply what the harness showed its model
   (`outputs`): the bytes the validators see as the reply's stdout.

The key is random per run (`sk-ba-...`) and accepted whatever the harness sends: what is
measured is where the replies go, not authentication.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from boundary_audit import supervisor
from boundary_audit.errors import EnvironmentUnavailable, SandboxError, UsageError
from boundary_audit.observe.model import LISTENING, SHAPES, Answer, outputs
from boundary_audit.sandbox import layout
from boundary_audit.sandbox.interface import Workspace
from boundary_audit.services import DaemonProcess
from boundary_audit.transports._relay import UnixRelay

PORT = 8765
"""The in-sandbox port of the model endpoint (each run has a network namespace of its own)."""
MODEL = "mock"
START_S = 20.0
RECORD_LIMIT = 64 << 20
"""Bytes of the server's request record read back (a harness's requests are its own data)."""
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]+)\s*\}\}")
PLACEHOLDERS = ("base_url", "api_key", "model", "home", "work")


ARGV_PLACEHOLDERS = ("base_url", "model", "home", "work")
"""What a harness's argv may hold (the key differs per run: it is for config files only)."""


def argv_values(model: str = MODEL) -> dict[str, str]:
    """The placeholder values every run shares (the sandbox's fixed inner paths)."""
    return {
        "base_url": base_url(),
        "model": model,
        "home": f"{layout.INNER_ROOT}/home",
        "work": f"{layout.INNER_ROOT}/work",
    }


def render_argv(argv: Sequence[str], model: str = MODEL) -> tuple[str, ...]:
    """`argv` with its `{{placeholders}}` filled; an unknown one is a UsageError."""
    values = argv_values(model)
    for word in argv:
        for name in PLACEHOLDER.findall(word):
            if name not in values:
                raise UsageError(
                    f"the harness's argv holds {{{{{name}}}}}: known are "
                    f"{', '.join(ARGV_PLACEHOLDERS)}"
                )
    return tuple(PLACEHOLDER.sub(lambda m: values[m.group(1)], w) for w in argv)


def base_url(port: int = PORT) -> str:
    """What the harness is pointed at, inside the sandbox."""
    return f"http://127.0.0.1:{port}/v1"


def endpoint_env(key: str, model: str = MODEL, port: int = PORT) -> dict[str, str]:
    """The variables agent CLIs read for an OpenAI-compatible endpoint."""
    url = base_url(port)
    return {
        "OPENAI_BASE_URL": url,
        "OPENAI_API_BASE": url,
        "OPENAI_API_KEY": key,
        "OPENAI_MODEL": model,
        "BA_MODEL_URL": url,
        "BA_MODEL": model,
        "NO_PROXY": "127.0.0.1,localhost",
    }


@dataclass(frozen=True)
class ConfigTemplate:
    """A config file for the harness: `text` with `{{placeholder}}`s, written to `dest`
    (relative to the run's home)."""

    dest: str
    text: str

    @staticmethod
    def parse(spec: str) -> ConfigTemplate:
        """`FILE:DEST` as given on the command line (DEST relative to the harness's HOME)."""
        src, sep, dest = spec.rpartition(":")
        if not sep or not src or not dest:
            raise UsageError(f"--config-template {spec!r}: expected FILE:DEST (DEST under HOME)")
        parts = [p for p in dest.split("/") if p]
        if dest.startswith("/") or not parts or any(p in (".", "..") for p in parts):
            raise UsageError(
                f"--config-template {spec!r}: DEST must be a relative path under HOME, "
                "without . or .."
            )
        try:
            text = Path(src).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise UsageError(f"--config-template {spec!r}: cannot read {src}: {why}") from None
        for name in PLACEHOLDER.findall(text):
            if name not in PLACEHOLDERS:
                raise UsageError(
                    f"--config-template {spec!r}: unknown placeholder {{{{{name}}}}} "
                    f"(known: {', '.join(PLACEHOLDERS)})"
                )
        return ConfigTemplate("/".join(parts), text)

    def render(self, values: Mapping[str, str]) -> str:
        """The text with every placeholder filled."""
        return PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text)


@dataclass
class Exchange:
    """What one conversation left: the decisions, the request bodies, the outputs per reply."""

    answers: list[Answer] = field(default_factory=list)
    bodies: dict[int, Any] = field(default_factory=dict)
    """Model request number -> its parsed body."""
    paths: dict[int, str] = field(default_factory=dict)
    """Model request number -> the path it was sent to (`/v1/responses`...)."""
    outputs: list[str | None] = field(default_factory=list)
    """Per reply: what the harness sent its model back for it (None: never)."""
    requests: int = 0
    """Every HTTP request, model requests or not."""

    @property
    def shapes(self) -> tuple[str, ...]:
        """The shape each reply went out in (`tool`, `fenced`), in reply order."""
        return tuple(a.shape for a in sorted(self.answers, key=_order) if a.reply is not None)

    @property
    def sent(self) -> int:
        return sum(1 for a in self.answers if a.reply is not None)


def _order(a: Answer) -> int:
    return a.reply if a.reply is not None else -1


class ModelEndpoint:
    """The conversation server for one run in `ws` (see the module docstring)."""

    def __init__(
        self,
        replies: Sequence[str],
        ws: Workspace,
        *,
        shape: str = "auto",
        templates: Sequence[ConfigTemplate] = (),
        model: str = MODEL,
        final: str | None = None,
    ) -> None:
        if shape not in SHAPES:
            raise UsageError(f"shape must be one of {', '.join(SHAPES)}, not {shape!r}")
        self.replies, self.ws, self.shape = list(replies), ws, shape
        self.templates, self.model, self.final = tuple(templates), model, final
        self.key = f"sk-ba-{secrets.token_hex(12)}"
        self.exchange = Exchange()
        self.env: dict[str, str] = {}
        self.inner_socket = ""
        self._name = f"ba-model-{secrets.token_hex(4)}"
        self._dir = Path()
        self._dir_token: int | None = None
        self._daemon: DaemonProcess | None = None
        self._relay: UnixRelay | None = None

    def __enter__(self) -> ModelEndpoint:
        self._dir = Path(tempfile.mkdtemp(prefix="ba-model-"))
        self._dir_token = supervisor.ledger().register("tree", path=str(self._dir))
        conversation: dict[str, Any] = {"replies": self.replies, "shape": self.shape}
        if self.final is not None:
            conversation["final"] = self.final
        (self._dir / "conversation.json").write_text(json.dumps(conversation), encoding="utf-8")
        try:
            self._start()
            self._write_templates()
        except BaseException:
            self._stop()
            self._read()  # removes the server's folder
            raise
        return self

    def _start(self) -> None:
        argv = [
            sys.executable, "-I", "-m", "boundary_audit.observe.model",
            "--conversation", str(self._dir / "conversation.json"),
            "--answers", str(self._dir / "answers.jsonl"),
            "--record", str(self._dir / "record.jsonl"),
        ]  # fmt: skip
        self._daemon = DaemonProcess(argv, log=self._dir / "server.log")
        deadline = time.monotonic() + START_S
        port = None
        while time.monotonic() < deadline and port is None:
            text = (self._dir / "server.log").read_text("utf-8", "replace")
            found = re.search(re.escape(LISTENING) + r"http://127\.0\.0\.1:(\d+)/v1", text)
            if found:
                port = int(found.group(1))
            elif not self._daemon.running():
                break
            else:
                time.sleep(0.02)
        if port is None:
            raise EnvironmentUnavailable(
                f"observe: the mock model server did not start: {self._daemon.log_tail() or '?'}"
            )
        host_dir = self.ws.tmp / self._name
        host_dir.mkdir(mode=0o700)
        self._relay = UnixRelay(str(host_dir / "model.sock"), port)
        for path in (host_dir, Path(self._relay.path)):
            layout.give(self.ws, path)
        self.inner_socket = f"{self.ws.inner_tmp.rstrip('/')}/{self._name}/model.sock"
        self.env = endpoint_env(self.key, self.model)

    def _write_templates(self) -> None:
        values = {
            "base_url": base_url(),
            "api_key": self.key,
            "model": self.model,
            "home": self.ws.inner_home,
            "work": self.ws.inner_work,
        }
        for t in self.templates:
            data = t.render(values).encode("utf-8")
            if not self.ws.adopted:  # nothing has run in the workspace yet: plain writes
                target = self.ws.home / t.dest
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            else:
                try:
                    layout.write_new(self.ws, f"home/{t.dest}", data)
                except (OSError, ValueError) as exc:
                    raise SandboxError(f"observe: cannot write {t.dest}: {exc}") from None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop()
        self.exchange = self._read()

    def _stop(self) -> None:
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self._daemon is not None:
            self._daemon.stop(timeout=5)
            self._daemon = None

    def _read(self) -> Exchange:
        ex = Exchange()
        for obj in _lines(self._dir / "answers.jsonl"):
            ex.answers.append(Answer.from_json(obj))
        for obj in _lines(self._dir / "record.jsonl"):
            ex.requests += 1
            index = obj.get("index")
            if isinstance(index, int) and not isinstance(index, bool):
                ex.bodies[index] = obj.get("body")
                ex.paths[index] = str(obj.get("path", ""))
        ex.outputs = outputs(ex.answers, ex.bodies, len(self.replies))
        shutil.rmtree(self._dir, ignore_errors=True)
        if self._dir_token is not None:
            supervisor.ledger().release(self._dir_token)
            self._dir_token = None
        return ex


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open("rb") as f:
            data = f.read(RECORD_LIMIT)
    except OSError:
        return []
    found = []
    for line in data.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found
