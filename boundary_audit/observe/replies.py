"""Reply sources: how the canary replies reach the observed harness.

A harness asks a model for its next reply; during an observation the reply is a canary. Where
the harness gets it from is pluggable, so that the recorder never depends on it:

| source | the harness finds the replies in |
|---|---|
| `EnvReplies` | an environment variable holding a JSON array of strings (`BA_REPLIES`) |
| `FileReplies` | a JSON file in the workspace, whose inner path is in `BA_REPLIES_FILE` |
| `StdinReplies` | its standard input: the JSON array, then EOF |
| `MockReplies` | its model: `http://127.0.0.1:8765/v1` in the sandbox, the next reply per request |

`MockReplies` is the source for real agent CLIs: `deliver` starts the conversation server
(`endpoint.ModelEndpoint`), yields the variables that point at it and the inner path of the
unix socket it is relayed through (`Delivery.relay`: the recorder puts `netrelay.py` in front
of the run), and stops it. `contract` is what the harness received: `raw` text for the three
plain sources; for the mock, `native` when the replies went out as tool calls and `raw` when
they went out as fenced blocks (`last` keeps the whole exchange of the latest delivery).
"""

from __future__ import annotations

import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from boundary_audit.errors import UsageError
from boundary_audit.observe.endpoint import MODEL, ConfigTemplate, Exchange, ModelEndpoint
from boundary_audit.sandbox.interface import Workspace
from boundary_audit.sandbox.layout import give
from boundary_audit.taxonomy import Contract

ENV_LIMIT = 128 << 10
"""Largest value one environment variable can carry (the kernel's MAX_ARG_STRLEN)."""


@dataclass(frozen=True)
class Delivery:
    """What the harness's run gets so that it finds the replies."""

    env: Mapping[str, str] = field(default_factory=dict)
    stdin: bytes | None = None
    relay: str | None = None
    """The inner path of a unix socket that the run's 127.0.0.1 model endpoint is relayed to
    (`netrelay.py`); None when the replies need no network."""


class ReplySource(ABC):
    """Where an observed harness gets its replies from."""

    name: str
    contract: Contract = Contract.RAW
    """What the harness receives: a command as text (`raw`) or a decoded tool call."""

    @abstractmethod
    @contextmanager
    def deliver(self, replies: Sequence[str], ws: Workspace) -> Iterator[Delivery]:
        """Make `replies` available to a run in `ws` for the duration of the block."""


def encoded(replies: Sequence[str]) -> str:
    """The replies as the JSON array the plain sources carry."""
    return json.dumps(list(replies), ensure_ascii=False)


class EnvReplies(ReplySource):
    """The replies as a JSON array in one environment variable."""

    name = "env"

    def __init__(self, var: str = "BA_REPLIES") -> None:
        self.var = var

    @contextmanager
    def deliver(self, replies: Sequence[str], ws: Workspace) -> Iterator[Delivery]:
        text = json.dumps(list(replies))  # ASCII: NUL and every control byte escaped
        if len(text) >= ENV_LIMIT:
            raise UsageError(
                f"the replies ({len(text)} bytes as JSON) do not fit an environment variable; "
                "use the file or stdin source"
            )
        yield Delivery(env={self.var: text})


class FileReplies(ReplySource):
    """The replies as a JSON file in the workspace's tmp dir; its inner path in `var`."""

    name = "file"

    def __init__(self, var: str = "BA_REPLIES_FILE") -> None:
        self.var = var

    @contextmanager
    def deliver(self, replies: Sequence[str], ws: Workspace) -> Iterator[Delivery]:
        name = f"ba-replies-{secrets.token_hex(6)}.json"
        host = ws.tmp / name
        host.write_text(encoded(replies), encoding="utf-8")
        give(ws, host)
        try:
            yield Delivery(env={self.var: f"{ws.inner_tmp.rstrip('/')}/{name}"})
        finally:
            host.unlink(missing_ok=True)


class StdinReplies(ReplySource):
    """The replies as a JSON array on the harness's standard input."""

    name = "stdin"

    @contextmanager
    def deliver(self, replies: Sequence[str], ws: Workspace) -> Iterator[Delivery]:
        yield Delivery(stdin=encoded(replies).encode("utf-8"))


class MockReplies(ReplySource):
    """The replies as a model's answers, from the mock server (see `endpoint.ModelEndpoint`)."""

    name = "mock"

    def __init__(
        self,
        *,
        shape: str = "auto",
        templates: Sequence[ConfigTemplate] = (),
        model: str = MODEL,
    ) -> None:
        self.shape, self.templates, self.model = shape, tuple(templates), model
        self.last: Exchange | None = None
        """The latest delivery's exchange (answers, request bodies, outputs)."""

    @property
    def contract(self) -> Contract:  # type: ignore[override]  # measured, not declared
        shapes = self.last.shapes if self.last is not None else ()
        if shapes and all(s == "fenced" for s in shapes):
            return Contract.RAW
        return Contract.NATIVE if shapes or self.shape != "fenced" else Contract.RAW

    @contextmanager
    def deliver(self, replies: Sequence[str], ws: Workspace) -> Iterator[Delivery]:
        endpoint = ModelEndpoint(
            replies, ws, shape=self.shape, templates=self.templates, model=self.model
        )
        try:
            with endpoint:
                yield Delivery(env=endpoint.env, relay=endpoint.inner_socket)
        finally:
            self.last = endpoint.exchange


SOURCES: dict[str, type[ReplySource]] = {
    cls.name: cls for cls in (EnvReplies, FileReplies, StdinReplies, MockReplies)
}
