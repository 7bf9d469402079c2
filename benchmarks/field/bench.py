"""Benchmark: the static scan against the hand-labelled field corpus (issue 9, part 1).

    .venv/bin/python benchmarks/field/bench.py [--mirrors DIR ...] [--only NAME ...] \
        [--json OUT] [--labels DIR] [--scanner PROGRAM] [--timeout SECONDS]

For every label file in `labels/` (schema `boundary-audit/field-labels/v1`, one per harness,
made by the protocol of LABELLING.md), find a local git mirror that has the label's pin, scan
it at the pin with the installed CLI (`boundary-audit scan MIRROR@PIN --no-probe --offline
--format json`, a child process, exactly what a user runs), and score the findings against the
labels. Prints one table row per harness and a micro-averaged overall row (counts summed over
the harnesses, then divided), recall per class, the command line, the scanner's version and
commit and the load average at the start; `--json OUT` writes every number plus, per harness,
the missed labels, the false positives, the class mismatches and the true positives.

Mirrors: each search entry is a git directory (bare, or a work tree's `.git`), a work tree, or
a directory of mirrors whose children are git directories or hold one as `repo/` or `.git/`;
entries may be glob patterns. Default: the colon-separated entries of
$BOUNDARY_AUDIT_FIELD_MIRRORS, then `/work/.mirror/*/repo`; `--mirrors` (repeatable) replaces
the default. A mirror qualifies when it has the pin as a commit (asked with the project's
hardened, network-less git): mirrors named like the label's repo are tried first, then forks
(same repository name), then every other one, so a pin that lives only in a fork is found. A
label whose pin no mirror has is listed as missing, never dropped.

Scoring (LABELLING.md, "Scoring"):
- reported: a finding that is active (`suppressed` is null), has `model_controlled: true`
  and whose `path` is not under a `scope_excludes` prefix. Out-of-scope findings are not
  counted anywhere (their number is shown).
- match: same file and |line difference| <= 3, against the label's own line or any of its
  `alt_lines`. One-to-one: the matching has the most pairs; among those, the least total line
  distance (a hit on the label's own line costs less than an `alt_lines` hit at the same
  distance); then the labels that come first in the file, then the findings reported first,
  then the pairing that keeps both orders (see `match`).
- recall: model-controlled labels matched by a reported finding / model-controlled labels;
  also without `second_order` labels, and per label class.
- precision: reported findings matched to a model-controlled label / reported findings.
  The reported findings left over are matched (same rule) to the remaining labels: lenient
  precision leaves out of the denominator those that match a `model_data` label.
- class accuracy: matched pairs whose finding `class` equals the label's class / pairs.
- name-only: a true positive whose only evidence is a name (`name_only`) / true positives.
- seen (a diagnostic, not a LABELLING.md figure): model-controlled labels matched by any
  active in-scope finding, model-controlled or not: tells a sink the scanner did not find
  from one it found but did not trace to the model.

Timing: wall clock and CPU (user + system of the child and of its reaped descendants, i.e.
the scan's workers and git) of each scan. The child gets the caller's environment without
BOUNDARY_AUDIT_* variables, so a shell's option defaults cannot change the figures.

Exit codes: 0 every label file was scored or listed as missing; 1 a scan failed (the rest
are still scored and printed); 2 usage, an unknown --only name, a bad label file, or a --json
file that cannot be written.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels"
LABEL_SCHEMA = "boundary-audit/field-labels/v1"
REPORT_SCHEMA = "boundary-audit/v1"
OUT_SCHEMA = "boundary-audit/field-bench/v1"
MIRRORS_ENV = "BOUNDARY_AUDIT_FIELD_MIRRORS"
DEFAULT_MIRRORS = ("/work/.mirror/*/repo",)
TOLERANCE = 3
CLASSES = (
    "shell-string",
    "shell-stdin",
    "shell-session",
    "tty-keystrokes",
    "argv-direct",
    "script-file",
    "remote-string",
    "nested-string",
    "serialized",
)
"""The nine boundary classes of DESIGN.md, in taxonomy order."""
LABEL_KEYS = ("schema", "repo", "pin", "languages", "scope_excludes", "notes", "sinks")
SINK_KEYS = (
    "file",
    "line",
    "alt_lines",
    "api",
    "class",
    "model_controlled",
    "second_order",
    "model_data",
    "why",
)
LANGUAGES = ("python", "typescript", "javascript", "tsx", "go", "rust", "shell", "kotlin")
_PIN = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
_GLOB = re.compile(r"[*?\[]")

Json = dict[str, Any]


class BenchError(Exception):
    """Bad input to the benchmark: a one-line message, exit code 2."""


# --- labels ----------------------------------------------------------------------------


def _pos_int(x: object) -> bool:
    """A positive int (booleans are not numbers here)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def _bad_prefix(p: str) -> str | None:
    """Why `p` is not a repository-relative path prefix, or None."""
    if not p:
        return "is empty"
    if p.startswith(("/", "./")) or "\\" in p:
        return "is not relative with '/' separators"
    if _GLOB.search(p):
        return "is a pattern, not a prefix"
    if any(part in (".", "..") for part in p.rstrip("/").split("/")) or "//" in p:
        return "has an empty, '.' or '..' segment"
    return None


