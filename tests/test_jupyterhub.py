"""The class JupyterHub of README "Teaching on a server" (deploy/jupyterhub/jupyterhub_config.py, unchanged but for the
spawner, the ports and a test token): notebook 00 is recorded in fast mode and exported, the export imported into the
hub's read-only recording folder with the README's command; the hub starts on 127.0.0.1 with its proxy from npm and its
idle culler; three students are created through its REST API, their servers started, and notebook 00 of each
student's own copy runs in a kernel of their server through its REST and websocket API. Every answer must come from
the shared recording, which nothing writes; a fourth student given an empty recording must fail; everything stops.

SimpleLocalProcessSpawner stands in for LocalProcessSpawner (that one needs a unix account per student); the class's
authenticator (FirstUseAuthenticator) is the real one: a student's first login sets their password. The servers are
driven with a service token."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import psutil
import pytest
from hub_client import Hub, free_port

from uncertainty_lab.classroom import write_student_versions
from uncertainty_lab.llm.cache_file import FILE_NAME
from uncertainty_lab.tour import errors_of, execute, kernel_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "jupyterhub"
PROXY = DEPLOY / "node_modules" / ".bin" / "configurable-http-proxy"
NOTEBOOK = "00_start_here.ipynb"
STUDENTS = ("alice", "bob", "carol")  # carol already has a notebook 00 of her own: it must stay hers
UNRECORDED = "dave"  # given an empty recording: the answers check must fail for him
FOLDER = "uncertainty-lab"
MARK = "carol's own notes: the hub must never overwrite this notebook"
# README "Teaching on a server", run here from a stand-in for the repository root (the hub's folder: build/hub)
IMPORT = "UL_CACHE_DIR=build/hub/recording .venv/bin/uncertainty-lab cache import class.sqlite"
READ_ONLY = "chmod -R a=rX build/hub/recording"

# `jupyterhub`, with Ctrl-C's signal handled as usual even where this process was started ignoring it (a background
# job): the hub's services inherit that, and a culler ignoring SIGINT holds the hub's shutdown 30 s.
START = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); from jupyterhub.app import main; main()"

TEST_CONFIG = """
load_subconfig({config!r})
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.JupyterHub.services.append({{"name": "test", "api_token": {token!r}}})
c.JupyterHub.load_roles.append({{"name": "test", "services": ["test"], "scopes": [
    "admin:users", "admin:servers", "admin:server_state", "access:servers", "list:users", "read:users"]}})
