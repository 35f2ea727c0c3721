"""Rename a copy of the plugin template: ``python rename_plugin.py NAME`` (NAME like ``my_plugins``).

Run it on your COPY of ``plugins/template`` (it renames the folder it sits in, never another). It changes:

- the package folder ``ul_plugin_template/`` -> ``ul_NAME/``;
- ``ul_plugin_template`` -> ``ul_NAME`` in every .py and .toml file here (imports, entry-point targets,
  ``packages = [...]``); README.md is left as it is, to be rewritten for your plugins;
- ``uncertainty-lab-plugin-template`` -> ``uncertainty-lab-NAME`` (with ``-`` for ``_``): the distribution
  name that ``pip install`` / ``pip uninstall`` and the discovery test use.

The plugin names themselves (``triangular``, ``echo``, …) stay: rename a plugin where you change it — the
entry-point key in pyproject.toml and the class's ``name`` (a test checks that they agree).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

OLD_PACKAGE, OLD_DISTRIBUTION = "ul_plugin_template", "uncertainty-lab-plugin-template"


def rename(folder: Path, name: str) -> list[Path]:
    """Rename the template in ``folder`` to ``ul_<name>`` / ``uncertainty-lab-<name>``; return the files changed."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"NAME must be lower-case letters, digits and _ (a Python identifier), got {name!r}")
    old_dir = folder / OLD_PACKAGE
    if not old_dir.is_dir():
        raise FileNotFoundError(f"{old_dir} not found: is {folder} a fresh copy of plugins/template?")
    new_package, new_distribution = f"ul_{name}", f"uncertainty-lab-{name.replace('_', '-')}"
    changed = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".py", ".toml") or path.resolve() == Path(__file__).resolve() \
                or "__pycache__" in path.parts or ".egg-info" in str(path):
            continue
        text = path.read_text(encoding="utf-8")
        new = text.replace(OLD_PACKAGE, new_package).replace(OLD_DISTRIBUTION, new_distribution)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    old_dir.rename(folder / new_package)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="your plugin collection's name, e.g. my_plugins (-> package ul_my_plugins)")
    parser.add_argument("--force", action="store_true", help="rename even a folder called 'template'")
    args = parser.parse_args(argv)
    folder = Path(__file__).resolve().parent
    if folder.name == "template" and not args.force:
        print(f"refusing to rename {folder}: copy the folder first (e.g. plugins/my_plugins) and run the copy's "
              "rename_plugin.py", file=sys.stderr)
        return 2
    for path in rename(folder, args.name):
        print(f"updated {path.relative_to(folder)}")
    print(f"renamed {OLD_PACKAGE}/ -> ul_{args.name}/\nnext: pip install --no-build-isolation -e {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
