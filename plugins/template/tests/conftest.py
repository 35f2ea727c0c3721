"""Every test gets its own completion cache, so no test reads or writes your real one."""

import pytest


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path_factory.mktemp("ul_cache")))