def validate(doc: object) -> list[str]:
    """Every way `doc` departs from the label schema (empty when it conforms)."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    errors: list[str] = []
    if tuple(doc) != LABEL_KEYS:
        errors.append(f"keys {list(doc)} are not exactly {list(LABEL_KEYS)} in that order")
    if doc.get("schema") != LABEL_SCHEMA:
        errors.append(f"schema is {doc.get('schema')!r}, not {LABEL_SCHEMA!r}")
    repo, pin = doc.get("repo"), doc.get("pin")
    if not isinstance(repo, str) or not _REPO.match(repo):
        errors.append(f"repo {repo!r} is not owner/name")
    if not isinstance(pin, str) or not _PIN.match(pin):
        errors.append(f"pin {pin!r} is not 40 lower-case hex digits")
    langs = doc.get("languages")
    if (
        not isinstance(langs, list)
        or not langs
        or any(x not in LANGUAGES for x in langs)
        or len(set(langs)) != len(langs)
    ):
        errors.append(f"languages {langs!r} is not a non-empty list of distinct {LANGUAGES}")
    excludes = doc.get("scope_excludes")
    if not isinstance(excludes, list) or any(not isinstance(p, str) for p in excludes):
        errors.append("scope_excludes is not a list of strings")
        excludes = []
    else:
        for p in excludes:
            why = _bad_prefix(p)
            if why:
                errors.append(f"scope_excludes entry {p!r} {why}")
        if len(set(excludes)) != len(excludes):
            errors.append("scope_excludes has duplicates")
    if not isinstance(doc.get("notes"), str) or not doc.get("notes"):
        errors.append("notes is not a non-empty string")
    sinks = doc.get("sinks")
    if not isinstance(sinks, list):
        return [*errors, "sinks is not a list"]
    for i, s in enumerate(sinks):
        errors.extend(f"sinks[{i}]: {e}" for e in _validate_sink(s, excludes))
    keys = [(s.get("file"), s.get("line")) for s in sinks if isinstance(s, dict)]
    if all(isinstance(f, str) and _pos_int(n) for f, n in keys):
        if keys != sorted(keys):
            errors.append("sinks are not sorted by (file, line)")
        if len(set(keys)) != len(keys):
            errors.append("two sinks have the same (file, line)")
    return errors


def _validate_sink(s: object, excludes: Sequence[str]) -> list[str]:
    if not isinstance(s, dict):
        return ["not an object"]
    errors: list[str] = []
    if tuple(s) != SINK_KEYS:
        errors.append(f"keys {list(s)} are not exactly {list(SINK_KEYS)} in that order")
    file, line = s.get("file"), s.get("line")
    if not isinstance(file, str) or _bad_prefix(file) or file.endswith("/"):
        errors.append(f"file {file!r} is not a relative file path")
    elif not in_scope(file, excludes):
        errors.append(f"file {file!r} is under a scope_excludes prefix")
    if not _pos_int(line):
        errors.append(f"line {line!r} is not a positive integer")
    alts = s.get("alt_lines")
    if not isinstance(alts, list):
        errors.append("alt_lines is not a list")
    else:
        for a in alts:
            ok = (
                isinstance(a, list)
                and len(a) == 2
                and isinstance(a[0], str)
                and not _bad_prefix(a[0])
                and _pos_int(a[1])
            )
            if not ok:
                errors.append(f"alt_lines entry {a!r} is not [file, line]")
            elif not in_scope(a[0], excludes):
                errors.append(f"alt_lines entry {a!r} is under a scope_excludes prefix")
    errors.extend(
        f"{key} is not a non-empty string"
        for key in ("api", "why")
        if not isinstance(s.get(key), str) or not s.get(key)
    )
    if s.get("class") not in CLASSES:
        errors.append(f"class {s.get('class')!r} is not one of the nine classes")
    flags = {k: s.get(k) for k in ("model_controlled", "second_order", "model_data")}
    for k, v in flags.items():
        if not isinstance(v, bool):
            errors.append(f"{k} is not a boolean")
    if flags["model_data"] is True and flags["model_controlled"] is True:
        errors.append("model_data is true but model_controlled is true")
    if flags["second_order"] is True and flags["model_controlled"] is not True:
        errors.append("second_order is true but model_controlled is false")
    return errors


def load_labels(path: Path) -> Json:
    """A label file, validated; BenchError (one line) if it is not valid."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchError(f"{path}: not readable as JSON: {exc}") from None
    errors = validate(doc)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BenchError(f"{path}: {errors[0]}{more}")
    out: Json = doc
    return out