c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}  # a POST to start a server returns at once
c.Spawner.environment["UL_FAST"] = "1"  # the recording was made in fast mode
c.Spawner.environment["UL_REPLAY_DIR"] = lambda spawner: {empty!r} if spawner.user.name == {unrecorded!r} else {shared!r}
"""


@dataclass
class ClassHub:
    """The running hub's client, its folders, its log, and every process it started."""

    hub: Hub
    root: Path
    recording: Path
    log: Path
    process: subprocess.Popen
    processes: list[psutil.Process] = field(default_factory=list)

    def pids(self) -> list[psutil.Process]:
        """The hub and everything under it now (proxy, culler, students' servers, their kernels)."""
        found = [psutil.Process(self.process.pid)]
        with contextlib.suppress(psutil.NoSuchProcess):
            found += found[0].children(recursive=True)
        return found


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def run_cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``.venv/bin/uncertainty-lab ARGS`` (this interpreter's), in ``cwd``, with ``env`` added."""
    return subprocess.run([sys.executable, "-m", "uncertainty_lab.cli", *args], cwd=cwd, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


def record_notebook_00(root: Path) -> Path:
    """README "Running a class" step 2 for notebook 00 alone, in fast mode: run it with ``UL_CACHE_DIR=class-cache``
    from ``root``, export ``class.sqlite`` there. Returns the export."""
    with contextlib.chdir(root):
        env = kernel_env(fast=True, mpl_dir=root / "mpl",
                         base={**{k: v for k, v in os.environ.items() if k != "UL_LLM"}, "UL_CACHE_DIR": "class-cache"})
    nb = nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4)
    execute(nb, cwd=ROOT / "notebooks", env=env)
    assert not errors_of(nb), "recording notebook 00 failed:\n" + "\n".join(errors_of(nb))
    done = run_cli("cache", "export", "class.sqlite", cwd=root, UL_CACHE_DIR="class-cache")
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "class.sqlite"


def make_recordings(root: Path) -> tuple[Path, Path]:
    """The class recording as the README makes it (import, then read-only), and an empty one for the failing case."""
    assert (root / "class.sqlite").is_file()
    shared = root / "build" / "hub" / "recording"
    var, _, command = IMPORT.partition(" .venv/bin/uncertainty-lab ")
    done = run_cli(*command.split(), cwd=root, **dict([var.split("=", 1)]))
    assert done.returncode == 0 and "imported" in done.stdout, done.stdout + done.stderr
    subprocess.run(READ_ONLY.split(), cwd=root, check=True)
    empty = root / "empty-recording"
    empty.mkdir()
    sqlite3.connect(empty / FILE_NAME).executescript(
        "CREATE TABLE completions (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, "
        "request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL)").close()
    return shared, empty


def carols_notebook(student: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(student / NOTEBOOK, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(MARK))
    return nb


def start_hub(root: Path, shared: Path, empty: Path) -> ClassHub:
    token, port = secrets.token_hex(16), free_port()
    config = root / "test_config.py"
    config.write_text(TEST_CONFIG.format(config=str(DEPLOY / "jupyterhub_config.py"), hub_port=free_port(),
                                         api_port=free_port(), token=token, empty=str(empty), shared=str(shared),
                                         unrecorded=UNRECORDED))
    env = {**os.environ, "UL_HUB_ROOT": str(root / "build" / "hub"), "UL_HUB_STUDENT": str(root / "student"),
           "UL_HUB_SPAWNER": "simple", "UL_HUB_PORT": str(port), "UL_HUB_CULL_IDLE_S": "3600"}
    log = root / "hub.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-c", START, "-f", str(config)], cwd=root, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    hub = ClassHub(Hub(f"http://127.0.0.1:{port}", token), root, shared, log, process)
    try:
        hub.hub.wait_until_up(60, alive=lambda: process.poll() is None)
    except AssertionError as exc:
        stop_hub(hub)
        raise AssertionError(f"{exc}\n--- hub log ---\n{log.read_text()[-6000:]}") from None
    return hub


def stop_hub(hub: ClassHub) -> None:
    """Clean-up whatever happened: SIGINT to the hub, as Ctrl-C (it stops the servers and the proxy it started); after
    30 s SIGKILL to it, and to every process it had started that is left."""
    if hub.process.poll() is None:
        hub.processes += [p for p in hub.pids() if p not in hub.processes]
        hub.process.send_signal(signal.SIGINT)
        try:
            hub.process.wait(30)
        except subprocess.TimeoutExpired:
            hub.process.kill()
    _, alive = psutil.wait_procs(hub.processes, timeout=10)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()


@pytest.fixture(scope="module")
def class_hub(tmp_path_factory):
    """The student copies (carol's notebook 00 already edited), the hub with four running servers, and the recording
    (made while the hub and the servers start: the kernels read it only when a notebook runs)."""
    assert PROXY.exists(), (f"the hub's proxy {PROXY} is not installed: run `make hub-proxy` (it needs npm, from "
                            "Node.js 20 or newer: `apt-get install nodejs npm` on Debian/Ubuntu); `make test` runs it")
    root = tmp_path_factory.mktemp("class_server")
    start = time.perf_counter()
    write_student_versions(ROOT / "notebooks", root / "student")
    carol = root / "build" / "hub" / "homes" / "carol" / FOLDER
    carol.mkdir(parents=True)
    nbformat.write(carols_notebook(root / "student"), carol / NOTEBOOK)
    shared, empty = root / "build" / "hub" / "recording", root / "empty-recording"
    with ThreadPoolExecutor(1) as pool:
        recording = pool.submit(lambda: (record_notebook_00(root), make_recordings(root)))
        hub = start_hub(root, shared, empty)
        try:
            names = [*STUDENTS, UNRECORDED]
            hub.hub.api("POST", "users", json={"usernames": names})
            for name in names:
                hub.hub.api("POST", f"users/{name}/server")
            for name in names:
                hub.hub.wait_for_server(name, timeout=120)
            print(f"hub and {len(names)} servers up after {time.perf_counter() - start:.1f} s")
            assert recording.result()[1] == (shared, empty)
            print(f"notebook 00 recorded and imported after {time.perf_counter() - start:.1f} s")
        except BaseException:
            stop_hub(hub)
            raise
    try:
        yield hub
    finally:
        stop_hub(hub)


def recorded_texts(recording: Path) -> set[str]:
    """Every answer text in the recording, written as notebook 00's table writes one."""
    con = sqlite3.connect(f"{(recording / FILE_NAME).as_uri()}?immutable=1", uri=True)
    try:
        return {json.loads(r)["text"].strip().replace("|", "/").replace("\n", " ")
                for (r,) in con.execute("SELECT response FROM completions")}
    finally:
        con.close()


def answer_problems(nb: nbformat.NotebookNode, recorded: set[str]) -> list[str]:
    """What says notebook 00 did not answer from the class recording: an error (replay raises on a request the
    recording lacks), no line saying replay was chosen, or an answer in its table that the recording does not hold."""
    problems = [e.splitlines()[0] for e in errors_of(nb)]
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.output_type == "stream")
    if not re.search(r"uncertainty_lab: using replay:\S+ \(UL_LLM=replay\)", printed):
        problems.append(f"no line saying the replay backend was chosen; printed: {printed[:300]!r}")
    tables = [o["data"]["text/markdown"] for c in nb.cells for o in c.get("outputs", [])
              if "text/markdown" in o.get("data", {}) and "| # | answer |" in o["data"]["text/markdown"]]
    if len(tables) != 1:
        return [*problems, f"expected one answers table, found {len(tables)}"]
    answers = re.findall(r"^\| \d \| (.*) \| (?:-?\d+\.\d\d|n/a) \| \w+ \|$", tables[0], re.M)
    if len(answers) != 5:
        problems.append(f"expected 5 answers in the table, found {len(answers)}")
    problems += [f"answer not in the recording: {a!r}" for a in answers if a.strip() not in recorded]
    return problems


