"""Packaging and launching: the wheel, the Binder environment, the Colab setup
cell and the publishing workflows.

- The wheel is built once per session from a copy of the package (pip, no
  network, no build isolation), installed into a fresh virtual environment
  with nothing else in it, and must print the same anchor table as the tree.
- A chapter's setup cell, run in a virtual environment that sees every course
  dependency but not ``lanes``, installs ``lanes`` (the session's wheel, through
  the ``LANES_PIP_SOURCE`` override) and the chapter then runs to its first output,
  which must read as the committed one (nbval runs every cell in the tree's environment).
- ``binder/requirements.txt`` covers every import the chapters make.
- ``.github/workflows/book.yml`` builds with the README's command and deploys
  only from main; ``release.yml`` builds and checks sdist and wheel.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUP_CHAPTER = ROOT / "notebooks" / "01_slots_and_littles_law.ipynb"

#: Development tools that must never be a dependency of the package itself.
DEV_TOOLS = {
    "pytest", "hypothesis", "nbval", "playwright", "jupyter-book", "sphinx",
    "otter-grader", "build", "twine", "setuptools", "jupyterlab",
}


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(extra)
    return env


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def _venv(path: Path) -> Path:
    """A fresh virtual environment without pip (pip runs from outside with --python)."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)])
    return path / "bin" / "python"


def _pip_into(python: Path, *args: str) -> None:
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
          "--disable-pip-version-check", *args])


def _package_copy(dest: Path) -> Path:
    """The package sources (lanes/, pyproject.toml, README.md) copied to ``dest``."""
    dest.mkdir(parents=True)
    shutil.copy2(ROOT / "pyproject.toml", dest)
    shutil.copy2(ROOT / "README.md", dest)
    shutil.copytree(ROOT / "lanes", dest / "lanes",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


# --------------------------------------------------------------------------
# The wheel
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """lanes-*.whl, built once per session from a copy of the tree (no network)."""
    src = _package_copy(tmp_path_factory.mktemp("src") / "lanes-src")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
          "--no-build-isolation", "--disable-pip-version-check", "-w", str(out), str(src)])
    (whl,) = out.glob("lanes-*.whl")
    return whl


