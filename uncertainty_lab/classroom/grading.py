"""Grading a class: every submission of nbgrader's layout ``submitted/<student>/<lab>/<notebook>.ipynb``, as the units
of an :class:`~uncertainty_lab.lab.Experiment`, so they run through the package's executors (``serial``,
``processes``, ``dask``: one kernel per unit) with its progress bar, its atomic run files and its resume.

    units    one per submission; its run file ``<out>/submissions/<student>/<lab>/<notebook>.json`` holds the
             outcome (:mod:`.submission`) and the **key** it was graded under: the SHA-256 of the submission, of the
             instructor notebook, of the recording, the mode, the timeout and :data:`GRADER_VERSION`. A rerun reuses a
             file whose key matches and grades again what changed; a grader error is retried on the next run.
    context  the instructor notebooks (matched to a submission by file name) and the class recording imported once
             into ``<out>/.recording/<sha>/`` (each kernel gets its own copy); beside it, for each instructor notebook
             that has submissions, the embeddings of one reference run of it on the recording, which every kernel
             starts from (:func:`.submission.reference_embeddings`: the same vectors, computed once instead of once a
             submission; a kernel whose texts are all there never loads torch)
    result   :class:`~.gradebook.Gradebook`: ``gradebook.csv``, ``summary.md``, ``feedback/<student>.html``

The kernels run in replay mode (``UL_LLM=replay``: no model runs; an answer missing from the recording is the
submission's ``unrecorded`` status) in the mode the recording holds unless ``fast`` says (:func:`kernel_mode`, the
one place the mode is chosen), with the grader's environment less its secrets (:func:`without_secrets`). A dask
cluster at ``scheduler`` must see the same files (a shared disk).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import nbformat

from ..lab import Experiment, LabConfig, Unit, setting
from ..outdir import unit_file_name
from ..untrusted import UntrustedFileError, excerpt, load_json, read_bytes, read_text
from . import MAX_SUBMISSION_BYTES, ClassroomError, graded_cells
from .submission import checks_of, grade_submission, reference_embeddings

__all__ = ["DEFAULT_TIMEOUT", "GRADER_VERSION", "GradeConfig", "GradingExperiment", "EXPERIMENT", "kernel_mode",
           "find_submissions"]

#: changes when a change of the grader changes outcomes: every submission is graded again
GRADER_VERSION = 3
FORMAT = "uncertainty_lab.grade/1"
#: seconds one cell may run when grading (replayed answers: the lab notebooks' longest cell takes seconds)
DEFAULT_TIMEOUT = 300


class GradingError(ValueError):
    """A grading setting or folder is unusable; the message names it and the fix."""


@dataclass
class GradeConfig(LabConfig):
    """What ``uncertainty-lab class grade`` reads."""

    what: ClassVar[str] = "grading"
    error: ClassVar[type[Exception]] = GradingError
    run_only: ClassVar[tuple[str, ...]] = LabConfig.run_only + ("run_id",)

    submitted: str = setting("submitted", "nbgrader's folder of submissions: <student>/<lab>/<notebook>.ipynb")
    source: str = setting("notebooks", "the instructor notebooks (with solutions and hidden tests), matched by name")
    recording: str = setting("class.sqlite", "the class recording (`uncertainty-lab cache export`) the kernels replay")
    timeout: int = setting(DEFAULT_TIMEOUT, "seconds one cell may run before it is interrupted")
    fast: bool | None = setting(None, "the notebooks' mode: True fast (UL_FAST=1), False full, None (default) the "
                                "mode the recording holds (full when it holds both or does not say)")
    run_id: str = setting("", "this run's id: a grader error recorded by another run is retried")

    def __post_init__(self) -> None:
        if not isinstance(self.timeout, int) or isinstance(self.timeout, bool) or self.timeout < 1:
            raise GradingError(f"timeout must be a positive number of seconds per cell, got {self.timeout!r}")


def kernel_mode(config: GradeConfig, recorded: frozenset[str] = frozenset()) -> bool:
    """Whether the kernels run in fast mode (``UL_FAST=1``): the one place the mode is chosen. ``config.fast`` None
    takes the mode of the recording (``recorded``: :func:`uncertainty_lab.llm.modes.recorded_modes`), full when it
    holds both or does not say; a mode the recording says it lacks is refused before anything is graded."""
    from ..llm.modes import mismatch

    fast = recorded == {"fast"} if config.fast is None else bool(config.fast)
    line = mismatch(recorded, "fast" if fast else "full")
    if line:
        raise GradingError(f"{line.split(', which')[0]}: grade in the recorded mode (leave out --fast/--full: the "
                           "recording's mode is the default) or record the other mode too")
    return fast


def find_submissions(submitted: Path) -> tuple[list[tuple[str, str, Path]], list[str]]:
    """``(student, lab, path)`` of every ``<student>/<lab>/<notebook>.ipynb``, sorted, and the files skipped
    (checkpoints, hidden folders, anything not a regular file)."""
    if not submitted.is_dir():
        raise GradingError(f"no folder of submissions at {submitted}; pass SUBMITTED_DIR, the folder that holds "
                           "<student>/<lab>/<notebook>.ipynb (nbgrader's submitted/)")
    found, skipped = [], []
    for path in sorted(submitted.glob("*/*/*.ipynb")):
        rel = path.relative_to(submitted)
        if any(part.startswith(".") for part in rel.parts) or path.is_symlink() or not path.is_file():
            skipped.append(f"{rel} (hidden, a link or not a regular file)")
            continue
        found.append((rel.parts[0], rel.parts[1], path))
    return found, skipped


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _import_recording(recording: Path, out: Path) -> Path:
    """The recording imported (verified) into ``<out>/.recording/<sha>/completions.sqlite``, once."""
    from ..llm.cache import CacheError, CompletionCache
    from ..llm.cache_file import FILE_NAME

    if not recording.is_file():
        raise GradingError(f"no class recording at {recording}; pass --recording, the file `uncertainty-lab cache "
                           "export` wrote after recording the class")
    digest = _sha(recording.read_bytes())[:16]
    target = out / ".recording" / digest
    if (target / FILE_NAME).is_file():
        return target / FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=".import-", dir=target.parent))
    try:
        cache = CompletionCache(folder / FILE_NAME)
        try:
            report = cache.import_file(recording)
        except CacheError as exc:
            raise GradingError(f"the recording {recording} cannot be read ({exc})") from None
        finally:
            cache.close()
        if report.stopped or not report.added:
            raise GradingError(f"the recording {recording} holds no usable answers "
                               f"({report.stopped or '; '.join(report.problems()) or 'it is empty'}); export it again")
        for extra in folder.iterdir():
            if extra.name != FILE_NAME:
                extra.unlink()
        os.replace(folder, target)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return target / FILE_NAME


#: the thread counts of the numeric libraries a kernel loads (torch, BLAS)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _threads_per_kernel(config: GradeConfig) -> int:
    """The cores over the kernels run at once: serial runs one kernel, the others ``workers`` (the CPU count)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    kernels = 1 if config.executor == "serial" else config.workers or cores
    return max(1, cores // kernels)


#: environment variables a submission's kernel never sees: a cell can print ``os.environ``
SECRET_NAMES = re.compile(r"TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION"
                          r"|^AWS_|^GH_|^GITHUB_|^SSH_|^GPG_|^PG(?:PASS|USER|HOST)|^DATABASE_URL$|^JUPYTERHUB_",
                          re.IGNORECASE)


def without_secrets(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the variables :data:`SECRET_NAMES` matches (tokens, keys, passwords, cloud and hub
    credentials): grading kernels run students' code, which can read and print its environment."""
    return {k: v for k, v in env.items() if not SECRET_NAMES.search(k)}


def _read_roots() -> list[str]:
    """Folders a kernel's libraries read besides the Python installation: the package, the model caches,
    matplotlib's."""
    import uncertainty_lab

    home = Path.home()
    roots = [Path(uncertainty_lab.__file__).parent, Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface")),
             home / ".cache" / "torch", home / ".cache" / "matplotlib", home / ".config" / "matplotlib"]
    if os.environ.get("MPLCONFIGDIR"):
        roots.append(Path(os.environ["MPLCONFIGDIR"]))
    return [str(p) for p in roots]


class GradingExperiment(Experiment):
    """Grading as an experiment: one unit per submission (see the module doc)."""

    name = "grading"
    config_class = GradeConfig
    resume_error = GradingError
    unit_name = "submission"
    outputs = ("gradebook.csv", "summary.md")

    def prepare(self, config: GradeConfig, **resources: Any) -> dict[str, Any]:
        """The instructor notebooks by file name (with their checks and hash) and the imported recording."""
        source = Path(config.source)
        if not source.is_dir():
            raise GradingError(f"no folder of instructor notebooks at {source}; pass --source")
        notebooks = {}
        for path in sorted(source.glob("*.ipynb")):
            data = path.read_bytes()
            nb = nbformat.reads(data.decode("utf-8"), as_version=4)
            notebooks[path.name] = {"sha": _sha(data), "checks": checks_of(nb, graded_cells(nb, path.name)),
                                    "path": path}
        recording = _import_recording(Path(config.recording), Path(config.out_dir))
        from ..llm.modes import recorded_modes
        from ..tour import kernel_env

        fast = kernel_mode(config, recorded_modes(recording))
        env = without_secrets(kernel_env(fast=fast))
        for name in ("UL_REQUEST_LOG", "OLLAMA_HOST", "UL_EMBEDDED_GGUF"):
            env.pop(name, None)
        env.update(UL_LLM="replay", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        threads = str(_threads_per_kernel(config))
        for name in THREAD_VARIABLES:  # kernels side by side, each on its share of the cores (not all on each)
            env.setdefault(name, threads)
        return {"notebooks": notebooks, "recording": recording, "recording_sha": _sha(recording.read_bytes()),
                "env": env, "read_roots": _read_roots(), "skipped": [], "fast": fast}

    def units(self, config: GradeConfig, context: dict[str, Any]) -> list[Unit]:
        found, skipped = find_submissions(Path(config.submitted))
        context["skipped"] = skipped
        out = Path(config.out_dir) / "submissions"
        units = []
        for student, lab, path in found:
            teacher = context["notebooks"].get(path.name)
            if teacher is None:
                skipped.append(f"{student}/{lab}/{path.name} (no instructor notebook of that name in {config.source})")
                continue
            try:
                data = read_bytes(path, what="the submission", max_bytes=MAX_SUBMISSION_BYTES)
            except (OSError, UntrustedFileError) as exc:
                skipped.append(f"{student}/{lab}/{path.name} ({excerpt(str(exc), 200, quote=False)})")
                continue
            key = _sha(json.dumps([_sha(data), teacher["sha"], context["recording_sha"], context["fast"],
                                   config.timeout, GRADER_VERSION]).encode())
            rel = Path(unit_file_name(student), unit_file_name(lab), unit_file_name(path.stem) + ".json")
            units.append(Unit((student, lab, path.name), f"{student}/{lab}/{path.name}", out / rel,
                              {"data": data, "key": key, "notebook": path.name,
                               "embeddings": self._embeddings(config, context, path.name)}))
        return units

    def _embeddings(self, config: GradeConfig, context: dict[str, Any], name: str) -> str | None:
        """The reference embeddings of instructor notebook ``name`` (made once, beside the imported recording)."""
        teacher = context["notebooks"][name]
        target = context["recording"].parent / f"embeddings-{teacher['sha'][:16]}-{context['fast']}.npz"
        if not target.is_file() and name not in context.setdefault("no_reference", set()):
            print(f"running the instructor's {name} once on the recording (its embeddings start every kernel)",
                  file=sys.stderr, flush=True)
            why = reference_embeddings(teacher["path"], target, recording=context["recording"], env=context["env"],
                                       timeout=config.timeout)
            if why:
                context["no_reference"].add(name)
                print(f"warning: the instructor's {name} did not run on the recording ({why}); every kernel embeds "
                      "its own texts (slower, same grades)", file=sys.stderr, flush=True)
        return str(target.absolute()) if target.is_file() else None

    def run_unit(self, unit: Unit, config: GradeConfig, context: dict[str, Any]) -> dict[str, Any]:
        """The submission's outcome: from its run file when that was graded under the same key, else graded now."""
        done = _load(unit.path, unit.spec["key"], config.run_id)
        if done is not None:
            return done
        teacher = context["notebooks"][unit.spec["notebook"]]
        outcome = grade_submission(unit.spec["data"], unit.spec["notebook"], teacher["checks"],
                                   recording=context["recording"], env=context["env"], timeout=config.timeout,
                                   read_roots=context["read_roots"], embeddings=unit.spec.get("embeddings"))
        student, lab, notebook = unit.key
        record = {"format": FORMAT, "key": unit.spec["key"], "run_id": config.run_id, "student": student, "lab": lab,
                  "notebook": notebook, "fast": context["fast"], **outcome}
        from ..executors.remote import write_atomic

        write_atomic(Path(unit.path), json.dumps(record, indent=1, ensure_ascii=False).encode("utf-8"))
        return record

    def collect(self, config: GradeConfig, context: dict[str, Any], records: dict[tuple, Any]):
        from .gradebook import Gradebook

        return Gradebook(config, [records[k] for k in sorted(records)], list(context.get("skipped", [])))


def _load(path: Path, key: str, run_id: str) -> dict[str, Any] | None:
    """The outcome in run file ``path`` when it was graded under ``key`` (a grader error: only by this run)."""
    if path is None or not Path(path).is_file():
        return None
    try:
        record = load_json(read_text(path, what="a grading result", max_bytes=16 * 2**20), path)
    except (OSError, ValueError):
        return None  # damaged: graded again
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key:
        return None
    if record.get("status") == "grader-error" and record.get("run_id") != run_id:
        return None
    return record


EXPERIMENT = GradingExperiment()


def grade_class(config: Any = None, *, log=None, **overrides: Any):
    """Grade every submission (see the module doc); returns the :class:`~.gradebook.Gradebook` (saved)."""
    import uuid

    from ..llm.cache_file import CACHE_ENV

    config = GradeConfig.coerce(config, overrides)
    if not config.run_id:
        config.run_id = uuid.uuid4().hex
    old = os.environ.get(CACHE_ENV)
    with tempfile.TemporaryDirectory(prefix="ul-grader-cache-") as empty:
        os.environ[CACHE_ENV] = empty  # the grader's own process answers nothing: no snapshot of the user's cache
        try:
            return EXPERIMENT.run(config, log=log)
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old


__all__ += ["ClassroomError", "GradingError", "grade_class"]
