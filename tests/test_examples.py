"""The example configs in examples/: one offline (embedded model) and one Ollama config per lab, each loaded by its
lab's config class, each saying in its comments what it runs, how long it took and the exact command to run it from
the repository root — the command the README and examples/README.md give verbatim. The offline ones pass
``--check`` (it builds what the units share and runs nothing): no experiment runs here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uncertainty_lab.cli import main
from uncertainty_lab.cli.run import LABS, _experiment

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CONFIGS = sorted(EXAMPLES.glob("*.toml"))


def lab_of(path: Path) -> str:
    """The run command of an example (its name up to the first underscore)."""
    return path.stem.split("_", 1)[0]


def command_of(path: Path) -> str:
    return f".venv/bin/uncertainty-lab {lab_of(path)} run --config examples/{path.name}"


def test_every_lab_has_an_offline_and_an_ollama_example():
    assert {p.name for p in CONFIGS} == {f"{lab}_{kind}.toml" for lab in LABS for kind in ("offline", "ollama")}


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_an_example_loads_and_says_what_it_runs_how_long_and_how(path):
    config = _experiment(lab_of(path)).config_class.coerce(path)
    offline = path.stem.endswith("_offline")
    assert config.llm == "embedded" if offline else str(config.llm).startswith("ollama:"), config.llm
    assert config.out_dir == f"build/examples/{path.stem}"  # under build/, which git ignores
    comments = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#"))
    assert "What it runs:" in comments
    assert f"Run from the repository root:\n#   {command_of(path)}\n" in comments
    took = re.search(r"^# Took here: (.*)$", comments, re.M)
    assert took, f"{path.name} does not say how long it took"
    if offline:
        assert re.search(r"\d+ min", took.group(1)) and "shared 2-core machine" in took.group(1), took.group(1)
    assert "Run the same command again" in comments  # resuming


@pytest.mark.parametrize("path", [p for p in CONFIGS if p.stem.endswith("_offline")],
                         ids=[p.name for p in CONFIGS if p.stem.endswith("_offline")])
def test_an_offline_example_passes_check(path, tmp_path, monkeypatch, capsys):
    """``<lab> run --config examples/X.toml --check`` from the repository root: valid settings, data and model found,
    the plan printed, nothing run or written."""
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    assert main([lab_of(path), "run", "--config", f"examples/{path.name}", "--check", "--out-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "nothing was run" in printed and "[new]" in printed
    assert not out.exists()


def test_the_readme_and_the_examples_readme_give_every_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    examples_readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for path in CONFIGS:
        assert command_of(path) in examples_readme, path.name
        if path.stem.endswith("_offline"):
            assert command_of(path) in readme, path.name
    for lab in LABS:
        assert f".venv/bin/uncertainty-lab {lab} run --help" in readme + examples_readme
