"""What the class JupyterHub (``deploy/jupyterhub/``) does for each student before their server starts: give them their
own copy of the student notebooks, adding what they lack and never touching a file they already have, so a notebook
released later reaches everyone and nobody's work is overwritten. The hub runs it as the student
(``python -m uncertainty_lab.hub SOURCE DEST``), so the files are theirs and a link they made cannot send a write
anywhere they could not write themselves."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

#: the folder in each student's home that holds their copy
FOLDER = "uncertainty-lab"


def give_student_copy(source: str | os.PathLike, dest: str | os.PathLike) -> tuple[list[str], list[str]]:
    """Copy every file of ``source`` (the ``make student`` output) that ``dest`` lacks into ``dest`` (made when absent);
    return the names copied and the names kept because something of that name is already there (a file, a folder or a
    link: it is the student's). A missing or empty ``source`` is a ``FileNotFoundError`` naming the command that makes
    it."""
    source, dest = Path(source), Path(dest)
    files = sorted(p for p in source.iterdir() if p.is_file()) if source.is_dir() else []
    if not files:
        raise FileNotFoundError(f"no student notebooks in {source}: run `make student` (or set UL_HUB_STUDENT to the "
                                "folder that holds them)")
    dest.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for path in files:
        target = dest / path.name
        if os.path.lexists(target):
            kept.append(path.name)
            continue
        with path.open("rb") as src, open(target, "xb") as out:  # "x": never replaces what appeared meanwhile
            shutil.copyfileobj(src, out)
        copied.append(path.name)
    return copied, kept


def main(argv: list[str] | None = None) -> int:
    """``SOURCE DEST``: one line saying what was copied and kept; a fault is one ``error:`` line and exit code 1."""
    parser = argparse.ArgumentParser(prog="python -m uncertainty_lab.hub",
                                     description="Give a student their copy of the notebooks; never overwrite a file.")
    parser.add_argument("source", help="the student notebooks (make student writes build/student)")
    parser.add_argument("dest", help=f"the student's folder (the hub uses ~/{FOLDER})")
    args = parser.parse_args(argv)
    try:
        copied, kept = give_student_copy(args.source, args.dest)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.dest}: copied {len(copied)} files ({', '.join(copied) or 'none'}); kept {len(kept)} already there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
