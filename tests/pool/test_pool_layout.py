"""The slot pool's layout: a run needs the standard library and the pool's own modules only.

No import circle and no private name taken across modules: tests/test_layout.py
checks both over the whole package.  The loop to read is lanes/pool/model.py (test_model.py).
"""

from __future__ import annotations

import json
import subprocess
import sys


def test_one_run_of_the_pool_loads_the_standard_library_and_the_pool_only():
    code = ("import sys, json, lanes; before = set(sys.modules); lanes.simulate(lanes.Scenario(hours=1), 'hybrid:8'); "
            "print(json.dumps(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(out.stdout)
    ours = [m for m in loaded if m.split(".")[0] == "lanes"]
    assert ours and all(m in ("lanes", "lanes.pool") or m.startswith(("lanes.pool.", "lanes._")) for m in ours), ours
    third_party = [m for m in loaded if m.split(".")[0] in ("numpy", "pandas", "matplotlib", "ipywidgets", "IPython")]
    assert not third_party
