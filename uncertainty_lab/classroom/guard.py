"""Inside a grading kernel: keep a submission's code in its own folder, and cap what the kernel may use.

:func:`install` runs in a hidden first cell before any student code. It adds a Python audit hook
(:func:`sys.addaudithook`; a hook cannot be removed) that refuses, when **submission code** asks for it:

- reading a path outside the working folder and the read-only roots (the Python installation and its
  site-packages, the package's own files, the recording, the model caches, the kernel's temporary folder,
  ``/dev/null``, ``/proc/self`` …) — ``open``, ``os.listdir``/``os.scandir``, ``sqlite3.connect``; the folders on
  ``sys.path`` may be listed (entry points are found that way), not read;
- writing, deleting, renaming or changing anything outside the working folder and the kernel's temporary folder —
  ``open`` for writing, ``os.remove``, ``os.rename``, ``os.rmdir``, ``os.mkdir``, ``shutil.rmtree``, ``os.chmod``,
  links, ``os.chdir`` out of the folder;
- starting a process (``subprocess``, ``os.system``, ``os.exec*``, ``os.fork``, …), signalling another process,
  opening a network socket, and loading a C library with ``ctypes``.

"Submission code" is a call with a notebook cell (or a file in the working folder) on the Python stack, with no
import in progress between them: a library the cell calls is checked on the cell's behalf (``nbformat.read`` of a
sibling's notebook is refused like ``open``), while the import of a library (its own files, its compiled parts) is
not. A refusal raises :class:`SubmissionRefused` (a ``PermissionError``) in the cell and is logged to a file the
grader reads, so a refusal the cell catches still counts. :func:`install` also sets resource limits: CPU seconds
(``RLIMIT_CPU``: a busy loop the per-cell timeout could not interrupt kills the kernel), the largest file written
(``RLIMIT_FSIZE``) and no core dumps. Memory (``RLIMIT_AS``) and process counts (``RLIMIT_NPROC``, which counts
every thread of the user) are left alone: torch reserves far more address space than it uses, and the count is
per user, not per kernel.

This guards a class against mistakes and casual misbehaviour, **not a determined attacker**: C code (``ctypes``
reached through a library, a compiled extension) and the interpreter's own internals get around an audit hook.
Grade untrusted work in a container or an account that holds nothing else (docs: README "Running a class").
This module imports only the standard library: it runs in every kernel before the student's code.
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["SubmissionRefused", "install"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PROCESS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
            "pty.spawn"}
#: events whose first argument is a path that is changed: (event, index of each path argument)
_CHANGE = {"os.remove": (0,), "os.rmdir": (0,), "os.rename": (0, 1), "shutil.rmtree": (0,), "os.chmod": (0,),
           "os.chown": (0,), "os.utime": (0,), "os.truncate": (0,), "os.link": (0, 1), "os.symlink": (1,),
           "shutil.copyfile": (1,), "shutil.copytree": (1,), "shutil.move": (0, 1), "shutil.copymode": (1,),
           "shutil.copystat": (1,), "shutil.chown": (0,), "os.setxattr": (0,), "os.removexattr": (0,)}
_READ = {"os.listdir": 0, "os.scandir": 0, "shutil.copyfile": 0, "shutil.copytree": 0, "shutil.copymode": 0,
         "shutil.copystat": 0, "os.symlink": 0, "os.listxattr": 0, "os.getxattr": 0}


class SubmissionRefused(PermissionError):
    """The grader refused what the submission's code asked for (outside its folder, a process, a socket)."""


def _real(path) -> str:
    return os.path.realpath(os.fsdecode(path))


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _stdlib_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard library's folders, and site-packages (inside them on some installs)."""
    import sysconfig

    paths = sysconfig.get_paths()
    site = tuple(_real(paths[k]) for k in ("purelib", "platlib"))
    return tuple(_real(paths[k]) for k in ("stdlib", "platstdlib")), site


