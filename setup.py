"""Build hook for one gap in setuptools: an editable install also installs the data files.

``[tool.setuptools.data-files]`` in ``pyproject.toml`` installs the kit's Jupyter
server setting (``lanes/display/server_config/lanes.json``, the save hook of
:mod:`lanes.display.savehook`) into ``etc/jupyter/jupyter_server_config.d`` of the
environment. A wheel does; setuptools' editable install means to ("Installing data
as non editable") but looks for ``has_data`` where the distribution has
``has_data_files``, so ``pip install -e .`` (what ``requirements.txt`` does) left
every plain ``jupyter lab`` without the hook. This runs ``install_data`` into the
editable wheel as well (once: a setuptools that fixes the name runs it itself).
Everything else about the package is in ``pyproject.toml``.
"""

from setuptools import setup
from setuptools.command.editable_wheel import editable_wheel


class EditableWheelWithDataFiles(editable_wheel):
    def _run_install(self, category: str) -> None:
        super()._run_install(category)
        if category == "data" and self.distribution.has_data_files():
            self.run_command("install_data")


setup(cmdclass={"editable_wheel": EditableWheelWithDataFiles})
