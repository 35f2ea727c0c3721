"""``uncertainty-lab plugins``: the installed plugins of every kind, as a text or markdown table."""

from __future__ import annotations

import warnings

from .. import registry
from ..parameters import Parameter

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


def add_parser(sub) -> None:
    """The command's arguments on the top-level subparsers."""
    p = sub.add_parser("plugins", help="list installed plugins, their status and parameters")
    p.add_argument("kind", nargs="?", metavar="KIND",
                   help=f"one of {', '.join(registry.KINDS)} (default: all)")
    p.add_argument("--markdown", action="store_true", help="the built-in plugins as the README's markdown tables")
    p.set_defaults(func=cmd_plugins)
