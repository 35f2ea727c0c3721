"""The class JupyterHub: one server for a class of students, each with their own copy of the student notebooks, every
language-model answer replayed from one shared, read-only class recording (README "Teaching on a server").

Start it with ``make hub`` (as root for real student accounts). The settings below are the class defaults; a few
paths and choices come from the environment so that ``make hub`` and tests/test_jupyterhub.py use this same file:

- ``UL_HUB_ROOT``     the hub's folder (default ``build/hub``): ``state/`` (database, cookie secret: root only) and
                      ``recording/`` (the class recording, world-readable, written by nobody);
- ``UL_REPLAY_DIR``   the recording folder, if not ``$UL_HUB_ROOT/recording``;
- ``UL_HUB_STUDENT``  the student notebooks (default ``build/student``, written by ``make student``);
- ``UL_HUB_SPAWNER``  ``local`` (default: each student's server runs under their own unix account, which must exist:
                      ``useradd -m NAME``; the hub runs as root) or ``simple`` (every server runs as the hub's user, with
                      a home in ``$UL_HUB_ROOT/homes``: no isolation at all — for a trial or a test, never for a class);
- ``UL_HUB_IP``, ``UL_HUB_PORT``  where the hub listens (default 127.0.0.1:8000);
- ``UL_HUB_SSL_CERT``, ``UL_HUB_SSL_KEY``  a certificate and its key: the hub then speaks HTTPS (passwords travel
                      in clear without it: set them, or a TLS reverse proxy in front, before UL_HUB_IP=0.0.0.0);
- ``UL_HUB_ADMINS``   space-separated admin names (default ``instructor``): they add and remove users at /hub/admin;
- ``UL_HUB_ROSTER``   a file of the students' names, one a line (optional: admins can add them at /hub/admin);
- ``UL_HUB_CULL_IDLE_S``  seconds of inactivity after which a student's server is stopped (default 3600).
"""

import os
import pwd
import subprocess
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (JupyterHub defines it when it reads this file)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ROOT = Path(os.environ.get("UL_HUB_ROOT") or REPO / "build" / "hub").absolute()
STATE = ROOT / "state"
RECORDING = Path(os.environ.get("UL_REPLAY_DIR") or ROOT / "recording").absolute()
STUDENT = Path(os.environ.get("UL_HUB_STUDENT") or REPO / "build" / "student").absolute()
SPAWNER = os.environ.get("UL_HUB_SPAWNER", "local")
FOLDER = "uncertainty-lab"  # each student's copy, in their home (uncertainty_lab.hub.FOLDER)
PYTHON = sys.executable  # the environment that runs the hub runs every student's server and kernels
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"

if SPAWNER not in {"local", "simple"}:
    raise ValueError(f"UL_HUB_SPAWNER={SPAWNER!r}: use 'local' (a unix account per student) or 'simple' (trials only)")
if not PROXY.exists():
    raise FileNotFoundError(f"the hub's proxy {PROXY} is not installed: run `make hub-proxy` (it needs npm, from "
                            "Node.js 20 or newer: `apt-get install nodejs npm` on Debian/Ubuntu)")
STATE.mkdir(parents=True, exist_ok=True, mode=0o700)