class _Policy:
    """What the hook allows: ``work`` (read and write), ``write`` and ``read`` roots (real paths)."""

    def __init__(self, work: str, read: tuple[str, ...], write: tuple[str, ...], log):
        self.work = _real(work)
        self.write = (self.work,) + tuple(_real(p) for p in write)
        self.read = self.write + tuple(_real(p) for p in read) + _metadata_dirs()
        self.cells = (os.path.join(_real(_tempdir()), f"ipykernel_{os.getpid()}") + os.sep, "<ipython-input-")
        self.stdlib, self.site = _stdlib_dirs()
        self.log = log
        self.local = threading.local()
        #: the import path's folders may be listed, not read (importlib.metadata lists each for entry points)
        self.listable = frozenset(_real(p or ".") for p in sys.path if isinstance(p, str))

    def submission(self, frame, direct: bool) -> bool:
        """Is a cell (or a file in the working folder) on the stack below ``frame``, with no import in between?
        ``direct``: only when it is the first frame outside the standard library."""
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(self.cells) or _under(name, (self.work,)):
                return True
            if name.startswith("<frozen importlib"):
                return False
            if direct and not (name.startswith("<") or (_under(name, self.stdlib) and not _under(name, self.site))):
                return False
            frame = frame.f_back
        return False

    def library(self, frame) -> str | None:
        """The file of the innermost frame outside the standard library when it is not the submission's: the library
        that asked on the cell's behalf (a refusal names it, so a grader's environment problem shows as one)."""
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(self.cells) or _under(name, (self.work,)):
                return None
            if not (name.startswith("<") or (_under(name, self.stdlib) and not _under(name, self.site))):
                return name
            frame = frame.f_back
        return None

    def problem(self, event: str, args: tuple) -> str | None:
        """Why the submission may not do ``event`` with ``args``, or None."""
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return None
            writes = any(c in (mode or "") for c in "wax+") if mode else bool((flags or 0) & _WRITE_FLAGS)
            return self._path(path, writes, "write" if writes else "read")
        if event in _PROCESS:
            return f"starts a process ({event})"
        if event in ("os.kill", "os.killpg"):
            return None if args[0] in (0, os.getpid()) else f"signals another process ({event} {args[0]})"
        if event in ("socket.connect", "socket.bind", "socket.sendto"):
            return f"opens a network connection ({event})"
        if event == "os.chdir":
            return self._path(args[0], True, "move into")
        if event == "os.mkdir":
            return None if os.path.isdir(os.fsdecode(args[0])) else self._path(args[0], True, "create")
        if event == "sqlite3.connect":
            return self._database(args[0])
        if event in ("os.listdir", "os.scandir") and not isinstance(args[0], int) and _real(args[0] or ".") in \
                self.listable:
            return None
        found = [self._path(args[i], False, "read") for i in ([_READ[event]] if event in _READ else [])]
        found += [self._path(args[i], True, "change") for i in _CHANGE.get(event, ())]
        return next((p for p in found if p), None)

    def _path(self, path, writes: bool, verb: str) -> str | None:
        if isinstance(path, int) or path is None:
            return None
        real = _real(path)
        if _under(real, self.write if writes else self.read):
            return None
        where = "outside the submission's folder" if writes else "outside the submission's folder and the libraries"
        return f"tried to {verb} {real} ({where})"

    def _database(self, database) -> str | None:
        text = os.fsdecode(database) if not isinstance(database, str) else database
        if text in ("", ":memory:") or text.startswith("file::memory:"):
            return None
        if text.startswith("file:"):
            from urllib.parse import unquote, urlsplit

            text = unquote(urlsplit(text).path)
        return self._path(text, False, "open the database")

    def hook(self, event: str, args: tuple) -> None:
        if getattr(self.local, "busy", False) or not (event in _CHANGE or event in _READ or event in _PROCESS or event
                                                       in _OTHER):
            return
        self.local.busy = True
        try:
            direct = event.startswith("ctypes.")
            if not self.submission(sys._getframe(1), direct):
                return
            why = f"loads a C library ({event} {args[0]!r})" if direct else self.problem(event, args)
            if why and (library := self.library(sys._getframe(1))):
                why += f" (through {library})"
        finally:
            self.local.busy = False
        if why:
            self.log.write(why + "\n")
            self.log.flush()
            raise SubmissionRefused(f"refused by the grader: the submission {why}")


_OTHER = {"open", "os.kill", "os.killpg", "socket.connect", "socket.bind", "socket.sendto", "os.chdir", "os.mkdir",
          "sqlite3.connect", "ctypes.dlopen"}


def _metadata_dirs() -> tuple[str, ...]:
    """The package metadata folders (``*.dist-info``, ``*.egg-info``) right inside each folder of ``sys.path``:
    ``importlib.metadata`` reads them for entry points wherever a package was installed from (an editable install
    puts one in the repository)."""
    import glob

    found = []
    for entry in sys.path:
        if isinstance(entry, str) and os.path.isdir(entry or "."):
            for pattern in ("*.dist-info", "*.egg-info"):
                found += [_real(p) for p in glob.glob(os.path.join(glob.escape(entry or "."), pattern))]
    return tuple(found)


def _tempdir() -> str:
    import tempfile

    return tempfile.gettempdir()


def _limits(cpu_seconds: int | None, file_bytes: int | None) -> None:
    import resource

    wanted = [(resource.RLIMIT_CORE, 0)]
    if cpu_seconds:
        wanted.append((resource.RLIMIT_CPU, int(cpu_seconds)))
    if file_bytes:
        wanted.append((resource.RLIMIT_FSIZE, int(file_bytes)))
    for kind, value in wanted:
        _, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))


def install(work: str, *, read: tuple[str, ...] = (), write: tuple[str, ...] = (), log: str,
            cpu_seconds: int | None = None, file_bytes: int | None = None) -> None:
    """Guard this kernel (see the module doc): ``work`` is the submission's folder, ``read``/``write`` more roots,
    ``log`` the file each refusal is appended to."""
    import site

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), site.getusersitepackages(),
             "/dev/null", "/dev/urandom", "/dev/random", "/proc/self", "/proc/cpuinfo", "/proc/meminfo",
             "/sys/devices/system/cpu", "/sys/fs/cgroup", "/usr/share/fonts", "/usr/share/zoneinfo", *read}
    policy = _Policy(work, tuple(sorted(roots)), (_tempdir(), "/dev/null", *write), open(log, "a", encoding="utf-8"))
    _limits(cpu_seconds, file_bytes)
    sys.addaudithook(policy.hook)
    os.chdir(work)
