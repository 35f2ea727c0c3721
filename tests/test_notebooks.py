"""Every notebook runs top to bottom from a fresh kernel, offline, in fast mode (UL_FAST=1), with no error output,
recording a class cache (the module's ``class_recording``); the start-here notebook shows its model and a figure, and
the plugin notebook shows its metric registered, in a picker, used in the three labs and found again once packaged.
Then a class replays that recording: the instructor's language-model answers exported, imported by each student, and
the student copy of every notebook run offline with NotImplementedError at the exercises and nowhere else.

Everything that runs a lab notebook is in this one file, so that ``--dist loadfile`` gives the recording and its
replay to one test process (pyproject.toml's pytest options)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from class_recording import NOTEBOOKS, RELATIVE_CACHE, ClassRecording, kernels_at_once
from jupyter_client.kernelspec import KernelSpecManager

from uncertainty_lab.classroom import graded_cells, student_version
from uncertainty_lab.llm import CompletionCache
from uncertainty_lab.llm.cache import request_key
from uncertainty_lab.llm.cache_file import FILE_NAME
from uncertainty_lab.llm.modes import recorded_modes
from uncertainty_lab.llm.request_log import check_recording
from uncertainty_lab.tour import errors_of, execute, kernel_env

NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))


@pytest.fixture(scope="module")
def class_recording(tmp_path_factory) -> ClassRecording:
    """Each notebook run at most once, in fast mode, recording a class cache (tests/class_recording.py)."""
    return ClassRecording(tmp_path_factory.mktemp("class_root"))


def run_notebook(path: Path, class_recording) -> tuple[nbformat.NotebookNode, float]:
    """The notebook executed once for the session (with the project's one runner, ``uncertainty_lab.tour.execute``);
    its last probe cell reported the kernel's sys.prefix, which must be this venv's."""
    run = class_recording.run(path)
    assert f"KERNEL_PREFIX={sys.prefix}" in run.probe, (
        f"the notebook kernel is not this environment's python (expected sys.prefix {sys.prefix}); "
        f"probe said {run.probe!r}. Check `jupyter kernelspec list`: 'python3' should be the venv's ipykernel."
    )
    return run.nb, run.seconds


def texts_of(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
            for mime in ("text/plain", "text/markdown", "text/html"):
                parts.append(str(out.get("data", {}).get(mime, "")))
    return "\n".join(parts)


def test_there_are_notebooks():
    assert (NOTEBOOKS / "00_start_here.ipynb") in NOTEBOOK_FILES


def test_python3_kernel_is_this_venv():
    """The kernel nbclient starts as `python3` must run this interpreter (the venv's ipykernel)."""
    spec = KernelSpecManager().get_kernel_spec("python3")
    exe = spec.argv[0]
    # jupyter_client replaces a bare `python`/`python3` with sys.executable when it launches the kernel
    assert exe in {"python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}"} or (
        Path(exe).resolve() == Path(sys.executable).resolve()), spec.argv


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=[p.name for p in NOTEBOOK_FILES])
@pytest.mark.slow
def test_notebook_runs_without_errors(path, class_recording):
    nb, seconds = run_notebook(path, class_recording)
    errors = errors_of(nb)
    assert not errors, f"{path.name} raised:\n" + "\n\n".join(errors)
    print(f"{path.name}: {seconds:.1f} s")
    if path.name == "00_start_here.ipynb":
        check_start_here(nb)
    if path.name == "06_build_a_plugin.ipynb":
        check_build_a_plugin(nb)


def check_start_here(nb: nbformat.NotebookNode) -> None:
    from uncertainty_lab.llm import get_llm

    text = texts_of(nb)
    label = get_llm("auto", quiet=True).label  # the same choice the kernel made
    assert label in text, f"the notebook's outputs do not mention the model label {label!r}"
    outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert images, "the start-here notebook should show the similarity heat-map as an image/png output"
    assert any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in outputs), (
        "the plugin picker was not displayed")
    for kind in ("kernels", "llm_backends"):  # the registry listing
        assert kind in text
    if os.environ.get("UL_NOTEBOOK_FIGURES"):  # a place to look at the figure by eye
        import base64

        png = base64.b64decode(images[0]["data"]["image/png"])
        Path(os.environ["UL_NOTEBOOK_FIGURES"], "00_heatmap.png").write_bytes(png)


