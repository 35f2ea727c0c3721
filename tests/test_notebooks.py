"""Every notebook runs top to bottom from a fresh kernel, offline, in fast mode (UL_FAST=1), with no error output,
recording a class cache (the session's ``class_recording``, which the classroom tests replay); the start-here
notebook shows its model and a figure, and the plugin notebook shows its metric registered, in a picker, used in the
three labs and found again once packaged."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from uncertainty_lab.tour import errors_of

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))


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
