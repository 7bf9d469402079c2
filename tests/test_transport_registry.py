"""The transport registry: names, classes, parameters, labels, and what each backend supports."""

from __future__ import annotations

import pytest

from boundary_audit.errors import ExitCode, UsageError
from boundary_audit.sandbox.tempdir import TempdirSandbox
from boundary_audit.taxonomy import BoundaryClass as B
from boundary_audit.transports import TRANSPORTS, make_transport

EXPECTED = {
    "raw": B.SHELL_STRING,
    "nested": B.NESTED_STRING,
    "nested-escaped": B.NESTED_STRING,
    "stdin": B.SHELL_STDIN,
    "session": B.SHELL_SESSION,
    "session-pipe": B.SHELL_SESSION,
    "tmux-keys": B.TTY_KEYSTROKES,
    "tmux-literal": B.TTY_KEYSTROKES,
    "argv-shlex": B.ARGV_DIRECT,
    "argv-split": B.ARGV_DIRECT,
    "argv-shell-quote": B.ARGV_DIRECT,
    "script-bash": B.SCRIPT_FILE,
    "script-sh": B.SCRIPT_FILE,
    "ssh": B.REMOTE_STRING,
    "docker": B.REMOTE_STRING,
    "json-naive": B.SERIALIZED,
    "json-correct": B.SERIALIZED,
}
DRIVEN = {"session", "session-pipe", "tmux-keys", "tmux-literal", "ssh"}
"""Transports whose live half is an in-sandbox driver run by this Python."""


def test_registry_is_exactly_the_documented_transports_in_report_order() -> None:
    assert list(TRANSPORTS) == list(EXPECTED)
    for name, cls in TRANSPORTS.items():
        assert cls.name == name
        assert cls.boundary_class is EXPECTED[name]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_parameter_is_documented_and_defaults_give_the_bare_name(name: str) -> None:
    transport = make_transport(name)
    assert set(transport.param_help) == set(transport.defaults)
    assert all(text.strip() for text in transport.param_help.values())
    assert transport.label == name
    transport.close()


def test_stateful_flags() -> None:
    stateful = {n for n, cls in TRANSPORTS.items() if cls.stateful}
    assert stateful == {"session", "session-pipe", "tmux-keys", "tmux-literal"}


def test_unknown_transport_is_a_usage_error_listing_the_known_ones() -> None:
    with pytest.raises(UsageError) as err:
        make_transport("telnet")
    assert err.value.exit_code == ExitCode.USAGE
    assert str(err.value) == "unknown transport 'telnet' (known: " + ", ".join(EXPECTED) + ")"


def test_unknown_parameter_is_a_usage_error_naming_the_known_ones() -> None:
    with pytest.raises(UsageError) as err:
        make_transport("stdin", shel="dash")
    assert str(err.value) == (
        "transport stdin: unknown parameter(s) shel (known: append_newline, flags, shell)"
    )


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("tmux-keys", {"width": "wide"}, "parameter width must be int or float, got str"),
        ("session", {"echo": 1}, "parameter echo must be bool, got int"),
        ("raw", {"flags": ["-c"]}, "parameter flags must be str, got list"),
        ("tmux-literal", {"completion": "poll"}, "completion must be 'wait' or 'marker'"),
        ("ssh", {"quoting": "single"}, "quoting must be one of double, argv, escaped"),
        ("session-pipe", {"env": {"A": 1}}, "env must be None or a str->str mapping"),
    ],
)
def test_bad_parameter_values_are_usage_errors(
    name: str, params: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError) as err:
        make_transport(name, **params)
    assert str(err.value) == f"transport {name}: {message}"


def test_label_shows_only_the_parameters_that_differ() -> None:
    assert make_transport("tmux-literal", width=256, height=40).label == "tmux-literal(width=256)"
    assert make_transport("raw", flags="-lc").label == "raw(flags=-lc)"
    assert make_transport("session", echo=True).label == "session(echo=true)"
    setup = make_transport("tmux-literal", setup=("set +H",), completion="marker")
    assert setup.label == "tmux-literal(completion=marker,setup=[set +H])"


class _NoHostPython(TempdirSandbox):
    host_programs = False


def test_driven_transports_say_why_they_cannot_run_without_the_host_python() -> None:
    sandbox = _NoHostPython()
    for name in EXPECTED:
        params = {"docker_host": "unix:///x"} if name == "docker" else {}
        why = make_transport(name, **params).supports(sandbox)
        if name in DRIVEN:
            assert why == "needs the host Python inside the sandbox, which tempdir does not offer"
        else:
            assert why is None, name