def check_build_a_plugin(nb: nbformat.NotebookNode) -> None:
    text = texts_of(nb)
    assert re.search(r"smoothed_majority\s+<registered>\s+judge, prior_share, prior_strength", text), (
        "the registry listing does not show the metric registered in the notebook with its parameters")
    assert "hand computation agrees" in text
    outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
    assert any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in outputs), (
        "the plugin picker was not displayed")
    for name in ("prior_share", "prior_strength"):
        assert re.search(rf"^{name}\s+FloatSlider\s", text, re.M), f"the picker made no slider for {name}"
    assert re.search(r"step 1: smoothed_majority uncertainty \d\.\d{3}", text), "no cascade step was scored"
    assert re.search(r"round 1 \(ask\): .* smoothed_majority confidence \d\.\d\d", text), (
        "the coordinator did not score a worker answer with the metric")
    assert re.search(r"metric_agreement: smoothed_majority (confidence \d\.\d\d|missing)", text), (
        "the search gate did not score sampled answers with the metric")
    assert re.search(r"answer_convergence: (answers (converged|disagree): normalised smoothed_majority|only \d of 3)",
                     text), "the built-in answer_convergence gate did not use the metric by name"
    assert "distribution 'uncertainty-lab-my-metrics', entry point 'ul_my_metrics.metrics:SmoothedMajority'" in text, (
        "the packaged metric was not found through its entry point")
    assert "after clean-up, smoothed_majority comes from: ['<registered>']" in text


# --- a class replays the recording --------------------------------------------------------------------------

def run_student(path: Path, tmp_path: Path, **env_changes) -> nbformat.NotebookNode:
    nb = student_version(nbformat.read(path, as_version=4), path.name)
    env = kernel_env(fast=True, cache_dir=tmp_path / "cache", mpl_dir=tmp_path / "mpl")
    env.update(env_changes)
    execute(nb, cwd=path.parent, env=env, allow_errors=True)
    return nb


def assert_fails_only_at_exercises(nb: nbformat.NotebookNode, name: str) -> None:
    """Each check cell raises NotImplementedError from its exercise; no other cell has an error."""
    checks = {g.index for g in graded_cells(nbformat.read(NOTEBOOKS / name, as_version=4)) if g.role == "check"}
    failed = {}
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                failed[i] = out
    others = {i: f"{o['ename']}: {o['evalue']}" for i, o in failed.items()
              if i not in checks or o["ename"] != "NotImplementedError"}
    assert not others, f"{name}: errors besides NotImplementedError at the checks:\n" + "\n".join(errors_of(nb))
    assert set(failed) == checks, f"{name}: checks that did not reach the exercise: {sorted(checks - set(failed))}"


