"""Transports: one module per boundary mechanism, registered by name in TRANSPORTS.

Add a transport by writing one module with a `Transport` subclass and one line here.
"""

from __future__ import annotations

from typing import Any

from boundary_audit.errors import UsageError
from boundary_audit.transports.interface import Transport
from boundary_audit.transports.nested import NestedTransport
from boundary_audit.transports.nested_escaped import NestedEscapedTransport
from boundary_audit.transports.raw import RawTransport

TRANSPORTS: dict[str, type[Transport]] = {
    cls.name: cls
    for cls in (
        RawTransport,
        NestedTransport,
        NestedEscapedTransport,
    )
}


def make_transport(name: str, **params: Any) -> Transport:
    """Instantiate transport `name` with `params`; unknown names are a usage error."""
    try:
        cls = TRANSPORTS[name]
    except KeyError:
        known = ", ".join(sorted(TRANSPORTS))
        raise UsageError(f"unknown transport {name!r} (known: {known})") from None
    return cls(**params)


__all__ = ["TRANSPORTS", "Transport", "make_transport"]
