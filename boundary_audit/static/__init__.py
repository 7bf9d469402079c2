"""The static stage: find every parser boundary between model output and a process.

`scan_files(files, commit=..., options=ScanOptions())` and `scan_path(root)` return a
`ScanResult` of `Finding`s (sorted), `Skipped` records, the number of files scanned and the
files per language. Checks live in `static/checks/` (registry `CHECKS`), their tree-sitter
queries in `static/queries/<dialect>/`, the dataflow engine in `dataflow.py`.
"""

from __future__ import annotations

from boundary_audit.static.engine import (
    ScanOptions,
    ScanResult,
    SourceFileLike,
    scan_files,
    scan_path,
)

__all__ = ["ScanOptions", "ScanResult", "SourceFileLike", "scan_files", "scan_path"]
