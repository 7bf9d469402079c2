"""`json-naive`: R pasted into a JSON tool call by string concatenation, decoded, run raw."""

from __future__ import annotations

from boundary_audit.transports.json_call import JsonCallTransport


class JsonNaiveTransport(JsonCallTransport):
    """`json.loads('{"command": "' + R + '"}')["command"]`, then `bash -c`."""

    name = "json-naive"
    naive = True
