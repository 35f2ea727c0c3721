"""A pool of Ollama servers (:mod:`uncertainty_lab.llm.pool`) against local fake servers that answer without a
model: hosts from the config or ``OLLAMA_HOST``, the health check, round-robin in unit order, a server that dies
mid-run (its unit resumes on the other; in worker processes: test_executors_dask.py), the per-host table in the
report and results.json, and a cache shared by every host."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from fake_ollama import FakeOllama
from fakes import echo_text
from test_executors import ORCH, journals, result_dict, stable_journals

from uncertainty_lab.llm import LLMUnavailableError
from uncertainty_lab.llm.ollama_backend import default_host, parse_hosts
from uncertainty_lab.llm.pool import HostPool, configured_hosts
from uncertainty_lab.orchestration.experiment import run_experiment as run_orchestration
from uncertainty_lab.search.config import SearchConfig
from uncertainty_lab.search.experiment import run_experiment as run_search

MODEL = "fake:1"
SEARCH = {"llm": f"ollama:{MODEL}", "limit": 4, "beliefs": ["implicit"], "gate_sets": [["fixed_budget"]],
          "max_steps": 2, "progress": False, "figure": False}


def reply(body) -> str:
    return echo_text(body["messages"], body["options"]["seed"])


@contextmanager
def two_servers() -> Iterator[tuple[FakeOllama, FakeOllama]]:
    """Two servers answering alike; the second hangs up on everything after its first chat."""
    with FakeOllama(models=[MODEL], reply=reply) as a, FakeOllama(models=[MODEL], reply=reply, die_after=1) as b:
        yield a, b


@pytest.fixture
def servers():
    with two_servers() as pair:
        yield pair


@pytest.fixture
def closed_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_hosts_come_from_the_config_or_ollama_host(monkeypatch):
    assert parse_hosts(" a:1, http://b ,a:1,") == ["http://a:1", "http://b:80"]
    monkeypatch.setenv("OLLAMA_HOST", "gpu1:11434,gpu2")
    assert default_host() == "http://gpu1:11434"  # a backend's own host: the first
    config = SearchConfig.from_mapping(SEARCH)
    assert configured_hosts(config) == ["http://gpu1:11434", "http://gpu2:11434"]
    assert configured_hosts(SearchConfig.from_mapping({**SEARCH, "llm_hosts": ["c"]})) == ["http://c:11434"]
    assert configured_hosts(SearchConfig.from_mapping({**SEARCH, "llm": "oracle"})) == []  # no Ollama model
    monkeypatch.setenv("OLLAMA_HOST", "gpu1:11434")
    assert configured_hosts(config) == []  # one host: the backend's own, no pool
    with pytest.raises(ValueError, match="llm_hosts"):
        run_search({**SEARCH, "llm_hosts": [3]})


def test_the_ollama_package_imports_under_a_list_of_hosts(monkeypatch):
    import sys

    from uncertainty_lab.llm.ollama_backend import import_ollama

    monkeypatch.setenv("OLLAMA_HOST", "gpu1:11434,gpu2:11434")
    monkeypatch.delitem(sys.modules, "ollama", raising=False)  # its import reads $OLLAMA_HOST, which it cannot split
    assert import_ollama().Client and sys.modules["ollama"]._client._client.base_url.host == "gpu1"
    assert os.environ["OLLAMA_HOST"] == "gpu1:11434,gpu2:11434"


def test_units_spread_over_healthy_hosts_and_a_dead_one_hands_its_unit_on(servers, closed_url, tmp_path,
                                                                         monkeypatch):
    a, b = servers
    pooled = run_search({**SEARCH, "llm_hosts": [a.url, closed_url, b.url], "out_dir": str(tmp_path / "pool")})
    with FakeOllama(models=[MODEL], reply=reply) as alone:
        monkeypatch.setenv("OLLAMA_HOST", alone.url)
        single = run_search({**SEARCH, "out_dir": str(tmp_path / "single")})
        assert alone.count("/api/chat") == 0  # the same model on any host shares the cache: all answers known
    assert journals(tmp_path / "pool") == journals(tmp_path / "single")
    hosts = pooled.to_dict().pop("hosts")
    assert {k: v for k, v in result_dict(pooled).items() if k != "hosts"} == result_dict(single)
    assert list(hosts["served_by"].values()) == [a.url, b.url, a.url, a.url]  # round-robin; b died at its 2nd
    assert list(hosts["moved"].values()) == [[b.url]] and b.chats == 1
    rows = {r["host"]: r for r in hosts["hosts"]}
    assert rows[a.url]["units"] == 3 and rows[b.url]["units"] == 1 and rows[b.url]["failures"] == 1
    assert "ollama serve" in rows[closed_url]["down"] or "no Ollama server" in rows[closed_url]["down"]
    report = pooled.report()
    assert "## Model servers" in report and f"| {b.url} | 1 | 1 |" in report and f"{b.url} → {a.url}" in report
    saved = json.loads((tmp_path / "pool" / "results.json").read_text())
    assert saved["hosts"]["served_by"] == hosts["served_by"]


def test_no_healthy_host_is_an_error_naming_each(closed_url, tmp_path):
    with FakeOllama(models=["other:1"], reply="x") as wrong:
        with pytest.raises(LLMUnavailableError, match=r"no Ollama host of the pool can serve fake:1") as info:
            run_search({**SEARCH, "llm_hosts": [closed_url, wrong.url], "out_dir": str(tmp_path)})
    assert closed_url in str(info.value) and "does not have model 'fake:1'" in str(info.value)
    with pytest.raises(LLMUnavailableError, match="every Ollama host of the pool has failed"):
        HostPool(["h"], down={"h": "gone"}).order(0)


def test_a_host_dying_inside_an_orchestration_unit_is_not_journalled_as_a_missing_answer(servers, tmp_path):
    a, b = servers
    config = {**ORCH, "llm": f"ollama:{MODEL}", "policies": ["none"], "questions_per_unit": 1, "n_samples": 2}
    pooled = run_orchestration({**config, "llm_hosts": [a.url, b.url], "out_dir": str(tmp_path / "pool")})
    with FakeOllama(models=[MODEL], reply=reply) as alone:
        single = run_orchestration({**config, "llm_hosts": [alone.url], "out_dir": str(tmp_path / "single")})
    assert stable_journals(tmp_path / "pool") == stable_journals(tmp_path / "single")
    assert '"error": "' not in json.dumps(stable_journals(tmp_path / "pool")) and b.chats == 1
    assert pooled.hosts.served[next(iter(pooled.hosts.served))].host == a.url
    assert {k: v for k, v in result_dict(pooled).items() if k != "hosts"} == \
        {k: v for k, v in result_dict(single).items() if k != "hosts"}