# --- scoring ---------------------------------------------------------------------------


def in_scope(path: str, excludes: Iterable[str]) -> bool:
    """False when `path` lies under one of the `scope_excludes` prefixes."""
    return not any(path.startswith(p) for p in excludes)


def name_only(finding: Json) -> bool:
    """True for a model-controlled finding whose only evidence is a name.

    In a static scan the scanner gives `confidence: medium` exactly when a traced origin
    (tool-call arguments, an LLM response, a parsed action) reaches the value and `low`
    otherwise (boundary_audit/static/findings.py `build`; such a finding's message starts
    "A value named like a command" and its origins are annotated "named like a command:"
    instead of "model output enters:"). Both signs must agree for name-only.
    """
    if not finding.get("model_controlled"):
        return False
    if "model_evidence" in finding:  # the evidence level of issue 9 part 2, when reported
        return finding["model_evidence"] == "name"
    traced = any(
        str(r.get("annotation", "")).startswith("model output enters:")
        for r in finding.get("related", [])
    )
    return finding.get("confidence") == "low" and not traced


def evidence(finding: Json) -> str:
    """What the finding rests on, from its related locations, in a few words."""
    parts = []
    level = finding.get("model_evidence") or "traced"  # tool-entry origins say "enters" too
    for r in finding.get("related", []):
        ann = str(r.get("annotation", ""))
        for prefix, kind in (
            ("model output enters: ", level),
            ("named like a command: ", "name"),
        ):
            if ann.startswith(prefix):
                parts.append(f"{kind} {ann[len(prefix) :]} @{r.get('path')}:{r.get('line')}")
    if parts:
        return "; ".join(parts)
    return "name only" if name_only(finding) else "no model origin"


def reported(findings: Iterable[Json], excludes: Sequence[str]) -> list[Json]:
    """Findings reported as model boundaries: active, model-controlled and in scope."""
    return [
        f
        for f in findings
        if f.get("suppressed") is None
        and f.get("model_controlled") is True
        and in_scope(f["path"], excludes)
    ]


def distance(label: Json, finding: Json) -> tuple[int, int] | None:
    """(line distance, 1 if only via an alt_lines entry) when they match, else None."""
    best: tuple[int, int] | None = None
    sites = [(label["file"], label["line"], 0)] + [(f, n, 1) for f, n in label["alt_lines"]]
    for file, line, alt in sites:
        if file == finding["path"]:
            d = abs(int(finding["line"]) - line)
            if d <= TOLERANCE and (best is None or (d, alt) < best):
                best = (d, alt)
    return best


Cost = tuple[int, int, int, int]
_ZERO: Cost = (0, 0, 0, 0)


def _add(a: Cost, b: Cost) -> Cost:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def _neg(a: Cost) -> Cost:
    return (-a[0], -a[1], -a[2], -a[3])


