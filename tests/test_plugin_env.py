"""The suite passes in a user's plugin environment (tests/plugin_env.py): a distribution of one's own that provides
plugins — here a throwaway dist-info on a temporary ``sys.path`` with a backend and a kernel named like the
template's — is found as the environment's, hidden from the registry when asked, and the listings the CLI tests check
then hold uncertainty_lab's own plugins; a same-named distribution elsewhere (one a test installs) stays visible."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import plugin_env
from test_cli import check_backends_listing

from uncertainty_lab import cli, registry
from uncertainty_lab.cli import main

BUILTIN_BACKENDS = ["| embedded", "| ollama", "| replay", "| world"]


def foreign(site: Path, name: str = "ul_test_foreign") -> tuple[str, str]:
    """An installed distribution ``name`` in ``site`` providing the template's ``echo`` backend and ``triangular``
    kernel (targets that do not import: the registry lists them as broken, which counts as plugins all the same)."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[uncertainty_lab.llm_backends]\necho = {name}:Echo\n\n"
                                           f"[uncertainty_lab.kernels]\ntriangular = {name}:Triangular\n")
    return name.replace("_", "-"), str(site)


def test_a_users_own_plugin_distribution_is_hidden_and_the_listings_are_ours_again(plugin_path, capsys):
    mine = foreign(plugin_path)
    assert mine in plugin_env.foreign_distributions()
    registry.refresh()
    assert "echo" in registry.names("llm_backends") and "triangular" in registry.names("kernels")
    listed = [line.split(" | ")[0] for line in cli.plugins_markdown("llm_backends").splitlines()[2:]]
    assert listed == ["| echo", *BUILTIN_BACKENDS]  # what made test_cli fail in such an environment
    assert main(["plugins", "llm_backends"]) == 0
    check_backends_listing(capsys.readouterr().out)  # the console-script check holds with the user's rows in it

    restore = plugin_env.hide(plugin_env.foreign_distributions())
    try:
        registry.refresh()
        assert "echo" not in registry.names("llm_backends") and "triangular" not in registry.names("kernels")
        assert [line.split(" | ")[0] for line in cli.plugins_markdown("llm_backends").splitlines()[2:]] == (
            BUILTIN_BACKENDS)
        assert registry.names("kernels")  # uncertainty_lab's own stay
    finally:
        restore()
    registry.refresh()
    assert "echo" in registry.names("llm_backends")  # undone


def test_a_same_named_distribution_installed_elsewhere_stays_visible(plugin_path, tmp_path, monkeypatch):
    """As when the user installed the template itself and a test installs the template again into its own prefix:
    only the copy that was there before is hidden."""
    before = foreign(plugin_path)
    restore = plugin_env.hide([before])
    try:
        later = foreign(tmp_path / "prefix", "ul_test_foreign")
        monkeypatch.syspath_prepend(later[1])
        registry.refresh()
        assert "echo" in registry.names("llm_backends")
        echoes = [ep for ep in importlib.metadata.entry_points(group="uncertainty_lab.llm_backends") if ep.name == "echo"]
        assert [str(ep.dist.locate_file("")) for ep in echoes] == [later[1]]
    finally:
        restore()


def test_the_run_hides_what_was_installed_before_it_started():
    """tests/conftest.py hides exactly what plugin_env found at the start: in a user's environment or not, no entry
    point the registry scans belongs to a plugin distribution that was installed before the run."""
    for kind in registry.KINDS:
        seen = [plugin_env._where(ep.dist) for ep in importlib.metadata.entry_points(group=registry.group(kind))]
        assert not set(seen) & plugin_env.AT_START, kind
        assert ("uncertainty-lab", plugin_env._where(importlib.metadata.distribution("uncertainty-lab"))[1]) in seen
