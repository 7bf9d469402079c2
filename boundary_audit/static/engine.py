"""The static scanner's public API: `scan_files` over source files, `scan_path` over a folder.

Files are analysed in a pool of worker processes (`ScanOptions.jobs`; 1 = in-process) and
the results are sorted, so output does not depend on scheduling. Input that cannot be
analysed becomes a `Skipped` record: files skipped upstream, missing data, files above
`max_file_bytes`, binary content, pathological nesting, and (defensively) any internal
error on one file, which never stops the scan. Nothing from the scanned tree is executed.
Files out of a reviewer's scope (`scope.py`: tests, docs, examples...) are counted and
not analysed, unless `ScanOptions.scope` is False.
The scanned files are the cross-file corpus (`crossfile`), so a parameter can be traced to
callers in other files: installed in-process, or built and prepared (its per-family tables)
in the parent and inherited by every worker (`crossfile.adopt`) with the files themselves:
a worker is sent the indices of the files to analyse, never their bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from boundary_audit.errors import ScanError
from boundary_audit.finding import Finding, Skipped
from boundary_audit.static import crossfile
from boundary_audit.static.analyze import FileResult, analyze_file, plan, warm
from boundary_audit.static.parsing import detect_language
from boundary_audit.static.scope import in_scope

if TYPE_CHECKING:
    import multiprocessing.context


class SourceFileLike(Protocol):
    """What the scanner needs from a file: `source.SourceFile` satisfies it."""

    @property
    def path(self) -> str: ...  # noqa: D102
    @property
    def data(self) -> bytes | None: ...  # noqa: D102
    @property
    def skipped(self) -> str | None: ...  # noqa: D102


@dataclass(frozen=True)
class ScanOptions:
    """How to scan."""

    include_constant: bool = False
    """Also report constant commands and fixed programs with data-only arguments."""
    no_ignores: bool = False
    """Disregard inline `boundary-audit: ignore[...]` suppressions."""
    jobs: int = 2
    """Worker processes; 1 analyses in-process."""
    max_file_bytes: int = 2 * 1024 * 1024
    """Files larger than this are skipped."""
    scope: bool = True
    """Leave out what a reviewer leaves out (tests, docs, examples, benchmarks, vendored code:
    `static/scope.py`); False reads every file (`--include-tests`)."""


@dataclass(frozen=True)
class ScanResult:
    """What a scan found."""

    findings: tuple[Finding, ...]
    """Sorted by `Finding.sort_key`."""
    skipped: tuple[Skipped, ...]
    """Sorted by path, then reason."""
    files_scanned: int
    languages: dict[str, int] = field(default_factory=dict)
    """Number of scanned files per language."""
    out_of_scope: int = 0
    """Files of a scanned language that scope left out (not analysed)."""


@dataclass(frozen=True)
class _Plain:
    path: str
    data: bytes | None
    skipped: str | None = None


_Work = tuple[str, bytes, str]


def _prepare(
    files: Iterable[SourceFileLike], max_bytes: int, scope: bool
) -> tuple[list[_Work], list[Skipped], int]:
    work: list[_Work] = []
    skipped: list[Skipped] = []
    out_of_scope = 0
    for f in files:
        if scope and not in_scope(f.path):
            head = f.data[:256] if f.data is not None else b""
            out_of_scope += detect_language(f.path, head) is not None
            continue
        if f.skipped is not None:
            skipped.append(Skipped(f.path, f.skipped))
            continue
        if f.data is None:
            skipped.append(Skipped(f.path, "no content"))
            continue
        lang = detect_language(f.path, f.data[:256])
        if lang is None:
            continue
        if len(f.data) > max_bytes:
            skipped.append(Skipped(f.path, f"too large ({len(f.data)} bytes > {max_bytes})"))
            continue
        if b"\0" in f.data[:8192]:
            skipped.append(Skipped(f.path, "binary"))
            continue
        work.append((f.path, f.data, lang))
    return work, skipped, out_of_scope


def _run_one(item: _Work, commit: str | None, options: ScanOptions) -> FileResult:
    path, data, lang = item
    try:
        return analyze_file(
            path,
            data,
            lang,
            commit=commit,
            include_constant=options.include_constant,
            no_ignores=options.no_ignores,
        )
    except Exception as exc:  # noqa: BLE001 - one file's failure must not stop the scan
        return FileResult(skipped=Skipped(path, f"analysis error: {type(exc).__name__}: {exc}"))


_WORK: list[_Work] = []
"""In a worker, the scan's files (inherited from the parent, or given once at its start):
the chunks it is sent are indices into it, so no file's bytes cross the pipe."""