def match(labels: Sequence[Json], findings: Sequence[Json]) -> list[tuple[int, int]]:
    """A one-to-one matching of labels to findings, as (label index, finding index) pairs.

    It has the most pairs any one-to-one matching has; among those it minimises, in this
    order (lexicographically): the total line distance (each pair costs 2 x distance, plus 1
    when it matched only through an `alt_lines` entry), the sum of the matched labels'
    indices (ties go to the label listed first: sinks are sorted by file and line), the sum
    of the matched findings' indices (ties go to the finding reported first), and minus the
    sum of label index x finding index (equally good labels and findings pair in order).
    Successive shortest augmenting paths (Bellman-Ford) over lexicographic cost vectors,
    which add componentwise, so each augmentation keeps the matching optimal for its size.
    """
    edges: dict[int, list[tuple[int, Cost]]] = {}
    for li, label in enumerate(labels):
        for fi, finding in enumerate(findings):
            d = distance(label, finding)
            if d is not None:
                edges.setdefault(li, []).append((fi, (2 * d[0] + d[1], li, fi, -li * fi)))
    owner: dict[int, int] = {}  # finding -> label
    pair: dict[int, int] = {}  # label -> finding
    cost = {(li, fi): c for li, out in edges.items() for fi, c in out}
    while True:
        # Residual graph: source -> free label (0); label -> finding not its own (cost);
        # finding -> its owner label (-cost); free finding -> sink (0).
        dist_l: dict[int, Cost] = {li: _ZERO for li in edges if li not in pair}
        dist_f: dict[int, Cost] = {}
        via_f: dict[int, int] = {}
        changed = True
        while changed:
            changed = False
            for li in sorted(dist_l):
                for fi, c in edges[li]:
                    if pair.get(li) == fi:
                        continue
                    cand = _add(dist_l[li], c)
                    if fi not in dist_f or cand < dist_f[fi]:
                        dist_f[fi], via_f[fi], changed = cand, li, True
            for fi in sorted(dist_f):
                lj = owner.get(fi)
                if lj is None:
                    continue
                cand = _add(dist_f[fi], _neg(cost[(lj, fi)]))
                if lj not in dist_l or cand < dist_l[lj]:
                    dist_l[lj], changed = cand, True
        free = [fi for fi in dist_f if fi not in owner]
        if not free:
            break
        end = min(free, key=lambda fi: (dist_f[fi], fi))
        fi = end
        while True:  # flip the path back to a free label
            li = via_f[fi]
            prev = pair.get(li)
            pair[li], owner[fi] = fi, li
            if prev is None:
                break
            fi = prev
    return sorted(pair.items())


@dataclass
class Score:
    """The counts of one harness (or of several, summed) and the figures derived from them."""

    labels_mc: int = 0
    labels_first_order: int = 0
    labels_by_class: Counter[str] = field(default_factory=Counter)
    findings: int = 0
    out_of_scope: int = 0
    suppressed: int = 0
    reported: int = 0
    tp: int = 0
    tp_first_order: int = 0
    tp_by_class: Counter[str] = field(default_factory=Counter)
    fp: int = 0
    fp_model_data: int = 0
    fp_not_model: int = 0
    fp_unlabelled: int = 0
    class_match: int = 0
    name_only_tp: int = 0
    seen: int = 0

    def __iadd__(self, other: Score) -> Score:
        for k, v in vars(other).items():
            setattr(self, k, getattr(self, k) + v)
        return self

    def figures(self) -> Json:
        """Every ratio (None where the denominator is 0)."""
        return {
            "recall": ratio(self.tp, self.labels_mc),
            "recall_first_order": ratio(self.tp_first_order, self.labels_first_order),
            "recall_by_class": {
                c: ratio(self.tp_by_class[c], self.labels_by_class[c])
                for c in CLASSES
                if self.labels_by_class[c]
            },
            "precision": ratio(self.tp, self.reported),
            "precision_lenient": ratio(self.tp, self.reported - self.fp_model_data),
            "class_accuracy": ratio(self.class_match, self.tp),
            "name_only_share": ratio(self.name_only_tp, self.tp),
            "seen": ratio(self.seen, self.labels_mc),
        }

    def counts(self) -> Json:
        """The raw counts, JSON-ready."""
        out: Json = {}
        for k, v in vars(self).items():
            out[k] = {c: v[c] for c in CLASSES if v[c]} if isinstance(v, Counter) else v
        return out


def ratio(num: int, den: int) -> float | None:
    """num / den rounded to 4 places, or None when den is 0."""
    return round(num / den, 4) if den else None


