"""The prompt template: deterministic, names the node and its instruction, weights written as text."""

from __future__ import annotations

from uncertainty_lab.cascade import Event, History, MemoryItem, NodeSpec, build_prompt, format_memory_line, prompt_hash

SPECS = (
    NodeSpec("local_tv", "Write a short local TV news headline."),
    NodeSpec("specialist_science_tech", "Write a precise, technical headline for a science audience."),
)


def _history():
    return History(SPECS, [Event(0.0, 0, "Crew arrives at the launch site"),
                           Event(41.5, 1, "Engineers trace the\nheat-shield reading to a sensor")])


def test_prompt_lists_memory_with_weights_as_text():
    h = _history()
    memory = [MemoryItem(1, 1, 0.6234), MemoryItem(0, 0, 0.3766)]
    msgs = build_prompt(43.0, 0, SPECS[0], memory, h, SPECS)
    assert [m["role"] for m in msgs] == ["system", "user"]
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert '"local_tv"' in system and SPECS[0].instruction in system
    assert "node local_tv at t=43.0 h" in user
    lines = user.splitlines()
    # in the selector's order, one line per item, newlines in a text folded to spaces
    assert "[weight 0.62] (specialist_science_tech, t=41.5 h) Engineers trace the heat-shield reading to a sensor" in lines
    assert "[weight 0.38] (local_tv, t=0.0 h) Crew arrives at the launch site" in lines
    assert lines.index(format_memory_line(0.6234, "specialist_science_tech", 41.5, h[1].text)) < lines.index(
        format_memory_line(0.3766, "local_tv", 0.0, h[0].text))


def test_empty_memory_gives_only_event_and_instruction():
    h = _history()
    msgs = build_prompt(50.0, 1, SPECS[1], [], h, SPECS)
    user = msgs[1]["content"]
    assert "weight" not in user and "Earlier items" not in user
    assert "specialist_science_tech at t=50.0 h" in user and SPECS[1].instruction in msgs[0]["content"]
    for e in h:
        assert e.text.split()[0] not in user  # no history text leaks in


def test_prompt_is_deterministic():
    memory = [MemoryItem(1, 1, 0.5), MemoryItem(0, 0, 0.5)]
    a = build_prompt(43.0, 0, SPECS[0], memory, _history(), SPECS)
    b = build_prompt(43.0, 0, SPECS[0], list(memory), _history(), SPECS)
    assert a == b and prompt_hash(a) == prompt_hash(b) and len(prompt_hash(a)) == 16
    c = build_prompt(43.0, 0, SPECS[0], memory[::-1], _history(), SPECS)
    assert prompt_hash(c) != prompt_hash(a)
    assert build_prompt(43.0, 0, SPECS[0], [], _history(), SPECS, time_unit="min")[1]["content"].endswith(
        "following the instruction.") and "t=43.0 min" in build_prompt(43.0, 0, SPECS[0], [], _history(), SPECS,
                                                                          time_unit="min")[1]["content"]
