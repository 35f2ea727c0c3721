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


# --- the class recording the tour checks -------------------------------------------------------------------

ECHO = '''import os
from uncertainty_lab.llm import LLMBackend

class Echo(LLMBackend):
    """A backend without a model: the prompt backwards."""
    name = "echo"
    def model_id(self):
        return "echo-1"
    def _generate(self, messages, **kwargs):
        return {"text": messages[-1]["content"][::-1], "finish_reason": "stop"}
'''


def echo_notebook(folder: Path, *cells: str) -> Path:
    """A notebook in ``folder`` that asks the model-free Echo backend (cached like any backend) what ``cells`` say."""
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Echo"), nbformat.v4.new_code_cell(ECHO),
                *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(nb, folder / "echo.ipynb")
    return folder


def test_a_relative_cache_dir_records_where_the_tour_started_and_the_recording_is_checked(tmp_path, monkeypatch,
                                                                                         capsys):
    """README: `UL_CACHE_DIR=class-cache make tour` then `cache export` from the same folder. The kernels run in the
    notebooks' folder, yet record into <start>/class-cache, and the tour says every request is in it."""
    notebooks = echo_notebook(tmp_path / "notebooks", 'Echo().complete("hello", n=2, seed=0)',
                              'Echo().complete("again", seed=1)')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UL_CACHE_DIR", "class-cache")
    assert tour.main(["notebooks", "--out", "out", "--fast"]) == 0
    assert "recording complete: all 3 requests the notebooks made are in " \
           f"{tmp_path / 'class-cache' / 'completions.sqlite'}" in capsys.readouterr().out
    assert not (notebooks / "class-cache").exists()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["recording"] == {"ok": True, "cache": str(tmp_path / "class-cache" / "completions.sqlite"),
                                    "requests": 3, "missing": [], "uncached": []}
    assert len((tmp_path / "out" / "requests.jsonl").read_text().splitlines()) == 3
    assert "recording complete" in (tmp_path / "out" / "index.html").read_text()
    from uncertainty_lab.cli import main as cli_main

    assert cli_main(["cache", "export", "class.sqlite"]) == 0
    assert "exported 3 entries" in capsys.readouterr().out


def test_a_recording_the_kernels_did_not_write_fails_the_tour_naming_the_requests(tmp_path, capsys):
    """A kernel that records elsewhere (the old relative-path bug) or asks with seed=None leaves requests a replay
    cannot answer: the tour exits 1 and names them, though every notebook ran clean."""
    notebooks = echo_notebook(tmp_path / "notebooks",
                              'os.environ["UL_CACHE_DIR"] = "class-cache"  # relative in the notebooks\' folder\n'
                              'Echo().complete("lost", n=2, seed=0)',
                              'Echo().complete("unseeded", seed=None)')
    out, cache = tmp_path / "tour", tmp_path / "class-cache"
    assert tour.main([str(notebooks), "--out", str(out), "--fast", "--cache-dir", str(cache)]) == 1
    printed = capsys.readouterr()
    assert "1 ok, 0 failed" in printed.out
    assert f"recording incomplete: 2 of the 2 requests the notebooks made are not in {cache / 'completions.sqlite'}" \
           in printed.out
    assert "echo:echo-1 sample 1 (seed=0) to 'lost'" in printed.out
    assert "1 requests were not cached (seed=None" in printed.out and "to 'unseeded'" in printed.out
    assert "cannot answer every request the notebooks made" in printed.err
    recording = json.loads((out / "summary.json").read_text())["recording"]
    assert not recording["ok"] and len(recording["missing"]) == 2 and len(recording["uncached"]) == 1
    assert 'class="failed">recording incomplete' in (out / "index.html").read_text()


def test_the_request_log_is_written_only_when_asked(tmp_path, monkeypatch):
    from uncertainty_lab.llm import CompletionCache
    from uncertainty_lab.llm.request_log import check_recording, describe_request, log_request

    request = {"backend": "echo", "model": "m", "messages": [{"role": "user", "content": "hi"}], "params": {},
               "seed": 3, "index": 1}
    log = tmp_path / "requests.jsonl"
    monkeypatch.delenv("UL_REQUEST_LOG", raising=False)
    log_request(request, "k1")
    assert not log.exists()
    monkeypatch.setenv("UL_REQUEST_LOG", str(log))
    log_request(request, "k1")
    log_request(request, "k1")  # the same request twice counts once
    log_request(request, None)
    assert describe_request(request) == "echo:m sample 1 (seed=3) to 'hi'"
    check = check_recording(log, CompletionCache(tmp_path / "c.sqlite"))
    assert (check.requests, check.missing, check.uncached, check.ok) == (1, [describe_request(request)],
                                                                         [describe_request(request)], False)
    assert check_recording(tmp_path / "none.jsonl", CompletionCache(tmp_path / "c.sqlite")).ok
    monkeypatch.setenv("UL_REQUEST_LOG", str(tmp_path / "no-such-folder" / "log"))
    with pytest.raises(OSError, match="cannot append to the request log .*UL_REQUEST_LOG"):
        log_request(request, "k1")


