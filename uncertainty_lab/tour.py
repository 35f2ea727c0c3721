"""The notebook tour: run every notebook headless and write an HTML report per notebook plus an index.

    python -m uncertainty_lab.tour [NOTEBOOK_DIR] [--out build/tour] [--fast | --both]

(``make tour`` runs it on ``notebooks/``.) Each notebook runs top to bottom in a fresh ``python3`` kernel
with :mod:`nbclient`, on whatever language model ``get_llm("auto")`` picks (the embedded model when no
Ollama server answers), in full mode unless ``--fast`` is given or ``UL_FAST=1`` is already set. The
output folder gets:

- ``<notebook>.html`` — the executed notebook (nbconvert's HTMLExporter, images embedded; the widget
  state is saved in the notebook, so widgets show as static views where the viewer can render them);
- ``figures/<notebook>.png`` — the notebook's first ``image/png`` output, a thumbnail for the index
  (and the pictures the README uses);
- ``index.html`` — one row per notebook: its first markdown heading, ok/failed (with the error), the
  runtime, a link and the thumbnail; ``summary.json`` — the same as data;
- ``requests.jsonl`` — every language-model request the kernels made (``$UL_REQUEST_LOG``, see
  :mod:`uncertainty_lab.llm.request_log`).

The tour is also how a class recording is made (``UL_CACHE_DIR=class-cache make tour``): the kernels get the
completion cache as an absolute path (a relative ``UL_CACHE_DIR`` means the folder the tour was started in, not
the notebooks' folder), and afterwards the tour checks that the cache holds an answer for every request in
``requests.jsonl``, so a replay of the same notebooks (``UL_LLM=replay``) finds them all. Fast and full mode ask
different requests, so a complete recording is marked with its mode (:mod:`uncertainty_lab.llm.modes`), and a
replay in the other mode says which mode to use; ``--both`` records both modes into one cache (fast mode first into
``OUT/fast/``, then full mode into ``OUT``).

A notebook that fails is reported as failed in the index, the others still run, and the tour exits 1; so it does
when the recording is incomplete.

:func:`execute` / :func:`execute_notebook` are the one notebook runner of the project: the test suite's
notebook tests call them too.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import os
import queue
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

from .llm.cache_file import CACHE_ENV, FILE_NAME, absolute_dir
from .llm.cache_file import cache_dir as default_cache_dir
from .llm.modes import current_mode, describe
from .llm.request_log import REQUEST_LOG_ENV, RecordingCheck, check_recording

__all__ = [
    "CELL_TIMEOUT",
    "FULL_CELL_TIMEOUT",
    "NotebookReport",
    "Tour",
    "check_kernels_recording",
    "errors_of",
    "execute",
    "execute_notebook",
    "first_heading",
    "first_png",
    "kernel_cache",
    "kernel_env",
    "main",
    "recorded_in",
    "run_tour",
]

#: seconds one cell may run before the notebook counts as failed (fast mode; the default of :func:`execute`)
CELL_TIMEOUT = 600
#: the same in a full-mode tour: its longest cell (notebook 04's policy comparison) took 290 s on an idle 2-core
#: machine and full-mode cells took 2-3 times as long while others shared the cores (benchmarks/RESULTS.md,
#: "Notebook full-mode times"); a class is recorded on whatever machine the teacher has, so the limit leaves room
FULL_CELL_TIMEOUT = 1800
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- running one notebook -----------------------------------------------------------------------------

#: environment variables holding a path that a notebook kernel reads (besides UL_CACHE_DIR)
PATH_VARIABLES = ("UL_EMBEDDED_GGUF", "UL_REQUEST_LOG")


def kernel_env(*, fast: bool | None = None, cache_dir: str | os.PathLike | None = None,
               mpl_dir: str | os.PathLike | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a notebook kernel: ``base`` (default ``os.environ``), with ``UL_FAST=1`` when
    ``fast`` is true (removed when false, left alone when None), ``UL_CACHE_DIR`` / ``MPLCONFIGDIR`` when
    given, no ``MPLBACKEND`` (so the kernel's inline backend turns figures into ``image/png``), and this
    interpreter's folder first on ``PATH`` (so a kernel started as ``python`` is this environment's).
    ``UL_CACHE_DIR`` (given or inherited) becomes absolute, resolved against this process's folder: a kernel runs
    in its notebook's folder, where a relative path would name another cache than the one the caller exports.
    The other paths a kernel reads from the environment (:data:`PATH_VARIABLES`) become absolute the same way.
    Progress bars are off (``TQDM_DISABLE=1`` unless set): a headless run has no one to show them to, and a bar
    saved in a notebook's outputs would read "0%" forever."""
    env = dict(os.environ if base is None else base)
    env.setdefault("TQDM_DISABLE", "1")  # nobody watches a headless run; a saved bar would read "0%" forever
    if fast is True:
        env["UL_FAST"] = "1"
    elif fast is False:
        env.pop("UL_FAST", None)
    if cache_dir is not None:
        env[CACHE_ENV] = str(cache_dir)
    if env.get(CACHE_ENV):
        env[CACHE_ENV] = str(absolute_dir(env[CACHE_ENV]))
    for name in PATH_VARIABLES:  # likewise any other path a kernel reads from the environment
        if env.get(name):
            env[name] = str(Path(env[name]).expanduser().absolute())
    if mpl_dir is not None:
        env["MPLCONFIGDIR"] = str(mpl_dir)
    env.pop("MPLBACKEND", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _poll_replies_in_slices(client) -> None:
    """Wait for shell replies in 0.5 s slices: with ipykernel 7 / nbclient 0.11 a reply that arrives
    while nbclient waits can be noticed only at the cell timeout (nbclient#312; seen here in ~1 of 3
    runs of notebook 01), which would make a passing run 10 minutes slower. Polling again finds it."""
    channel = client.kc.shell_channel
    wait = channel.get_msg

    async def get_msg(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            try:
                return await wait(timeout=left)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg


def execute(nb: nbformat.NotebookNode, *, cwd: str | os.PathLike, env: dict[str, str] | None = None,
            timeout: int = CELL_TIMEOUT, allow_errors: bool = True, kernel_name: str = "python3",
            **client_options) -> float:
    """Execute ``nb`` in place in a fresh ``kernel_name`` kernel started in ``cwd``; returns the seconds
    it took. With ``allow_errors`` every cell runs and errors stay in the outputs; without it the first
    error raises :class:`nbclient.exceptions.CellExecutionError` (the outputs so far are kept in ``nb``).
    The widget state is stored in the notebook's metadata, so an HTML export can show the widgets. The kernel's
    temporary files go into a folder of its own, removed with it: a stopped kernel runs no clean-up of its own (a
    graceful stop would, at 2 s a kernel that loaded torch, measured). ``client_options`` go to
    :class:`nbclient.NotebookClient` (the grader's ``interrupt_on_timeout``, ``on_cell_executed``, ...)."""
    import tempfile

    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="ul-kernel-") as folder:
        # local sockets (IPC), not TCP: nothing listens on the network, and the kernel has nothing to warn about
        km = AsyncKernelManager(kernel_name=kernel_name, transport="ipc", ip=str(Path(folder) / "kernel"))
        (Path(folder) / "tmp").mkdir()
        env = dict(kernel_env() if env is None else env, TMPDIR=str(Path(folder) / "tmp"))
        client = NotebookClient(
            nb, km=km, timeout=timeout, kernel_name=kernel_name, allow_errors=allow_errors,
            store_widget_state=True, resources={"metadata": {"path": str(cwd)}}, **client_options,
        )
        client.on_notebook_start = lambda **_: _poll_replies_in_slices(client)
        start = time.perf_counter()
        try:
            client.execute(env=env)
        finally:  # nbclient stops only kernels it made itself; this one would live (and hold its model) until we exit
            if run_sync(km.is_alive)():
                run_sync(km.shutdown_kernel)(now=True)
        return time.perf_counter() - start


def execute_notebook(path: str | os.PathLike, *, env: dict[str, str] | None = None, timeout: int = CELL_TIMEOUT,
                     allow_errors: bool = True) -> tuple[nbformat.NotebookNode, float]:
    """Read the notebook at ``path``, execute it in its own folder (see :func:`execute`) and return the
    executed notebook and the seconds it took. The file itself is not changed."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    seconds = execute(nb, cwd=path.parent, env=env, timeout=timeout, allow_errors=allow_errors)
    return nb, seconds


# --- reading an executed notebook ---------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def errors_of(nb: nbformat.NotebookNode) -> list[str]:
    """Each error output as ``cell N: Name: value`` followed by its traceback (ANSI colours kept)."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                trace = "\n".join(out.get("traceback", []))
                found.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}\n{trace}")
    return found


