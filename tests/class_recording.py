"""One class recording per test run: every notebook runs once, in fast mode (``UL_FAST=1``), the way
``UL_CACHE_DIR=class-cache make tour`` records a class — a *relative* cache path, meant against the folder the run
started in (here a stand-in for the repository root, not the notebooks' folder where the kernels run), and every
language-model request logged to ``UL_REQUEST_LOG``. ``tests/test_notebooks.py`` checks the executed notebooks, then
exports the recording from that root with the command line and replays it, so each notebook runs once for both (its
``class_recording`` fixture)."""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from uncertainty_lab.llm.cache_file import FILE_NAME
from uncertainty_lab.llm.request_log import REQUEST_LOG_ENV
from uncertainty_lab.tour import CELL_TIMEOUT, execute, kernel_env

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
RELATIVE_CACHE = "class-cache"  # as in the README's "Running a class"
PREFIX_PROBE = "import sys; print('KERNEL_PREFIX=' + sys.prefix)"


def kernels_at_once() -> int:
    """Kernels to run side by side: a kernel keeps one core busy (one llama.cpp thread), so the cores this process may
    use, shared among the test processes (pytest-xdist's ``PYTEST_XDIST_WORKER_COUNT``; 1 without xdist)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // workers)


@dataclass
class NotebookRun:
    """One executed notebook (outputs kept, errors included), its runtime and what the prefix probe printed."""

    nb: nbformat.NotebookNode
    seconds: float
    probe: str


class ClassRecording:
    """Runs every notebook once, on the first request, recording into ``root/class-cache``."""

    def __init__(self, root: Path):
        self.root = root
        self.log = root / "requests.jsonl"
        base = {k: v for k, v in os.environ.items() if k != "UL_LLM"}  # a recording generates: never replay
        base.update({"UL_CACHE_DIR": RELATIVE_CACHE, REQUEST_LOG_ENV: str(self.log)})
        with contextlib.chdir(root):  # the folder `make tour` would be started in
            self.env = kernel_env(fast=True, mpl_dir=root / "mpl", base=base)
        self.runs: dict[str, NotebookRun] = {}

    @property
    def cache_path(self) -> Path:
        return self.root / RELATIVE_CACHE / FILE_NAME

    def run(self, path: Path) -> NotebookRun:
        """The recorded run of the notebook at ``path``. The first request records every notebook, a kernel per free
        core (the completion cache and the request log take concurrent writers, as in a class where several people
        record into one cache). A last probe cell (removed again) reports the kernel's ``sys.prefix``, which
        the notebook tests compare with this venv's."""
        if not self.runs:
            paths = sorted(NOTEBOOKS.glob("*.ipynb"))
            with ThreadPoolExecutor(kernels_at_once()) as pool:
                self.runs = dict(zip((p.name for p in paths), pool.map(self._record, paths), strict=True))
        return self.runs[path.name]

    def _record(self, path: Path) -> NotebookRun:
        nb = nbformat.read(path, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(PREFIX_PROBE))
        seconds = execute(nb, cwd=path.parent, env=self.env, timeout=CELL_TIMEOUT, allow_errors=True)
        probe = nb.cells.pop()
        text = "".join(o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream")
        return NotebookRun(nb, seconds, text)
