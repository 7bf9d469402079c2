"""Ask an OpenAI-compatible endpoint for replies to the task suite: the engine behind `generate`.

One *request* per (task, contract, draw). `plan` builds them (prompts from the contracts, the
disclosure from `--disclose-for`); `run` asks them with the official `openai` client (chat
completions or the Responses API, streamed or not), `concurrency` at a time and at most `rate`
per second, and appends one JSON line per answered request to the output file. Guarantees:

- **The reply file the probe reads.** Each line is `{"task_id", "reply", "reply_id", "model",
  "contract", "meta"}` (README "Formats"); `reply_id` is `<contract>-d<draw>`, unique per
  (task, contract, draw). Everything else is inside `meta` (today's reply loader refuses
  unknown top-level keys): `draw`, `boundary`, `extraction`, `failure`, `finish_reason`, the
  `answer` as sent (text, tool calls, refusal), `usage`, `latency_s`, `attempts`,
  `response_id`, `served_model`, `request` (every parameter sent, never the key) and
  `prompt_sha256`.
- **A failed reply is recorded, never a crash.** An answer the contract's extraction cannot
  use (a refusal, an empty answer, no fenced block, no or several tool calls, arguments that
  are not JSON, a NUL) is a line with `"reply": ""` and `meta.failure` saying why.
- **An endpoint failure is an error, never a reply.** 429, 408, 409, 5xx, timeouts, dropped
  connections and answers that are not valid JSON are retried (`retries` times) with
  exponential backoff and jitter, or after the `Retry-After` the endpoint asked for (a 429
  pauses every request until then). What still fails, and every other status, stops the run:
  requests in flight are abandoned, nothing of them is written, and `EndpointError` carries one
  line: exit 2 for 400/422 (the request's parameters), 5 when the endpoint cannot be reached
  or refuses the key or the model (401, 403, 404), 6 otherwise.
- **Resume.** Requests whose (task, contract, draw) already has a line in the output are not
  asked again; a line asked with other parameters (model, sampling, prompt) is a usage error
  instead of a silent mix. Lines are appended with one `write` each to a file opened
  `O_APPEND`, so a killed run loses at most the requests in flight; a torn last line (a crash
  in the middle of a write) is cut off on resume, with a note. One run at a time per file
  (an advisory lock).
- **The key is never written**: not to the file, the progress, an error message (an
  endpoint's error text is redacted before it is shown), nor the `request` record; the base
  URL is recorded without credentials or query.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import fcntl
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

from boundary_audit.errors import BoundaryAuditError, ExitCode, UsageError
from boundary_audit.llm.contracts import Contract, Prompt, contract
from boundary_audit.llm.disclosure import Boundary, boundary_for, describe
from boundary_audit.llm.extract import Answer, Extraction, ToolCall, extract, shown
from boundary_audit.tasks import Task, load_tasks
from boundary_audit.tasks.replies import surrogate_problem

APIS = ("chat", "responses")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key"
"""Sent when no key is given (local servers take any); a real endpoint answers 401."""
MAX_RETRY_AFTER_S = 300.0
BACKOFF_CAP_S = 30.0
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
IDENTITY = ("api", "model", "temperature", "max_tokens", "reasoning_effort", "seed", "extract")
"""Request fields that make an answer what it is: resume refuses a line that differs in one."""


class EndpointError(BoundaryAuditError):
    """The endpoint could not answer a request; `exit_code` is set per failure."""

    def __init__(self, message: str, exit_code: ExitCode, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.exit_code = exit_code


class OutputError(BoundaryAuditError):
    """The output file cannot be read back for resume, or written."""

    exit_code = ExitCode.INPUT


# -- options and the plan -------------------------------------------------------------------


@dataclass(frozen=True)
class Sampling:
    """What shapes an answer; a field left None is not sent."""

    model: str
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    seed: int | None = None
    """Draw d is asked with seed + d."""


@dataclass(frozen=True)
class Endpoint:
    """Where requests go. `api_key` never leaves this object except in the client's header."""

    base_url: str = DEFAULT_BASE_URL
    api_key: str = field(default=NO_KEY, repr=False)
    api: str = "chat"
    stream: bool = False
    timeout_s: float = 120.0

    @property
    def shown_url(self) -> str:
        """The base URL without credentials, query or fragment (what records carry)."""
        return public_url(self.base_url)