def first_heading(nb: nbformat.NotebookNode) -> str:
    """The text of the first markdown heading (``# ...`` of any level), or ``""``."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            m = re.match(r"\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                return m.group(1)
    return ""


def first_png(nb: nbformat.NotebookNode) -> bytes | None:
    """The bytes of the first ``image/png`` output, or None."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                png = data["image/png"]
                return base64.b64decode("".join(png) if isinstance(png, list) else png)
    return None


# --- the tour ----------------------------------------------------------------------------------------

@dataclass
class NotebookReport:
    """How one notebook of the tour went; paths are relative to the output folder."""

    notebook: str
    title: str
    status: str  # "ok" or "failed"
    seconds: float
    html: str | None
    figure: str | None
    error: str = ""


def _short_error(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip()
    # CellExecutionError carries the cell source and the whole traceback: keep the last lines, which name it
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-12:]) if lines else type(exc).__name__


def _export_html(nb: nbformat.NotebookNode, title: str) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(embed_images=True)
    nb.metadata.setdefault("title", title)
    body, _ = exporter.from_notebook_node(nb)
    return body


def _write_page(nb: nbformat.NotebookNode, path: Path, out: Path, title: str) -> str:
    page = out / f"{path.stem}.html"
    page.write_text(_export_html(nb, title), encoding="utf-8")
    return page.name


