"""The Dask side of a fleet: a local cluster or a scheduler's address, quiet, and owned.

`connect` gives a `distributed.Client`: to `--scheduler tcp://HOST:PORT` (a real cluster,
whose workers must run the same boundary-audit and reach the store's path), else to a
`LocalCluster` of worker *processes* on this machine (`--workers N`, one run batch at a time
each; the runs of a batch go `jobs` at a time through the worker's sandbox). Local workers:

- ignore SIGINT (it is set to ignored while they are spawned and they inherit that), so a
  Ctrl-C at the terminal reaches the client only, which stops scheduling and waits for the
  batches in flight instead of every worker dying mid-run;
- die with the client (distributed's nanny holds a pipe to each worker, which exits when it
  closes), so a `kill -9` of the fleet leaves no worker behind; each worker's own supervisor
  guardian then reaps what its sandboxes left;
- log to `<store>/logs/` (Dask's messages never reach the terminal: the client's go to
  `cluster.log`, each worker's to `worker-PID.log`, `FleetPlugin.setup`) and have no
  dashboard.

The `FleetPlugin` runs in every worker, local or remote: its teardown closes the worker's
sandboxes and transports.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin

from boundary_audit.errors import BoundaryAuditError, ExitCode


class ClusterError(BoundaryAuditError):
    """The scheduler cannot be reached, or the local cluster cannot start."""

    exit_code = ExitCode.ENVIRONMENT


def _quiet(log_dir: Path, name: str = "cluster.log") -> None:
    """Send distributed's and tornado's logs to file `name` of `log_dir`, not the terminal."""
    handler = logging.FileHandler(log_dir / name, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    tops = ("distributed", "tornado", "asyncio", "bokeh")
    # distributed gives some child loggers (`tornado.application`, `distributed.client`)
    # their own stderr handler: those now pass their records up to the file instead
    children = [n for n in list(logging.root.manager.loggerDict) if n.split(".", 1)[0] in tops]
    for name in [*children, *tops]:
        lg = logging.getLogger(name)
        for h in list(lg.handlers):
            lg.removeHandler(h)
        lg.propagate = name not in tops
    for name in tops:
        logging.getLogger(name).addHandler(handler)


class FleetPlugin(WorkerPlugin):
    """Tear down a worker's fleet state (picklable: Dask ships it to every worker)."""

    name = "boundary-audit-fleet"
    idempotent = True

    def __init__(self, log_dir: str | None = None) -> None:
        self.log_dir = log_dir

    def setup(self, worker: Any) -> None:
        """Send the worker's own Dask, tornado and asyncio logs to `<log_dir>/worker-PID.log`:
        a worker process writes to the fleet's stderr, and one that loses its client (a
        Ctrl-C, a closed cluster) logs the tracebacks of its failed callbacks. A worker's
        state is made by its first unit."""
        if self.log_dir is not None:
            with contextlib.suppress(OSError):
                _quiet(Path(self.log_dir), f"worker-{os.getpid()}.log")

    def teardown(self, worker: Any) -> None:
        """Close every plan's sandboxes and transports on this worker."""
        from boundary_audit.fleet.worker import close_all

        close_all()


@contextlib.contextmanager
def connect(scheduler: str | None, workers: int, log_dir: Path) -> Iterator[Any]:
    """A connected `distributed.Client` (see the module docstring); closed on exit."""
    import dask
    import distributed

    _quiet(log_dir)
    dask.config.set(
        {
            "distributed.worker.daemon": False,
            # NOTE: else the scheduler and nannies keep their lock files in the shared
            # /tmp/dask-scratch-space, which anyone can create first (and fill with symlinks)
            "temporary-directory": str(log_dir / "dask"),
            "distributed.scheduler.allowed-failures": 3,
            "distributed.admin.log-format": "%(asctime)s %(name)s %(levelname)s %(message)s",
            "distributed.worker.memory.terminate": False,
            "distributed.comm.timeouts.connect": "30s",
        }
    )
    cluster = None
    try:
        if scheduler:
            try:
                client = distributed.Client(scheduler, timeout="20s", set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"cannot reach the scheduler at {scheduler}: {exc}") from None
        else:
            previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                cluster = distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    scheduler_port=0,
                    host="127.0.0.1",
                    silence_logs=logging.CRITICAL,
                    local_directory=str(log_dir / "dask"),
                )
            except Exception as exc:  # noqa: BLE001 - the cluster's own failures are many
                raise ClusterError(f"cannot start a local cluster: {exc}") from None
            finally:
                signal.signal(signal.SIGINT, previous)
            client = distributed.Client(cluster, set_as_default=False)
        client.register_plugin(FleetPlugin(str(log_dir)), name=FleetPlugin.name)
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.close(timeout=10)
    finally:
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=20)


def worker_count(client: Any) -> int:
    """How many workers the cluster has now."""
    try:
        return len(client.scheduler_info(n_workers=-1).get("workers", {}))
    except Exception:  # noqa: BLE001 - a vanished scheduler is counted as none
        return 0