@pytest.fixture(scope="session")
def wheel_env(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with only the wheel installed; its python."""
    python = _venv(tmp_path_factory.mktemp("venv") / "wheel")
    _pip_into(python, "--no-index", "--no-deps", str(wheel))
    return python


def _package_files_in_tree() -> set[str]:
    files = set()
    for path in (ROOT / "lanes").rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix == ".py" or re.fullmatch(r"lanes/gpu/data/[^/]+\.jsonl", rel):
            files.add(rel)
        elif re.fullmatch(r"lanes/data/traces/[^/]+\.(csv\.gz|txt|md)", rel):  # the traces, licence, credit
            files.add(rel)
    return files


def test_wheel_holds_every_module_and_data_file(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = {n for n in zf.namelist() if n.startswith("lanes/")}
    expected = _package_files_in_tree()
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert not {n for n in names if "__pycache__" in n}


def test_wheel_metadata_has_no_hard_dependencies_and_both_extras(wheel):
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in zf.namelist() if n.endswith("entry_points.txt"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    unconditional = [r for r in requires if "extra ==" not in r]
    assert unconditional == [], f"the package depends on {unconditional}"
    extras = {line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Provides-Extra:")}
    assert {"course", "grading"} <= extras
    assert "lanes = lanes.cli:main_exit" in entry_points


def test_pyproject_depends_on_no_dev_tool_and_extras_cover_the_course():
    project = PYPROJECT["project"]
    names = {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() for d in project.get("dependencies", [])}
    assert not names & DEV_TOOLS, f"dev tools as dependencies: {names & DEV_TOOLS}"
    course = {re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() for d in project["optional-dependencies"]["course"]}
    assert {"matplotlib", "pandas", "ipywidgets", "tqdm", "myst-nb"} <= course


def _third_party_imports(source: str) -> set[str]:
    top = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            top |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top.add(node.module.split(".")[0])
    return {m for m in top if m not in sys.stdlib_module_names and m not in ("lanes", "grading")}


def test_grading_extra_covers_what_the_grading_script_imports():
    if not (ROOT / "scripts" / "grade.py").is_file():
        pytest.skip("no scripts/grade.py: the grading package is the instructor's (student repository)")
    imports = _third_party_imports((ROOT / "scripts" / "grade.py").read_text(encoding="utf-8"))
    provides = {"otter": "otter-grader", "nbformat": "nbformat"}
    grading = " ".join(PYPROJECT["project"]["optional-dependencies"]["grading"])
    missing = [m for m in imports if provides.get(m, m) not in grading]
    assert imports, "grade.py imports nothing outside the standard library?"
    assert not missing, f"the grading extra lacks {missing}"


def test_wheel_installs_clean_and_prints_the_anchor_table(wheel_env, tmp_path):
    """``python -m lanes table`` from the wheel, run far from the tree, equals the tree's."""
    env = _clean_env()
    where = _run([str(wheel_env), "-c", "import lanes; print(lanes.__file__)"], cwd=tmp_path, env=env)
    assert Path(where.stdout.strip()).is_relative_to(wheel_env.parents[1]), where.stdout
    installed = _run([str(wheel_env), "-m", "lanes", "table"], cwd=tmp_path, env=env).stdout
    in_tree = _run([sys.executable, "-m", "lanes", "table"], cwd=ROOT, env=_clean_env(PYTHONPATH=str(ROOT))).stdout
    digits = re.findall(r"\d[\d,.]*", in_tree)
    assert len(digits) > 20, in_tree
    assert re.findall(r"\d[\d,.]*", installed) == digits
    assert installed == in_tree


def test_console_script_runs_from_the_wheel(wheel_env, tmp_path):
    script = wheel_env.parent / "lanes"
    assert script.is_file(), "the wheel installed no `lanes` console script"
    out = _run([str(script), "table", "--hours", "1", "--json"], cwd=tmp_path, env=_clean_env()).stdout
    assert json.loads(out), "empty JSON from `lanes table --json`"


# --------------------------------------------------------------------------
# Binder
# --------------------------------------------------------------------------


def test_binder_environment_covers_every_chapter_import():
    lines = [
        line.split("#", 1)[0].strip()
        for line in (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    ]
    lines = [line for line in lines if line]
    kit = [line for line in lines if re.fullmatch(r"(-e\s+)?\.(\[[a-z,]+\])?", line)]
    assert kit, "binder/requirements.txt does not install the kit from this repository"
    extras = set(re.findall(r"[a-z]+", kit[0].split("[", 1)[1])) if "[" in kit[0] else set()
    provided = {line.lower() for line in lines if line not in kit}
    for extra in extras:
        provided |= {
            re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower()
            for d in PYPROJECT["project"]["optional-dependencies"][extra]
        }
    # The test stack stays out of Binder.
    assert not provided & {"pytest", "hypothesis", "nbval", "playwright", "jupyter-book"}
    module_to_dist = {"myst_nb": "myst-nb", "mpl_toolkits": "matplotlib", "IPython": "ipython",
                      "ipywidgets": "ipywidgets", "matplotlib": "matplotlib", "pandas": "pandas",
                      "tqdm": "tqdm", "numpy": "numpy"}
    # Binder's image brings Jupyter (IPython, ipykernel); numpy comes with matplotlib/pandas.
    preinstalled = {"ipython", "ipykernel", "numpy"}
    missing = {}
    for path in CHAPTERS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            source = "\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!")))
            for module in _third_party_imports(source):
                dist = module_to_dist.get(module, module).lower()
                if dist not in provided | preinstalled:
                    missing.setdefault(module, path.name)
    assert not missing, f"imports Binder would not have: {missing}"


# --------------------------------------------------------------------------
# Colab: the setup cell
# --------------------------------------------------------------------------


