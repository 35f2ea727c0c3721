"""The README stays true: its first lines are the two set-up commands, every notebook is described with a
picture that exists, every `make` target it names exists, and its plugin example runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uncertainty_lab import registry

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_the_first_lines_are_the_title_and_the_two_commands():
    lines = README.splitlines()
    assert lines[0] == "# uncertainty_lab" and lines[1] == ""
    assert lines[2] == "```bash"
    assert lines[3].startswith("make lab ") and lines[4].startswith("make test ")
    assert lines[5] == "```"


def test_every_notebook_is_described_and_every_picture_exists():
    section = README.split("## The notebooks", 1)[1].split("\n## ", 1)[0]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        rows = [line for line in section.splitlines() if line.startswith(f"| `{notebook.stem}` |")]
        assert len(rows) == 1, f"README's notebook table has no row for {notebook.stem}"
    pictures = re.findall(r'<img src="([^"]+)"', section)
    assert len(pictures) >= 6
    for picture in pictures:
        assert (ROOT / picture).read_bytes().startswith(PNG_SIGNATURE), picture


def test_every_make_target_named_exists():
    targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))
    named = set(re.findall(r"`make ([a-z][\w-]*)", README)) | set(re.findall(r"^make ([a-z][\w-]*)", README, re.M))
    assert {"lab", "test", "student", "tour"} <= named
    assert named <= targets, f"README names make targets that do not exist: {named - targets}"


def test_the_plugin_example_runs_and_computes_its_formula():
    code = re.search(r"## Plugins\n.*?```python\n(.*?)```", README, re.S).group(1)
    namespace: dict = {}
    try:
        exec(compile(code, "README.md", "exec"), namespace)
        result = registry.create("metrics", "distinct_ratio", a=1.0).score(["Paris", "paris", "Rome"])
        assert result.uncertainty == pytest.approx((2 - 1 + 1) / (3 - 1 + 1))  # k = 2 meanings of n = 3
        assert registry.create("metrics", "distinct_ratio").score(["a", "A", "a."]).uncertainty == 0.0
    finally:
        if "distinct_ratio" in registry.names("metrics"):
            registry.unregister("metrics", "distinct_ratio")


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("note", ["hawkesllm", "hassum", "cgdp"])
def test_the_papers_section_cites_each_paper_as_our_notes_do(note):
    """Title, authors and arXiv id as the note's BibTeX entry gives them, and a link to the note."""
    bib = re.search(r"```bibtex\n(.*?)```", (ROOT / "docs" / "papers" / f"{note}.md").read_text(encoding="utf-8"),
                    re.S).group(1)
    field = {name: value for name, value in re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", bib, re.M)}
    papers = " ".join(section("Papers").split())
    assert re.sub(r"[{}]", "", field["title"]) in papers
    assert f"arXiv {field['eprint']}" in papers
    for author in field["author"].split(" and "):
        family, given = author.split(", ")
        assert f"{given} {family}" in papers, author
    assert f"[`docs/papers/{note}.md`](docs/papers/{note}.md)" in papers


def test_the_class_recording_commands_are_the_ones_the_tests_replay():
    """README "Running a class" step 2 records and exports with a relative UL_CACHE_DIR from the repository root,
    the way tests/class_recording.py records and tests/test_notebooks.py exports before replaying."""
    from class_recording import RELATIVE_CACHE

    steps = section("Running a class")
    assert f"UL_CACHE_DIR={RELATIVE_CACHE} make tour" in steps
    assert f"UL_CACHE_DIR={RELATIVE_CACHE} .venv/bin/uncertainty-lab cache export class.sqlite" in steps
    assert ".venv/bin/uncertainty-lab cache import class.sqlite" in steps and "UL_LLM=replay" in steps
