"""The run folder: checked before a run, locked while it writes, files the lab did not write never replaced, unit
file names injective."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from uncertainty_lab.outdir import Manifest, OutDirError, OutDirLock, check_out_dir, unit_file_name


def test_unit_file_names_are_readable_and_injective():
    assert unit_file_name("2hop__1_2") == "2hop__1_2"  # a safe id is kept as it is
    ids = ["2hop__1 a", "2hop__1/a", "2hop__1_a", "2hop__1?a", "2HOP__1_A", "x" * 300, "x" * 301, ".hidden", "",
           "ünï", "a\x00b"]
    names = [unit_file_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert len({n.lower() for n in names}) == len(ids)  # distinct on a case-insensitive file system too
    for n in names:
        assert 0 < len(n) <= 80 and "/" not in n and "\x00" not in n and not n.startswith(".")
    assert names[0].startswith("2hop__1_a~")


def test_out_dir_that_cannot_be_used_is_one_error_naming_it(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    cases = {tmp_path / "file": "is a file, not a folder", tmp_path / "file" / "sub": "is a file, so no folder",
             tmp_path / "dangling": "points at nothing", tmp_path / "loop1": "points at nothing",
             tmp_path / ("n" * 300): "cannot be used", "/proc/1/ul_results": "cannot be"}
    for path, why in cases.items():
        with pytest.raises(OutDirError, match=f"out_dir .*{why}.*choose another out_dir"):
            check_out_dir(path, create=True)
    with pytest.raises(OutDirError, match="out_dir must be a folder path"):
        check_out_dir(5)
    assert check_out_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # a check creates nothing
    assert check_out_dir(tmp_path / "new", create=True).is_dir()


def test_a_second_run_into_a_locked_folder_names_the_holder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from uncertainty_lab.outdir import OutDirLock
        with OutDirLock({str(tmp_path)!r}):
            print("locked", flush=True)
            sys.stdin.readline()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutDirError, match=rf"is in use by process {holder.pid} .*wait for that run"):
            with OutDirLock(tmp_path):
                pass
    finally:
        holder.communicate("\n", timeout=30)
    with OutDirLock(tmp_path):  # released when the holder ended
        pass


def test_manifest_vouches_only_for_what_the_lab_wrote(tmp_path):
    mine, theirs = tmp_path / "results.json", tmp_path / "summary.md"
    mine.write_text("{}")
    Manifest(tmp_path).record([mine])
    theirs.write_text("my notes")
    assert Manifest(tmp_path).foreign([mine, theirs]) == [theirs]
    mine.write_text('{"edited": true}')
    assert Manifest(tmp_path).foreign([mine]) == [mine]  # changed since: no longer vouched for
    (tmp_path / ".uncertainty_lab-files.json").write_text("[broken")
    assert Manifest(tmp_path).foreign([mine]) == [mine]


def test_a_folder_from_before_manifests_vouches_by_its_journals(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.jsonl").write_text(json.dumps({"type": "header", "format": "uncertainty_lab.search/1"})
                                               + "\n")
    (tmp_path / "summary.md").write_text("old report")
    assert Manifest(tmp_path).foreign([tmp_path / "summary.md"]) == [tmp_path / "summary.md"]
    Manifest(tmp_path).adopt()  # what a run does first
    assert Manifest(tmp_path).foreign([tmp_path / "summary.md"]) == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "summary.md").write_text("mine")
    Manifest(other).adopt()  # no journals: nothing is adopted
    assert Manifest(other).foreign([other / "summary.md"]) == [other / "summary.md"]


def test_a_run_never_replaces_a_report_it_did_not_write(tmp_path):
    from uncertainty_lab.search.experiment import run_experiment

    config = {"llm": "oracle", "limit": 1, "max_steps": 1, "figure": False, "progress": False,
              "out_dir": str(tmp_path)}
    (tmp_path / "results.json").write_text('{"mine": 1}')
    with pytest.raises(OutDirError, match="holds results.json, which this lab did not write.*overwrite = true"):
        run_experiment(config)
    assert (tmp_path / "results.json").read_text() == '{"mine": 1}'
    assert not (tmp_path / "episodes").exists()  # refused before any episode ran
    os.remove(tmp_path / "results.json")
    first = run_experiment(config)
    again = run_experiment(config)  # its own files are replaced on a rerun
    assert again.files["results"] == first.files["results"]
    (tmp_path / "summary.md").write_text("edited by hand")
    run_experiment({**config, "overwrite": True})
    assert (tmp_path / "summary.md").read_text() != "edited by hand"


@pytest.mark.parametrize("lab, setting", [("cascade", "steps"), ("search", "max_steps"), ("orchestrate", "n_samples")])
def test_a_count_past_its_cap_is_refused_naming_the_cap(lab, setting, tmp_path, capsys):
    from uncertainty_lab.cli import main
    from uncertainty_lab.lab import CAPS

    cfg = tmp_path / "c.toml"
    cfg.write_text(f"{setting} = 1000000000\n", encoding="utf-8")
    assert main([lab, "run", "--config", str(cfg), "--check"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{setting} = 1000000000 is over its cap of {CAPS[setting]}" in err[0]
    assert not (tmp_path / "results").exists()


def test_never_more_workers_than_units_and_a_workers_cap():
    from types import SimpleNamespace

    from uncertainty_lab.executors.plan import MAX_WORKERS, check_settings, make_executor

    config = SimpleNamespace(executor="processes", workers=6, scheduler=None, error=ValueError)
    assert make_executor(config, units=2).workers == 2
    assert make_executor(config).workers == 6
    with pytest.raises(ValueError, match=f"workers = 1000000000 is over the cap of {MAX_WORKERS}"):
        check_settings(SimpleNamespace(executor="processes", workers=10**9, scheduler=None, llm_hosts=None,
                                       error=ValueError))


def test_two_units_that_would_share_a_run_file_are_refused(tmp_path):
    from uncertainty_lab.lab import Experiment, LabConfig, Unit

    units = [Unit(("a",), "ollama:a/b", tmp_path / "ollama_a_b.jsonl"),
             Unit(("b",), "ollama:a_b", tmp_path / "ollama_a_b.jsonl")]
    with pytest.raises(ValueError, match="'ollama:a/b' and 'ollama:a_b' would share the run file"):
        Experiment().check_units(LabConfig(), units)
    assert Experiment().check_units(LabConfig(), units[:1]) == units[:1]
