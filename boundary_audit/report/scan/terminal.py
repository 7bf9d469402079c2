"""The default output: one screen that answers "which boundary, how bad, how to fix".

One line per active finding: its number, class, `path:line`, contract, the damage over the
core tasks through its derived path (a range when a fact of the path is open), and the fix
applied to the path and measured (`quote R → 0.0 pp`). A finding that is not a model
boundary says so in place of the numbers. Under the table: boundary tasks (the families
hostile to one class by design) apart from the damage, the runs that could not be carried
out (never damage), what could not be measured here, and one count line of skipped files
(`--show-skipped` lists them). `--details` adds, per finding, the derived path and where each
of its facts comes from, every route and reply set with the per-family breakdown, the fix,
the adapter comparison, and the probes.

Every line fits the width: columns are sized to it, a long path loses leading directories
(`…/docker/_docker_code_executor.py:296`), never a token in its middle, and prose is wrapped
at spaces. Rendered through `console.isolated_console`, so only `color` and `width` change
the text.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable

from rich.text import Text

from boundary_audit.finding import Evidence, Finding
from boundary_audit.report.console import isolated_console
from boundary_audit.results.scan import (
    BoundaryRow,
    Range,
    ScanReport,
    boundary_rows,
    damage_range,
    plural,
)

MIN_WHERE = 16
"""The narrowest the `where` column gets (the file name and line stay whole)."""
GOOD_WHERE = 36
"""A `where` column this wide keeps the fix's name beside its damage; narrower, the name goes
(to --details) before the path does."""
_STYLE = {"measured": "", "not-model": "dim", "static": "", "not-measured": "yellow"}


def fit_path(where: str, width: int) -> str:
    """`where` (`path:line`) in at most `width` columns, dropping leading directories; the
    file name and line stay whole even when they alone are wider."""
    if len(where) <= width:
        return where
    parts = where.split("/")
    keep = [parts[-1]]
    for part in reversed(parts[:-1]):
        if len("…/" + "/".join([part, *keep])) > width:
            break
        keep.insert(0, part)
    short = "…/" + "/".join(keep)
    return short if len(short) <= width else parts[-1]


def _where(f: Finding) -> str:
    return f"{f.primary.path}:{f.primary.start_line}"


def _damage(row: BoundaryRow) -> str:
    if row.status == "measured" and row.damage is not None:
        return row.damage.text()
    if row.status == "error":
        return "error"
    if row.status == "not-measured":
        return "not measured"
    if row.status == "static":
        return "not probed"
    return ""


def _fix(row: BoundaryRow, width: int) -> str:
    if row.status == "static":
        path = row.finding.boundary_path
        return "" if path is None else (row.fix_short or ("none needed" if not path.fix else ""))
    if row.status not in ("measured", "error"):
        return ""
    if not row.fix:
        return "none needed"
    after = row.fixed.text() if row.fixed is not None else "not measured"
    full = f"{row.fix_short} → {after}"
    return full if len(full) <= width else f"→ {after}"


def _clip(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0]
    return cut + "…"


class TerminalFormat:
    """`--format terminal` (the default)."""

    def __init__(
        self,
        *,
        color: bool = False,
        width: int = 120,
        details: bool = False,
        show_skipped: bool = False,
    ) -> None:
        self.color = color
        self.width = max(60, width)
        self.details = details
        self.show_skipped = show_skipped

    def render(self, report: ScanReport) -> str:
        """Header, one line per boundary, the notes under it, and (with details) the blocks."""
        buf = io.StringIO()
        out = isolated_console(buf, width=self.width, color=self.color)
        for line in self.lines(report):
            out.print(line, soft_wrap=True)
        return buf.getvalue()

    # -- layout -------------------------------------------------------------------------------
    def wrap(self, text: str, indent: str = "", first: str = "") -> list[str]:
        """`text` wrapped at spaces to the width (long tokens are not broken)."""
        return textwrap.wrap(
            text,
            self.width,
            initial_indent=first or indent,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [first.rstrip()]

    def lines(self, report: ScanReport) -> list[Text | str]:
        """Every line of the report."""
        out: list[Text | str] = []
        sha = (report.commit or "(no commit)")[:12]
        out += [
            Text(
                _clip(
                    f"boundary-audit {report.tool_version} · {report.target_name} @ {sha}",
                    self.width,
                ),
                style="bold",
            )
        ]
        out += self.wrap(self._files(report))
        if report.probe is not None:
            out += self.wrap(self._measured(report))
        rows = boundary_rows(report)
        out.append("")
        out += self._table(rows) if rows else ["no active findings"]
        out.append("")
        out += self._notes(report, rows)
        if self.details:
            for i, row in enumerate(rows, start=1):
                out.append("")
                out += self._details(report, row, i)
        return out

    def _files(self, report: ScanReport) -> str:
        s = report.summary
        langs = ", ".join(f"{k} {v}" for k, v in report.languages.items())
        text = f"{plural(s.files_scanned, 'file')} scanned" + (f" ({langs})" if langs else "")
        if s.files_out_of_scope:
            text += f", {s.files_out_of_scope} left out by scope"
        if report.skipped:
            kinds: dict[str, int] = {}
            for k in report.skipped:
                key = k.reason.split(" (", 1)[0].split(":", 1)[0]
                kinds[key] = kinds.get(key, 0) + 1
            why = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
            more = "" if self.show_skipped else "; --show-skipped lists them"
            text += f"; {len(report.skipped)} skipped ({why}){more}"
        return text

    def _measured(self, report: ScanReport) -> str:
        p = report.probe
        assert p is not None
        extra = p.tasks - p.core
        where = report.sandbox.split(" (", 1)[0] if report.sandbox else "the sandbox"
        others = ", ".join(p.reply_sets[1:])
        return (
            f"damage: pass(path) − pass(bash -c R) over {p.core} core tasks, families weighted "
            f"equally, {p.reply_sets[0] if p.reply_sets else ''} replies"
            + (f" ({others} in --details)" if others else "")
            + (f"; {plural(extra, 'boundary task')} apart" if extra else "")
            + f"; replies ran in {where}"
        )

    def _table(self, rows: tuple[BoundaryRow, ...]) -> list[Text | str]:
        num = len(str(len(rows))) + 3
        cls = max(len("class"), *(len(r.finding.boundary_class.value) for r in rows))
        con = max(len("contract"), *(len(r.finding.contract.value) for r in rows))
        dmg = max(len("damage"), *(len(_damage(r)) for r in rows))
        fixes = [_fix(r, 10**6) for r in rows]
        fix_full = max(len("fix → after"), *(len(x) for x in fixes))
        fix_min = max(len("fixed"), *(len(_fix(r, 0)) for r in rows))
        fixed = num + cls + con + dmg + 4
        widest = max(len(_where(r.finding)) for r in rows)
        names = max(len(_where(r.finding).rsplit("/", 1)[-1]) for r in rows)
        room = self.width - fixed - 1
        if room - fix_full >= min(widest, GOOD_WHERE):
            where_w = min(widest, room - fix_full)
        else:
            where_w = max(MIN_WHERE, names, min(widest, room - fix_min))
        fix_w = max(fix_min, self.width - fixed - where_w - 1)
        label = "fix → after" if fix_w >= fix_full else "fixed"
        head = (
            f"{'#':<{num}}{'class':<{cls}} {'where':<{where_w}} {'contract':<{con}} "
            f"{'damage':>{dmg}} {label}"
        )
        out: list[Text | str] = [Text(_clip(head, self.width), style="bold")]
        for i, row in enumerate(rows, start=1):
            f = row.finding
            lead = (
                f"{f'[{i}]':<{num}}{f.boundary_class.value:<{cls}} "
                f"{fit_path(_where(f), where_w):<{where_w}} {f.contract.value:<{con}} "
            )
            if row.status == "not-model":
                tail = next(
                    (t for t in (row.why, row.short) if t and len(t) <= self.width - len(lead)),
                    "not a model boundary",
                )
                out.append(Text(lead + tail, style="dim"))
                continue
            line = Text(lead)
            style = "bold red" if row.damage is not None and row.damage.low < 0 else ""
            line.append(f"{_damage(row):>{dmg}}", style=style or _STYLE.get(row.status, ""))
            fix = _fix(row, fix_w)
            if fix:
                line.append(" " + _clip(fix, fix_w), style="green" if "→ 0.0 pp" in fix else "")
            out.append(line)
        return out

    def note(self, text: str) -> list[str]:
        """A note under the table: wrapped, its continuation lines indented."""
        return textwrap.wrap(
            text,
            self.width,
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )

    def _notes(self, report: ScanReport, rows: tuple[BoundaryRow, ...]) -> list[Text | str]:
        out: list[Text | str] = []
        s = report.summary
        model = sum(1 for r in rows if r.status != "not-model")
        counts = (
            f"{plural(s.active, 'active finding')}: {model} model "
            f"{'boundary' if model == 1 else 'boundaries'}, {s.active - model} not"
        )
        if s.suppressed:
            by = ", ".join(f"{n} {k}" for k, n in s.suppressed_by.items() if n)
            counts += f"; {s.suppressed} suppressed ({by})"
        if s.filtered:
            counts += f"; {s.filtered} below threshold"
        out += self.note(counts)
        broke = [(i, r) for i, r in enumerate(rows, start=1) if r.boundary_broken]
        if broke:
            parts = ", ".join(
                f"[{i}] {len(r.boundary_broken)}/{r.boundary_tasks}" for i, r in broke
            )
            out += self.note(
                f"boundary tasks that break (hostile to one class by design, not in the damage): "
                f"{parts}"
            )
        if report.probe is not None and report.probe.errors:
            p = report.probe
            first = p.errors[0]
            out += [
                Text(line, style="bold yellow")
                for line in self.note(
                    f"errors: {plural(p.error_runs, 'run')} could not be carried out, left out "
                    f"of the pass rates and the damage (exit 6): {first.transport}: "
                    f"{first.reason}"
                    + (f" (and {len(p.errors) - 1} more transports)" if len(p.errors) > 1 else "")
                )
            ]
        if report.probe is not None:
            for label, why in report.probe.not_measured:
                out += self.note(f"not measured here: {label}: {why}")
        hinted = [
            i
            for i, r in enumerate(rows, start=1)
            if r.finding.boundary_path is not None and r.finding.boundary_path.hinted
        ]
        if hinted:
            out += self.note(
                "path from the sink's text (the analysis holds no fact of the transport): "
                + ", ".join(f"[{i}]" for i in hinted)
            )
        matched = [(i, r) for i, r in enumerate(rows, start=1) if r.adapter is not None]
        for i, r in matched:
            assert r.adapter is not None
            differ = [c.field for c in r.adapter.differing]
            same = len(r.adapter.fields) - len(differ)
            theirs = f" {r.adapter_damage.text()}" if r.adapter_damage is not None else ""
            out += self.note(
                f"Table 8's {r.adapter.label}{theirs} is the same code as [{i}]: "
                f"{same}/{len(r.adapter.fields)} fields agree"
                + (f"; differs: {', '.join(differ)} (--details)" if differ else "")
            )
        if self.show_skipped and report.skipped:
            out.append(f"skipped ({len(report.skipped)}):")
            out += [Text(_clip(f"  {k.path}: {k.reason}", self.width)) for k in report.skipped]
        if not self.details:
            out += self.note(
                "--details: the derived paths, every route and reply set by family, "
                "the fixes, the probes"
            )
        return out

    # -- details ------------------------------------------------------------------------------
    def _details(self, report: ScanReport, row: BoundaryRow, i: int) -> list[Text | str]:
        f = row.finding
        out: list[Text | str] = [
            Text(line, style="bold")
            for line in self.wrap(
                f"[{i}] {f.code} {f.name} at {fit_path(f.primary.anchor(), self.width - 4)}",
                "    ",
            )
        ]
        ind = "    "
        out += self.wrap(f.message, ind, ind)
        out += self.wrap(
            f"severity {f.severity.value}, confidence {f.confidence.value}, sink "
            f"`{f.sink or '?'}`, sanitizer {f.sanitizer or 'none'}",
            ind,
            ind,
        )
        path = f.boundary_path
        if path is None:
            if not f.model_controlled:
                out += self.wrap(row.why, ind, ind)
            return out
        routes = " | ".join(
            _route(r.transport.label(), [s.label() for s in r.preprocess], r.assumes)
            for r in path.routes
        )
        out += self.wrap(
            f"path: {routes}; {path.shell_parses} shell "
            f"parse{'' if path.shell_parses == 1 else 's'}",
            ind,
            ind,
        )
        out += self.wrap("layers: " + " → ".join(path.parse_layers), ind, ind)
        for fact in path.facts:
            where = f" ({fact.where})" if fact.where else ""
            out += self.wrap(
                f"{fact.field}: {fact.value} [{fact.source}]{where}", ind + "  ", ind + "- "
            )
        for note in path.notes:
            out += self.wrap(f"note: {note}", ind + "  ", ind + "- ")
        if path.unmeasurable:
            out += self.wrap(f"not measured: {path.unmeasurable}", ind, ind)
        for ev_line in _evidence_lines(f.evidence):
            out += self.wrap(ev_line, ind + "  ", ind)
        if path.fix:
            out += self.wrap(f"fix: {path.fix}", ind, ind)
            fixed = " | ".join(
                _route(r.transport.label(), [s.label() for s in r.preprocess], r.assumes)
                for r in path.fixed
            )
            out += self.wrap(f"fixed path: {fixed}", ind, ind)
        else:
            out += self.wrap("fix: none needed at this boundary", ind, ind)
        if row.adapter is not None:
            out += self.wrap(f"Table 8's path {row.adapter.label}:", ind, ind)
            for c in row.adapter.fields:
                mark = "=" if c.same else "≠"
                text = (
                    f"{c.field}: scan {c.scan or '(none)'} {mark} adapter {c.adapter or '(none)'}"
                )
                if c.note:
                    text += f" — {c.note}"
                out += self.wrap(text, ind + "    ", ind + "  ")
        prints = _probe_lines(report, f)
        if prints:
            out += self.wrap("probes vs bash -c R: " + prints, ind, ind)
        return out


def _route(transport: str, steps: list[str], assumes: str) -> str:
    text = transport + (f" after {', '.join(steps)}" if steps else "")
    return text + (f" ({assumes})" if assumes else "")


def _evidence_lines(evs: Iterable[Evidence]) -> list[str]:
    out = []
    for ev in evs:
        role = {"path": "path", "fix": "fixed", "adapter": "Table 8"}.get(ev.role, ev.role)
        route = f" ({ev.route})" if ev.route else ""
        if not ev.measured:
            out.append(
                f"{role}{route}, {ev.reply_set}: not measured, {plural(ev.errors, 'error run')}"
                f": {ev.error}"
            )
            continue
        rng = Range(ev.damage_pp, ev.damage_pp).text()
        fam = ", ".join(f"{name} {_pts(p)}" for name, p in ev.families)
        text = (
            f"{role}{route}, {ev.reply_set}: {rng} ({ev.passed_raw}/{ev.tasks} → "
            f"{ev.passed_boundary}/{ev.tasks})" + (f"; {fam}" if fam else "")
        )
        if ev.boundary_broken:
            text += (
                f"; boundary tasks {len(ev.boundary_broken)}/{ev.boundary_tasks} break: "
                + ", ".join(ev.boundary_broken)
            )
        if ev.errors:
            text += f"; {plural(ev.errors, 'error run')} left out ({ev.error})"
        out.append(text)
    return out


def _pts(p: float) -> str:
    return Range(p, p).text("")


def _probe_lines(report: ScanReport, f: Finding) -> str:
    base = {x.probe: x for x in report.probe_facts.get("raw", ())}
    parts: list[str] = []
    for ev in f.evidence:
        if ev.role != "path" or ev.transport not in report.probe_facts:
            continue
        if any(ev.transport in p for p in parts):
            continue
        facts = report.probe_facts[ev.transport]
        diff = [
            f"{x.probe}={x.outcome if x.outcome != 'unexpected' else repr(x.value)}"
            for x in facts
            if base.get(x.probe) is None or base[x.probe].outcome != x.outcome
        ]
        parts.append(f"{ev.transport}: {', '.join(diff) or 'same as bash -c'}")
    return "; ".join(parts)


__all__ = ["TerminalFormat", "damage_range", "fit_path"]
