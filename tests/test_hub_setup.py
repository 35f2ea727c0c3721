"""The class JupyterHub's parts that need no running hub: the student copy (``uncertainty_lab.hub``: adds what a student
lacks, never replaces their files), the deployment config's class defaults and its errors, the pre-spawn hook running
the copy as the student, and README "Teaching on a server" naming the commands tests/test_jupyterhub.py runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import types
from pathlib import Path

import pytest
from test_jupyterhub import IMPORT, READ_ONLY
from traitlets.config.loader import PyFileConfigLoader

from uncertainty_lab.hub import FOLDER, give_student_copy, main

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py"


@pytest.fixture
def source(tmp_path) -> Path:
    folder = tmp_path / "student"
    folder.mkdir()
    for name in ("00_start_here.ipynb", "01_hawkes_processes.ipynb"):
        (folder / name).write_text(f"instructor's {name}")
    return folder


def test_a_student_gets_what_they_lack_and_keeps_what_they_have(source, tmp_path):
    dest = tmp_path / "home" / FOLDER
    assert give_student_copy(source, dest) == (["00_start_here.ipynb", "01_hawkes_processes.ipynb"], [])
    (dest / "00_start_here.ipynb").write_text("my work")
    (dest / "01_hawkes_processes.ipynb").unlink()
    (dest / "01_hawkes_processes.ipynb").symlink_to(tmp_path / "elsewhere")  # a link the student made: theirs
    (source / "02_hawkesllm_cascade.ipynb").write_text("released later")
    assert give_student_copy(source, dest) == (["02_hawkesllm_cascade.ipynb"],
                                               ["00_start_here.ipynb", "01_hawkes_processes.ipynb"])
    assert (dest / "00_start_here.ipynb").read_text() == "my work"
    assert (dest / "01_hawkes_processes.ipynb").is_symlink() and not (tmp_path / "elsewhere").exists()
    assert (dest / "02_hawkesllm_cascade.ipynb").read_text() == "released later"


@pytest.mark.parametrize("make", [lambda p: None, lambda p: p.mkdir()], ids=["missing", "empty"])
def test_no_student_notebooks_is_one_error_naming_make_student(tmp_path, capsys, make):
    make(tmp_path / "student")
    assert main([str(tmp_path / "student"), str(tmp_path / "home")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: no student notebooks in {tmp_path / 'student'}: run `make student`"), err
    assert not (tmp_path / "home").exists()


def test_the_command_says_what_it_copied(source, tmp_path, capsys):
    assert main([str(source), str(tmp_path / "home")]) == 0
    assert capsys.readouterr().out == (f"{tmp_path / 'home'}: copied 2 files (00_start_here.ipynb, "
                                       "01_hawkes_processes.ipynb); kept 0 already there\n")


def load_config(tmp_path, monkeypatch, proxy: bool = True, **env: str):
    """The deployment config as JupyterHub reads it, from a copy beside a stand-in proxy (npm is not needed here)."""
    here = tmp_path / "repo" / "deploy" / "jupyterhub"
    here.mkdir(parents=True, exist_ok=True)
    shutil.copy(CONFIG, here / CONFIG.name)
    if proxy:
        (here / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
        (here / "node_modules" / ".bin" / "configurable-http-proxy").write_text("")
    for name in [k for k in os.environ if k.startswith("UL_HUB_") or k == "UL_REPLAY_DIR"]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return PyFileConfigLoader(CONFIG.name, path=str(here)).load_config()


def test_the_class_defaults(tmp_path, monkeypatch):
    c = load_config(tmp_path, monkeypatch)
    hub = tmp_path / "repo" / "build" / "hub"
    assert (c.JupyterHub.ip, c.JupyterHub.port) == ("127.0.0.1", 8000)
    assert c.JupyterHub.authenticator_class == "firstuseauthenticator.FirstUseAuthenticator"
    assert c.FirstUseAuthenticator.create_users is False and c.FirstUseAuthenticator.min_password_length == 10
    assert c.FirstUseAuthenticator.dbm_path == str(hub / "state" / "passwords.dbm")
    assert c.Authenticator.admin_users == {"instructor"} and "allowed_users" not in c.Authenticator
    assert c.JupyterHub.spawner_class == "jupyterhub.spawner.LocalProcessSpawner"
    assert c.Spawner.environment["UL_LLM"] == "replay"
    assert c.Spawner.environment["UL_REPLAY_DIR"] == str(hub / "recording")
    assert "UL_CACHE_DIR" not in c.Spawner.environment  # each student's own cache
    assert (c.Spawner.mem_limit, c.Spawner.cpu_limit) == ("2G", 1.0)
    assert c.JupyterHub.db_url == f"sqlite:///{hub / 'state' / 'jupyterhub.sqlite'}"
    assert (hub / "state").stat().st_mode & 0o077 == 0  # the database and the cookie secret: the hub's only
    [culler] = c.JupyterHub.services
    assert culler["command"][1:] == ["-m", "jupyterhub_idle_culler", "--timeout=3600", "--cull-every=300"]
    [role] = c.JupyterHub.load_roles
    assert role["services"] == ["idle-culler"] and "delete:servers" in role["scopes"] and "admin:users" not in role[
        "scopes"]


def test_settings_from_the_environment_and_their_errors(tmp_path, monkeypatch):
    roster = tmp_path / "roster.txt"
    roster.write_text("alice\nbob\n\ncarol\n")
    c = load_config(tmp_path, monkeypatch, UL_HUB_SPAWNER="simple", UL_HUB_CULL_IDLE_S="60", UL_HUB_ADMINS="ann bo",
                    UL_HUB_SSL_CERT="/etc/c.pem", UL_HUB_SSL_KEY="/etc/k.pem", UL_HUB_ROSTER=str(roster))
    assert c.Authenticator.allowed_users == {"alice", "bob", "carol"}
    assert c.JupyterHub.spawner_class == "jupyterhub.spawner.SimpleLocalProcessSpawner"
    assert c.JupyterHub.services[0]["command"][-2:] == ["--timeout=60", "--cull-every=30"]
    assert c.Authenticator.admin_users == {"ann", "bo"}
    assert (c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key) == ("/etc/c.pem", "/etc/k.pem")
    with pytest.raises(ValueError, match="UL_HUB_SPAWNER='docker': use 'local'"):
        load_config(tmp_path, monkeypatch, UL_HUB_SPAWNER="docker")
    with pytest.raises(ValueError, match="set both UL_HUB_SSL_CERT .* and UL_HUB_SSL_KEY"):
        load_config(tmp_path, monkeypatch, UL_HUB_SSL_CERT="/etc/c.pem")
    shutil.rmtree(tmp_path / "repo")
    with pytest.raises(FileNotFoundError, match=r"run `make hub-proxy` \(it needs npm.*apt-get install nodejs npm"):
        load_config(tmp_path, monkeypatch, proxy=False)


def spawner(name: str, **attrs):
    log = types.SimpleNamespace(info=lambda *a: None)
    return types.SimpleNamespace(user=types.SimpleNamespace(name=name), log=log, **attrs)


def test_the_pre_spawn_hook_copies_as_the_student(tmp_path, monkeypatch):
    """With real accounts the hub (root) runs the copy as the student — their uid, their group, no other groups — into
    their home; a failed copy is an error naming the student and saying why; an unknown name is an error saying how to
    add the account. (The copy itself is tested above; test_jupyterhub.py runs the hook in a real hub.)"""
    student = tmp_path / "student"
    hook = load_config(tmp_path, monkeypatch, UL_HUB_STUDENT=str(student)).Spawner.pre_spawn_hook
    account = types.SimpleNamespace(pw_dir="/home/alice", pw_uid=1234, pw_gid=2345)
    monkeypatch.setitem(hook.__globals__, "pwd", types.SimpleNamespace(getpwnam=lambda n: {"alice": account}[n]))
    calls, answers = [], [(0, "copied 7 files", ""), (1, "", "error: [Errno 28] No space left on device")]

    def run(command, **kwargs):
        calls.append((command, kwargs))
        return subprocess.CompletedProcess(command, *answers.pop(0))

    monkeypatch.setitem(hook.__globals__, "subprocess", types.SimpleNamespace(run=run))
    hook(spawner("alice"))
    command, kwargs = calls[0]
    assert command[1:] == ["-m", "uncertainty_lab.hub", str(student), f"/home/alice/{FOLDER}"]
    assert (kwargs["user"], kwargs["group"], kwargs["extra_groups"], kwargs["cwd"]) == (1234, 2345, [], "/")
    with pytest.raises(RuntimeError, match="could not give alice the student notebooks: error: .Errno 28. No space"):
        hook(spawner("alice"))
    with pytest.raises(RuntimeError, match=r"'stranger' has no unix account on this server: .*`useradd -m stranger`"):
        hook(spawner("stranger"))


def test_the_readme_names_the_commands_the_hub_test_runs():
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Teaching on a server\n", 1)[1].split(
        "\n## ", 1)[0]
    for command in ("make student hub-proxy", IMPORT, READ_ONLY, "make hub"):
        assert command in section, command
    assert "LocalProcessSpawner does **not**" in section and "SimpleLocalProcessSpawner" in section
    assert "FirstUseAuthenticator" in section and "UL_HUB_ROSTER" in section
