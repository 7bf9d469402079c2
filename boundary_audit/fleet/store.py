"""The fleet's results store: one file per finished unit, written once, keyed by its inputs.

```
<store>/
  units/<k[:2]>/<key>.json    a finished unit (a run's record, a target's scan or merge)
  errors/<key>.json           the last failure of a unit that could not be carried out
  replies/<sha256>/<name>     every reply file of the plan, copied in (workers read these)
  reports/last.json           the previous run's report (what the next run diffs against)
  logs/                       the cluster's log (Dask's own messages never reach stderr)
```

A unit is written to a temporary file in its directory and *linked* into place: the name
appears only with its whole content, and a unit already there is never overwritten (two
workers finishing the same unit, after a worker was presumed dead and its unit rescheduled,
write equal bytes; the first wins). A killed worker leaves at most a temporary file, which
nothing reads and `sweep` removes (as every run starts, and as a local cluster's run ends).
An error is not a result: its file is replaced on every failure and removed when the unit
later succeeds; a rerun does every unit that has no file under `units/`.

The store holds only what boundary-audit's own workers wrote; it is created mode 0700. A
file that does not parse as a unit of this format is reported as a broken store (exit 4),
never silently redone over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from boundary_audit.errors import BoundaryAuditError, ExitCode

FORMAT = "boundary-audit/fleet-unit/v1"


class StoreError(BoundaryAuditError):
    """The results store cannot be used (unwritable, or a file in it is not ours)."""

    exit_code = ExitCode.INPUT


def unit_key(inputs: dict[str, Any]) -> str:
    """The key of a unit: sha256 of its inputs as canonical JSON."""
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Store:
    """The results store at `root` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def create(self) -> Store:
        """Make the store's directories (0700); raise StoreError if that is not possible."""
        try:
            for sub in ("units", "errors", "replies", "reports", "logs"):
                (self.root / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.root, 0o700)
        except OSError as exc:
            raise StoreError(
                f"{self.root}: cannot create the store: {exc.strerror or exc}"
            ) from None
        return self

    # -- units ------------------------------------------------------------------------------

    def unit_path(self, key: str) -> Path:
        """Where the finished unit `key` lives."""
        return self.root / "units" / key[:2] / f"{key}.json"

    def has(self, key: str) -> bool:
        """True when unit `key` is finished."""
        return self.unit_path(key).is_file()

    def put(self, key: str, inputs: dict[str, Any], result: dict[str, Any]) -> bool:
        """Write unit `key` once; False when it was already there (the first write wins)."""
        path = self.unit_path(key)
        body = {"format": FORMAT, "key": key, "inputs": inputs, "result": result}
        data = json.dumps(body, sort_keys=True, ensure_ascii=False, indent=None).encode("utf-8")
        written = self._link_new(path, data + b"\n")
        with contextlib.suppress(FileNotFoundError):
            (self.root / "errors" / f"{key}.json").unlink()
        return written

    def get(self, key: str) -> dict[str, Any] | None:
        """The result of finished unit `key`, or None; StoreError if its file is not a unit."""
        path = self.unit_path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
        body = self._parse(path, data)
        if body.get("key") != key:
            raise StoreError(f"{path}: holds unit {str(body.get('key'))[:16]}, not {key[:16]}")
        result = body.get("result")
        if not isinstance(result, dict):
            raise StoreError(f"{path}: not a {FORMAT} file (no result)")
        return result

    def _parse(self, path: Path, data: bytes) -> dict[str, Any]:
        try:
            body = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise StoreError(f"{path}: not a {FORMAT} file (not JSON)") from None
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise StoreError(f"{path}: not a {FORMAT} file")
        return body

    def finished(self) -> int:
        """How many units are finished."""
        return sum(1 for _ in (self.root / "units").glob("*/*.json"))

    # -- errors -----------------------------------------------------------------------------

    def put_error(self, key: str, inputs: dict[str, Any], reason: str) -> None:
        """Record the last failure of unit `key` (replaced on every failure)."""
        path = self.root / "errors" / f"{key}.json"
        body = {"format": FORMAT, "key": key, "inputs": inputs, "error": reason}
        self._replace(path, json.dumps(body, sort_keys=True).encode("utf-8") + b"\n")

    def error(self, key: str) -> str | None:
        """The last recorded failure of unit `key`, if it has not succeeded since."""
        path = self.root / "errors" / f"{key}.json"
        try:
            body = self._parse(path, path.read_bytes())
        except FileNotFoundError:
            return None
        return str(body.get("error", ""))

    # -- reply files and reports ------------------------------------------------------------

    def add_reply_file(self, source: Path) -> Path:
        """`source` copied into the store under its content hash (its name kept: a reply set
        is named by its file); the stored path, which every worker can read."""
        digest = file_sha256(source)
        dest = self.root / "replies" / digest / source.name
        if dest.is_file() and file_sha256(dest) == digest:
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._replace(dest, source.read_bytes())
        return dest

    def generated_reply_path(self, name: str, settings_key: str) -> Path:
        """Where `generate` writes the replies of one plan entry (resumed on rerun)."""
        where = self.root / "replies" / f"generated-{settings_key[:16]}"
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        return where / name

    def previous_report(self) -> dict[str, Any] | None:
        """The report the last finished run of this plan wrote, or None."""
        path = self.root / "reports" / "last.json"
        try:
            doc = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StoreError(f"{path}: the previous report cannot be read: {exc}") from None
        return doc if isinstance(doc, dict) else None

    def save_report(self, data: bytes) -> None:
        """Keep `data` as the report the next run diffs against."""
        self._replace(self.root / "reports" / "last.json", data)

    @property
    def log_dir(self) -> Path:
        """The cluster's log directory."""
        return self.root / "logs"

    # -- writing ----------------------------------------------------------------------------

    def _temp(self, directory: Path, data: bytes) -> Path:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
        return Path(name)

    def _link_new(self, path: Path, data: bytes) -> bool:
        try:
            temp = self._temp(path.parent, data)
        except OSError as exc:
            raise StoreError(f"{path.parent}: cannot write: {exc.strerror or exc}") from None
        try:
            os.link(temp, path)
            return True
        except FileExistsError:
            return False
        except OSError as exc:
            raise StoreError(f"{path}: cannot write: {exc.strerror or exc}") from None
        finally:
            with contextlib.suppress(OSError):
                temp.unlink()

    def _replace(self, path: Path, data: bytes) -> None:
        try:
            temp = self._temp(path.parent, data)
            os.replace(temp, path)
        except OSError as exc:
            raise StoreError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def sweep(self) -> int:
        """Remove the temporary files killed writers left; how many."""
        gone = 0
        for temp in self._temps():
            with contextlib.suppress(OSError):
                temp.unlink()
                gone += 1
        return gone

    def _temps(self) -> Iterator[Path]:
        yield from self.root.glob("units/*/.tmp-*.part")
        yield from self.root.glob("errors/.tmp-*.part")
        yield from self.root.glob("reports/.tmp-*.part")

    def clear(self) -> None:
        """Remove every finished unit and error (the reply files and reports stay)."""
        for sub in ("units", "errors"):
            shutil.rmtree(self.root / sub, ignore_errors=True)
            (self.root / sub).mkdir(mode=0o700, exist_ok=True)
