"""Wall time of each notebook's "Known truth" section (issue #23: ≤ 30 s in full mode on an idle 2-core machine).

Runs, in a fresh kernel with an empty completion cache and full mode (no ``UL_FAST``), the section's cells of
notebooks 02–05 — with the cells before it that it needs (notebook 02's imports) — and reports the time of the
section's cells alone (per-cell execution times from nbclient's metadata) and of the whole run (kernel start
included). Usage, from the repository root:

    python benchmarks/world_sections.py
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import platform
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
#: notebook → (cells run, cells that are the section): indices into the notebook's cells
SECTIONS = {
    "02_hawkesllm_cascade": (range(0, 6), range(2, 6)),
    "03_semantic_uncertainty": (range(0, 3), range(1, 3)),
    "04_uncertainty_guided_orchestration": (range(0, 3), range(1, 3)),
    "05_agentic_search_cgdp": (range(0, 5), range(1, 5)),
}


def _seconds(cell) -> float:
    meta = cell.get("metadata", {}).get("execution", {})
    start, end = meta.get("iopub.execute_input"), meta.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = dt.datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def main() -> int:
    from uncertainty_lab.tour import errors_of, execute, kernel_env

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average before: {os.getloadavg()[0]:.2f}")
    print("| notebook | section cells | section (s) | whole run incl. kernel start (s) |")
    print("|---|---|---|---|")
    for name, (run, section) in SECTIONS.items():
        path = ROOT / "notebooks" / f"{name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        part = copy.deepcopy(nb)
        part.cells = [nb.cells[i] for i in run]
        with tempfile.TemporaryDirectory() as cache:
            env = kernel_env(fast=False, cache_dir=cache)
            whole = execute(part, cwd=path.parent, env=env, allow_errors=True)
        errors = errors_of(part)
        if errors:
            print(f"{name}: errors: {errors}", file=sys.stderr)
            return 1
        first = run.start
        took = sum(_seconds(part.cells[i - first]) for i in section if part.cells[i - first].cell_type == "code")
        print(f"| {name} | {section.start}–{section.stop - 1} | {took:.1f} | {whole:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
