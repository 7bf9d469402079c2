"""`generate` against the scripted mock server: the full core suite under both contracts.

    .venv/bin/python benchmarks/bench_generate.py --draws 2 [--probe] [--concurrency 4]
    .venv/bin/python benchmarks/bench_generate.py --instant --draws 10 --concurrency 16

The mock (in this process, on 127.0.0.1) answers every raw-contract request with the task's
oracle and every disclosed one with the oracle written for the double-quote wrapper (a
backslash before each of \\ " $ `: what a model that adapts to the disclosed boundary writes;
its second answer to a hostile tier-3 task is the plain oracle again, so the draws differ), in
a fenced block, and answers every 25th request with a 429 (`Retry-After: 0.2`) first. With
`--instant` it answers every request at once with one fixed fenced command and no 429: the
throughput of the client side alone (the speed claim: >= 200 replies/s on 2 cores); the load
average is printed with it, since the machine is shared. `boundary-audit generate` runs as its
own process; the script prints its summary line, the requests the mock got and the replies/s of
the run. With `--probe` the reply file is then probed through raw and nested (one reply set
per contract and draw).
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


def for_double_quotes(command: str) -> str:
    """`command` written for the inside of bash's double quotes."""
    return "".join("\\" + ch if ch in '\\"$`' else ch for ch in command)


def fenced(command: str) -> dict[str, object]:
    return {"kind": "text", "text": f"```bash\n{command}\n```"}


def script(instant: bool = False) -> dict[str, object]:
    if instant:
        return {"api_key": "sk-bench", "default": fenced("printf 'hello\\n' > out.txt")}
    rules: list[dict[str, object]] = [
        {"index": list(range(24, 100_000, 25)), "reply": {"kind": "status", "status": 429,
                                                         "retry_after": 0.2}},
    ]  # fmt: skip
    for t in load_tasks("core"):
        adapted = fenced(for_double_quotes(t.oracle))
        answers = [adapted, fenced(t.oracle)] if t.tier == 3 else [adapted]
        rules.append({"contains": [t.instruction, DISCLOSED], "sequence": answers})
        rules.append({"contains": t.instruction, "reply": fenced(t.oracle)})
    return {"api_key": "sk-bench", "rules": rules}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--instant", action="store_true")
    ap.add_argument("--output", type=Path, default=None, help="keep the reply file here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ba-bench-generate-"))
    out = args.output or work / "replies.jsonl"
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} cores")  # fmt: skip
    with MockServer(Script.from_json(script(args.instant))) as server:
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
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    engine_s = float(re.findall(r"([0-9.]+) s$", proc.stderr.strip().splitlines()[-1])[0])
    print(f"mock got {asked} requests for {len(lines)} replies; process wall {wall:.1f} s, "
          f"engine {engine_s:.1f} s = {len(lines) / engine_s:.0f} replies/s")  # fmt: skip
    if not args.probe:
        return 0
    res = subprocess.run(
        [sys.executable, "-m", "boundary_audit", "probe", "--replies", str(out),
         "--transport", "nested"],
        capture_output=True, text=True,
    )  # fmt: skip
    print(f"probe (one set per contract and draw): {res.stderr.strip().splitlines()[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
