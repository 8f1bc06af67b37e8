"""Explorers build, and moving a control re-renders figure and table."""

import pytest

pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import lanes  # noqa: E402
from lanes.display.pool import widgets  # noqa: E402

SC = lanes.Scenario(hours=1)


def _changed(explorer, name, value):
    before = (explorer.image.value, explorer.table.value)
    explorer.controls[name].value = value
    return before != (explorer.image.value, explorer.table.value)


class TestExplorers:
    def test_policy_explorer_updates_on_policy(self):
        e = widgets.policy_explorer(SC)
        assert bytes(e.image.value).startswith(b"\x89PNG")
        assert _changed(e, "policy", "reserve:16")
        assert f"{lanes.simulate(SC, 'reserve:16').batch_done:,}" in e.table.value

    def test_headroom_explorer_updates_on_reserve_and_batch(self):
        e = widgets.headroom_explorer(SC)
        assert _changed(e, "reserve", 20)
        assert _changed(e, "batch", "15-45 s (mean 30 s)")

    def test_preemption_explorer_updates_on_cost(self):
        e = widgets.preemption_explorer(SC)
        assert _changed(e, "preempt_cost_s", 60)
        assert _changed(e, "victim", "most_remaining")

    def test_starvation_explorer_updates_on_floor(self):
        e = widgets.starvation_explorer(SC, deadline_s=1800)
        assert "batch done by 0.5 h" in e.table.value
        assert _changed(e, "floor", 16)

    def test_littles_explorer_updates_on_rate(self):
        e = widgets.littles_explorer()
        assert _changed(e, "peak_rate", 3.0)
        assert "24" in e.table.value  # L at the peak = 3 x 8

    def test_every_explorer_switches_clocks(self):
        for e in (widgets.policy_explorer(SC), widgets.headroom_explorer(SC), widgets.preemption_explorer(SC),
                  widgets.starvation_explorer(SC), widgets.littles_explorer()):
            assert set(e.controls["tick_s"].options) == set(widgets.CLOCKS.items())
        e = widgets.preemption_explorer(SC)
        assert _changed(e, "tick_s", 0.02)
        fine = lanes.simulate(SC.with_(tick_s=0.02), "preempt")
        assert f"{fine.preempted:,}" in e.table.value and f"{fine.batch_done:,}" in e.table.value

    def test_a_scenario_on_another_clock_keeps_it(self):
        e = widgets.policy_explorer(SC.with_(tick_s=0.5))
        assert e.controls["tick_s"].value == 0.5
        assert f"{lanes.simulate(SC.with_(tick_s=0.5), 'priority').batch_done:,}" in e.table.value

    def test_sliders_do_not_update_while_dragging(self):
        e = widgets.preemption_explorer(SC)
        sliders = [c for c in e.controls.values() if hasattr(c, "continuous_update")]
        assert sliders and all(c.continuous_update is False for c in sliders)


