"""Every test gets its own completion cache, so no test reads or writes the user's cache. The fixtures several test
files use live here; the fakes they share (embedders, backends, judges) in ``fakes.py``. The suite runs a test process
per core (pytest-xdist, pyproject.toml): the files with the most ``slow`` tests start first. Plugin distributions the
environment held before the run (a user's own, installed as the plugin walk-through says) are hidden from the registry
(``plugin_env.py``), so tests that count or name plugins see uncertainty_lab's and their own."""

import os
import sys
from collections import Counter

import plugin_env
import pytest

if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:  # a test process per core: torch and BLAS (and the
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # notebook kernels, which inherit this) use one thread each


def pytest_collection_modifyitems(items):
    """Files holding more ``slow`` tests go first, the rest keep their order: with ``--dist loadfile`` the longest
    files then start at once on separate processes rather than one of them running alone at the end."""
    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: the cores this process may run on (xdist would count physical cores, 1 on many 2-vCPU machines)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.fixture(scope="session", autouse=True)
def _only_the_tests_plugins():
    """The registry sees uncertainty_lab's own plugins and those the tests install, not a user's own distributions
    (a copy of plugins/template installed as the README's walk-through says): tests/plugin_env.py."""
    if not plugin_env.AT_START:
        yield
        return
    from uncertainty_lab import registry

    restore = plugin_env.hide(plugin_env.AT_START)
    registry.refresh()
    try:
        yield
    finally:
        restore()
        registry.refresh()


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


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A temporary sys.path entry for throwaway distributions; modules and the registry scan are reset after."""
    from uncertainty_lab import registry

    root = tmp_path / "plugins"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    yield root
    for mod in [m for m in sys.modules if m.startswith("ul_test_")]:
        del sys.modules[mod]
    monkeypatch.undo()
    registry.refresh()


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """A temporary folder of this test's own, for this process and the worker processes it starts."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def env():
    """The search lab's environment over the shipped corpus."""
    from uncertainty_lab.search import SearchEnvironment

    return SearchEnvironment()


@pytest.fixture(scope="module")
def questions():
    """The shipped search questions by id."""
    from uncertainty_lab.datasets.search import load_search_questions

    return {q.id: q for q in load_search_questions()}


@pytest.fixture(autouse=True)
def _one_model_attempt(monkeypatch):
    """A failing model call is tried once and never waited for (llm/retry.py); the retry tests set their own."""
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "1")
    monkeypatch.setenv("UL_LLM_RETRY_DELAY", "0")