def run_one(path: Path, out: Path, env: dict[str, str], timeout: int = CELL_TIMEOUT) -> NotebookReport:
    """Execute one notebook (stopping at its first error), write its HTML and thumbnail under ``out``."""
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # not a notebook: report it, keep touring
        nb = nbformat.v4.new_notebook()
        nb.cells.append(nbformat.v4.new_markdown_cell(f"`{path.name}` could not be read: {exc}"))
        return NotebookReport(notebook=path.name, title=path.stem, status="failed", seconds=0.0,
                              html=_write_page(nb, path, out, path.stem), figure=None,
                              error=f"could not read the notebook: {exc}")
    title = first_heading(nb) or path.stem
    error = ""
    start = time.perf_counter()
    try:
        execute(nb, cwd=path.parent, env=env, timeout=timeout, allow_errors=False)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        error = _short_error(exc)
    except Exception as exc:  # a kernel that would not start, ...: the tour goes on and reports it
        error = f"{type(exc).__name__}: {_short_error(exc)}"
    seconds = time.perf_counter() - start
    if not error and (errors := errors_of(nb)):  # an error output that did not stop the run
        error = _ANSI.sub("", errors[0]).splitlines()[0]
    page = _write_page(nb, path, out, title)
    figure = None
    png = first_png(nb)
    if png is not None and png.startswith(PNG_SIGNATURE):
        fig_path = out / "figures" / f"{path.stem}.png"
        fig_path.parent.mkdir(parents=True, exist_ok=True)
        fig_path.write_bytes(png)
        figure = fig_path.relative_to(out).as_posix()
    return NotebookReport(notebook=path.name, title=title, status="failed" if error else "ok",
                          seconds=round(seconds, 1), html=page, figure=figure, error=error)


