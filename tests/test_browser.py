"""The lab as a person sees it: JupyterLab on loopback, ``00_start_here.ipynb`` opened in headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, driven by Selenium against the system chromedriver, so
nothing is downloaded), Run ▸ Run All Cells clicked in the menu, then: every code cell ran, no output
shows an error, the plugin picker's controls render, and choosing another backend in its dropdown rebuilds
the controls and reaches the kernel. Screenshots go to ``build/browser/``.

Skips (with the command that fixes it) where Chromium is not installed; ``.ci/run`` installs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from uncertainty_lab.cli import lab_command
from uncertainty_lab.tour import kernel_env

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SHOTS = ROOT / "build" / "browser"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
NOTEBOOK = "00_start_here.ipynb"
SERVER_START_TIMEOUT = 120
KERNEL_READY_TIMEOUT = 120
RUN_ALL_TIMEOUT = 300

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="Chromium not installed: apt-get install chromium chromium-driver (see .ci/run)")


# --- JupyterLab ---------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 serving a copy of notebooks/, isolated from the user's Jupyter
    config, data, settings and completion cache."""

    def __init__(self, tmp: Path):
        self.root = tmp / "notebooks"
        shutil.copytree(NOTEBOOKS, self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        self.port = free_port()
        self.token = os.urandom(16).hex()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / "lab.log"
        jupyter = tmp / "jupyter"
        settings = jupyter / "config" / "lab" / "user-settings"
        notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        notification.parent.mkdir(parents=True)
        # no "get notified about Jupyter news?" toast over the notebook, and no request for it
        notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env = kernel_env(fast=True, cache_dir=tmp / "cache", mpl_dir=tmp / "mpl")
        env.update(JUPYTER_CONFIG_DIR=str(jupyter / "config"), JUPYTER_DATA_DIR=str(jupyter / "data"),
                   JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(settings),
                   JUPYTERLAB_WORKSPACES_DIR=str(jupyter / "workspaces"))
        self.argv = lab_command(self.root, port=self.port, no_browser=True) + [
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.open_browser=False", "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.argv, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def log_tail(self, n: int = 40) -> str:
        self._log.flush()
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-n:])

    def api(self, path: str, method: str = "GET", timeout: float = 5) -> bytes:
        req = urllib.request.Request(f"{self.base}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                json.loads(self.api("/api/status", timeout=2))
                return
            except (OSError, ValueError):
                time.sleep(0.5)
        pytest.fail(f"JupyterLab did not answer /api/status within {SERVER_START_TIMEOUT} s:\n{self.log_tail()}")

    def url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?token={self.token}"

    def stop(self) -> None:
        """Ask the server to shut down (it stops its kernels), then make sure its process group is gone."""
        if self.proc.poll() is None:
            try:
                self.api("/api/shutdown", method="POST")
            except (OSError, urllib.error.URLError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(timeout=10)
        self._log.close()


@pytest.fixture
def lab(tmp_path):
    server = Lab(tmp_path)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


# --- Chromium -----------------------------------------------------------------------------------------

@pytest.fixture
def browser(tmp_path, monkeypatch):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    # Selenium Manager (which may download a browser or driver) must never run: the driver path is given,
    # and offline mode is set for anything that would reach it anyway.
    monkeypatch.setenv("SE_OFFLINE", "true")
    monkeypatch.setenv("SE_AVOID_STATS", "true")

    def no_manager(*args, **kwargs):
        raise AssertionError("Selenium Manager was asked for a driver; the test must use /usr/bin/chromedriver")

    monkeypatch.setattr(SeleniumManager, "binary_paths", no_manager)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1400", f"--user-data-dir={tmp_path / 'chromium'}"):
        options.add_argument(arg)
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


# --- the page -----------------------------------------------------------------------------------------

PROMPTS_JS = """
return Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt'))
            .map(e => e.textContent.trim());
"""
# the status bar's kernel item reads e.g. "Python 3 (ipykernel) | Idle" once a kernel is connected and idle
# (the toolbar's execution indicator says "idle" already before any kernel is attached)
STATUS_JS = """
const e = Array.from(document.querySelectorAll('.jp-StatusBar-TextItem'))
                .find(e => (e.getAttribute('title') || '').startsWith('Change kernel'));
const m = e ? e.textContent.match(/\\|\\s*(\\S+)\\s*$/) : null;
return m ? m[1].toLowerCase() : null;
"""
# JupyterLab renders an error output as text with the stderr mime type, as it does a stderr stream (a
# warning, a progress bar): an error is told apart by its traceback (checked by hand against a `1/0` cell).
STDERR_JS = """
return Array.from(document.querySelectorAll(
  '.jp-NotebookPanel .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"],' +
  '.jp-NotebookPanel .jp-OutputArea-output [data-mime-type="application/vnd.jupyter.stderr"],' +
  '.jp-NotebookPanel [data-mime-type="application/vnd.jupyter.error"]')).map(e => e.textContent);
"""
OUTPUT_TEXT_JS = """
return Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output')).map(e => e.textContent);
"""
ERROR_PATTERN = re.compile(r"Traceback|\b\w*(Error|Exception)\b:|Error displaying widget|Javascript Error")


def wait_for(driver, condition, timeout: float, what: str, poll: float = 0.5):
    """Poll ``condition(driver)`` until it returns something truthy; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = condition(driver)
        except AssertionError:
            raise
        except Exception as exc:  # a stale element while JupyterLab re-renders: look again
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


DIALOG_JS = """
const d = document.querySelector('.jp-Dialog');
return d ? d.textContent : null;
"""


def all_cells_ran(driver):
    dialog = driver.execute_script(DIALOG_JS)
    assert not dialog, f"JupyterLab shows a dialog instead of running the cells: {dialog}"
    if driver.execute_script(STATUS_JS) == "idle":  # Run All stops at an error: say so now, not at the timeout
        errors = [t for t in driver.execute_script(STDERR_JS) if ERROR_PATTERN.search(t)]
        assert not errors, "a cell shows an error in the browser:\n\n" + "\n\n".join(errors)
    prompts = driver.execute_script(PROMPTS_JS)
    ran = bool(prompts) and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts)
    return prompts if ran and driver.execute_script(STATUS_JS) == "idle" else None


def click_menu(driver, menu: str, item: str) -> None:
    """Open ``menu`` in JupyterLab's menu bar and click its item labelled ``item``, as a person would."""
    from selenium.webdriver.common.by import By

    label = wait_for(driver, lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-itemLabel")
                                             if e.text.strip() == menu), None), 10, f"the {menu} menu")
    label.click()
    entry = wait_for(driver, lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, ".lm-Menu li.lm-Menu-item")
                                             if e.is_displayed() and "lm-mod-disabled" not in e.get_attribute("class")
                                             and e.text.strip().startswith(item)), None),
                     10, f"the menu item {menu} > {item}")
    entry.click()


