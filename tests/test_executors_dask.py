"""The ``dask`` executor on one LocalCluster of two worker processes shared by the module (a cluster start costs
seconds): each lab gives the serial results and journals, a worker killed mid-run is replaced and its unit re-run,
a sweep half-finished in this process is finished on the cluster, and a pool of model servers (one dying) serves
the workers."""

from __future__ import annotations

import pytest
from fake_ollama import FakeOllama
from fakes import EchoLLM, HashEmbedder, KillOnce
from test_executors import CASCADE, ORCH, SEARCH, journals, result_dict, stable_journals
from test_executors_pool import MODEL, reply, two_servers
from test_executors_pool import SEARCH as POOLED

from uncertainty_lab.cascade.experiment import run_experiment as run_cascade
from uncertainty_lab.executors.cluster import local_cluster
from uncertainty_lab.orchestration.experiment import run_experiment as run_orchestration
from uncertainty_lab.search.experiment import run_experiment as run_search

distributed = pytest.importorskip("distributed")

@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The address of a LocalCluster of two single-threaded worker processes (their files in a folder of its own)."""
    with local_cluster(2, str(tmp_path_factory.mktemp("cluster"))) as cluster:
        yield cluster.scheduler_address


def on(scheduler: str) -> dict:
    return {"executor": "dask", "scheduler": scheduler}


def test_cascade_on_the_cluster_is_the_serial_cascade(tmp_path, scheduler, monkeypatch):
    # the evaluation embedder runs only in this process (collect), on the journals: a hash spares loading a model
    monkeypatch.setattr("uncertainty_lab.cascade.experiment._make_embedder", lambda spec: HashEmbedder())
    before = EchoLLM.generated
    clustered = run_cascade({**CASCADE, "llm": EchoLLM(), "out_dir": str(tmp_path / "dask"), **on(scheduler)})
    assert EchoLLM.generated == before  # every headline was written by a worker
    serial = run_cascade({**CASCADE, "llm": EchoLLM(), "out_dir": str(tmp_path / "serial")})
    assert journals(tmp_path / "dask") == journals(tmp_path / "serial") and len(journals(tmp_path / "dask")) == 2
    assert clustered.table() == serial.table()
    assert result_dict(clustered) == result_dict(serial)


def test_orchestration_on_the_cluster_survives_a_killed_worker(tmp_path, scheduler):
    marker = tmp_path / "killed"
    clustered = run_orchestration({**ORCH, "llm": KillOnce(marker=str(marker)), "out_dir": str(tmp_path / "dask"),
                                   **on(scheduler)})
    assert marker.is_file()  # the first model call killed its worker; the scheduler ran the unit again elsewhere
    serial = run_orchestration({**ORCH, "llm": EchoLLM(), "out_dir": str(tmp_path / "serial")})
    assert result_dict(clustered) == result_dict(serial)
    files = stable_journals(tmp_path / "dask")
    assert files == stable_journals(tmp_path / "serial") and len(files) == 4  # 2 policies x 2 chunks
    assert sorted(len([r for r in lines if r["type"] == "question"]) for lines in files.values()) == [1, 1, 2, 2]


# the module's cluster holds the port every dask scheduler starts its HTTP server on (dashboard or not)
@pytest.mark.filterwarnings("ignore:Port 8787 is already in use")
def test_a_cluster_started_for_the_run_is_closed_and_leaves_no_files(tmp_path, temp_dir):
    marker = tmp_path / "killed"
    clustered = run_orchestration({**ORCH, "llm": KillOnce(marker=str(marker)), "out_dir": str(tmp_path / "dask"),
                                   "executor": "dask", "workers": 2})
    assert marker.is_file() and list(temp_dir.iterdir()) == []  # a worker was killed; its files went with the run's
    serial = run_orchestration({**ORCH, "llm": EchoLLM(), "out_dir": str(tmp_path / "serial")})
    assert result_dict(clustered) == result_dict(serial)


def test_a_half_finished_serial_sweep_is_finished_on_the_cluster(tmp_path, scheduler):
    whole = run_search({**SEARCH, "out_dir": str(tmp_path / "whole")})

    def stop_after_three(done, total, label, seconds):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_search({**SEARCH, "out_dir": str(tmp_path / "half")}, log=stop_after_three)
    started = sorted((tmp_path / "half").rglob("*.jsonl"))
    assert len(started) == 3
    lines = started[2].read_bytes().splitlines(keepends=True)
    started[2].write_bytes(b"".join(lines[:2]) + lines[2][:7])  # half an episode, its last line cut short
    finished = run_search({**SEARCH, "out_dir": str(tmp_path / "half"), **on(scheduler)})
    assert journals(tmp_path / "half") == journals(tmp_path / "whole")
    assert result_dict(finished) == result_dict(whole)


def test_the_pool_serves_the_workers_too(tmp_path, scheduler):
    with two_servers() as (a, b):
        first = a.url
        pooled = run_search({**POOLED, "llm_hosts": [a.url, b.url], "out_dir": str(tmp_path / "pool"), **on(scheduler)})
    with FakeOllama(models=[MODEL], reply=reply) as alone:
        single = run_search({**POOLED, "llm_hosts": [alone.url], "out_dir": str(tmp_path / "single")})
    assert journals(tmp_path / "pool") == journals(tmp_path / "single")
    assert {k: v for k, v in result_dict(pooled).items() if k != "hosts"} == \
        {k: v for k, v in result_dict(single).items() if k != "hosts"}
    served = pooled.to_dict()["hosts"]["served_by"]
    assert list(served.values()).count(first) >= 3 and b.chats == 1  # b answered once, then died