# --- where the hub listens and keeps its state ---------------------------------------------------------------------
c.JupyterHub.ip = os.environ.get("UL_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("UL_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
TLS = [os.environ.get(name, "") for name in ("UL_HUB_SSL_CERT", "UL_HUB_SSL_KEY")]
if any(TLS) and not all(TLS):
    raise ValueError("set both UL_HUB_SSL_CERT (the certificate) and UL_HUB_SSL_KEY (its key), or neither")
if all(TLS):
    c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = TLS
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = [str(PROXY)]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every student's server

# --- who may log in: FirstUseAuthenticator -----------------------------------------------------------------------
# Only names the hub knows may log in (create_users=False): the roster file UL_HUB_ROSTER (one name a line), names an
# admin adds at /hub/admin, and the admins. A student's first login sets their password (at least 10 characters,
# stored bcrypt-hashed in state/passwords.dbm, no unix password involved); they change it at
# /hub/auth/change-password, and an admin who deletes and re-adds a user clears it. Whoever logs in first under a name
# owns it: hand the names out in class. (NativeAuthenticator, with sign-up and approval, was the other candidate: its
# 1.3.0 login page fails on JupyterHub 6 — "'LoginHandler' object has no attribute 'statsd'".)
c.JupyterHub.authenticator_class = "firstuseauthenticator.FirstUseAuthenticator"
c.FirstUseAuthenticator.create_users = False
c.FirstUseAuthenticator.min_password_length = 10
c.FirstUseAuthenticator.dbm_path = str(STATE / "passwords.dbm")
c.Authenticator.admin_users = set(os.environ.get("UL_HUB_ADMINS", "instructor").split())
if os.environ.get("UL_HUB_ROSTER"):
    c.Authenticator.allowed_users = set(Path(os.environ["UL_HUB_ROSTER"]).read_text(encoding="utf-8").split())

# --- each student's server ----------------------------------------------------------------------------------------
if SPAWNER == "local":
    c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
else:
    c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
    c.SimpleLocalProcessSpawner.home_dir_template = str(ROOT / "homes" / "{username}")
    if os.geteuid() == 0:  # every server then runs as root, which Jupyter refuses unless told
        c.Spawner.args = ["--allow-root"]
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = f"/lab/tree/{FOLDER}/00_start_here.ipynb"
c.Spawner.environment = {
    "UL_LLM": "replay",  # every get_llm("auto") answers from the recording; a request it lacks is an error
    "UL_REPLAY_DIR": str(RECORDING),  # read-only, shared: opened immutable, nothing is ever written beside it
    "PATH": os.pathsep.join([str(Path(PYTHON).parent), "/usr/local/bin", "/usr/bin", "/bin"]),  # uncertainty-lab CLI
    "OMP_NUM_THREADS": "1",  # torch and BLAS in a kernel use one core each: many students share the machine
    "TQDM_DISABLE": "1",
}
# UL_CACHE_DIR is not set: each student's own cache is ~/.cache/uncertainty-lab (writable, theirs).
c.Spawner.env_keep = ["JUPYTERHUB_SINGLEUSER_APP", "PYTHONPATH"]  # a PYTHONPATH the hub needed, its servers need too

# Limits per student. LocalProcessSpawner does NOT enforce these: it only passes them to the server as MEM_LIMIT and
# CPU_LIMIT (shown by jupyter-resource-usage, when installed). To enforce them, run each server in its own cgroup with
# jupyterhub-systemdspawner (pip install jupyterhub-systemdspawner, then
# c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner": it applies mem_limit as MemoryMax and cpu_limit as
# CPUQuota), or run the hub in a container per student (DockerSpawner). README "Teaching on a server" says more.
c.Spawner.mem_limit = "2G"  # a kernel that ran notebook 00 on the recording peaked at 0.7 GB (measured)
c.Spawner.cpu_limit = 1.0
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 60


def give_student_copy(spawner):
    """Before a server starts: copy the student notebooks the student lacks into ~/uncertainty-lab, never replacing a
    file (their work). With real accounts the copy runs as the student (``uncertainty_lab.hub``), so the files are
    theirs and no link they made can turn the hub's root rights into a write elsewhere."""
    name = spawner.user.name
    if SPAWNER == "simple":
        home, as_student = Path(spawner.home_dir), {}
        home.mkdir(parents=True, exist_ok=True)
    else:
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            raise RuntimeError(f"{name!r} has no unix account on this server: an admin creates it with "
                               f"`useradd -m {name}`") from None
        home = Path(account.pw_dir)
        as_student = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    env = {"PATH": "/usr/bin:/bin", **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}}
    done = subprocess.run([PYTHON, "-m", "uncertainty_lab.hub", str(STUDENT), str(home / FOLDER)], cwd="/", env=env,
                          capture_output=True, text=True, timeout=60, **as_student)
    if done.returncode != 0:
        raise RuntimeError(f"could not give {name} the student notebooks: {done.stderr.strip() or done.stdout.strip()}")
    spawner.log.info("%s", done.stdout.strip())


c.Spawner.pre_spawn_hook = give_student_copy

# --- idle culling -------------------------------------------------------------------------------------------------
# A hub service stops every server idle for UL_HUB_CULL_IDLE_S seconds (the student's files stay; their next login
# starts a fresh server). Its role grants only what it needs.
CULL_IDLE_S = int(os.environ.get("UL_HUB_CULL_IDLE_S", "3600"))
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [PYTHON, "-m", "jupyterhub_idle_culler", f"--timeout={CULL_IDLE_S}",
                f"--cull-every={max(1, min(300, CULL_IDLE_S // 2))}"],
    "environment": {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
}]
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