def _adopt(corpus: crossfile.Corpus, work: list[_Work]) -> None:
    """A worker's start: the parent's corpus and files, inherited when forked."""
    global _WORK
    crossfile.adopt(corpus)
    _WORK = work


def _run_chunk(chunk: list[int], commit: str | None, options: ScanOptions) -> list[FileResult]:
    return [_run_one(_WORK[i], commit, options) for i in chunk]


MIN_CHUNK_BYTES = 64 * 1024
"""The smallest chunk's bytes: below it a chunk's round trip to a worker costs more than
the balance it buys."""


def _chunks(work: list[_Work], jobs: int) -> list[list[int]]:
    """Indices into `work`, in chunks in the order to hand them out (guided scheduling):
    the largest files first, each chunk about a `4 * jobs`-th of the bytes still left, so
    the chunks shrink towards the end and the workers, each taking the next chunk when it is
    done, finish together. Equal chunks dealt out at once left one worker alone with the
    heavy files: 2.1 s of a 7.6 s scan of openai-agents-python@7f7a44f with 2 workers."""
    costs = [512 + len(data) for _, data, _ in work]
    left = sum(costs)
    chunks: list[list[int]] = []
    chunk: list[int] = []
    size = 0
    for i in sorted(range(len(work)), key=lambda i: (-costs[i], work[i][0])):
        chunk.append(i)
        size += costs[i]
        if size >= max(left // (4 * jobs), MIN_CHUNK_BYTES):
            chunks.append(chunk)
            left -= size
            chunk, size = [], 0
    if chunk:
        chunks.append(chunk)
    return chunks


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


MIN_PARALLEL_BYTES = 256 * 1024
"""The fewest bytes of source a scan shares out to worker processes: below it the workers'
start costs more than the share of the analysis they take. self-operating-computer@fac568e
(87 KB): 0.47 s of CPU with 2 workers against 0.36 s in one process, the same 0.38 s wall;
SWE-agent@3ea751c (0.64 MB): 0.67 s wall with 2 workers against 0.76 s in one."""


def _analyse(work: list[_Work], commit: str | None, options: ScanOptions) -> list[FileResult]:
    corpus = {path: (lang, data) for path, data, lang in work}
    small = len(work) < 4 or sum(len(data) for _, data, _ in work) < MIN_PARALLEL_BYTES
    if options.jobs <= 1 or small:
        for lang in sorted({lang for _, _, lang in work}):
            plan(lang, [data for _, data, lg in work if lg == lang])
        crossfile.install(corpus)
        try:
            return [_run_one(item, commit, options) for item in work]
        finally:
            crossfile.install({})
    chunks = _chunks(work, options.jobs)
    # NOTE(h2): load once, before forking, what every worker would load for itself on first
    # use, so that the workers inherit it: each language's query bundles (those the byte
    # prefilters say some file will run), extractor and catalogue tables (`analyze.warm`),
    # and the corpus's cross-file tables (`Corpus.prepare`).
    for lang in sorted({lang for _, _, lang in work}):
        warm(lang, [data for _, data, lg in work if lg == lang])
    shared = crossfile.Corpus(corpus)
    shared.prepare()
    # NOTE: imported here: a scan of fewer than 4 files (or with one job) never forks, and
    # the pool's modules cost a small scan's start-up more than its analysis.
    from concurrent.futures import ProcessPoolExecutor

    try:
        with ProcessPoolExecutor(
            max_workers=options.jobs,
            mp_context=_pool_context(),
            initializer=_adopt,
            initargs=(shared, work),
        ) as pool:
            # NOTE(h2): a chunk is its files' indices: pickled with their bytes, the first
            # chunks (each about an eighth of the corpus) were held twice in the parent's
            # queue and twice in the worker while it unpickled them.
            futures = [pool.submit(_run_chunk, c, commit, options) for c in chunks]
            results: list[FileResult | None] = [None] * len(work)
            for chunk, fut in zip(chunks, futures):
                for i, result in zip(chunk, fut.result()):
                    results[i] = result
    except OSError as exc:
        raise ScanError(f"cannot start scan workers: {exc}") from exc
    done = [r for r in results if r is not None]
    assert len(done) == len(work), "a chunk came back short"
    return done


RELEASE_BYTES = 8 * 1024 * 1024
"""A corpus at least this large is given back to the system once the scan is done."""


def release_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`; elsewhere
    nothing). A file's bytes are allocated from the C heap, and freeing them leaves holes
    that the interpreter's small objects (allocated in their own arenas) never reuse: the
    report of an 84 MB tree's 3036 findings, built after the scan, raised the process's peak
    by 17-30 MiB over the corpus it had freed, and by nothing once the holes were returned."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def scan_files(
    files: Iterable[SourceFileLike], *, commit: str | None, options: ScanOptions = ScanOptions()
) -> ScanResult:
    """Scan source files (paths relative to the repository root) at `commit`."""
    work, skipped, out_of_scope = _prepare(files, options.max_file_bytes, options.scope)
    results = _analyse(work, commit, options)
    languages: dict[str, int] = {}
    for _, _, lang in work:
        languages[lang] = languages.get(lang, 0) + 1
    size, count = sum(len(data) for _, data, _ in work), len(work)
    del work  # the corpus: nothing else holds its bytes now
    if size >= RELEASE_BYTES:
        release_freed_memory()
    findings = [f for r in results for f in r.findings]
    skipped += [r.skipped for r in results if r.skipped is not None]
    scanned = count - sum(1 for r in results if r.skipped is not None)
    return ScanResult(
        tuple(sorted(findings, key=lambda f: f.sort_key)),
        tuple(sorted(skipped)),
        scanned,
        dict(sorted(languages.items())),
        out_of_scope,
    )


def iter_tree(root: Path, max_bytes: int) -> list[_Plain]:
    """Files below `root` (sorted, `.git` excluded, symlinks recorded as skipped, not followed)."""
    out: list[_Plain] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if d != ".git" and not (Path(dirpath) / d).is_symlink()
        )
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                out.append(_Plain(rel, None, "symlink"))
                continue
            try:
                size = full.stat().st_size
                if size > max_bytes:
                    if detect_language(rel) is not None:
                        out.append(_Plain(rel, None, f"too large ({size} bytes > {max_bytes})"))
                    continue
                out.append(_Plain(rel, full.read_bytes()))
            except OSError as exc:
                out.append(_Plain(rel, None, f"unreadable: {exc.strerror}"))
    return out


def scan_path(
    root: Path, *, commit: str | None = None, options: ScanOptions = ScanOptions()
) -> ScanResult:
    """Scan the files of a plain directory (for tests and benchmarks)."""
    if not root.is_dir():
        raise ScanError(f"not a directory: {root}")
    files = [
        f
        for f in iter_tree(root, options.max_file_bytes)
        if f.data is None or detect_language(f.path, f.data[:256]) is not None
    ]
    return scan_files(files, commit=commit, options=options)