@dataclass(frozen=True)
class Pacing:
    """How hard to push the endpoint."""

    concurrency: int = 4
    rate: float = 0.0
    """Requests per second at most (0: no limit)."""
    retries: int = 4
    backoff_s: float = 1.0
    """First backoff; doubled per retry, capped at BACKOFF_CAP_S, with jitter."""


@dataclass(frozen=True)
class Job:
    """One request: a task under a contract, for one draw."""

    task: Task
    contract: Contract
    draw: int
    prompt: Prompt
    extract: str
    boundary: str | None
    """The disclosed boundary's label (None for contracts that disclose nothing)."""

    @property
    def key(self) -> tuple[str, str, int]:
        """What identifies the request in the output: (task id, contract, draw)."""
        return (self.task.id, self.contract.name, self.draw)

    @property
    def reply_id(self) -> str:
        """Unique per (task, contract, draw), as the reply loader requires."""
        return f"{self.contract.name}-d{self.draw}"


@dataclass(frozen=True)
class Plan:
    """Every request of a run, in order (task, contract, draw), and the disclosed boundary."""

    jobs: tuple[Job, ...]
    boundary: Boundary | None
    disclosure: str


def plan(
    *,
    select: str,
    contracts: Sequence[str],
    draws: int,
    disclose_for: str | None = None,
    adapters: Sequence[Path] = (),
    extract_method: str | None = None,
) -> Plan:
    """Build the requests (nothing is asked); bad names are usage errors."""
    if draws < 1:
        raise UsageError("--draws must be at least 1")
    chosen = [contract(name) for name in dict.fromkeys(contracts)]
    if extract_method == "tool-call" and any(c.form != "tool" for c in chosen):
        raise UsageError("--extract tool-call needs a contract of the tool form (native)")
    if extract_method not in (None, "tool-call") and any(c.form == "tool" for c in chosen):
        raise UsageError(f"--extract {extract_method}: the native contract is read by tool-call")
    disclosing = any(c.disclose for c in chosen)
    if disclose_for is not None and not disclosing:
        raise UsageError("--disclose-for needs a disclosing contract (--contract disclosed)")
    boundary = boundary_for(disclose_for, adapters) if disclosing else None
    text = describe(boundary) if boundary is not None else ""
    jobs: list[Job] = []
    for task in load_tasks(select):
        for c in chosen:
            prompt = c.prompt(task.instruction, text if c.disclose else "")
            label = boundary.label if (boundary and c.disclose) else None
            method = extract_method or c.extract
            jobs.extend(Job(task, c, draw, prompt, method, label) for draw in range(draws))
    return Plan(tuple(jobs), boundary, text)


# -- the request ----------------------------------------------------------------------------


