"""The ``dask`` executor on one LocalCluster of two worker processes shared by the module (a cluster start costs
seconds): each lab gives the serial results and journals, a worker killed mid-run is replaced and its unit re-run,
and a sweep half-finished in this process is finished on the cluster."""

from __future__ import annotations

import pytest
from test_executors import ORCH, SEARCH, journals, result_dict, stable_journals
from test_executors_fakes import EchoLLM, KillOnce

from uncertainty_lab.cascade.experiment import run_experiment as run_cascade
from uncertainty_lab.orchestration.experiment import run_experiment as run_orchestration
from uncertainty_lab.search.experiment import run_experiment as run_search

distributed = pytest.importorskip("distributed")

CASCADE = {"selectors": ["hawkes", "recency"], "ks": [3], "runs": 1, "steps": 2, "max_tokens": 12,
           "progress": False, "figure": False}


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of two single-threaded worker processes."""
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cluster:
        yield cluster.scheduler_address


def on(scheduler: str) -> dict:
    return {"executor": "dask", "scheduler": scheduler}


def test_search_on_the_cluster_is_the_serial_search(tmp_path, scheduler):
    serial = run_search({**SEARCH, "limit": 2, "out_dir": str(tmp_path / "serial")})
    clustered = run_search({**SEARCH, "limit": 2, "out_dir": str(tmp_path / "dask"), **on(scheduler)})
    assert journals(tmp_path / "dask") == journals(tmp_path / "serial") and len(journals(tmp_path / "dask")) == 4
    assert result_dict(clustered) == result_dict(serial)


def test_cascade_on_the_cluster_is_the_serial_cascade(tmp_path, scheduler):
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


def test_a_half_finished_serial_sweep_is_finished_on_the_cluster(tmp_path, scheduler):
    whole = run_search({**SEARCH, "out_dir": str(tmp_path / "whole")})

    def stop_after_three(done, total, label, seconds):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_search({**SEARCH, "out_dir": str(tmp_path / "half")}, log=stop_after_three)
    started = sorted((tmp_path / "half").rglob("*.jsonl"))
    lines = started[0].read_bytes().splitlines(keepends=True)
    started[0].write_bytes(b"".join(lines[:3]))  # an episode cut after its second record
    finished = run_search({**SEARCH, "out_dir": str(tmp_path / "half"), **on(scheduler)})
    assert journals(tmp_path / "half") == journals(tmp_path / "whole")
    assert result_dict(finished) == result_dict(whole)