def test_kernel_env_makes_every_path_variable_absolute(monkeypatch, tmp_path):
    """A kernel runs in its notebook's folder: a relative path from the caller's folder would name another file."""
    monkeypatch.chdir(tmp_path)
    env = tour.kernel_env(base={"UL_EMBEDDED_GGUF": "models/m.gguf", "UL_REQUEST_LOG": "log.jsonl",
                                "UL_CACHE_DIR": "class-cache", "PATH": ""})
    assert env["UL_EMBEDDED_GGUF"] == str(tmp_path / "models" / "m.gguf")
    assert env["UL_REQUEST_LOG"] == str(tmp_path / "log.jsonl")
    assert Path(env["UL_CACHE_DIR"]) == (tmp_path / "class-cache").resolve()


def test_headless_kernels_use_local_sockets_and_save_no_progress_bars(tmp_path, capfd):
    """A teacher's `make tour` printed "Kernel is running over TCP without encryption" for every notebook, and the
    saved notebooks kept tqdm bars stuck at "0%"."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        "from uncertainty_lab.progress import bar\nfor _ in bar(range(3)):\n    pass\nimport os\nprint(os.environ['TQDM_DISABLE'])"))
    tour.execute(nb, cwd=tmp_path, env=tour.kernel_env(fast=True, cache_dir=tmp_path / "c"), timeout=120)
    outputs = nb.cells[0].outputs
    assert [o.get("text") for o in outputs if o.output_type == "stream" and o.name == "stdout"] == ["1\n"]
    assert not [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert "without encryption" not in capfd.readouterr().err
    assert not list(tmp_path.glob("kernel*"))  # the sockets live in a folder of their own, removed afterwards


def test_the_kernel_is_stopped_when_its_notebook_is_done(tmp_path):
    """nbclient stops only the kernels it starts itself: each notebook's kernel (its model loaded, ~850 MB) lived on
    until the test session or the tour ended, and then said "Parent appears to have exited". What it left in its
    temporary folder goes with it (notebook 05's TemporaryDirectory, 2.4 MB a run, stayed: a stopped kernel cleans
    up nothing)."""
    import psutil

    code = "import os, tempfile\nprint(os.getpid())\nRUNS = tempfile.TemporaryDirectory()\nprint(RUNS.name)"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    tour.execute(nb, cwd=tmp_path, env=tour.kernel_env(fast=True, cache_dir=tmp_path / "c"), timeout=120)
    pid, runs = "".join(o["text"] for o in nb.cells[0].outputs if o["output_type"] == "stream").split()
    assert not psutil.pid_exists(int(pid)) or psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
    assert not Path(runs).exists()


def test_progress_bars_follow_tqdm_disable(monkeypatch):
    from uncertainty_lab import progress

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert progress.wanted() and not progress.wanted(False)
    for value in ("1", "true", "YES"):
        monkeypatch.setenv("TQDM_DISABLE", value)
        assert not progress.wanted() and progress.bar(range(2)).disable
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert progress.wanted()


def test_a_full_mode_tour_gives_each_cell_the_full_mode_limit(tmp_path, monkeypatch):
    """Full-mode cells take minutes (notebook 04's longest: 290 s idle, 2-3 times that on a shared machine), so a
    full-mode tour allows FULL_CELL_TIMEOUT per cell; fast mode keeps CELL_TIMEOUT; --timeout overrides both."""
    nb = nbformat.v4.new_notebook()
    nbformat.write(nb, tmp_path / "a.ipynb")
    seen = []

    def run_one(path, out, env, timeout=tour.CELL_TIMEOUT):
        seen.append((env.get("UL_FAST"), timeout))
        return tour.NotebookReport(path.name, "a", "ok", 0.0, "a.html", None)

    monkeypatch.setattr(tour, "run_one", run_one)
    monkeypatch.delenv("UL_FAST", raising=False)
    for args in ([], ["--fast"], ["--timeout", "7"]):
        tour.main([str(tmp_path), "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c"), *args])
    assert seen == [(None, tour.FULL_CELL_TIMEOUT), ("1", tour.CELL_TIMEOUT), (None, 7)]
    assert tour.FULL_CELL_TIMEOUT > tour.CELL_TIMEOUT


def test_a_worlds_answers_are_not_part_of_a_class_recording(tmp_path, monkeypatch):
    """A world answers the same offline everywhere: the recording check must not ask the class cache for them."""
    from uncertainty_lab.llm import CompletionCache, get_llm

    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("UL_REQUEST_LOG", str(log))
    world = get_llm("world:calibrated", cache=CompletionCache(tmp_path / "c.sqlite"))
    assert world.complete("What is 2+2?", n=2, seed=1)
    assert not log.exists() or not log.read_text().strip()