def public_url(url: str) -> str:
    """`url` without user info, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def request_record(job: Job, endpoint: Endpoint, sampling: Sampling) -> dict[str, Any]:
    """Every parameter the request sends (never the key), for `meta.request`."""
    rec: dict[str, Any] = {
        "api": endpoint.api,
        "base_url": endpoint.shown_url,
        "model": sampling.model,
    }
    for name in ("temperature", "max_tokens", "reasoning_effort"):
        value = getattr(sampling, name)
        if value is not None:
            rec[name] = value
    if sampling.seed is not None:
        rec["seed"] = sampling.seed + job.draw
    rec["stream"] = endpoint.stream
    rec["timeout_s"] = endpoint.timeout_s
    rec["extract"] = job.extract
    return rec


def request_body(job: Job, endpoint: Endpoint, sampling: Sampling) -> dict[str, Any]:
    """The keyword arguments of the client call (the request body, as the API spells it)."""
    p = job.prompt
    body: dict[str, Any] = {"model": sampling.model}
    extra: dict[str, Any] = {}
    if endpoint.api == "chat":
        body["messages"] = p.chat_messages()
        if p.tool is not None:
            body["tools"] = [p.tool.chat()]
        if sampling.max_tokens is not None:
            body["max_completion_tokens"] = sampling.max_tokens
        if sampling.reasoning_effort is not None:
            body["reasoning_effort"] = sampling.reasoning_effort
        if sampling.seed is not None:
            body["seed"] = sampling.seed + job.draw
        if endpoint.stream:
            body["stream_options"] = {"include_usage": True}
    else:
        body["instructions"] = p.system
        body["input"] = p.responses_input()
        if p.tool is not None:
            body["tools"] = [p.tool.responses()]
        if sampling.max_tokens is not None:
            body["max_output_tokens"] = sampling.max_tokens
        if sampling.reasoning_effort is not None:
            body["reasoning"] = {"effort": sampling.reasoning_effort}
        if sampling.seed is not None:
            extra["seed"] = sampling.seed + job.draw
        body["store"] = False
    if sampling.temperature is not None:
        body["temperature"] = sampling.temperature
    if endpoint.stream:
        body["stream"] = True
    if extra:
        body["extra_body"] = extra
    return body


@dataclass(frozen=True)
class Usage:
    """Tokens the endpoint reported (0 when it reported none)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def as_json(self) -> dict[str, int]:
        """The `meta.usage` object."""
        out = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.reasoning_tokens:
            out["reasoning_tokens"] = self.reasoning_tokens
        return out


@dataclass(frozen=True)
class Received:
    """One answer as it came back."""

    answer: Answer
    usage: Usage
    response_id: str = ""
    served_model: str = ""


class _Retryable(Exception):
    """A failure worth another attempt; `after` is the wait the endpoint asked for."""

    def __init__(self, why: str, after: float | None = None, status: int | None = None) -> None:
        super().__init__(why)
        self.why, self.after, self.status = why, after, status