def test_setup_cell_is_short_lined_and_points_at_the_books_branch():
    setup = _script("setup_cell")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    source = setup.cell_source()
    assert f"git+{config['repository']['url']}.git@{config['repository']['branch']}" in source
    assert "lanes[course]" in source and setup.SOURCE_ENV in source
    assert max(len(line) for line in source.splitlines()) <= 88
    compile(source, "<setup cell>", "exec")


def test_setup_cell_insertion_keeps_every_other_cell(tmp_path):
    setup = _script("setup_cell")
    copy = tmp_path / SETUP_CHAPTER.name
    original = json.loads(SETUP_CHAPTER.read_text(encoding="utf-8"))
    original_cells = [c for c in original["cells"]
                      if "setup" not in c.get("metadata", {}).get("tags", [])]
    shutil.copy2(SETUP_CHAPTER, copy)
    setup.update_file(copy, setup.cell_source())
    once = copy.read_bytes()
    assert not setup.update_file(copy, setup.cell_source()), "a second run changed the notebook"
    assert copy.read_bytes() == once
    nb = json.loads(once)
    codes = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "setup" in codes[0]["metadata"]["tags"] and codes[0]["outputs"] == []
    rest = [c for c in nb["cells"] if "setup" not in c.get("metadata", {}).get("tags", [])]
    assert [c["source"] for c in rest] == [c["source"] for c in original_cells]
    assert [c.get("outputs") for c in rest] == [c.get("outputs") for c in original_cells]
    counts = [c["execution_count"] for c in codes]
    assert counts == list(range(1, len(codes) + 1)), counts


def test_every_chapter_has_the_current_setup_cell():
    """Fails until `python scripts/setup_cell.py` has been run over the chapters."""
    setup = _script("setup_cell")
    source = setup.cell_source()
    stale = []
    for path in CHAPTERS:
        codes = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        first = codes[0] if codes else {}
        if "setup" not in first.get("metadata", {}).get("tags", []) or "".join(first["source"]) != source:
            stale.append(path.name)
    assert not stale, f"run `python scripts/setup_cell.py`; no current setup cell in {stale}"


def _system_site_packages() -> list[str]:
    import site

    return [p for p in site.getsitepackages() if Path(p).is_dir()]


def test_setup_cell_installs_lanes_where_missing_and_the_chapter_runs(wheel, tmp_path):
    """A kernel without lanes: the setup cell installs it, the chapter's first output is the committed one.

    The virtual environment sees the course's dependencies through a .pth
    line naming the system site-packages (whose own .pth files, among them
    the editable install of lanes, are not processed), so ``lanes`` alone is
    missing. ``LANES_PIP_SOURCE`` points pip at the wheel this session built from
    the checkout (what pip would build from the repository): no network.
    """
    import nbformat

    setup = _script("setup_cell")
    python = _venv(tmp_path / "colab")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "course_deps.pth").write_text("\n".join(_system_site_packages()) + "\n")
    work = tmp_path / "notebooks"
    work.mkdir()
    env = _clean_env()
    missing = subprocess.run([str(python), "-c", "import lanes"], cwd=work, env=env,
                             capture_output=True, text=True, check=False)
    assert missing.returncode != 0, "lanes is importable before the setup cell ran"

    nb_path = work / SETUP_CHAPTER.name
    shutil.copy2(SETUP_CHAPTER, nb_path)
    setup.update_file(nb_path, setup.cell_source())
    # The chapter up to its first output: the setup cell, then the cell that imports lanes, its
    # plotting modules, matplotlib and pandas, and prints the anchor scenario. (nbval runs every
    # cell of every chapter in the same test run; here what is new is the environment the setup
    # cell had to complete.)
    short = nbformat.read(nb_path, as_version=4)
    codes = [i for i, c in enumerate(short.cells) if c.cell_type == "code"]
    shown = next(i for i in codes[1:] if short.cells[i].outputs)
    expected = [o.get("text") for o in short.cells[shown].outputs]
    assert "import lanes" in short.cells[shown].source and any(expected), short.cells[shown].source
    short.cells = short.cells[: shown + 1]
    nbformat.write(short, nb_path)

    pip_source = f"--no-deps --no-index --ignore-installed {wheel}"
    # The kernel is the environment's python (a kernel spec naming it, as Colab's names its
    # own), started with the environment's variables only; nbclient drives it from here.
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    spec = tmp_path / "kernels" / "colab"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "colab", "language": "python"}))
    km = KernelManager(kernel_name="colab", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]))
    nb = nbformat.read(nb_path, as_version=4)
    NotebookClient(nb, km=km, timeout=300, resources={"metadata": {"path": str(work)}}).execute(
        env=_clean_env(LANES_PIP_SOURCE=pip_source, MPLBACKEND="Agg"))
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "setup" in first.metadata.tags
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors[0]
    printed = "".join(o.get("text", "") for o in first.outputs)
    assert "Installing the lanes course kit" in printed, first.outputs
    assert [o.get("text") for o in nb.cells[shown].outputs] == expected
    where = _run([str(python), "-c", "import lanes; print(lanes.__file__)"], cwd=work, env=env).stdout
    assert Path(where.strip()).is_relative_to(tmp_path / "colab"), where