def picker_area(driver):
    """The output area that holds the plugin picker (its dropdown is described as ``llm_backends``)."""
    from selenium.webdriver.common.by import By

    for dropdown in driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output .widget-dropdown"):
        label = dropdown.find_elements(By.CSS_SELECTOR, ".widget-label")
        if label and label[0].text.strip() == "llm_backends":
            return dropdown.find_element(By.XPATH, "ancestor::div[contains(@class,'jp-OutputArea-output')]")
    return None


def control_labels(area) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text.strip() for e in area.find_elements(By.CSS_SELECTOR, ".widget-label") if e.text.strip()]


def sliders(area) -> list:
    from selenium.webdriver.common.by import By

    return area.find_elements(By.CSS_SELECTOR, ".widget-slider")


SCROLLER_JS = """
return document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')
    || document.querySelector('.jp-NotebookPanel-notebook');
"""


def save_full_page(driver, path: Path) -> None:
    """A screenshot of the whole notebook: scrolled to the top, the window made tall enough for every
    cell (the notebook scrolls inside the page, so a plain screenshot shows one screen), then restored."""
    size = driver.get_window_size()
    scroller = driver.execute_script(SCROLLER_JS)
    driver.execute_script("arguments[0].scrollTop = 0;", scroller)
    extra = driver.execute_script("return arguments[0].scrollHeight - arguments[0].clientHeight;", scroller)
    driver.set_window_size(size["width"], min(16000, size["height"] + int(extra) + 40))
    time.sleep(1.0)  # let JupyterLab lay the cells out at the new size
    driver.execute_script("arguments[0].scrollTop = 0;", driver.execute_script(SCROLLER_JS))
    time.sleep(0.3)
    driver.save_screenshot(str(path))
    driver.set_window_size(size["width"], size["height"])
    time.sleep(0.5)