def _site(label: Json) -> str:
    return f"{label['file']}:{label['line']}"


def score(doc: Json, findings: Sequence[Json]) -> tuple[Score, Json]:
    """Score one harness's findings against its labels: the counts and the per-item lists."""
    excludes = doc["scope_excludes"]
    sinks = doc["sinks"]
    mc = [s for s in sinks if s["model_controlled"]]
    rest = [s for s in sinks if not s["model_controlled"]]
    rep = reported(findings, excludes)
    active = [f for f in findings if f.get("suppressed") is None and in_scope(f["path"], excludes)]

    s = Score()
    s.labels_mc = len(mc)
    s.labels_first_order = sum(not x["second_order"] for x in mc)
    s.labels_by_class = Counter(x["class"] for x in mc)
    s.findings = len(findings)
    s.out_of_scope = sum(not in_scope(f["path"], excludes) for f in findings)
    s.suppressed = sum(
        f.get("suppressed") is not None and in_scope(f["path"], excludes) for f in findings
    )
    s.reported = len(rep)

    tp_pairs = match(mc, rep)
    matched_f = {fi for _, fi in tp_pairs}
    matched_l = {li for li, _ in tp_pairs}
    s.tp = len(tp_pairs)
    tps, mismatches = [], []
    for li, fi in tp_pairs:
        lab, f = mc[li], rep[fi]
        s.tp_first_order += not lab["second_order"]
        s.tp_by_class[lab["class"]] += 1
        s.class_match += f["class"] == lab["class"]
        s.name_only_tp += name_only(f)
        item = {
            "label": _site(lab),
            "finding": f"{f['path']}:{f['line']}",
            "label_class": lab["class"],
            "class": f["class"],
            "code": f["code"],
            "name_only": name_only(f),
            "evidence": evidence(f),
        }
        tps.append(item)
        if f["class"] != lab["class"]:
            mismatches.append(item)

    left = [rep[i] for i in range(len(rep)) if i not in matched_f]
    fp_pairs = {fi: li for li, fi in match(rest, left)}
    fps = []
    for fi, f in enumerate(left):
        lab = rest[fp_pairs[fi]] if fi in fp_pairs else None
        kind = "unlabelled" if lab is None else ("model_data" if lab["model_data"] else "not_model")
        s.fp += 1
        s.fp_model_data += kind == "model_data"
        s.fp_not_model += kind == "not_model"
        s.fp_unlabelled += kind == "unlabelled"
        fps.append(
            {
                "finding": f"{f['path']}:{f['line']}",
                "code": f["code"],
                "class": f["class"],
                "sink": f.get("sink", ""),
                "confidence": f.get("confidence"),
                "evidence": evidence(f),
                "matches": kind,
                "label": None
                if lab is None
                else {"site": _site(lab), "class": lab["class"], "why": lab["why"]},
            }
        )

    seen_pairs = dict(match(mc, active))
    s.seen = len(seen_pairs)
    missed = []
    for li, lab in enumerate(mc):
        if li in matched_l:
            continue
        seen = active[seen_pairs[li]] if li in seen_pairs else None
        missed.append(
            {
                "label": _site(lab),
                "class": lab["class"],
                "api": lab["api"],
                "second_order": lab["second_order"],
                "why": lab["why"],
                "seen_as": None
                if seen is None
                else {
                    "finding": f"{seen['path']}:{seen['line']}",
                    "code": seen["code"],
                    "class": seen["class"],
                    "model_controlled": seen["model_controlled"],
                },
            }
        )
    lists = {
        "missed": missed,
        "false_positives": fps,
        "class_mismatches": mismatches,
        "true_positives": tps,
    }
    return s, lists


# --- mirrors and scanning --------------------------------------------------------------


def _is_git_dir(p: Path) -> bool:
    return (p / "HEAD").is_file() and (p / "objects").is_dir()


def git_dirs(entries: Sequence[str]) -> list[Path]:
    """The git directories the search entries name, in order, without duplicates."""
    out: list[Path] = []

    def add(p: Path) -> bool:
        for cand in (p, p / ".git", p / "repo", p / "repo" / ".git"):
            if _is_git_dir(cand):
                cand = cand.resolve()
                if cand not in out:
                    out.append(cand)
                return True
        return False

    for entry in entries:
        paths = sorted(glob.glob(entry)) if _GLOB.search(entry) else [entry]
        for raw in paths:
            p = Path(raw)
            if not add(p) and p.is_dir():
                for child in sorted(p.iterdir()):
                    if child.is_dir():
                        add(child)
    return out


