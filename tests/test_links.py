"""Every relative link in the project's documents resolves: README.md, docs/**/*.md, plugins/**/README.md,
examples/README.md and the markdown cells of every notebook. Markdown links and images, reference definitions and
HTML ``href``/``src`` attributes count; links inside code (fenced blocks, inline spans) do not. Web and mail links
and pure ``#anchors`` are left alone; a file link's ``#anchor`` is dropped before the file is looked for."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.M)
HTML = re.compile(r"""<[a-zA-Z][^>]*?\s(?:href|src)\s*=\s*["']([^"']+)["']""")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "plugins").rglob("README.md")),
             ROOT / "examples" / "README.md", *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    return [p for p in found if ".ipynb_checkpoints" not in p.parts and "build" not in p.relative_to(ROOT).parts]


def markdown_of(path: Path) -> list[tuple[str, str]]:
    """(where, markdown text) pieces of a document: the file, or each markdown cell of a notebook."""
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [(f"cell {i}", cell.source) for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"]
    return [("", path.read_text(encoding="utf-8"))]


def links_in(text: str) -> list[str]:
    """The link targets of a markdown text, code left out."""
    text = INLINE_CODE.sub("", FENCE.sub("", text))
    targets = [m.group(1) for pattern in (INLINE, REFERENCE, HTML) for m in pattern.finditer(text)]
    return [t[1:-1] if t.startswith("<") and t.endswith(">") else t for t in targets]


def local_target(link: str) -> str | None:
    """The file part of a relative link, or None for a web/mail link (any scheme) or a pure anchor."""
    if SCHEME.match(link) or link.startswith(("#", "//")):
        return None
    return unquote(link.split("#", 1)[0].split("?", 1)[0]) or None


def broken_links(path: Path) -> list[str]:
    broken = []
    for where, text in markdown_of(path):
        for link in links_in(text):
            target = local_target(link)
            if target is None:
                continue
            resolved = ROOT / target.lstrip("/") if target.startswith("/") else path.parent / target
            if not resolved.exists():
                broken.append(f"{path.relative_to(ROOT)}{' ' + where if where else ''}: {link}")
    return broken


def test_the_link_reader_finds_links_and_leaves_code_alone():
    text = """See [notes](../docs/papers/cgdp.md#2-the-method "title"), ![fig](figures/a.png) and [web](https://x.org).
[ref]: <plugins/x y.md>
<img src="docs/figures/00.png" width="240"> `[not](a link.md)` [[nested]](n.md) [`code`](c.md)
```bash
[not a link](inside/a/fence.md)
```
[anchor](#top) [mail](mailto:a@b.c)"""
    assert links_in(text) == ["../docs/papers/cgdp.md#2-the-method", "figures/a.png", "https://x.org", "n.md", "c.md",
                              "#top", "mailto:a@b.c", "plugins/x y.md", "docs/figures/00.png"]
    assert [local_target(x) for x in ("a.md#b", "#b", "http://a", "mailto:x", "a%20b.md", "x.md?raw=1")] == [
        "a.md", None, None, None, "a b.md", "x.md"]


def test_the_documents_are_all_there():
    names = {p.relative_to(ROOT).as_posix() for p in documents()}
    assert {"README.md", "docs/ARCHITECTURE.md", "docs/papers/README.md", "examples/README.md",
            "plugins/template/README.md", "notebooks/00_start_here.ipynb"} <= names


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path):
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    assert not broken_links(path), "links to files that do not exist:\n" + "\n".join(broken_links(path))


def test_the_notebooks_link_the_paper_notes():
    """Each lab that follows a paper links our notes on it (docs/papers/), from the notebooks' folder."""
    for stem, note in [("02_", "hawkesllm"), ("03_", "hassum"), ("04_", "hassum"), ("05_", "cgdp")]:
        (path,) = (ROOT / "notebooks").glob(f"{stem}*.ipynb")
        links = [link for _, text in markdown_of(path) for link in links_in(text)]
        assert f"../docs/papers/{note}.md" in links, path.name
