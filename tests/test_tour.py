"""The tour (``python -m uncertainty_lab.tour``): every notebook of a folder runs headless, each gets an HTML
report and a thumbnail of its first figure, the index links them all; a failing notebook is reported as
failed with its error and the tour exits non-zero."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from uncertainty_lab import tour

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TOURED = ("00_start_here.ipynb", "01_hawkes_processes.ipynb")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def toured(tmp_path_factory):
    """The tour of a folder holding copies of notebooks 00 and 01, in fast mode: (exit code, output dir)."""
    src = tmp_path_factory.mktemp("notebooks")
    for name in TOURED:
        shutil.copy(NOTEBOOKS / name, src / name)
    out = tmp_path_factory.mktemp("tour")
    cache = tmp_path_factory.mktemp("tour_cache")
    code = tour.main([str(src), "--out", str(out), "--fast", "--cache-dir", str(cache)])
    return code, out


def test_tour_writes_a_report_per_notebook_and_an_index(toured):
    code, out = toured
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0, summary
    assert summary["fast"] is True
    index = (out / "index.html").read_text()
    assert "<title>uncertainty_lab — notebook tour</title>" in index
    rows = {r["notebook"]: r for r in summary["notebooks"]}
    assert set(rows) == set(TOURED)
    for name in TOURED:
        stem = Path(name).stem
        row = rows[name]
        assert row["status"] == "ok" and not row["error"], row
        assert row["seconds"] > 0
        page = out / f"{stem}.html"
        assert page.is_file() and page.stat().st_size > 10_000
        assert f'href="{stem}.html"' in index
        assert row["title"] and row["title"] in index  # the notebook's first markdown heading
        # the thumbnail: the notebook's first image/png output, a valid PNG the index shows
        figure = out / "figures" / f"{stem}.png"
        assert row["figure"] == f"figures/{stem}.png"
        assert figure.read_bytes().startswith(PNG_SIGNATURE)
        assert f'src="figures/{stem}.png"' in index
    assert rows["00_start_here.ipynb"]["title"].startswith("Start here")
    assert index.count('class="ok"') == len(TOURED) and 'class="failed"' not in index


def test_tour_report_embeds_outputs_and_widget_state(toured):
    _, out = toured
    page = (out / "00_start_here.html").read_text()
    assert "data:image/png;base64," in page  # figures inside the page, no side files
    assert "application/vnd.jupyter.widget-state+json" in page  # the picker, for a static widget view
    assert "Traceback" not in page


def test_a_failing_notebook_is_reported_with_its_error_and_the_tour_fails(tmp_path, capsys):
    src = tmp_path / "notebooks"
    src.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A notebook that fails\n\nOn purpose."),
        nbformat.v4.new_code_cell("print('before the failure')"),
        nbformat.v4.new_code_cell("raise ValueError('deliberate failure for the tour test')"),
        nbformat.v4.new_code_cell("print('never reached')"),
    ]
    nbformat.write(nb, src / "99_fails.ipynb")
    good = nbformat.v4.new_notebook()
    good.metadata["kernelspec"] = nb.metadata["kernelspec"]
    good.cells = [nbformat.v4.new_markdown_cell("## Fine"), nbformat.v4.new_code_cell("print(1 + 1)")]
    nbformat.write(good, src / "10_fine.ipynb")
    out = tmp_path / "tour"

    code = tour.main([str(src), "--out", str(out), "--fast"])

    assert code == 1
    assert "1 ok, 1 failed" in capsys.readouterr().out
    rows = {r["notebook"]: r for r in json.loads((out / "summary.json").read_text())["notebooks"]}
    failed, fine = rows["99_fails.ipynb"], rows["10_fine.ipynb"]
    assert failed["status"] == "failed"
    assert "ValueError" in failed["error"] and "deliberate failure" in failed["error"]
    assert fine["status"] == "ok" and fine["title"] == "Fine"  # the other notebooks still run
    assert failed["figure"] is None and fine["figure"] is None
    index = (out / "index.html").read_text()
    assert 'class="failed"' in index and "deliberate failure for the tour test" in index
    assert 'href="99_fails.html"' in index and "no figure" in index
    page = (out / "99_fails.html").read_text()
    assert re.search(r"<pre>\s*before the failure", page)  # the outputs up to the error are in the report
    assert "never reached" in page  # and the rest of the notebook, unrun


def test_an_empty_folder_is_an_error(tmp_path, capsys):
    assert tour.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no notebooks" in capsys.readouterr().err


def test_first_heading_and_first_png():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Intro text, no heading"),
                nbformat.v4.new_markdown_cell("text\n\n### Third-level heading ###\n# later")]
    assert tour.first_heading(nb) == "Third-level heading"
    assert tour.first_png(nb) is None
    assert tour.first_heading(nbformat.v4.new_notebook()) == ""


def test_kernel_env_fast_mode(monkeypatch, tmp_path):
    monkeypatch.setenv("UL_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    assert tour.kernel_env()["UL_FAST"] == "1"  # respected when already set
    assert "UL_FAST" not in tour.kernel_env(fast=False)
    monkeypatch.delenv("UL_FAST")
    env = tour.kernel_env(fast=True, cache_dir=tmp_path / "c")
    assert env["UL_FAST"] == "1" and env["UL_CACHE_DIR"] == str(tmp_path / "c")
    assert "MPLBACKEND" not in env  # the kernel's inline backend makes figures image/png
