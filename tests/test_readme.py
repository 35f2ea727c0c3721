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


def test_the_first_lines_are_the_two_commands():
    lines = README.splitlines()
    assert lines[0] == "```bash"
    assert lines[1].startswith("make lab ") and lines[2].startswith("make test ")
    assert lines[3] == "```"


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