def _rank(git_dir: Path, repo: str) -> int:
    """0 for a mirror named like `repo`, 1 for a fork (same name), 2 for any other."""
    owner, name = repo.lower().split("/")
    text = str(git_dir).lower()
    if f"{owner}+{name}" in text or f"{owner}/{name}" in text:
        return 0
    return 1 if re.search(rf"(^|[/+]){re.escape(name)}(\.git)?($|/)", text) else 2


def has_commit(git_dir: Path, pin: str) -> bool:
    """True when `git_dir` has the commit `pin` (no network, the project's hardened git)."""
    from boundary_audit.errors import BoundaryAuditError
    from boundary_audit.source.mirror import resolve

    try:
        return resolve(git_dir, pin, timeout=60.0) == pin
    except BoundaryAuditError:
        return False


def find_mirror(repo: str, pin: str, dirs: Sequence[Path]) -> Path | None:
    """The first git directory (named like `repo` first, then forks, then the rest) with `pin`."""
    for d in sorted(dirs, key=lambda d: _rank(d, repo)):  # stable: search order within a rank
        if has_commit(d, pin):
            return d
    return None


@dataclass
class ScanRun:
    """One scan's result and cost."""

    returncode: int | None
    report: Json | None
    error: str | None
    wall_s: float
    cpu_s: float
    stderr_tail: str


def scan_argv(scanner: str, git_dir: Path, pin: str) -> list[str]:
    """The command line of one scan."""
    return [scanner, "scan", f"{git_dir}@{pin}", "--no-probe", "--offline", "--format", "json"]


def child_env() -> dict[str, str]:
    """The caller's environment without BOUNDARY_AUDIT_* (option defaults of the scanner)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("BOUNDARY_AUDIT_")}


def run_scan(argv: Sequence[str], pin: str, timeout: float) -> ScanRun:
    """Run one scan; its wall time and the CPU of the child and its reaped descendants."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=child_env(),
                start_new_session=True,
            )
        except OSError as exc:
            return ScanRun(None, None, f"cannot start the scanner: {exc}", 0.0, 0.0, "")
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        cpu = usage.ru_utime + usage.ru_stime
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    tail = lines[-1].strip() if lines else ""
    rc = proc.returncode
    if timed_out.is_set():
        return ScanRun(rc, None, f"timed out after {timeout:g} s", wall, cpu, tail)
    if rc != 0:
        return ScanRun(rc, None, f"exit {rc}: {tail or 'no message'}", wall, cpu, tail)
    try:
        report = json.loads(stdout)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ScanRun(rc, None, f"output is not JSON: {exc}", wall, cpu, tail)
    if not isinstance(report, dict) or report.get("schema") != REPORT_SCHEMA:
        return ScanRun(rc, None, f"output is not a {REPORT_SCHEMA} report", wall, cpu, tail)
    if report.get("commit") != pin:
        got = report.get("commit")
        return ScanRun(rc, None, f"scanned commit {got}, not the pin", wall, cpu, tail)
    return ScanRun(rc, report, None, wall, cpu, tail)