# --------------------------------------------------------------------------
# Workflows
# --------------------------------------------------------------------------


def _workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def _readme_build_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Install and build the book", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [c.strip() for line in block.splitlines() for c in line.split("&&") if c.strip()]
    build = [c for c in commands if "build_book" in c or "jupyter-book build" in c]
    assert len(build) == 1, commands
    return build[0]


def _steps(workflow: dict) -> list[dict]:
    return [s for job in workflow["jobs"].values() for s in job.get("steps", [])]


def test_book_workflow_runs_the_readmes_build_command():
    command = _readme_build_command()
    runs = [s["run"].strip() for s in _steps(_workflow("book.yml")) if "run" in s]
    assert command in runs, f"book.yml does not run the README's `{command}`: {runs}"
    script = (ROOT / command.split()[0]).read_text(encoding="utf-8")
    assert "jupyter-book build . -W -n --keep-going" in script
    from conftest import BUILD_COMMAND  # what the test session builds with

    assert " ".join(BUILD_COMMAND) in script


def test_book_workflow_checks_the_stored_outputs_before_building_from_them():
    """The book executes nothing, so the workflow runs strict nbval before the build."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "off"
    runs = [s["run"].strip() for s in _steps(_workflow("book.yml")) if "run" in s]
    build = runs.index(_readme_build_command())
    nbval = [i for i, run in enumerate(runs) if re.fullmatch(r"python -m pytest notebooks/?", run)]
    assert nbval and nbval[0] < build, f"book.yml does not run nbval over notebooks/ before building: {runs}"
    ini = (ROOT / "pytest.ini").read_text(encoding="utf-8")
    assert re.search(r"^addopts\s*=.*--nbval\b", ini, re.M), "pytest.ini no longer turns nbval on"


def test_book_workflow_deploys_main_to_pages_and_only_builds_pull_requests():
    wf = _workflow("book.yml")
    assert wf["on"]["push"]["branches"] == ["main"]
    assert "pull_request" in wf["on"]
    uses = [s.get("uses", "").split("@")[0] for s in _steps(wf)]
    for action in ("actions/upload-pages-artifact", "actions/configure-pages", "actions/deploy-pages"):
        assert action in uses, f"book.yml does not use {action}"
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_build/html"
    assert "pull_request" in upload["if"] and "pull_request" in deploy["if"]
    assert "refs/heads/main" in deploy["if"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}


def test_published_url_is_in_the_config_and_the_readme():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    owner, repo = config["repository"]["url"].rstrip("/").split("/")[-2:]
    url = f"https://{owner}.github.io/{repo}/"
    assert config["html"]["baseurl"] == url
    assert url in (ROOT / "README.md").read_text(encoding="utf-8")
    assert config["sphinx"]["config"]["notfound_urls_prefix"] == f"/{repo}/"


def test_release_workflow_builds_and_checks_both_distributions():
    wf = _workflow("release.yml")
    runs = "\n".join(s.get("run", "") for s in _steps(wf))
    assert "python -m build" in runs
    assert "twine check" in runs and "dist/*" in runs
    assert "lanes table" in runs


# --------------------------------------------------------------------------
# The test command
# --------------------------------------------------------------------------


def _readme_test_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    (command,) = [line.strip() for line in re.search(r"```bash\n(.*?)```", section, re.S).group(1).splitlines()
                  if line.strip()]
    return command


def test_ci_runs_exactly_the_readmes_test_command():
    command = _readme_test_command()
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines[-1] == command, f".ci/run ends with {lines[-1]!r}, the README says {command!r}"
    assert "python -m pip install -q -r requirements.txt" in lines
    script = (ROOT / command.split()[0]).read_text(encoding="utf-8")
    assert re.search(r'^"\$PYTHON" -m pytest .*"\$@"$', script, re.M), "test.sh does not pass its arguments to pytest"
    assert "apt-get install" in script


def test_the_test_command_reports_an_empty_run_with_pytests_status(tmp_path):
    """pytest's exit 5 (no test collected) comes back as 5, with a line saying so."""
    empty = tmp_path / "no_tests_here"
    empty.mkdir()
    proc = subprocess.run(
        # (without the notebook plugin's options and the plugins that import hypothesis, trio
        # or a benchmark timer: there is nothing for them to do, and their imports would take
        # most of the time, in the parent and again in the worker)
        [str(ROOT / "scripts" / "test.sh"), str(empty), "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "-p", "no:nbval", "-p", "no:hypothesispytest", "-p", "no:anyio", "-p", "no:benchmark"],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=300,
        env=_clean_env(PYTHON=sys.executable, LANES_TEST_WORKERS="1"),  # through xdist, one worker
    )
    assert proc.returncode == 5, proc.stdout[-1000:] + proc.stderr[-1000:]
    assert "collected no tests" in proc.stderr


def _files_that_read_the_graded_class() -> set[str]:
    """Test files that use the session's ``graded_class`` fixture (tests/conftest.py)."""
    pattern = re.compile(r"\bgraded_class\b")
    return {p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "tests").rglob("test_*.py"))
            if p.name != Path(__file__).name and pattern.search(p.read_text(encoding="utf-8"))}


