"""`generate` against the scripted mock server: the full core suite under both contracts.

    .venv/bin/python benchmarks/bench_generate.py --draws 2 [--probe] [--concurrency 4]

The mock (in this process, on 127.0.0.1) answers every raw-contract request with the task's
naive reply and every disclosed one with its oracle, in a fenced block, and answers every
25th request with a 429 (`Retry-After: 0.2`) first. `boundary-audit generate` runs as its own
process; the script prints its summary line, the requests the mock got and the replies/s of
the run. With `--probe` each (contract, draw) file is then probed through raw and nested
(today's probe takes one reply per task per model: one file per contract and draw).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from boundary_audit.llm.mock_server import MockServer, Script
from boundary_audit.tasks import load_tasks

DISCLOSED = "How your command will be run:"


def script() -> dict[str, object]:
    rules: list[dict[str, object]] = [
        {"index": list(range(24, 100_000, 25)), "reply": {"kind": "status", "status": 429,
                                                         "retry_after": 0.2}},
    ]  # fmt: skip
    for t in load_tasks("core"):
        fenced = {"kind": "text", "text": f"```bash\n{t.oracle}\n```"}
        naive = {"kind": "text", "text": f"```bash\n{t.naive}\n```"}
        rules.append({"contains": [t.instruction, DISCLOSED], "reply": fenced})
        rules.append({"contains": t.instruction, "reply": naive})
    return {"api_key": "sk-bench", "rules": rules}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--probe", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ba-bench-generate-"))
    out = work / "replies.jsonl"
    with MockServer(Script.from_json(script())) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": server.base_url}
        argv = ["boundary-audit", "generate", "-m", "mock", "-c", "raw", "-c", "disclosed",
                "-k", str(args.draws), "-j", str(args.concurrency), "-o", str(out)]  # fmt: skip
        print("$", " ".join(argv))
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "boundary_audit", *argv[1:]], env=env, capture_output=True,
            text=True,
        )  # fmt: skip
        wall = time.monotonic() - started
        print(proc.stderr.strip().splitlines()[-1])
        if proc.returncode != 0:
            print(proc.stderr)
            return proc.returncode
        asked = len(server.model_requests())
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    engine_s = float(re.findall(r"([0-9.]+) s$", proc.stderr.strip().splitlines()[-1])[0])
    print(f"mock got {asked} requests for {len(lines)} replies; process wall {wall:.1f} s, "
          f"engine {engine_s:.1f} s = {len(lines) / engine_s:.0f} replies/s")  # fmt: skip
    if not args.probe:
        return 0
    for contract in ("raw", "disclosed"):
        for draw in range(args.draws):
            part = work / f"{contract}-d{draw}.jsonl"
            keep = [x for x in lines if x["contract"] == contract and x["meta"]["draw"] == draw]
            part.write_text("".join(json.dumps(x) + "\n" for x in keep))
            res = subprocess.run(
                [sys.executable, "-m", "boundary_audit", "probe", "--replies", str(part),
                 "--transport", "nested"],
                capture_output=True, text=True,
            )  # fmt: skip
            print(f"{part.name}: {res.stderr.strip().splitlines()[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
