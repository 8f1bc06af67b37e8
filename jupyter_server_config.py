"""Jupyter server settings for the course: save notebooks without widget views.

Start JupyterLab from the repository root with

    jupyter lab --config=jupyter_server_config.py

(an install of the kit, ``pip install .``, also installs
``lanes/pool/server_config/lanes.json`` into ``etc/jupyter/jupyter_server_config.d``
of the environment, where every Jupyter server finds it, so a plain
``jupyter lab`` gets the same hook).

The hook, ``lanes.pool.savehook.pre_save``, removes the widget views and progress
frames from every notebook the server saves, so a chapter run, saved, closed
and reopened after a kernel restart shows each explorer's text fallback, never
"Error displaying widget: model not found". It is loaded from this file's
folder, so it works before ``lanes`` is installed.
"""

import importlib.util
import pathlib
import warnings

_spec = importlib.util.spec_from_file_location(
    "lanes_savehook", pathlib.Path(__file__).resolve().parent / "lanes" / "pool" / "savehook.py"
)
_savehook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_savehook)

# Jupyter applies this file to the server and to JupyterLab: the second time
# would warn that the hook replaces itself.
warnings.filterwarnings("ignore", message="Overriding existing pre_save_hook")
c = get_config()  # noqa: F821 - defined by Jupyter's config loader
c.ContentsManager.pre_save_hook = _savehook.pre_save
