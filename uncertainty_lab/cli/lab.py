"""``uncertainty-lab lab``: JupyterLab on the repository, opened at the start notebook."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..llm.cache_file import CACHE_ENV, absolute_dir

START_NOTEBOOK = "00_start_here.ipynb"


def checkout_root() -> Path | None:
    """The repository this package runs from (the folder holding ``notebooks/``), or None when installed."""
    import uncertainty_lab

    root = Path(uncertainty_lab.__file__).resolve().parents[1]
    return root if (root / "notebooks" / START_NOTEBOOK).is_file() else None


def lab_target(notebooks: Path | None = None) -> Path:
    """What to open: ``notebooks/00_start_here.ipynb`` of a checkout, its folder, else the cwd."""
    if notebooks is None:
        root = checkout_root()
        notebooks = root / "notebooks" if root is not None else Path.cwd() / "notebooks"
    if (notebooks / START_NOTEBOOK).is_file():
        return notebooks / START_NOTEBOOK
    return notebooks if notebooks.is_dir() else Path.cwd()


def serving_root(target: Path) -> Path:
    """The folder JupyterLab serves: the repository when ``target`` lies inside it (so the README, ``docs/`` and
    ``plugins/`` are reachable and relative links between them work), else the target's own folder."""
    target = target.resolve()
    root = checkout_root()
    if root is not None and target.is_relative_to(root):
        return root
    return target if target.is_dir() else target.parent


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_command(target: Path | None = None, *, port: int | None = None, no_browser: bool = False,
                allow_root: bool | None = None) -> list[str]:
    """The argv that starts JupyterLab with this Python on 127.0.0.1, serving :func:`serving_root` of ``target``
    (default :func:`lab_target`) and opening ``target``: a notebook's URL is the lab's default URL, so the
    address Jupyter prints opens it. As root (a container, CI) it adds ``--allow-root``."""
    target = Path(target if target is not None else lab_target()).resolve()
    root = serving_root(target)
    argv = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1"]
    if target.is_file():
        argv.append(f"--LabApp.default_url=/lab/tree/{target.relative_to(root).as_posix()}")
    if port is not None:
        argv.append(f"--port={port}")
    if no_browser:
        argv.append("--no-browser")
    if allow_root if allow_root is not None else _is_root():
        argv.append("--allow-root")
    return argv


def cmd_lab(args) -> int:
    target = None
    if args.path is not None:
        target = Path(args.path)
        if not target.exists():
            print(f"error: {target} does not exist; give a notebook or a folder of notebooks "
                  "(e.g. build/student after `make student`)", file=sys.stderr)
            return 2
        if not target.is_dir() and not (target.is_file() and target.suffix == ".ipynb"):
            from ..untrusted import excerpt

            kind = "a file" if target.is_file() else "not a file or folder"
            print(f"error: {excerpt(str(target), 200)} is {kind}, not a notebook (.ipynb) or a folder; give a "
                  "notebook or a folder of notebooks (JupyterLab would serve everything next to it)", file=sys.stderr)
            return 2
        target = lab_target(target) if target.is_dir() else target
    argv = lab_command(target, port=args.port, no_browser=args.no_browser)
    if os.environ.get(CACHE_ENV):  # kernels start in their notebook's folder: give them the cache meant here
        os.environ[CACHE_ENV] = str(absolute_dir(os.environ[CACHE_ENV]))
    print("starting:", " ".join(argv), flush=True)
    os.execvp(argv[0], argv)
    return 0  # only reached when execvp is replaced (tests)


def add_parser(sub) -> None:
    """The command's arguments on the top-level subparsers."""
    p = sub.add_parser("lab", help=f"start JupyterLab on notebooks/{START_NOTEBOOK} (or on PATH)")
    p.add_argument("path", nargs="?", default=None,
                   help=f"a notebook, or a folder (opened at its {START_NOTEBOOK} when it has one)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument("--port", type=int, default=None, help="port for the server (default: Jupyter's)")
    p.set_defaults(func=cmd_lab)
