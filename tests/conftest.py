"""Every test gets its own completion cache, so no test reads or writes the user's cache; the notebooks run once per
session, into a class recording (``class_recording``) that the notebook and classroom tests share."""

import pytest


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path_factory.mktemp("ul_cache")))


@pytest.fixture
def hide_distribution(monkeypatch):
    """``hide_distribution("pkg")`` makes ``importlib.metadata.distribution("pkg")`` act uninstalled."""
    import importlib.metadata

    hidden: set[str] = set()
    real = importlib.metadata.distribution

    def distribution(name):
        if name in hidden:
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    return hidden.add


@pytest.fixture(scope="session")
def class_recording(tmp_path_factory):
    """Each notebook run at most once per session, in fast mode, recording a class cache (tests/class_recording.py)."""
    from class_recording import ClassRecording

    return ClassRecording(tmp_path_factory.mktemp("class_root"))
