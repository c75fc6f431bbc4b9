"""Running the certification of a checkpoint's kernels: serially, in a process pool, or
as tasks on a Dask cluster, with every finished task written to an output directory.

A task is one group of heads of one module (:class:`Task`); the groups depend only on the
module (at most ``GROUPS`` per module), never on the number of workers, and every kernel
is certified on its own, so the result is the same, byte for byte, whatever runs it and
in whatever order the tasks finish.  A task returns a :class:`ModuleKernels` holding
float64 arrays and plain values: exact binary numbers, no FLINT object (python-flint's
balls do not pickle, and FLINT's precision is a process-wide global, so every task runs
in a worker process of its own).

With an output directory, each finished task is written atomically as
``<key>.npz`` (the arrays) and ``<key>.json`` (the entry, the task's input digest and the
arrays' digest); a later run with the same directory skips every task whose files are
there and verify.  An interrupted run leaves only complete files.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from ..io.atomic import atomic_write
from .certify import ModuleKernels, certify_module, module_channels
from .layouts import KernelModule

#: at most this many head groups per module (tasks), whatever the number of workers
GROUPS = 16
#: a diagonal module's groups hold at least this many kernel entries (where it has them)
GROUP_ENTRIES = 1 << 22
TASK_FORMAT = "s4cert.model-task/1"


@dataclass
class Task:
    """One group of heads of one module, with everything needed to certify it."""

    index: int          # the module's position in the checkpoint
    module: KernelModule
    L: int
    eps: float | None
    max_prec: int
    heads: list[int]
    arithmetic: str = "auto"

    @property
    def key(self) -> str:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", self.module.prefix or "kernel")
        return f"{self.index:03d}-{name}.heads-{self.heads[0]}-{self.heads[-1]}"

    def digest(self) -> str:
        """A digest of the task's inputs: the module's tensors, settings and the options."""
        h = hashlib.sha256()
        for name in sorted(self.module.tensors):
            a = np.ascontiguousarray(self.module.tensors[name])
            h.update(f"{name}:{a.dtype.str}:{a.shape}:".encode())
            h.update(a.tobytes())
        meta = {"layout": self.module.layout, "settings": self.module.settings, "L": self.L,
                "eps": self.eps, "max_prec": self.max_prec, "heads": self.heads, "arithmetic": self.arithmetic}
        h.update(json.dumps(meta, sort_keys=True).encode())
        return h.hexdigest()


def run_task(task: Task) -> ModuleKernels:
    """Certify one task (the function the workers run)."""
    return certify_module(task.module, task.L, task.eps, max_prec=task.max_prec, heads=task.heads,
                          arithmetic=task.arithmetic)


def head_groups(H: int, entries_per_head: int = 0) -> list[list[int]]:
    """Contiguous groups of heads, at most GROUPS of them (independent of the workers).

    With ``entries_per_head`` (channels times L, for a module certified in one vectorized
    pass per group: a diagonal one, or a DPLR one set up on arrays), a group holds at
    least GROUP_ENTRIES kernel entries where the module has that many, as the pass's fixed
    cost would repeat per group (a module whose heads are set up or certified one by one
    passes 0: its cost per head is large enough to split finely)."""
    groups = min(H, GROUPS)
    if entries_per_head > 0:
        groups = max(1, min(groups, H * entries_per_head // GROUP_ENTRIES))
    size = -(-H // groups)
    return [list(range(a, min(H, a + size))) for a in range(0, H, size)]


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz archive whose bytes depend only on the arrays (fixed zip timestamps)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for name in sorted(arrays):
            data = io.BytesIO()
            np.lib.format.write_array(data, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, data.getvalue())
    return buf.getvalue()


def _task_files(out_dir: str, task: Task) -> tuple[str, str]:
    base = os.path.join(out_dir, task.key)
    return base + ".json", base + ".npz"


def save_task(out_dir: str, task: Task, res: ModuleKernels) -> None:
    """Write a finished task atomically (both files, or neither)."""
    arrays = {"mid": res.mid, "rad": res.rad} if res.mid is not None else {}
    if res.mid is not None and res.mid_exact is not None:
        arrays |= {"mid_exact": res.mid_exact, "rad_exact": res.rad_exact}
    data = npz_bytes(arrays)
    doc = {"format": TASK_FORMAT, "task": task.digest(), "arrays": hashlib.sha256(data).hexdigest(),
           "entry": res.entry(), "info": {k: v for k, v in res.info.items() if k != "compare"}}
    meta, npz = _task_files(out_dir, task)
    atomic_write([(npz, data), (meta, (json.dumps(doc, indent=1, allow_nan=True) + "\n").encode())])


def load_task(out_dir: str, task: Task) -> ModuleKernels | None:
    """A finished task from the directory, or None when it is missing or does not verify."""
    meta, npz = _task_files(out_dir, task)
    try:
        with open(meta, "rb") as f:
            doc = json.loads(f.read(1 << 20))
        with open(npz, "rb") as f:
            data = f.read()
        if (doc.get("format") != TASK_FORMAT or doc.get("task") != task.digest()
                or doc.get("arrays") != hashlib.sha256(data).hexdigest()):
            return None
        e = doc["entry"]
        res = ModuleKernels(prefix=e["prefix"], layout=e["layout"], kind=e["kind"], disc=e["disc"],
                            channels=e["channels"], H=e["H"], N=e["N"], L=e["L"], assumed=e["assumed"],
                            settings=e["settings"], status=e["status"], reason=e["reason"], eps=e["eps"],
                            max_rad=e["max_rad"], precision_bits=e["precision_bits"], info=doc.get("info", {}))
        if "mid.npy" in zipfile.ZipFile(io.BytesIO(data)).namelist():
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                res.mid, res.rad = z["mid"], z["rad"]
                if "mid_exact" in z.files:
                    res.mid_exact, res.rad_exact = z["mid_exact"], z["rad_exact"]
        return res
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        return None


class Runner:
    """Where the tasks run: ``serial``; with ``workers`` > 1 a Dask ``LocalCluster`` of that
    many single-threaded worker processes (``dask-local``), or a local process ``pool``
    when Dask is not installed; with ``scheduler`` an existing Dask cluster (``dask``)."""

    def __init__(self, workers: int = 1, scheduler: str | None = None):
        self.workers, self.scheduler = workers, scheduler
        if scheduler is not None:
            self.kind = "dask"
            dask_client(scheduler)  # fails early (ValueError) when Dask is missing or unreachable
        elif workers > 1:
            self.kind = "dask-local" if _have_dask() else "pool"
        else:
            self.kind = "serial"

    def run(self, tasks: list[Task]) -> Iterator[tuple[int, ModuleKernels]]:
        """(position in ``tasks``, result) as the tasks finish."""
        if not tasks:
            return
        if self.kind == "serial":
            for i, t in enumerate(tasks):
                yield i, run_task(t)
        elif self.kind == "dask-local":
            from distributed import Client

            with local_cluster(self.workers) as cluster, Client(cluster, set_as_default=False) as client:
                yield from _run_dask(client, tasks)
        elif self.kind == "pool":
            with ProcessPoolExecutor(max_workers=min(self.workers, len(tasks))) as pool:
                futures = {pool.submit(run_task, t): i for i, t in enumerate(tasks)}
                for f in as_completed(futures):
                    yield futures[f], f.result()
        else:
            yield from _run_dask(dask_client(self.scheduler), tasks)


_CLIENTS: dict[str, Any] = {}


def _have_dask() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def dask_client(address: str):
    """A dask.distributed client for ``address`` (cached per process); ValueError when the
    optional dependency is missing or the scheduler cannot be reached."""
    if address in _CLIENTS:
        return _CLIENTS[address]
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs Dask: pip install \"s4cert[dask]\"") from None
    try:
        client = Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ValueError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    _CLIENTS[address] = client
    return client


def _run_dask(client, tasks: list[Task]) -> Iterator[tuple[int, ModuleKernels]]:
    from distributed import as_completed as dask_completed

    # unique keys (pure=False): a rerun must not meet the keys of an earlier run's futures
    futures = [client.submit(run_task, t, pure=False, retries=3) for t in tasks]
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for f in dask_completed(futures, loop=client.loop):
            yield index[f.key], f.result()
    finally:  # an interrupted run leaves no work queued on the cluster
        for f in futures:
            if not f.done():
                f.cancel()


def local_cluster(workers: int):
    """A LocalCluster of ``workers`` single-threaded worker processes."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                        silence_logs=50)


def run_all(tasks: list[Task], runner: Runner, out_dir: str | None = None,
            progress: Callable[[int, int, float], None] | None = None) -> tuple[list[ModuleKernels], dict]:
    """Every task's result (in task order), reusing and writing ``out_dir``; and counts
    of what was computed and what was reused."""
    results: list[ModuleKernels | None] = [None] * len(tasks)
    todo = []
    for i, t in enumerate(tasks):
        done = load_task(out_dir, t) if out_dir else None
        if done is not None:
            results[i] = done
        else:
            todo.append(i)
    size = [len(t.heads) * module_channels(t.module) for t in tasks]
    total = sum(size)
    finished = sum(size[i] for i in range(len(tasks)) if results[i] is not None)
    t0 = time.perf_counter()
    if progress:
        progress(finished, total, 0.0)
    for j, res in runner.run([tasks[i] for i in todo]):
        i = todo[j]
        results[i] = res
        if out_dir:
            save_task(out_dir, tasks[i], res)
        finished += size[i]
        if progress:
            progress(finished, total, time.perf_counter() - t0)
    return results, {"computed": len(todo), "reused": len(tasks) - len(todo)}