def test_start_here_runs_in_a_real_browser(lab, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    SHOTS.mkdir(parents=True, exist_ok=True)
    for stale in ("failure.png", "failure.html"):
        (SHOTS / stale).unlink(missing_ok=True)
    driver = browser
    start = time.monotonic()
    try:
        driver.get(lab.url(NOTEBOOK))
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell"), 60,
                 "the notebook to open")
        wait_for(driver, lambda d: d.execute_script(STATUS_JS) == "idle", KERNEL_READY_TIMEOUT,
                 "the kernel to be idle")

        # Run ▸ Run All Cells, then every code cell shows an execution count and the kernel is idle again
        click_menu(driver, "Run", "Run All Cells")
        wait_for(driver, lambda d: d.execute_script(STATUS_JS) != "idle" or all_cells_ran(d), 30,
                 "the kernel to start running the cells")
        prompts = wait_for(driver, all_cells_ran, RUN_ALL_TIMEOUT, "all cells to run ([n]: on every code cell)",
                           poll=1.0)
        assert len(prompts) >= 5, prompts
        ran_at = time.monotonic()
        save_full_page(driver, SHOTS / "00_start_here_full.png")

        stderr = driver.execute_script(STDERR_JS)
        errors = [t for t in stderr if ERROR_PATTERN.search(t)]
        assert not errors, "a cell shows an error in the browser:\n\n" + "\n\n".join(errors)
        outputs = "\n".join(driver.execute_script(OUTPUT_TEXT_JS))
        assert "model:" in outputs and "llm_backends" in outputs, outputs[:2000]
        assert not ERROR_PATTERN.search(outputs), f"an output shows an error:\n{outputs[:4000]}"
        assert driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img"), "the heat-map figure is missing"

        # the picker renders: a dropdown of backends and the selected backend's sliders
        area = wait_for(driver, lambda d: picker_area(d), 60, "the plugin picker widget to render")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", area)
        select = Select(area.find_element(By.CSS_SELECTOR, ".widget-dropdown select"))
        options = [o.text for o in select.options]
        assert {"embedded", "replay"} <= set(options), options
        # (whatever plugin comes first; the embedded backend has sliders, e.g. n_ctx)
        if select.first_selected_option.text != "embedded":
            select.select_by_visible_text("embedded")
        before = wait_for(driver, lambda d: (labels := control_labels(picker_area(d))) and "n_ctx" in labels
                          and labels, 30, "the embedded backend's controls")
        assert len(sliders(picker_area(driver))) >= 1, "the embedded backend's numeric parameters have sliders"
        select = Select(picker_area(driver).find_element(By.CSS_SELECTOR, ".widget-dropdown select"))

        # ... and respond: choosing "replay" rebuilds the controls (two text boxes, no sliders)
        select.select_by_visible_text("replay")
        after = wait_for(driver, lambda d: (labels := control_labels(picker_area(d))) and "backend" in labels
                         and "n_ctx" not in labels and labels, 30, "the picker to rebuild its controls for replay")
        assert not sliders(picker_area(driver)), "replay has no numeric parameters, so no sliders"
        assert after != before

        # ... and the choice reaches the kernel: rerun the cell that prints picker.name, picker.params
        cells = driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")
        cell = next(c for c in cells if "print(picker.name" in c.find_element(By.CSS_SELECTOR, ".jp-InputArea").text)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", cell)
        cell.find_element(By.CSS_SELECTOR, ".jp-InputArea-editor").click()
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        printed = wait_for(driver, lambda d: next((c.find_element(By.CSS_SELECTOR, ".jp-OutputArea").text
                                                   for c in d.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")
                                                   if "print(picker.name" in c.find_element(By.CSS_SELECTOR, ".jp-InputArea").text
                                                   and c.find_element(By.CSS_SELECTOR, ".jp-OutputArea").text.startswith("replay")),
                                                  None), 30, "the kernel to print the new choice")
        assert printed.startswith("replay {"), printed

        # one screen as a person sees it now: the heat-map, the picker (showing replay) and the printed choice
        cell = next(c for c in driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")
                    if "print(picker.name" in c.find_element(By.CSS_SELECTOR, ".jp-InputArea").text)
        driver.execute_script("arguments[0].scrollIntoView({block: 'end'});", cell)
        time.sleep(0.5)
        driver.save_screenshot(str(SHOTS / "00_start_here.png"))
        print(f"browser check: run all {ran_at - start:.0f} s, whole check {time.monotonic() - start:.0f} s; "
              f"screenshots in {SHOTS}")
    except BaseException:
        driver.save_screenshot(str(SHOTS / "failure.png"))
        (SHOTS / "failure.html").write_text(driver.page_source, encoding="utf-8")
        print(f"JupyterLab log (last lines):\n{lab.log_tail()}")
        raise