def test_the_parallel_run_keeps_each_file_whole_and_the_graded_class_files_together():
    """scripts/test.sh runs whole files per xdist worker. The files that read the session's
    graded class share one worker, so the class is graded once; the online judge's tests
    watch only a temp dir of their own, so they may run beside a class being graded."""
    from conftest import work_unit

    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "--dist loadfile" in script and "--no-loadscope-reorder" in script
    assert re.search(r"^pytest-xdist[<>=]", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M)
    assert work_unit("tests/site/test_site.py::TestBuild::test_a") == work_unit("tests/site/test_site.py::test_b")
    assert work_unit("notebooks/01_x.ipynb::Cell 0") == work_unit("notebooks/01_x.ipynb::Cell 9")
    assert work_unit("tests/site/test_site.py::test_b") != work_unit("tests/test_packaging.py::test_b")
    readers = _files_that_read_the_graded_class()
    # (test_grading_class.py stays in the instructor's repository: the student export drops it)
    expected = {f for f in ("tests/exercises/test_exercises.py", "tests/grading/test_grading_class.py") if (ROOT / f).is_file()}
    assert "tests/exercises/test_exercises.py" in expected and expected <= readers, readers
    units = {work_unit(f"{f}::test") for f in readers}
    assert len(units) == 1, f"the graded class is read on different workers: {sorted(readers)}"
    judge = ROOT / "tests" / "grading" / "test_online_judge.py"
    if judge.is_file():  # (the instructor's: the student export drops it with grading/)
        text = judge.read_text(encoding="utf-8")
        assert "tempfile.tempdir = " in text and "_ours_or_orphaned" in text


def test_property_tests_draw_the_same_examples_every_run():
    """tests/conftest.py loads a derandomized hypothesis profile unless LANES_HYPOTHESIS=explore."""
    from hypothesis import settings

    assert settings().derandomize is (os.environ.get("LANES_HYPOTHESIS") != "explore")