_INDEX_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: .5em .7em; text-align: left; vertical-align: top; }
td.thumb img { max-width: 240px; max-height: 160px; border: 1px solid #ccc; }
.ok { color: #176f2c; font-weight: bold; } .failed { color: #a32020; font-weight: bold; }
pre { white-space: pre-wrap; font-size: .85em; background: #fbeeee; padding: .5em; margin: .3em 0 0; }
.meta { color: #666; }
"""


def write_index(reports: list[NotebookReport], out: Path, *, fast: bool, seconds: float,
                recording: RecordingCheck | None = None) -> Path:
    """Write ``index.html`` and ``summary.json`` for ``reports`` (and the ``recording`` check) into ``out``."""
    ok = sum(r.status == "ok" for r in reports)
    rows = []
    for r in reports:
        thumb = (f'<a href="{html.escape(r.html)}"><img src="{html.escape(r.figure)}" alt="first figure of '
                 f'{html.escape(r.notebook)}"></a>') if r.figure else '<span class="meta">no figure</span>'
        error = f"<pre>{html.escape(r.error)}</pre>" if r.error else ""
        rows.append(
            f'<tr><td class="thumb">{thumb}</td>'
            f'<td><a href="{html.escape(r.html)}">{html.escape(r.notebook)}</a><br>{html.escape(r.title)}{error}</td>'
            f'<td class="{r.status}">{r.status}</td><td>{r.seconds:.1f} s</td></tr>')
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>uncertainty_lab — notebook tour</title>
<style>{_INDEX_CSS}</style></head>
<body>
<h1>uncertainty_lab — notebook tour</h1>
<p class="meta">{ok} of {len(reports)} notebooks ran clean, {'fast' if fast else 'full'} mode, {seconds:.0f} s in all,
{time.strftime('%Y-%m-%d %H:%M')}. Each notebook ran top to bottom in a fresh kernel.</p>
{_recording_html(recording)}
<table>
<thead><tr><th>first figure</th><th>notebook</th><th>status</th><th>runtime</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
</body></html>
"""
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    summary = {"fast": fast, "seconds": round(seconds, 1), "notebooks": [asdict(r) for r in reports]}
    if recording is not None:
        summary["recording"] = {"ok": recording.ok, "cache": str(recording.cache), "requests": recording.requests,
                                "missing": recording.missing, "uncached": recording.uncached}
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return index


def _recording_html(recording: RecordingCheck | None) -> str:
    if recording is None:
        return ""
    if recording.ok:
        return f'<p class="meta">{html.escape(recording.summary())}</p>'
    return f'<p class="failed">recording incomplete</p><pre>{html.escape(recording.summary())}</pre>'


@dataclass
class Tour:
    """What a tour did: a report per notebook, and whether the cache now answers every request they made."""

    reports: list[NotebookReport]
    recording: RecordingCheck

    @property
    def ok(self) -> bool:
        return self.recording.ok and all(r.status == "ok" for r in self.reports)


def kernel_cache(env: dict[str, str]) -> Path:
    """The completion cache file the kernels of ``env`` use (``UL_CACHE_DIR``, else the user cache)."""
    return (absolute_dir(env[CACHE_ENV]) if env.get(CACHE_ENV) else default_cache_dir()) / FILE_NAME


def check_kernels_recording(log: Path, env: dict[str, str]) -> RecordingCheck:
    """Does the cache the kernels of ``env`` used answer every request in the request log ``log``? A cache that
    cannot be opened answers none of them. A complete recording marks the cache with the kernels' mode (fast with
    ``UL_FAST=1``, else full), so a replay in the other mode can say which one to use."""
    from types import SimpleNamespace

    from .llm.cache import CacheError, CompletionCache

    try:
        cache = CompletionCache(kernel_cache(env))
    except CacheError as exc:
        print(f"warning: {exc}", file=sys.stderr)
        return check_recording(log, SimpleNamespace(path=exc.path, get=lambda key: None))
    try:
        check = check_recording(log, cache)
        if check.ok:
            cache.mark_modes([current_mode(env)])
        return check
    except CacheError as exc:  # the mark cannot be written: the recording stands, unmarked
        print(f"warning: {exc}", file=sys.stderr)
        return check
    finally:
        cache.close()


def recorded_in(env: dict[str, str]) -> str:
    """The modes the kernels' cache now holds answers for, in words (``"fast mode (UL_FAST=1)"``, ...)."""
    from .llm.modes import recorded_modes

    try:
        return describe(recorded_modes(kernel_cache(env)))
    except (OSError, ValueError):
        return describe(())


def run_tour(notebooks: str | os.PathLike, out: str | os.PathLike, *, fast: bool | None = None,
             cache_dir: str | os.PathLike | None = None, timeout: int | None = None,
             progress: bool = True) -> Tour:
    """Run every ``*.ipynb`` in ``notebooks`` (sorted by name), write the reports into ``out``, and check that the
    kernels' completion cache answers every request they made (logged to ``out/requests.jsonl``).
    ``fast``: True sets ``UL_FAST=1``, False runs full mode, None follows the ``UL_FAST`` already set.
    ``timeout``: seconds per cell; None = :data:`CELL_TIMEOUT` in fast mode, :data:`FULL_CELL_TIMEOUT` in full mode."""
    notebooks, out = Path(notebooks), Path(out)
    paths = sorted(notebooks.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    out.mkdir(parents=True, exist_ok=True)
    env = kernel_env(fast=fast, cache_dir=cache_dir)
    log = (out / "requests.jsonl").absolute()
    log.write_text("", encoding="utf-8")
    env[REQUEST_LOG_ENV] = str(log)
    fast_now = env.get("UL_FAST") == "1"
    if timeout is None:
        timeout = CELL_TIMEOUT if fast_now else FULL_CELL_TIMEOUT
    start = time.perf_counter()
    reports = []
    for path in paths:
        if progress:
            print(f"running {path.name} ({'fast' if fast_now else 'full'} mode) ...", flush=True)
        report = run_one(path, out, env, timeout=timeout)
        reports.append(report)
        if progress:
            print(f"  {report.status} in {report.seconds:.1f} s" + (f"\n{report.error}" if report.error else ""),
                  flush=True)
    recording = check_kernels_recording(log, env)
    if progress:
        print(recording.summary(), flush=True)
        if recording.ok:
            print(f"the cache holds answers for {recorded_in(env)}: a replay in a mode it lacks says which to use",
                  flush=True)
    write_index(reports, out, fast=fast_now, seconds=time.perf_counter() - start, recording=recording)
    return Tour(reports, recording)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uncertainty_lab.tour",
        description="Run every notebook headless and write an HTML report per notebook plus index.html.")
    parser.add_argument("notebooks", nargs="?", default="notebooks", help="folder of notebooks (default: notebooks)")
    parser.add_argument("--out", default="build/tour", help="output folder (default: build/tour)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--fast", action="store_true", help="fast mode (UL_FAST=1): shorter runs, same code paths")
    modes.add_argument("--both", action="store_true",
                       help="fast mode into OUT/fast, then full mode into OUT: one cache that replays in either mode")
    parser.add_argument("--cache-dir", default=None,
                        help="language-model completion cache for the kernels (default: UL_CACHE_DIR or the user cache)")
    parser.add_argument("--timeout", type=int, default=None,
                        help=f"seconds per cell (default: {CELL_TIMEOUT} in fast mode, {FULL_CELL_TIMEOUT} in full mode)")
    args = parser.parse_args(argv)
    runs = [(True, Path(args.out) / "fast"), (False, Path(args.out))] if args.both else [
        (True if args.fast else None, Path(args.out))]
    code = 0
    for fast, out in runs:
        try:
            done = run_tour(args.notebooks, out, fast=fast, cache_dir=args.cache_dir, timeout=args.timeout)
        except FileNotFoundError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        code = max(code, _said(done, out))
    return code


def _said(done: Tour, out: Path) -> int:
    """Print where one tour's index is and whether its recording is complete; its exit code."""
    failed = [r for r in done.reports if r.status != "ok"]
    print(f"wrote {out / 'index.html'} ({len(done.reports) - len(failed)} ok, {len(failed)} failed)")
    if not done.recording.ok:
        print(f"error: the cache {done.recording.cache} cannot answer every request the notebooks made (see above); "
              f"a replay of them would stop at the first one missing", file=sys.stderr)
    return 0 if done.ok else 1


if __name__ == "__main__":
    sys.exit(main())
