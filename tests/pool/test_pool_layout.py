"""The slot pool's layout: a small core.

No import circle and no private name taken across modules: tests/test_layout.py
checks both over the whole package.
"""

from __future__ import annotations

import subprocess
import sys

#: Most lines of the package one run of the pool may load: a core a student reads in one sitting
#: (998 when set, with the day's series in lanes.pool.day, loaded on first use; 2,668 before the one loop).
CORE_LINES = 1000


def test_one_run_of_the_pool_loads_a_small_core():
    code = ("import sys, lanes; lanes.simulate(lanes.Scenario(hours=1), 'hybrid:8'); "
            "print(sum(len(open(m.__file__).read().splitlines()) for n, m in sys.modules.items() "
            "if n.startswith('lanes') and getattr(m, '__file__', None)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert int(out.stdout) <= CORE_LINES
