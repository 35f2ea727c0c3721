"""A client of a JupyterHub's REST API and of a student server's REST and kernel websocket API, as a browser tab uses
them through the hub's proxy: no kernel is started here, every cell runs in the student's server
(tests/test_jupyterhub.py)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import nbformat
import requests
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

CELL_TIMEOUT = 180  # seconds for one cell of notebook 00 (a fresh kernel's first imports on a busy 2-core machine)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    """The hub at ``url`` (the proxy's public address), spoken to with a service ``token``."""

    def __init__(self, url: str, token: str):
        self.url, self.token = url.rstrip("/"), token
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {token}"

    def api(self, method: str, path: str, **kwargs) -> Any:
        """The JSON of ``method /hub/api/path``; an error status is an AssertionError with the hub's answer."""
        reply = self.http.request(method, f"{self.url}/hub/api/{path}", timeout=60, **kwargs)
        assert reply.ok, f"{method} /hub/api/{path}: {reply.status_code} {reply.text[:500]}"
        return reply.json() if reply.content else None

    def wait_until_up(self, timeout: float, alive) -> None:
        """Poll the hub's API until it answers (``alive()`` false means the hub process died: stop at once)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert alive(), "the hub exited while starting (its log is in the failure above)"
            try:
                if self.http.get(f"{self.url}/hub/api/", timeout=5).ok:
                    return
            except requests.ConnectionError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"the hub did not answer at {self.url} within {timeout} s")

    def login(self, name: str, password: str) -> bool:
        """Whether the hub's login form, as a browser posts it (a fresh session, its xsrf cookie), lets ``name`` in."""
        browser = requests.Session()
        browser.get(f"{self.url}/hub/login", timeout=30)
        reply = browser.post(f"{self.url}/hub/login", timeout=30, allow_redirects=False,
                             data={"username": name, "password": password, "_xsrf": browser.cookies.get("_xsrf", "")})
        assert reply.status_code in {200, 302, 403}, f"login of {name}: {reply.status_code} {reply.text[:300]}"
        return reply.status_code == 302 and "jupyterhub-session-id" in browser.cookies

    def wait_for_server(self, name: str, timeout: float) -> dict:
        """The user's model once their default server is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            user = self.api("GET", f"users/{name}")
            server = user["servers"].get("", {})
            if server.get("ready"):
                return user
            time.sleep(0.5)
        raise AssertionError(f"{name}'s server was not ready within {timeout} s: {user}")

    def server_api(self, name: str, method: str, path: str, **kwargs) -> Any:
        """The JSON of ``method /user/NAME/api/path`` on the student's own server, through the proxy."""
        reply = self.http.request(method, f"{self.url}/user/{name}/api/{path}", timeout=60, **kwargs)
        assert reply.ok, f"{method} /user/{name}/api/{path}: {reply.status_code} {reply.text[:500]}"
        return reply.json() if reply.content else None

    def notebook(self, name: str, path: str) -> nbformat.NotebookNode:
        """The notebook at ``path`` in the student's folder, read through their server's contents API."""
        model = self.server_api(name, "GET", f"contents/{quote(path)}", params={"content": "1"})
        return nbformat.from_dict(model["content"])

    def run_notebook(self, name: str, path: str) -> nbformat.NotebookNode:
        """The student's notebook at ``path`` run top to bottom in a kernel of their server (a session for that path,
        so the kernel starts in the notebook's folder); stops at the first cell with an error, as a run-all does. The
        kernel is shut down afterwards."""
        nb = self.notebook(name, path)
        session = self.server_api(name, "POST", "sessions", json={"path": path, "type": "notebook", "name": path,
                                                                   "kernel": {"name": "python3"}})
        try:
            asyncio.run(self._execute(name, session["kernel"]["id"], nb))
        finally:
            self.server_api(name, "DELETE", f"sessions/{session['id']}")
        return nb

    async def _execute(self, name: str, kernel: str, nb: nbformat.NotebookNode) -> None:
        ws_url = self.url.replace("http", "ws", 1) + f"/user/{name}/api/kernels/{kernel}/channels"
        request = HTTPRequest(f"{ws_url}?session_id={uuid.uuid4().hex}",
                              headers={"Authorization": f"token {self.token}"})
        ws = await websocket_connect(request, max_message_size=64 << 20)
        try:
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs = await _run_cell(ws, cell.source)
                    if any(o.output_type == "error" for o in cell.outputs):
                        return
        finally:
            ws.close()


async def _run_cell(ws, code: str) -> list:
    """Send one ``execute_request`` and collect its outputs until the kernel is idle again and has replied."""
    msg_id = uuid.uuid4().hex
    header = {"msg_id": msg_id, "msg_type": "execute_request", "username": "test", "session": uuid.uuid4().hex,
              "date": datetime.now(UTC).isoformat(), "version": "5.3"}
    await ws.write_message(json.dumps({
        "header": header, "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    outputs, idle, replied = [], False, False
    deadline = time.monotonic() + CELL_TIMEOUT
    while not (idle and replied):
        raw = await asyncio.wait_for(ws.read_message(), max(0.1, deadline - time.monotonic()))
        if raw is None:
            raise ConnectionError("the kernel's websocket closed while a cell ran")
        if isinstance(raw, bytes):  # a message with binary buffers (a widget's): not an output of ours
            continue
        msg = json.loads(raw)
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if msg["channel"] == "shell" and kind == "execute_reply":
            replied = True
        elif kind == "status":
            idle = msg["content"]["execution_state"] == "idle"
        elif kind in {"stream", "display_data", "execute_result", "error"}:
            outputs.append(nbformat.v4.output_from_msg(msg))
    return outputs
