"""The prompt p_t = Prompt((τ_t, n_t), a_{n_t}, {(w_{j,t}, j, x_{r_t(j)})}) (HawkesLLM §2.1): the templates.

The paper's prompt strings (its Appendix A) are not known; :func:`build_prompt` is this package's general
template and :func:`headline_prompt` the experiment's (written for small models); :data:`PROMPTS` names both.
Each is deterministic (same inputs → same messages, byte for byte), names the target node, gives its
instruction, and lists the remembered texts with their node labels and times, the normalised weights written
as text annotations (not numeric controls)::

    [weight 0.62] (specialist_science_tech, t=41.5 h) Engineers trace the heat-shield reading to a sensor

With an empty memory the prompt holds only the event information and the instruction.

Swapping the template: pass ``prompt_fn=`` to :func:`~uncertainty_lab.cascade.simulate_cascade`, any function
with the signature ``(event_time, node, node_spec, memory_items, history, node_specs) -> list of
{"role", "content"} messages``. It must be deterministic: the loop stores a hash of every prompt, and
``CascadeRun.prompt(step)`` rebuilds a prompt and checks it against that hash (a template that is not in
:data:`PROMPTS` must then be passed again: a run file never chooses code to import).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from ..contracts.memory import History, NodeSpec

__all__ = ["PROMPTS", "build_prompt", "format_memory_line", "headline_prompt", "prompt_hash"]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def format_memory_line(weight: float, node_name: str, time: float, text: str, time_unit: str = "h") -> str:
    """One remembered event as the prompt shows it: ``[weight 0.62] (node, t=41.5 h) text``."""
    return f"[weight {weight:.2f}] ({node_name}, t={time:.1f} {time_unit}) {_one_line(text)}"


def build_prompt(event_time: float, node: int, node_spec: NodeSpec, memory_items: Sequence, history: History,
                 node_specs: Sequence[NodeSpec], *, time_unit: str = "h") -> list[dict[str, str]]:
    """The default template: a system message with the node's role and instruction a_{n_t}, and a user message
    with the event (node, time), the remembered items in the selector's order, and the request.

    ``memory_items``: MemoryItems (index into ``history``, node, normalised weight). ``time_unit`` labels times.
    """
    system = (
        f"You are the writer for the node \"{node_spec.name}\" in a simulated stream of news items.\n"
        f"Instruction: {node_spec.instruction}\n"
        "Reply with one new item only: a single line, no explanation, no quotation marks."
    )
    lines = [f"New event: node {node_spec.name} at t={event_time:.1f} {time_unit}."]
    if memory_items:
        lines.append("Earlier items that influence this one (a higher weight means more influence):")
        for it in memory_items:
            ev = history[it.index]
            name = node_specs[ev.node].name if node_specs else f"node {ev.node}"
            lines.append(format_memory_line(it.weight, name, ev.time, ev.text, time_unit))
    lines.append(f"Write the next item for {node_spec.name}, following the instruction.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def _readable(name: str) -> str:
    return " ".join("TV" if w.lower() == "tv" else w for w in name.split("_"))


def headline_prompt(event_time: float, node: int, node_spec: NodeSpec, memory_items: Sequence, history: History,
                    node_specs: Sequence[NodeSpec], *, time_unit: str = "h") -> list[dict[str, str]]:
    """The experiment's default template, written for small models: the node's instruction a_i as the system
    message; the remembered headlines as a quoted list, each with its node and its normalised weight w_{j,t}
    written as a text annotation *after* the text, as a share of influence (0.58 → 58%); then the request naming
    the target node and the event time::

        Recent headlines, with the share of influence each has on your next headline:
        - "Aldmark Heavy Industries raises full-year guidance on Tern Heavy orders" (business finance, 58%)
        Now, at t = 211.8 h, write one new headline for general news.

    With an empty memory only the request remains. Same contract as :func:`build_prompt` (deterministic;
    swappable). Why not that template: SmolLM2-135M copies its ``[weight 0.58] (node, t=… h)`` line prefixes and
    its closing sentence into the answer far more often than it writes a headline; with the weight after a quoted
    text it mostly writes one (and the word "weight" itself leaked into its headlines, hence a percentage).
    """
    system = f"{node_spec.instruction} Reply with the headline only: one line, no explanation."
    lines = []
    if memory_items:
        lines.append("Recent headlines, with the share of influence each has on your next headline:")
        for it in memory_items:
            ev = history[it.index]
            name = node_specs[ev.node].name if node_specs else f"node {ev.node}"
            lines.append(f'- "{_one_line(ev.text)}" ({_readable(name)}, {it.weight:.0%})')
    lines.append(f"Now, at t = {event_time:.1f} {time_unit}, write one new headline for {_readable(node_spec.name)}.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


#: the prompt templates a config can name (``prompt = "headline"`` or ``"default"``)
PROMPTS = {"headline": headline_prompt, "default": build_prompt}


def prompt_hash(messages) -> str:
    """A short content hash of a prompt (sha256 of its canonical JSON, 16 hex digits)."""
    canon = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]
