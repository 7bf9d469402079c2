"""`json-correct`: R serialized with `json.dumps`, decoded, run raw; must equal `raw` exactly."""

from __future__ import annotations

from boundary_audit.transports.json_call import JsonCallTransport


class JsonCorrectTransport(JsonCallTransport):
    """`json.loads(json.dumps({"command": R}))["command"]`, then `bash -c`."""

    name = "json-correct"
    naive = False
