"""``uncertainty-lab <lab> run``: one command per lab (:data:`LABS`), driven by the lab's ``EXPERIMENT``."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import os
import re
import sys
from pathlib import Path

from .. import registry
from ..parameters import ParameterError

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
    from ..executors import check_settings

    changed = [f"  {f.name} = {getattr(config, f.name)!r}" for f in dataclasses.fields(config)
               if getattr(config, f.name) != getattr(defaults, f.name)]
    check_settings(config)
    experiment.check_outputs(config)
    context = experiment.prepare(config)
    units = experiment.check_units(config, experiment.units(config, context))
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
    where = getattr(config, "executor", "serial")
    if where != "serial":
        where += f" on {config.scheduler}" if getattr(config, "scheduler", None) else \
            f" with {config.workers or 'one per CPU core'} workers"
    lines.append(f"executor: {where}")
    lines.append(f"outputs in {Path(config.out_dir).resolve()}; nothing was run (drop --check to run)")
    return "\n".join(lines)


def run_experiment_command(args) -> int:
    """``<lab> run``: load ``args.config`` (or the defaults) with the lab's config class, apply ``--out-dir``,
    ``--no-progress`` (then one line per finished unit instead of bars), ``--executor``, ``--workers`` and
    ``--scheduler``, and run it (``--check``: print the plan only). Prints the report and every file written. A bad
    config or an unavailable model is one ``error:`` line on stderr: exit 2 for a plugin error (see :data:`PLUGIN_ERRORS`), else 1; Ctrl-C says how to resume (130)."""
    from ..llm import LLMError

    experiment = _experiment(args.command)
    given = (("out_dir", args.out_dir), ("progress", False if args.no_progress else None),
             ("executor", args.executor or ("dask" if args.scheduler else None)), ("workers", args.workers),
             ("scheduler", args.scheduler))
    overrides = {k: v for k, v in given if v is not None}
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
    print("\n" + wrote(result.written()))
    return 0


def plain(text: str) -> str:
    """A docstring's text as a terminal shows it: no reStructuredText roles (``:func:``) or backticks."""
    return re.sub(r":\w+:`([^`]*)`", r"\1", text).replace("``", "").replace("`", "")


def wrote(paths: list[Path]) -> str:
    """What a run wrote, a line per output and one line for its run files (a search run has hundreds)."""
    journals = [Path(p) for p in paths if str(p).endswith(".jsonl")]
    lines = ["wrote:"] + [f"  {p}" for p in paths if not str(p).endswith(".jsonl")]
    if journals:
        common = Path(os.path.commonpath([str(p.parent) for p in journals]))
        lines.append(f"  {len(journals)} run file{'s' if len(journals) != 1 else ''} under {common}"
                     if len(journals) > 3 else "\n".join(f"  {p}" for p in journals))
    return "\n".join(lines)


def add_parser(sub, name: str, help: str, epilog: bool) -> None:
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
    run.add_argument("--executor", choices=("serial", "processes", "dask"), default=None,
                     help="where the units run (default: the config's executor, else serial); the results are the same")
    run.add_argument("--workers", type=int, default=None, metavar="N",
                     help="worker processes for --executor processes, or of the dask LocalCluster")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="a running dask scheduler, e.g. tcp://host:8786 (implies --executor dask)")
    run.add_argument("--check", action="store_true",
                     help="validate the config, build what the units share and print the plan; run nothing")
    p.set_defaults(func=run_experiment_command)
