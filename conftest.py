"""Loaded by pytest before anything else of the repository, in every test process.

nbval (strict notebook checks) is registered from here rather than through its entry point
(pytest.ini disables that with ``-p no:nbval``), so that this file runs first: nbval loads
nbformat, whose jsonschema, when ``rfc3987_syntax`` is installed, builds 39 parser grammars for
the "iri" string formats at import, about 2 s of CPU in every pytest process (the controller
and each xdist worker). The notebook schema uses no string format, and no test validates
one, so test processes go without that module. The fixtures live in tests/conftest.py.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)

pytest_plugins = ["nbval.plugin"]