def test_three_students_run_notebook_00_on_the_shared_recording(class_hub):
    hub = class_hub.hub
    before = snapshot(class_hub.recording)
    recorded = recorded_texts(class_hub.recording)
    assert len(recorded) >= 3, recorded  # notebook 00 samples five answers; a tiny model repeats some

    for name in STUDENTS:  # each has their copy: every student notebook, carol's own 00 untouched
        listing = hub.server_api(name, "GET", f"contents/{FOLDER}")
        assert sorted(f["name"] for f in listing["content"]) == sorted(p.name for p in (class_hub.root / "student")
                                                                    .glob("*.ipynb"))
        first = hub.notebook(name, f"{FOLDER}/{NOTEBOOK}").cells[0].source
        assert (first == MARK) == (name == "carol"), (name, first[:80])
        opens = hub.http.get(f"{hub.url}/user/{name}/", allow_redirects=False, timeout=60)  # what a login lands on
        assert opens.status_code == 302, opens.status_code
        assert opens.headers["Location"].split("?")[0] == f"/user/{name}/lab/tree/{FOLDER}/{NOTEBOOK}", opens.headers

    with ThreadPoolExecutor(len(STUDENTS)) as pool:  # the three kernels read the one recording at the same time
        runs = dict(zip(STUDENTS, pool.map(lambda n: hub.run_notebook(n, f"{FOLDER}/{NOTEBOOK}"), STUDENTS),
                        strict=True))
    for name, nb in runs.items():
        assert answer_problems(nb, recorded) == [], f"{name}: " + "\n".join(errors_of(nb))
        assert any(o.get("data", {}).get("image/png") for c in nb.cells for o in c.get("outputs", [])), (
            f"{name}: notebook 00 showed no heat-map")
    assert snapshot(class_hub.recording) == before, "a student's kernel wrote into the shared recording folder"


def test_a_student_without_the_recording_fails_the_same_check(class_hub):
    """dave's server replays an empty recording: the first request of notebook 00 is an error, which the check of the
    test above reports — so that check can fail."""
    nb = class_hub.hub.run_notebook(UNRECORDED, f"{FOLDER}/{NOTEBOOK}")
    problems = answer_problems(nb, recorded_texts(class_hub.recording))
    assert problems and "holds no answers from backend 'embedded'" in problems[0], problems


def test_the_idle_culler_runs_with_its_role(class_hub):
    """The culler service was started by the hub and listed the users with its own token (a 200 the hub logged for
    it): its role grants what it needs."""
    deadline = time.monotonic() + 30
    pattern = re.compile(r"200 GET /hub/api/users\S* \(idle-culler@")
    while not pattern.search(class_hub.log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.5)
    log = class_hub.log.read_text()
    assert pattern.search(log), log[-4000:]
    assert not re.search(r"40[13] \w+ /hub/api/\S* \(idle-culler@", log), log[-4000:]


def test_a_student_logs_in_with_the_password_of_their_first_login(class_hub):
    """The login form through the proxy: bob's first login sets his password; then only that password lets him in; a
    name the hub does not know and a password under 10 characters never get in."""
    hub = class_hub.hub
    assert hub.login("bob", "first-login-pw")
    assert hub.login("bob", "first-login-pw")
    assert not hub.login("bob", "another-password")
    assert not hub.login("mallory", "first-login-pw")  # never created: FirstUse makes no users
    assert not hub.login("alice", "short")
    assert hub.login("alice", "alices-password")


def test_stopping_the_servers_and_the_hub_leaves_no_process(class_hub):
    """Runs last in this file: the servers stopped through the API, then the hub with Ctrl-C's signal; it exits by
    itself within 30 s, and nothing it started (proxy, culler, servers, kernels) is left running."""
    hub = class_hub.hub
    class_hub.processes += class_hub.pids()
    assert len(class_hub.processes) >= 1 + 1 + 1 + 4  # hub, proxy, culler, a server for each of the four
    servers = [n for n in (*STUDENTS, UNRECORDED) if hub.api("GET", f"users/{n}")["servers"]]
    assert servers == [*STUDENTS, UNRECORDED]
    with ThreadPoolExecutor(len(servers)) as pool:  # each waits for its server to shut down
        list(pool.map(lambda name: hub.api("DELETE", f"users/{name}/server"), servers))
    deadline = time.monotonic() + 60
    while any(hub.api("GET", f"users/{n}")["servers"] for n in servers) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(hub.api("GET", f"users/{n}")["servers"] for n in servers), "a server did not stop"
    class_hub.process.send_signal(signal.SIGINT)
    assert class_hub.process.wait(30) == 0, class_hub.log.read_text()[-3000:]
    _, left = psutil.wait_procs(class_hub.processes, timeout=10)
    assert not left, f"still running after the hub stopped: {[(p.pid, p.cmdline()[:3]) for p in left]}"