def printed(nb: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream")


def export_from_the_root(recording, dest: Path) -> subprocess.CompletedProcess:
    """README step 2's export: ``UL_CACHE_DIR=class-cache uncertainty-lab cache export FILE``, run from the folder the
    recording was started in (the relative path means the same folder there)."""
    env = {**os.environ, "UL_CACHE_DIR": RELATIVE_CACHE}
    return subprocess.run([sys.executable, "-m", "uncertainty_lab.cli", "cache", "export", str(dest)], cwd=recording.root,
                          env=env, capture_output=True, text=True, timeout=120)


@dataclass
class ClassReplay:
    """The export from the root (``done``, of ``entries`` recorded, in the notebook ``modes`` it says) and each
    notebook's student copy run on it."""

    done: subprocess.CompletedProcess
    entries: int
    students: dict[str, nbformat.NotebookNode]
    modes: frozenset[str] = frozenset()


@pytest.fixture(scope="module")
def class_replay(class_recording, tmp_path_factory) -> ClassReplay:
    """README "Running a class" in fast mode, once for every notebook: the module's recording exported from the root,
    then each student copy run with ``UL_LLM=replay`` on its own import of it, a kernel per free core."""
    class_recording.run(NOTEBOOK_FILES[0])  # the first request records every notebook
    root = tmp_path_factory.mktemp("class_replay")
    exported = root / "class.sqlite"
    done = export_from_the_root(class_recording, exported)
    entries = len(CompletionCache(class_recording.cache_path))

    def student(path: Path) -> nbformat.NotebookNode:
        home = root / path.stem
        if done.returncode == 0:
            CompletionCache(home / "cache" / FILE_NAME).import_file(exported)
        return run_student(path, home, UL_LLM="replay")

    with ThreadPoolExecutor(kernels_at_once()) as pool:
        students = dict(zip((p.name for p in NOTEBOOK_FILES), pool.map(student, NOTEBOOK_FILES), strict=True))
    return ClassReplay(done, entries, students, recorded_modes(exported) if done.returncode == 0 else frozenset())


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=[p.name for p in NOTEBOOK_FILES])
@pytest.mark.slow
def test_a_class_replays_the_recording_of_every_notebook(path, class_recording, class_replay):
    """The instructor's run (this module's recording, shared with the notebook tests above) used a relative
    UL_CACHE_DIR from a root folder while the kernels ran in notebooks/; every request it logged is in that cache; the
    export from the root holds them; a student imports it and runs the student copy with UL_LLM=replay, a backend
    that cannot generate: every answer comes from the record, and the only errors are the exercises'
    NotImplementedError."""
    recorded = class_recording.run(path)
    assert not errors_of(recorded.nb), f"the recording of {path.name} failed:\n" + "\n".join(errors_of(recorded.nb))
    check = check_recording(class_recording.log, CompletionCache(class_recording.cache_path))
    assert check.ok, check.summary()
    done = class_replay.done
    assert done.returncode == 0 and f"exported {class_replay.entries} entries" in done.stdout, done.stdout + done.stderr
    assert class_replay.modes == {"fast"}  # the recording says it holds fast-mode answers (llm/modes.py)
    nb = class_replay.students[path.name]
    if "uncertainty_lab: using" in printed(recorded.nb):  # the notebook asked get_llm for a model
        assert "(UL_LLM=replay)" in printed(nb)
    assert_fails_only_at_exercises(nb, path.name)


def test_a_full_mode_replay_of_a_fast_recording_stops_with_one_line_naming_the_mode(tmp_path, monkeypatch):
    """Notebook 00's student copy replayed in full mode (UL_FAST unset) on a recording marked fast: the first model
    request stops with the one line that names both modes and the commands that fix it. The recording is a stand-in
    (one embedded-model answer, so replay knows the model, written by a process in fast mode), not a class recording:
    what is asked in full mode is in no fast recording."""
    monkeypatch.setenv("UL_FAST", "1")  # this process writes the recording, in fast mode
    request = {"backend": "embedded", "model": "recorded-model", "messages": [{"role": "user", "content": "hi"}],
               "params": {"temperature": 0.0}, "seed": 0, "index": 0}
    cache = CompletionCache(tmp_path / "cache" / FILE_NAME)
    cache.put(request_key(request), request, {"text": "hello"})
    assert cache.modes() == {"fast"}
    path = NOTEBOOKS / "00_start_here.ipynb"
    nb = student_version(nbformat.read(path, as_version=4), path.name)
    env = kernel_env(fast=False, cache_dir=tmp_path / "cache", mpl_dir=tmp_path / "mpl")
    env["UL_LLM"] = "replay"
    from nbclient.exceptions import CellExecutionError

    with pytest.raises(CellExecutionError):  # stops at the first error: the cells after it would fail on its names
        execute(nb, cwd=path.parent, env=env, allow_errors=False)
    errors = [(i, o) for i, c in enumerate(nb.cells) for o in c.get("outputs", []) if o.get("output_type") == "error"]
    first, out = errors[0]
    assert "llm.complete(" in nb.cells[first].source, f"the first error is not at the first model request: cell {first}"
    assert out["ename"] == "ReplayMissError" and "\n" not in out["evalue"], out["evalue"]
    assert out["evalue"].startswith("this class recording holds fast-mode answers (UL_FAST=1) and this run is in full "
                                    "mode (UL_FAST unset)"), out["evalue"]
    assert "UL_LLM=replay UL_FAST=1 uncertainty-lab lab build/student" in out["evalue"]
