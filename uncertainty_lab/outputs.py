"""What an experiment writes into its folder: the report (markdown), ``results.json`` and ``figure.png``.

The cascade, orchestration and search experiments share it, so their output folders look alike.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["save_outputs"]


def save_outputs(result: Any, out_dir: str | os.PathLike | None, *, report: str, figure: bool = True,
                 dpi: int = 100) -> dict[str, Path]:
    """Write ``result.report()`` to ``<report>.md``, ``result.to_dict()`` to ``results.json`` and (``figure``)
    ``result.figure()`` to ``figure.png`` in ``out_dir`` (default: ``result.out_dir``, else the config's), add
    the paths to ``result.files`` and return them, keyed ``report`` / ``"results"`` / ``"figure"``."""
    out = Path(out_dir if out_dir is not None else (result.out_dir or result.config.out_dir))
    out.mkdir(parents=True, exist_ok=True)
    files = {report: out / f"{report}.md", "results": out / "results.json"}
    files[report].write_text(result.report() + "\n", encoding="utf-8")
    files["results"].write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if figure:
        files["figure"] = out / "figure.png"
        result.figure().savefig(files["figure"], dpi=dpi)
    result.files.update(files)
    return files
