"""The ``uncertainty-lab`` command: ``plugins``, ``doctor``, ``cache``, ``lab``, ``audit``, ``class``, and ``orchestrate|cascade|search run``.

Every command is a small function over the package's own API, so tests (and the README generator)
can call the pieces directly: :func:`plugins_table`, :func:`plugins_markdown`, :func:`doctor_checks`,
:func:`lab_command`.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__, registry
from . import audit, cache, classroom, doctor, lab, plugins, run
from .cache import cmd_cache
from .doctor import (
    REQUIRED_PACKAGES,
    Check,
    check_cache,
    check_embedded_model,
    check_embedder,
    check_ollama,
    check_packages,
    check_python,
    cmd_doctor,
    doctor_checks,
)
from .lab import START_NOTEBOOK, cmd_lab, lab_command, lab_target
from .plugins import (
    PLUGIN_COLUMNS,
    builtin_plugins_markdown,
    cmd_plugins,
    describe_plugins,
    format_parameter,
    format_table,
    plugin_row,
    plugins_markdown,
    plugins_table,
)
from .run import LABS, PLUGIN_ERRORS, _experiment, check_plan, run_experiment_command, settings_epilog

__all__ = [
    "Check",
    "LABS",
    "_experiment",
    "PLUGIN_COLUMNS",
    "PLUGIN_ERRORS",
    "REQUIRED_PACKAGES",
    "START_NOTEBOOK",
    "build_parser",
    "builtin_plugins_markdown",
    "check_cache",
    "check_embedded_model",
    "check_embedder",
    "check_ollama",
    "check_packages",
    "check_plan",
    "check_python",
    "cmd_cache",
    "cmd_doctor",
    "cmd_lab",
    "cmd_plugins",
    "describe_plugins",
    "doctor_checks",
    "format_parameter",
    "format_table",
    "lab_command",
    "lab_target",
    "main",
    "plugin_row",
    "plugins_markdown",
    "plugins_table",
    "run_experiment_command",
    "settings_epilog",
]


def build_parser(lab_help: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``lab_help`` names the lab command whose ``run --help`` lists its settings."""
    parser = argparse.ArgumentParser(prog="uncertainty-lab", description=run.plain(__doc__.splitlines()[0]))
    parser.add_argument("--version", action="version", version=f"uncertainty-lab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (plugins, doctor, cache, lab, audit, classroom):
        command.add_parser(sub)
    for name, (_, text) in LABS.items():
        run.add_parser(sub, name, text, epilog=name == lab_help)
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