class _Fatal(Exception):
    def __init__(self, why: str, code: ExitCode, hint: str | None = None) -> None:
        super().__init__(why)
        self.why, self.code, self.hint = why, code, hint


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The wait an answer asks for: `retry-after-ms`, else `Retry-After` (seconds or a date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            return max(0.0, float(ms) / 1000.0)
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
        when = email.utils.parsedate_to_datetime(value).timestamp()
        return max(0.0, when - (time.time() if now is None else now))
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _chat_usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    details = getattr(u, "completion_tokens_details", None)
    return Usage(
        _int(getattr(u, "prompt_tokens", 0)),
        _int(getattr(u, "completion_tokens", 0)),
        _int(getattr(details, "reasoning_tokens", 0)),
    )


def _responses_usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    details = getattr(u, "output_tokens_details", None)
    return Usage(
        _int(getattr(u, "input_tokens", 0)),
        _int(getattr(u, "output_tokens", 0)),
        _int(getattr(details, "reasoning_tokens", 0)),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def chat_received(r: Any) -> Received:
    """A chat completion (not streamed) as a Received."""
    choices = getattr(r, "choices", None) or []
    if not choices:
        raise _Retryable("the answer has no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    calls = tuple(
        ToolCall(
            _text(getattr(c.function, "name", "")), _text(getattr(c.function, "arguments", ""))
        )
        for c in (getattr(message, "tool_calls", None) or [])
        if getattr(c, "function", None) is not None
    )
    answer = Answer(
        text=_text(getattr(message, "content", None)),
        tool_calls=calls,
        refusal=_text(getattr(message, "refusal", None)),
        finish_reason=_text(getattr(choice, "finish_reason", None)),
    )
    return Received(
        answer, _chat_usage(getattr(r, "usage", None)), _text(r.id), _text(getattr(r, "model", ""))
    )


async def chat_streamed(stream: Any) -> Received:
    """A streamed chat completion, accumulated chunk by chunk."""
    text: list[str] = []
    refusal: list[str] = []
    calls: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    finish, rid, model, usage = "", "", "", Usage()
    async for chunk in stream:
        rid = rid or _text(getattr(chunk, "id", ""))
        model = model or _text(getattr(chunk, "model", ""))
        if getattr(chunk, "usage", None) is not None:
            usage = _chat_usage(chunk.usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue
            delta = getattr(choice, "delta", None)
            text.append(_text(getattr(delta, "content", None)))
            refusal.append(_text(getattr(delta, "refusal", None)))
            for tc in getattr(delta, "tool_calls", None) or []:
                n = _int(getattr(tc, "index", 0))
                fn = getattr(tc, "function", None)
                if fn is not None:
                    names[n] = names.get(n, "") + _text(getattr(fn, "name", None))
                    calls.setdefault(n, []).append(_text(getattr(fn, "arguments", None)))
                else:
                    calls.setdefault(n, [])
            finish = _text(getattr(choice, "finish_reason", None)) or finish
    tool_calls = tuple(ToolCall(names.get(n, ""), "".join(calls[n])) for n in sorted(calls))
    answer = Answer("".join(text), tool_calls, "".join(refusal), finish)
    return Received(answer, usage, rid, model)


def responses_received(r: Any) -> Received:
    """A Responses-API response (whole, or the one a stream completed with) as a Received."""
    status = _text(getattr(r, "status", ""))
    if status == "failed":
        error = getattr(r, "error", None)
        raise _Retryable(f"the response failed: {_text(getattr(error, 'message', '')) or status}")
    text: list[str] = []
    refusal: list[str] = []
    calls: list[ToolCall] = []
    for item in getattr(r, "output", None) or []:
        kind = getattr(item, "type", "")
        if kind == "message":
            for part in getattr(item, "content", None) or []:
                if getattr(part, "type", "") == "output_text":
                    text.append(_text(getattr(part, "text", "")))
                elif getattr(part, "type", "") == "refusal":
                    refusal.append(_text(getattr(part, "refusal", "")))
        elif kind == "function_call":
            calls.append(ToolCall(_text(getattr(item, "name", "")), _text(item.arguments)))
    finish = "stop"
    if status == "incomplete":
        reason = _text(getattr(getattr(r, "incomplete_details", None), "reason", ""))
        finish = "length" if reason == "max_output_tokens" else (reason or "incomplete")
        if reason == "content_filter":
            finish = "content_filter"
    elif calls:
        finish = "tool_calls"
    answer = Answer("".join(text), tuple(calls), "".join(refusal), finish)
    return Received(
        answer,
        _responses_usage(getattr(r, "usage", None)),
        _text(getattr(r, "id", "")),
        _text(getattr(r, "model", "")),
    )


async def responses_streamed(stream: Any) -> Received:
    """A streamed response: the response its `response.completed` (or incomplete) event holds."""
    async for event in stream:
        kind = _text(getattr(event, "type", ""))
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return responses_received(event.response)
        if kind == "error":
            raise _Retryable(
                f"the stream reported an error: {_text(getattr(event, 'message', ''))}"
            )
    raise _Retryable("the stream ended before the response completed")


class Asker:
    """Sends one request and classifies what comes back (answer, retryable, fatal)."""

    def __init__(self, endpoint: Endpoint, sampling: Sampling) -> None:
        import openai

        self.endpoint, self.sampling = endpoint, sampling
        self._openai = openai
        self.client = openai.AsyncOpenAI(
            api_key=endpoint.api_key or NO_KEY,
            base_url=endpoint.base_url,
            max_retries=0,
            timeout=endpoint.timeout_s,
        )

    async def close(self) -> None:
        """Close the client's connections."""
        await self.client.close()

    def redact(self, text: str) -> str:
        """`text` with the key, and any long piece of it, replaced by `<key>`."""
        return redact(text, self.endpoint.api_key)

    async def ask(self, job: Job) -> Received:
        """One attempt; raises _Retryable or _Fatal."""
        import httpx2

        openai = self._openai
        body = request_body(job, self.endpoint, self.sampling)
        try:
            r = await self._post(body)
            if self.endpoint.api == "chat":
                if self.endpoint.stream:
                    return await chat_streamed(r)
                return chat_received(r)
            if self.endpoint.stream:
                return await responses_streamed(r)
            return responses_received(r)
        except openai.APITimeoutError:
            raise _Retryable(f"no answer within {self.endpoint.timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise _Retryable(f"connection failed: {self._describe(cause)}", status=-1) from None
        except openai.APIStatusError as exc:
            raise self._status(exc) from None
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise _Retryable(f"the answer is not valid JSON ({self._describe(exc)})") from None
        except httpx2.TimeoutException:
            raise _Retryable(f"no answer within {self.endpoint.timeout_s:g} s") from None
        except httpx2.HTTPError as exc:
            raise _Retryable(f"the answer broke off: {self._describe(exc)}") from None

    async def _post(self, body: dict[str, Any]) -> Any:
        """`client.chat.completions.create(**body)` (or `responses.create`), minus the client's
        per-call parameter transform: the body is already plain JSON in the API's spelling, and
        the transform (a recursive walk of the typed parameters) was most of the client's CPU
        time per request (benchmarks/bench_generate.py --instant). The client still sends it,
        authenticates it, and parses and types the answer, streamed or whole."""
        from openai._base_client import make_request_options
        from openai.types.chat import ChatCompletion, ChatCompletionChunk
        from openai.types.responses import Response, ResponseStreamEvent

        plain = dict(body)
        extra = plain.pop("extra_body", None)
        stream = bool(plain.get("stream"))
        options = make_request_options(extra_body=extra, security={"bearer_auth": True})
        openai = self._openai
        if self.endpoint.api == "chat":
            return await self.client.post(
                "/chat/completions", body=plain, options=options, cast_to=ChatCompletion,
                stream=stream, stream_cls=openai.AsyncStream[ChatCompletionChunk],
            )  # fmt: skip
        return await self.client.post(
            "/responses", body=plain, options=options, cast_to=Response, stream=stream,
            stream_cls=openai.AsyncStream[ResponseStreamEvent],
        )  # fmt: skip

    def _describe(self, exc: BaseException) -> str:
        text = str(exc) or type(exc).__name__
        return shown(self.redact(text))

    def _status(self, exc: Any) -> Exception:
        status = int(exc.status_code)
        message = _error_message(exc)
        what = f"HTTP {status}" + (f": {shown(self.redact(message))}" if message else "")
        if status in RETRY_STATUS or status >= 500:
            headers = getattr(getattr(exc, "response", None), "headers", None)
            return _Retryable(what, retry_after(headers), status)
        if status in (400, 422):
            return _Fatal(
                f"the endpoint refused the request ({what})",
                ExitCode.USAGE,
                "a parameter this endpoint does not take? (--temperature, --max-tokens, "
                "--reasoning-effort, --seed, --api)",
            )
        if status in (401, 403):
            return _Fatal(
                f"the endpoint refused the key ({what})",
                ExitCode.ENVIRONMENT,
                "give the key in OPENAI_API_KEY (or --api-key)",
            )
        if status == 404:
            return _Fatal(
                f"the endpoint has no such model or path ({what})",
                ExitCode.ENVIRONMENT,
                "check --model and --base-url (it usually ends in /v1)",
            )
        return _Fatal(f"the endpoint answered {what}", ExitCode.RUN)


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return ""


def redact(text: str, secret: str, *, piece: int = 8) -> str:
    """`text` with every occurrence of `secret`, and of any `piece` or more consecutive
    characters of it, replaced by `<key>` (endpoints echo keys whole or masked)."""
    if not secret or secret == NO_KEY:
        return text
    text = text.replace(secret, "<key>")
    n = min(piece, len(secret))
    if len(secret) <= n:
        return text
    out, i = [], 0
    pieces = {secret[k : k + n] for k in range(len(secret) - n + 1)}
    while i < len(text):
        if text[i : i + n] in pieces:
            j = i + n
            while j < len(text) and secret.find(text[i : j + 1]) >= 0:
                j += 1
            out.append("<key>")
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# -- pacing ---------------------------------------------------------------------------------


class Limiter:
    """At most `rate` request starts per second, and a pause every request honours (429)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0
        self._paused_until = 0.0
        self._lock = asyncio.Lock()

    def pause(self, seconds: float) -> None:
        """No request starts before `seconds` from now."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def slot(self) -> None:
        """Wait for the next start."""
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next, self._paused_until)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)
        while (left := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(left)


def backoff(attempt: int, base: float, rng: random.Random) -> float:
    """The wait before retry `attempt` (1-based): base·2^(attempt-1), capped, jittered to
    between half and all of it."""
    full: float = min(BACKOFF_CAP_S, base * 2.0 ** (attempt - 1))
    return full * (0.5 + 0.5 * rng.random())


# -- output and resume ----------------------------------------------------------------------


@dataclass(frozen=True)
class Existing:
    """What the output file already holds."""

    done: frozenset[tuple[str, str, int]]
    notes: tuple[str, ...] = ()


def _identity(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {k: rec.get(k) for k in IDENTITY}


def read_existing(
    path: Path, jobs: Sequence[Job], endpoint: Endpoint, sampling: Sampling
) -> Existing:
    """The requests `path` already answers; a torn last line is cut off (with a note); a line
    that is not ours, or answered with other parameters, is an error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Existing(frozenset())
    except OSError as exc:
        raise OutputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    notes: list[str] = []
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with path.open("r+b") as fh:
            fh.truncate(keep)
        notes.append(f"{path}: cut off a torn last line ({len(data) - keep} bytes)")
        data = data[:keep]
    by_key = {j.key: j for j in jobs}
    done: set[tuple[str, str, int]] = set()
    for lineno, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
            meta = obj["meta"]
            key = (str(obj["task_id"]), str(obj["contract"]), int(meta["draw"]))
            request = meta["request"]
        except (ValueError, KeyError, TypeError):
            raise OutputError(
                f"{where}: not a line `generate` wrote",
                hint="resume needs the file an earlier `generate --output` wrote",
            ) from None
        if key in done:
            raise OutputError(f"{where}: a second answer for {key[0]} {key[1]} draw {key[2]}")
        done.add(key)
        job = by_key.get(key)
        if job is None:
            continue
        want = _identity(request_record(job, endpoint, sampling))
        have = _identity(request)
        for name in IDENTITY:
            if want[name] != have[name]:
                raise UsageError(
                    f"{where}: was asked with {name}={have[name]!r}, this run asks "
                    f"{name}={want[name]!r}",
                    hint="write to another --output, or resume with the same options",
                )
        if meta.get("prompt_sha256") != job.prompt.sha256:
            raise UsageError(
                f"{where}: was asked with another prompt (the contract or the disclosure changed)",
                hint="write to another --output, or resume with the same --disclose-for",
            )
    return Existing(frozenset(done), tuple(notes))


class Output:
    """The reply file, opened for appending whole lines (one write each) under a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            raise UsageError(f"{path}: another `generate` is writing it") from None

    def write(self, obj: Mapping[str, Any]) -> None:
        """Append one line with a single write (the kernel appends it whole)."""
        data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def close(self) -> None:
        """Flush to disk and release the lock."""
        with contextlib.suppress(OSError):
            os.fsync(self.fd)
        os.close(self.fd)


def _clean(value: Any) -> Any:
    """`value` with lone surrogates replaced by U+FFFD (they have no UTF-8 encoding)."""
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value) if surrogate_problem(value) else value
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def reply_line(
    job: Job,
    got: Received,
    found: Extraction,
    *,
    endpoint: Endpoint,
    sampling: Sampling,
    latency_s: float,
    attempts: int,
) -> dict[str, Any]:
    """The JSON line of one answered request (module docstring)."""
    answer = got.answer
    meta: dict[str, Any] = {
        "draw": job.draw,
        "extraction": found.method,
        "failure": found.failure or None,
        "finish_reason": answer.finish_reason or None,
        "answer": {
            "text": answer.text,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in answer.tool_calls],
            "refusal": answer.refusal or None,
        },
        "usage": got.usage.as_json(),
        "latency_s": round(latency_s, 4),
        "attempts": attempts,
        "response_id": got.response_id or None,
        "served_model": got.served_model or None,
        "request": request_record(job, endpoint, sampling),
        "prompt_sha256": job.prompt.sha256,
    }
    if job.boundary is not None:
        meta["boundary"] = job.boundary
    if found.notes:
        meta["notes"] = list(found.notes)
    return {
        "task_id": job.task.id,
        "reply": found.reply if found.reply is not None else "",
        "reply_id": job.reply_id,
        "model": sampling.model,
        "contract": job.contract.name,
        "meta": _clean(meta),
    }


# -- progress -------------------------------------------------------------------------------


@dataclass
class Counts:
    """What a run did so far."""

    total: int = 0
    skipped: int = 0
    replies: int = 0
    failed: int = 0
    retries: int = 0
    in_flight: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def answered(self) -> int:
        """Requests answered in this run (replies and failed replies)."""
        return self.replies + self.failed

    def line(self) -> str:
        """One progress line."""
        elapsed = max(1e-9, time.monotonic() - self.started)
        todo = self.total - self.skipped
        return (
            f"generate: {self.answered}/{todo} answered ({self.failed} failed replies), "
            f"{self.retries} retries, {self.in_flight} in flight, tokens {self.input_tokens} in / "
            f"{self.output_tokens} out, {self.answered / elapsed:.1f} req/s"
        )


class Progress:
    """Progress on a stream: rewritten in place on a terminal, else a line every `every` s."""

    def __init__(self, stream: IO[str] | None, every: float = 10.0) -> None:
        self.stream = stream
        self.tty = bool(stream is not None and stream.isatty())
        self.every = 0.2 if self.tty else every
        self._last = time.monotonic()

    def tick(self, counts: Counts, *, force: bool = False) -> None:
        """Show the counts if it is time."""
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < self.every:
            return
        self._last = now
        if self.tty:
            self.stream.write("\r" + counts.line() + "\x1b[K")
        else:
            self.stream.write(counts.line() + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the in-place line."""
        if self.stream is not None and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


# -- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    """What a run did (the command prints it)."""

    counts: Counts
    notes: tuple[str, ...]
    elapsed_s: float


async def _run(
    jobs: Sequence[Job],
    *,
    endpoint: Endpoint,
    sampling: Sampling,
    pacing: Pacing,
    out: Output,
    counts: Counts,
    progress: Progress,
    asker_factory: Callable[[], Asker],
    rng: random.Random,
) -> None:
    asker = asker_factory()
    limiter = Limiter(pacing.rate)
    queue: asyncio.Queue[Job] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    fatal: list[EndpointError] = []

    async def one(job: Job) -> None:
        attempt = 0
        while True:
            attempt += 1
            await limiter.slot()
            started = time.monotonic()
            counts.in_flight += 1
            try:
                got = await asker.ask(job)
            except _Retryable as exc:
                counts.in_flight -= 1
                if attempt > pacing.retries:
                    code = ExitCode.ENVIRONMENT if exc.status == -1 else ExitCode.RUN
                    tries = f"{attempt} attempt{'s' if attempt > 1 else ''}"
                    raise EndpointError(
                        f"{job.task.id} ({job.contract.name}, draw {job.draw}): {exc.why} "
                        f"after {tries}",
                        code,
                    ) from None
                if exc.after is not None:
                    wait = min(exc.after, MAX_RETRY_AFTER_S)
                    if exc.status == 429:
                        limiter.pause(wait)
                else:
                    wait = backoff(attempt, pacing.backoff_s, rng)
                counts.retries += 1
                await asyncio.sleep(wait)
                continue
            except _Fatal as exc:
                counts.in_flight -= 1
                raise EndpointError(
                    f"{job.task.id} ({job.contract.name}, draw {job.draw}): {exc.why}",
                    exc.code,
                    hint=exc.hint,
                ) from None
            counts.in_flight -= 1
            latency = time.monotonic() - started
            tool = job.prompt.tool.name if job.prompt.tool else None
            found = extract(got.answer, job.extract, tool)
            out.write(
                reply_line(
                    job,
                    got,
                    found,
                    endpoint=endpoint,
                    sampling=sampling,
                    latency_s=latency,
                    attempts=attempt,
                )
            )
            counts.input_tokens += got.usage.input_tokens
            counts.output_tokens += got.usage.output_tokens
            if found.reply is None:
                counts.failed += 1
            else:
                counts.replies += 1
            progress.tick(counts)
            return

    async def worker() -> None:
        while not fatal:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                await one(job)
            except EndpointError as exc:
                fatal.append(exc)
                return

    workers = [asyncio.create_task(worker()) for _ in range(max(1, pacing.concurrency))]
    try:
        pending = set(workers)
        while pending and not fatal:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in workers:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        # An error, or the caller cancelling us (a signal): abandon what is in flight.
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        await asker.close()
    if fatal:
        raise fatal[0]


def _in_thread(make: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run the coroutine `make()` on an event loop in a thread of its own.

    Signals reach the main thread only, which waits here: SIGINT and SIGTERM (turned into
    KeyboardInterrupt / `supervisor.Terminated` by the CLI) arrive in this wait, never inside
    the loop, so the loop is cancelled cleanly (the requests in flight abandoned, the lines
    already written whole) before the interrupt goes on."""
    holder: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> None:
        holder["loop"], holder["task"] = asyncio.get_running_loop(), asyncio.current_task()
        ready.set()
        await make()

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            holder["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=target, name="generate-loop", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)
    except BaseException:
        ready.wait()
        loop, task = holder.get("loop"), holder.get("task")
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
        thread.join(30)
        raise
    error = holder.get("error")
    if error is not None and not isinstance(error, asyncio.CancelledError):
        raise error


def run(
    the_plan: Plan,
    *,
    endpoint: Endpoint,
    sampling: Sampling,
    pacing: Pacing = Pacing(),
    output: Path,
    progress: IO[str] | None = None,
    progress_every: float = 10.0,
    seed: int | None = None,
) -> RunResult:
    """Ask every request of `the_plan` not yet answered in `output`; see the module docstring."""
    if endpoint.api not in APIS:
        raise UsageError(f"--api {endpoint.api!r} is not one of {', '.join(APIS)}")
    out = Output(output)
    try:
        existing = read_existing(output, the_plan.jobs, endpoint, sampling)
        todo = [j for j in the_plan.jobs if j.key not in existing.done]
        counts = Counts(total=len(the_plan.jobs), skipped=len(the_plan.jobs) - len(todo))
        shower = Progress(progress, progress_every)
        started = time.monotonic()
        try:
            if todo:
                _in_thread(
                    lambda: _run(
                        todo,
                        endpoint=endpoint,
                        sampling=sampling,
                        pacing=pacing,
                        out=out,
                        counts=counts,
                        progress=shower,
                        asker_factory=lambda: Asker(endpoint, sampling),
                        rng=random.Random(seed),
                    )
                )
        finally:
            shower.finish()
        return RunResult(counts, existing.notes, time.monotonic() - started)
    finally:
        out.close()


def dry_run_lines(the_plan: Plan, endpoint: Endpoint, sampling: Sampling) -> Iterator[str]:
    """One JSON line per request: what would be sent (nothing is sent)."""
    for job in the_plan.jobs:
        doc = {
            "task_id": job.task.id,
            "contract": job.contract.name,
            "draw": job.draw,
            "api": endpoint.api,
            "boundary": job.boundary,
            "body": request_body(job, endpoint, sampling),
        }
        yield json.dumps(doc, ensure_ascii=False) + "\n"


def summary(result: RunResult, the_plan: Plan, output: Path) -> str:
    """The closing line on stderr."""
    c = result.counts
    tasks = len({j.task.id for j in the_plan.jobs})
    contracts = len({j.contract.name for j in the_plan.jobs})
    draws = len({j.draw for j in the_plan.jobs})
    return (
        f"generated {output}: {c.total} requests ({tasks} tasks x {contracts} contracts x "
        f"{draws} draws), {c.skipped} already answered, {c.replies} replies, {c.failed} failed "
        f"replies, {c.retries} retries, tokens {c.input_tokens} in / {c.output_tokens} out, "
        f"{result.elapsed_s:.1f} s"
    )


__all__ = [
    "APIS",
    "Endpoint",
    "EndpointError",
    "Pacing",
    "Plan",
    "Sampling",
    "dry_run_lines",
    "plan",
    "redact",
    "run",
    "summary",
]
