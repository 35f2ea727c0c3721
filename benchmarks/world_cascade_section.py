"""Time notebook 02's "Known truth" section in full mode from a fresh process: imports, the sentence encoder's first
load, the explorer at excitation × 1 and the panel at × 0 (6 runs × 20 steps per selector each).

    UL_CACHE_DIR=$(mktemp -d) /usr/bin/time -f "wall %e s, cpu %U+%S" .venv/bin/python benchmarks/world_cascade_section.py

Measured (2026-12-03, the project's shared 2-core machine, load average ~5, empty answer cache): explorer 36.9 s,
panel 8.2 s, wall 48.6 s, CPU 23.1 + 1.1 s — so about 24 s on an idle 2-core machine (target: ≤ 30 s).
"""

import time

t0 = time.time()
from uncertainty_lab.widgets.world_cascade import world_explorer, world_panel  # noqa: E402

explorer = world_explorer(strength=1.0, runs=6, steps=20)
t1 = time.time()
panel = world_panel(0.0, runs=6, steps=20)
t2 = time.time()
print(f"explorer(1.0) {t1 - t0:.1f} s, panel(0.0) {t2 - t1:.1f} s, total {t2 - t0:.1f} s")
print(explorer.panels[0].table)
print(panel.table)