def default_scanner() -> str:
    """`boundary-audit` next to this interpreter (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "boundary-audit"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("boundary-audit") or "boundary-audit"


def _quiet(argv: Sequence[str], cwd: str | None = None) -> str | None:
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            timeout=60,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            env={k: v for k, v in child_env().items() if not k.startswith("GIT_")},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None


def scanner_identity(scanner: str) -> Json:
    """The scanner's version, its package directory and the git commit of that source."""
    version = _quiet([scanner, "--version"])
    info: Json = {"program": scanner, "version": version, "package": None, "commit": None}
    path = shutil.which(scanner) or scanner
    try:
        with open(path, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace")
    except OSError:
        return info
    if not first.startswith("#!") or "python" not in first:
        return info
    interp = shlex.split(first[2:].strip())
    pkg = _quiet(
        [
            *interp,
            "-c",
            "import boundary_audit, os; print(os.path.dirname(boundary_audit.__file__))",
        ]
    )
    if not pkg:
        return info
    info["package"] = pkg
    top = _quiet(["git", "rev-parse", "--show-toplevel"], cwd=pkg)
    sha = _quiet(["git", "rev-parse", "HEAD"], cwd=pkg) if top else None
    if sha:
        dirty = _quiet(["git", "status", "--porcelain", "--", "boundary_audit"], cwd=top)
        info["commit"] = sha + (" + uncommitted changes" if dirty else "")
    return info


# --- output ----------------------------------------------------------------------------


def fmt(x: float | None) -> str:
    """A ratio with two decimals, or an em dash when undefined."""
    return "—" if x is None else f"{x:.2f}"


HEADER = (
    "| harness | languages | mc labels (2nd-order) | reported | TP | recall | recall w/o 2nd "
    "| precision | lenient | class acc | name-only TP | seen | wall s | CPU s |"
)


def row(name: str, langs: str, s: Score, wall: float | None, cpu: float | None) -> str:
    """One table row."""
    f = s.figures()
    second = s.labels_mc - s.labels_first_order
    w = "" if wall is None else f"{wall:.1f}"
    c = "" if cpu is None else f"{cpu:.1f}"
    return (
        f"| {name} | {langs} | {s.labels_mc} ({second}) | {s.reported} | {s.tp} "
        f"| {fmt(f['recall'])} | {fmt(f['recall_first_order'])} | {fmt(f['precision'])} "
        f"| {fmt(f['precision_lenient'])} | {fmt(f['class_accuracy'])} "
        f"| {s.name_only_tp}/{s.tp} ({fmt(f['name_only_share'])}) | {s.seen}/{s.labels_mc} "
        f"| {w} | {c} |"
    )


def absent_row(name: str, langs: str, doc: Json, what: str) -> str:
    """The row of a harness that was not scored: its label counts and why."""
    mc = [x for x in doc["sinks"] if x["model_controlled"]]
    second = sum(x["second_order"] for x in mc)
    return f"| {name} | {langs} | {len(mc)} ({second}) | {what} |" + " |" * 10


def class_table(s: Score) -> list[str]:
    """Recall per label class."""
    out = ["| class | mc labels | TP | recall |", "|---|---:|---:|---:|"]
    for c in CLASSES:
        if s.labels_by_class[c]:
            n, tp = s.labels_by_class[c], s.tp_by_class[c]
            out.append(f"| {c} | {n} | {tp} | {fmt(ratio(tp, n))} |")
    return out


def select(files: Sequence[Path], only: Sequence[str]) -> list[Path]:
    """The label files `--only` names (file stem, owner/name or name; any case)."""
    if not only:
        return list(files)
    chosen = []
    for want in only:
        w = want.lower().removesuffix(".json")
        hits = [
            p
            for p in files
            if w
            in (p.stem.lower(), p.stem.lower().replace("+", "/"), p.stem.lower().split("+")[-1])
        ]
        if not hits:
            names = ", ".join(p.stem for p in files)
            raise BenchError(f"--only {want!r} names no label file (have: {names})")
        chosen += [p for p in hits if p not in chosen]
    return sorted(chosen)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--mirrors",
        action="append",
        metavar="DIR",
        help=f"where to look for mirrors (repeatable; replaces ${MIRRORS_ENV} and the default)",
    )
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="repeatable")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write every number and list here")
    ap.add_argument("--labels", type=Path, default=LABELS, metavar="DIR")
    ap.add_argument("--scanner", default=None, metavar="PROGRAM", help="boundary-audit to run")
    ap.add_argument("--timeout", type=float, default=1800.0, metavar="SECONDS", help="per scan")
    args = ap.parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M:%S %z")
    load = os.getloadavg()
    try:
        files = select(sorted(args.labels.glob("*.json")), args.only)
        if not files:
            raise BenchError(f"no label files in {args.labels}")
        docs = [(p.stem, load_labels(p)) for p in files]
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    if args.mirrors:
        entries = list(args.mirrors)
    else:
        env = [e for e in os.environ.get(MIRRORS_ENV, "").split(":") if e]
        entries = [*env, *DEFAULT_MIRRORS]
    dirs = git_dirs(entries)
    scanner = args.scanner or default_scanner()
    ident = scanner_identity(scanner)

    command = shlex.join(sys.orig_argv if argv is None else ["bench.py", *argv])
    print(f"command: {command}")
    print(
        f"scanner: {ident['version'] or '(version unknown)'} at {scanner}; "
        f"source {ident['package'] or '?'} commit {ident['commit'] or 'unknown'}"
    )
    print(
        f"started {started}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
    print(f"mirror search: {' '.join(entries)} ({len(dirs)} git directories)")
    print(f"scan: {shlex.join(scan_argv(scanner, Path('MIRROR'), 'PIN'))}")
    print(
        "reported = active (not suppressed), model_controlled, path not under scope_excludes; "
        "name-only = model_evidence 'name' (older reports: confidence low and no 'model "
        "output enters:' origin)"
    )
    print()

    total = Score()
    results: list[Json] = []
    rows: list[str] = []
    missing: list[str] = []
    failed: list[str] = []
    wall_sum = cpu_sum = 0.0
    for name, doc in docs:
        entry: Json = {"name": name, "repo": doc["repo"], "pin": doc["pin"]}
        entry["languages"] = doc["languages"]
        results.append(entry)
        mirror = find_mirror(doc["repo"], doc["pin"], dirs)
        if mirror is None:
            entry["status"] = "missing"
            missing.append(f"{name} ({doc['repo']}@{doc['pin'][:12]})")
            rows.append(absent_row(name, ",".join(doc["languages"]), doc, "**missing**"))
            continue
        entry["mirror"] = str(mirror)
        run = run_scan(scan_argv(scanner, mirror, doc["pin"]), doc["pin"], args.timeout)
        entry["wall_s"], entry["cpu_s"] = round(run.wall_s, 3), round(run.cpu_s, 3)
        wall_sum += run.wall_s
        cpu_sum += run.cpu_s
        print(
            f"scanned {name} from {mirror}: {run.wall_s:.1f} s wall, {run.cpu_s:.1f} s CPU"
            + (f"; FAILED: {run.error}" if run.error else ""),
            file=sys.stderr,
        )
        if run.report is None:
            entry["status"], entry["error"] = "error", run.error
            failed.append(f"{name}: {run.error}")
            rows.append(absent_row(name, ",".join(doc["languages"]), doc, "**scan failed**"))
            continue
        s, lists = score(doc, run.report["findings"])
        total += s
        entry["status"] = "scanned"
        entry["summary"] = run.report["summary"]
        entry["counts"], entry["figures"] = s.counts(), s.figures()
        entry.update(lists)
        rows.append(row(name, ",".join(doc["languages"]), s, run.wall_s, run.cpu_s))

    scanned = len(docs) - len(missing) - len(failed)
    print(
        f"field corpus: {len(docs)} harnesses, {scanned} scored, {len(missing)} missing, "
        f"{len(failed)} failed; matching within {TOLERANCE} lines, one-to-one"
    )
    print()
    print(HEADER)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(r)
    print(row(f"**overall** (micro, {scanned})", "", total, wall_sum, cpu_sum))
    print()
    print("Recall per class, overall (micro):")
    print()
    print("\n".join(class_table(total)))

    print()
    print(
        f"false positives: {total.fp} ({total.fp_model_data} at a model_data label, "
        f"{total.fp_not_model} at another labelled non-model sink, "
        f"{total.fp_unlabelled} unlabelled); "
        f"out of scope: {total.out_of_scope} findings; suppressed in scope: {total.suppressed}"
    )
    for m in missing:
        print(f"missing: {m}: no mirror has the pin")
    for m in failed:
        print(f"failed: {m}")

    if args.json is not None:
        out = {
            "schema": OUT_SCHEMA,
            "command": command,
            "scanner": ident,
            "started": started,
            "load_average": [round(x, 2) for x in load],
            "cpus": os.cpu_count(),
            "tolerance": TOLERANCE,
            "mirror_search": entries,
            "overall": {
                "harnesses": len(docs),
                "scored": scanned,
                "missing": len(missing),
                "failed": len(failed),
                "wall_s": round(wall_sum, 3),
                "cpu_s": round(cpu_sum, 3),
                "counts": total.counts(),
                "figures": total.figures(),
            },
            "harnesses": results,
        }
        try:
            args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            print(f"bench: cannot write {args.json}: {exc}", file=sys.stderr)
            return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
