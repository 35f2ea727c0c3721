"""Once installed (``pip install -e plugins/examples``), each plugin is found through its entry point."""

from __future__ import annotations

import importlib.metadata

import pytest
from uncertainty_lab import registry

DISTRIBUTION = "uncertainty-lab-examples"
PLUGINS = [("memory_selectors", "hawkes_semantic"), ("metrics", "cluster_margin"), ("metrics", "greedy_agreement"),
           ("stopping_gates", "novelty_decay")]

try:
    importlib.metadata.distribution(DISTRIBUTION)
except importlib.metadata.PackageNotFoundError:
    pytestmark = pytest.mark.skip(reason=f"{DISTRIBUTION} is not installed: run `pip install -e plugins/examples`")


@pytest.fixture(scope="module", autouse=True)
def _rescan():
    registry.refresh()


@pytest.mark.parametrize(("kind", "name"), PLUGINS)
def test_found_loaded_and_created_by_name(kind, name):
    assert name in registry.names(kind)
    (info,) = [i for i in registry.describe(kind) if i.name == name]
    assert info.status == "ok", info.error
    assert info.distribution == DISTRIBUTION and all(p.help for p in info.parameters)
    assert registry.get(kind, name).name == name
    registry.create(kind, name)


def test_named_plugins_work_where_the_core_takes_names():
    from uncertainty_lab.search.gates import make_gates
    from uncertainty_lab.semantic import score_all

    results = score_all(["Paris", "Paris", "Rome"], ["cluster_margin", "discrete_semantic_entropy"], judge="exact")
    assert results["cluster_margin"].confidence == pytest.approx(0.5)
    (gate,) = make_gates([("novelty_decay", {"threshold": 0.5})])
    assert gate.threshold == 0.5