class TestWhatASavedNotebookKeeps:
    """lanes.display.savehook: the rules the kit's Jupyter server applies on every save."""

    @staticmethod
    def _nb(*outputs, widgets=True):
        nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "", "outputs": list(outputs)}],
              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        if widgets:
            nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
        return nb

    def test_an_explorer_keeps_its_fallback_and_loses_its_view(self):
        from lanes.display import savehook

        e = widgets.littles_explorer()
        data = e._repr_mimebundle_()
        assert widgets.WIDGET_VIEW_MIME in data
        nb = savehook.clean_notebook(self._nb({"output_type": "execute_result", "data": dict(data), "metadata": {}}))
        (out,) = nb["cells"][0]["outputs"]
        assert widgets.WIDGET_VIEW_MIME not in out["data"]
        assert out["data"]["text/plain"].startswith(widgets.FALLBACK_PREFIX)
        assert "widgets" not in nb["metadata"]

    def test_a_view_with_nothing_else_is_dropped(self):
        from lanes.display import savehook

        view = {widgets.WIDGET_VIEW_MIME: {"model_id": "x", "version_major": 2, "version_minor": 0}}
        nb = savehook.clean_notebook(self._nb({"output_type": "display_data", "data": view, "metadata": {}}))
        assert nb["cells"][0]["outputs"] == []

    def test_progress_frames_keep_their_last_state_and_streams_merge(self):
        from lanes.display import savehook

        nb = savehook.clean_notebook(self._nb(
            {"output_type": "stream", "name": "stdout", "text": ["57"]},
            {"output_type": "stream", "name": "stdout", "text": " records\n"},
            {"output_type": "stream", "name": "stderr", "text": "10%\r50%\r100%\n"},
            {"output_type": "display_data", "data": {"text/plain": ""}, "metadata": {}},
            widgets=False,
        ))
        assert nb["cells"][0]["outputs"] == [
            {"output_type": "stream", "name": "stdout", "text": "57 records\n"},
            {"output_type": "stream", "name": "stderr", "text": "100%\n"},
        ]

    def test_a_reveal_run_in_jupyterlab_is_saved_folded_and_other_cells_are_left_alone(self):
        from lanes.display import savehook

        # What JupyterLab holds after running a reveal: its output unfolded.
        nb = self._nb({"output_type": "stream", "name": "stdout", "text": "42\n"}, widgets=False)
        nb["cells"][0]["metadata"] = {"collapsed": False, "jupyter": {"outputs_hidden": False},
                                      "tags": [savehook.REVEAL_TAG]}
        nb["cells"].append({"cell_type": "code", "metadata": {"collapsed": False, "tags": ["predict"]},
                            "source": "", "outputs": []})
        nb["cells"].append({"cell_type": "code", "metadata": {"tags": [savehook.REVEAL_TAG]},
                            "source": "", "outputs": []})
        savehook.clean_notebook(nb)
        metas = [c["metadata"] for c in nb["cells"]]
        assert metas[0] == {"collapsed": True, "jupyter": {"outputs_hidden": True}, "tags": [savehook.REVEAL_TAG]}
        assert metas[1] == {"collapsed": False, "tags": ["predict"]}
        assert metas[2] == {"collapsed": True, "jupyter": {"outputs_hidden": True}, "tags": [savehook.REVEAL_TAG]}

    def test_pre_save_touches_notebooks_only(self):
        from lanes.display import savehook

        model = {"type": "file", "content": {"metadata": {"widgets": 1}}}
        savehook.pre_save(model=model, path="x.txt", contents_manager=None)
        assert model["content"] == {"metadata": {"widgets": 1}}
        model = {"type": "notebook", "content": self._nb()}
        savehook.pre_save(model=model, path="x.ipynb", contents_manager=None)
        assert "widgets" not in model["content"]["metadata"]

    def test_the_installed_setting_enables_the_extension_that_registers_the_hook(self, tmp_path):
        """Jupyter reads only ``jpserver_extensions`` from ``jupyter_server_config.d``: the kit's file
        enables :mod:`lanes.display.savehook` as an extension, and loading it makes a real contents
        manager save notebooks through the hook."""
        import importlib
        import json
        import pathlib
        import types

        from jupyter_server.extension.utils import get_loader, get_metadata
        from jupyter_server.services.contents.filemanager import FileContentsManager

        root = pathlib.Path(__file__).resolve().parents[2]
        installed = json.loads((root / "lanes" / "display" / "server_config" / "lanes.json").read_text())
        assert installed == {"ServerApp": {"jpserver_extensions": {"lanes.display.savehook": True}}}
        module, points = get_metadata("lanes.display.savehook")
        assert [p["module"] for p in points] == ["lanes.display.savehook"]
        manager = FileContentsManager(root_dir=str(tmp_path))
        get_loader(importlib.import_module(points[0]["module"]))(types.SimpleNamespace(contents_manager=manager))
        e = widgets.littles_explorer()
        nb = self._nb({"output_type": "display_data", "data": dict(e._repr_mimebundle_()), "metadata": {}})
        nb["cells"][0]["id"] = "c0"
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        manager.save({"type": "notebook", "format": "json", "content": nb}, "saved.ipynb")
        saved = json.loads((tmp_path / "saved.ipynb").read_text())
        (out,) = saved["cells"][0]["outputs"]
        assert widgets.WIDGET_VIEW_MIME not in out["data"] and "widgets" not in saved["metadata"]

    def test_an_editable_install_installs_the_hook_for_every_server(self, tmp_path):
        """``requirements.txt`` installs the kit editable: its wheel must carry the server setting too."""
        import pathlib
        import subprocess
        import sys
        import zipfile

        root = pathlib.Path(__file__).resolve().parents[2]
        build = ("import sys; from setuptools import build_meta; "
                 "print(build_meta.build_editable(sys.argv[1], {'editable_mode': 'compat'}))")
        proc = subprocess.run([sys.executable, "-c", build, str(tmp_path)], cwd=root,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        with zipfile.ZipFile(tmp_path / proc.stdout.strip().splitlines()[-1]) as zf:
            names = zf.namelist()
            config = [n for n in names if n.endswith("etc/jupyter/jupyter_server_config.d/lanes.json")]
            assert config, f"the editable wheel installs no Jupyter server setting: {names}"
            assert zf.read(config[0]) == (root / "lanes" / "display" / "server_config" / "lanes.json").read_bytes()

class TestProgressLine:
    def test_progress_text(self):
        from lanes.display.progress import progress_text

        assert progress_text("sweep", 40, 160, 3.2) == "sweep: 40/160 (25%), 3 s"

    def test_track_yields_every_item_and_leaves_an_empty_display(self, monkeypatch):
        from IPython.core.interactiveshell import InteractiveShell

        from lanes.display import progress

        shell = InteractiveShell.instance()
        shown = []
        monkeypatch.setattr(shell.display_pub, "publish",
                            lambda data, metadata=None, **kw: shown.append((data, kw.get("update", False))))
        items = list(progress.track(range(5), "demo", delay_s=0, every_s=0))
        assert items == [0, 1, 2, 3, 4]
        assert shown and shown[0][0]["text/plain"].startswith("demo: 0/5")
        assert shown[-1] == ({"text/plain": ""}, True)

    def test_sweeps_use_the_progress_line_not_a_widget(self, monkeypatch):
        from lanes.display import progress

        monkeypatch.setenv("LANES_PROGRESS", "1")
        it = progress.lab_progress([1, 2, 3], "runs")
        assert type(it).__name__ == "generator" and list(it) == [1, 2, 3]
        monkeypatch.setenv("LANES_PROGRESS", "0")
        assert progress.lab_progress([1, 2, 3], "runs") == [1, 2, 3]
