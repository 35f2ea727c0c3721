"""Full-mode time of each notebook: wall and kernel CPU seconds per cell, from an empty completion cache.

On a shared machine the wall time is inflated by the other load; the kernel's CPU time (process and children, user +
system) is what an idle machine would take, near enough, because the embedded model runs one thread on 2 cores
(``embedded.default_threads``), so an idle kernel is busy about as long as its cell runs.

Run: ``python benchmarks/notebooks.py notebooks/04_*.ipynb [--fast] [--slow 20] [--save DIR] [--cache DIR]``. Each notebook runs in a fresh kernel
(the tour's environment, ``uncertainty_lab.tour.kernel_env``) with ``UL_CACHE_DIR`` a new empty folder, so nothing
is replayed. Prints a markdown table per notebook: every cell over ``--slow`` wall seconds, then the totals.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil
from machine import machine

from uncertainty_lab import tour


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its children (live ones and the ones it waited for)."""
    try:
        proc = psutil.Process(pid)
        total = sum(proc.cpu_times()[:4])
        for child in proc.children(recursive=True):
            try:
                total += sum(child.cpu_times()[:2])
            except psutil.Error:
                pass
        return total
    except psutil.Error:
        return float("nan")


def run(path: Path, *, fast: bool, save: Path | None = None,
        cache: Path | None = None) -> tuple[list[tuple[int, str, float, float, float]], float, float]:
    """Execute ``path`` (written, executed, into the folder ``save`` when given) with the completion cache ``cache``
    (None: a new empty one); returns (cell index, first line, wall s, CPU s, load average at its end) per code cell,
    the notebook's total wall seconds (kernel start included) and its cells' CPU seconds."""
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    cells: list[tuple[int, str, float, float, float]] = []
    mark: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ul-nbtime-") as tmp:
        env = tour.kernel_env(fast=fast, cache_dir=cache or Path(tmp) / "cache")
        km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(Path(tmp) / "kernel"))
        client = NotebookClient(nb, km=km, timeout=3600, kernel_name="python3", allow_errors=False,
                                resources={"metadata": {"path": str(path.parent)}})

        def pid() -> int:
            return km.provisioner.process.pid

        def start(cell, cell_index, **_):
            mark.update(wall=time.perf_counter(), cpu=cpu_seconds(pid()))

        def done(cell, cell_index, **_):
            wall, cpu = time.perf_counter() - mark["wall"], cpu_seconds(pid()) - mark["cpu"]
            first = next((line for line in cell.source.splitlines() if line.strip()), "")[:60]
            cells.append((cell_index, first, wall, cpu, os.getloadavg()[0]))
            print(f"  cell {cell_index:2d}: {wall:7.1f} s wall, {cpu:7.1f} s CPU, load {os.getloadavg()[0]:.1f}"
                  f"  {first}", file=sys.stderr, flush=True)

        def started(**_):
            tour._poll_replies_in_slices(client)

        client.on_notebook_start = started
        client.on_cell_execute = start
        client.on_cell_executed = done
        begin = time.perf_counter()
        client.execute(env=env)
        total = time.perf_counter() - begin
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, save / path.name)
    return cells, total, sum(c[3] for c in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--fast", action="store_true", help="fast mode (UL_FAST=1) instead of full mode")
    parser.add_argument("--save", type=Path, default=None, help="write each executed notebook into this folder")
    parser.add_argument("--cache", type=Path, default=None,
                        help="completion cache folder (default: a new empty one per notebook); run twice for a rerun")
    parser.add_argument("--slow", type=float, default=20.0, help="list cells over this many wall seconds")
    args = parser.parse_args()
    print(f"Machine: {machine(load=True)}; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"{'fast' if args.fast else 'full'} mode, {args.cache or 'empty cache'}\n")
    for path in args.notebooks:
        load0 = os.getloadavg()[0]
        cells, wall, cpu = run(path, fast=args.fast, save=args.save, cache=args.cache)
        print(f"### {path.name}\n\n| cell | first line | wall (s) | CPU (s) | load |\n|---|---|---|---|---|")
        for index, first, w, c, load in cells:
            if w >= args.slow:
                print(f"| {index} | `{first}` | {w:.0f} | {c:.0f} | {load:.1f} |")
        print(f"| all | {len(cells)} code cells (wall: kernel start included) | {wall:.0f} | {cpu:.0f} | {load0:.1f} → {os.getloadavg()[0]:.1f} |\n",
              flush=True)


if __name__ == "__main__":
    main()
