"""Grading a class: submissions read as data, identity from the hand-in, scores from two steps.

What ``scripts/grade.py`` runs; this module holds the logic, the script parses arguments.

**Submissions are data.** Under a submissions folder, every name ending ``.ipynb`` is a
submission; folders are walked without following links. Only regular files are read
(``O_NOFOLLOW``, at most :data:`MAX_NOTEBOOK_BYTES`): a link, FIFO, device or folder named
``*.ipynb`` is refused with one line, and no message quotes a submission's bytes. An
nbformat 3 notebook is converted to 4. ``metadata.lanes`` and its ``set`` are used only
when they have the right types. A chapter's notebook matched to a set by its name (its
title is a chapter's: :func:`chapter_of`) is refused in one line, not run. Every error
while reading or grading one notebook is caught and reported for that notebook; the report
and gradebook are always written.

**Identity comes from the hand-in** (``STUDENT`` in the notebook must agree, but never
decides): the roster (:mod:`.roster`: keyed on login, LMS user id, e-mail or file name) and
the layout of the LMS export (:mod:`.lms`: Canvas, Gradescope, Moodle, GitHub Classroom, a
folder per student, ``<login>_...`` files), or ``student=`` (every notebook is that
student's). The notebook's ``STUDENT`` must be the student's token
(:func:`lanes.exercises.variants.student_token`); otherwise the mismatch is flagged and the
notebook is graded as the roster's student anyway.

**One copy counts.** Several submissions of one student for one set are flagged and the
latest :class:`Budget` ``copies`` of them graded; the **latest** counts, never the best, by the rule of :mod:`.lms` (the export's own
time, its upload order, the copy number in the name, the path; never a file's time).
Deadlines and the late policy are :mod:`.deadlines`'. What is written (report, gradebook,
feedback; every roster student included) is :mod:`.gradebook`'.

**One submission fails only itself.** Reading is bounded and iterative (size, JSON depth,
folder depth; no recursion on student data) and every error is caught for the submission
it belongs to; step 2 runs per student, so an input the judge cannot take fails that
student alone. A student's grading time, the judge's time and the copies graded are
bounded per student (:class:`Budget`). File names are reported as :func:`shown` writes them.

**Shards.** ``shard=(k, n)`` grades the students whose login hashes to ``k`` (of ``n``;
submissions without a login go to shard 1); :func:`merge` combines the shards' reports
into what one run gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

from lanes.exercises.registry import all_sets, get_set
from lanes.exercises.variants import check_login, normalise_student, student_token, token_mismatch

from . import sandbox
from .runner import MAX_ANSWERS_BYTES  # (the box's server sends at most that much of a notebook's answers)
from .deadlines import Deadlines
from .gradebook import NOTE_CHARS, feedback_markdown, merge, printable, report, write_feedback, write_gradebook
from .lms import Exports, copy_number
from .roster import Roster, load_roster

__all__ = ["MAX_NOTEBOOK_BYTES", "Question", "Roster", "Submission", "collect", "feedback_markdown",
           "grade", "load_roster", "merge", "read_notebook", "report", "shard_of", "write_feedback",
           "write_gradebook"]

#: Statuses of a submission.
GRADED, TIMEOUT, CRASHED, NOT_A_NOTEBOOK, UNKNOWN, NO_KEY, REFUSED, UNIDENTIFIED = (
    "graded", "timeout", "crashed", "not_a_notebook", "unknown_assignment", "no_key", "refused", "unidentified")

#: Largest notebook read (bytes).
MAX_NOTEBOOK_BYTES = 16 << 20
#: Most cells a notebook may have (an exercise set has a few dozen); checked before it is validated.
MAX_CELLS = 5000
#: Deepest nesting of JSON arrays and objects read from a notebook, and from its answers.
MAX_NOTEBOOK_DEPTH = 64
MAX_ANSWERS_DEPTH = 16
#: Deepest folder under a submissions folder that is searched for notebooks.
MAX_FOLDER_DEPTH = 16


@dataclass(frozen=True)
class Budget:
    """What one student may spend of a grading run, so that no student spends the others' time.

    Attributes
    ----------
    copies : int
        Copies of one set graded per student: the latest ``copies`` (by the rule of
        :mod:`.lms`: the export's time, its upload order, the copy number, the path; never
        a file's time) are run; older ones are listed, not run (the latest counts either way).
    judge_s : float
        Wall-clock time of step 2 (the judge) per submission, s.
    student_s : float
        Wall-clock time of a student's whole grading (both steps, every set and copy, the jobs
        running at once added up), s: when it is spent, the student's running jobs are stopped
        and what is left is not run.
    files : int
        Files read per student: the latest ``files`` (each set's latest copy first, by the
        rule of ``copies``; never the path order, so the copy that counts is read); older
        ones are listed, not read.
    read_mb : float
        MiB of notebooks read per student, the latest first as for ``files`` (each file's
        size is checked before it is read); more are listed, not read.
    """

    copies: int = 5
    judge_s: float = 300.0
    student_s: float = 3600.0
    files: int = 200
    read_mb: float = 128.0

    def __post_init__(self) -> None:
        for name in ("copies", "files"):
            if type(getattr(self, name)) is not int or getattr(self, name) < 1:
                raise ValueError(f"Budget.{name} must be a whole number >= 1 (got {getattr(self, name)!r})")
        for name in ("judge_s", "student_s"):
            value = getattr(self, name)
            if type(value) not in (int, float) or not value > 0:
                raise ValueError(f"Budget.{name} must be a number of seconds > 0 (got {value!r})")
        if type(self.read_mb) not in (int, float) or not self.read_mb > 0:
            raise ValueError(f"Budget.read_mb must be a number of MiB > 0 (got {self.read_mb!r})")


@dataclass
class Question:
    name: str
    possible: float
    score: float = 0.0
    messages: list = field(default_factory=list)
    form_ok: bool | None = None


@dataclass
class Submission:
    """One handed-in file and what became of it (``login`` is the roster identifier)."""

    path: str
    assignment: str | None = None
    login: str | None = None
    name: str = ""
    student: str | None = None  # the STUDENT value (token) graded
    notebook_student: str | None = None  # the notebook's own STUDENT, as it was written (cleaned)
    status: str = GRADED
    counted: bool = False
    submitted: str | None = None  # the export's own submission time (ISO 8601, UTC), if it has one
    late: bool | None = None  # None: not known (no deadline, or no time in the export)
    late_s: float | None = None  # seconds after the deadline and grace, where known
    factor: float = 1.0  # the late policy's multiplier of the score
    order: tuple = ()  # which copy is later (see grading.lms); not reported
    attempt: str = ""  # the LMS submission it came in (see grading.lms.Origin); not reported
    matched: str = ""  # how its set was found: "metadata", "file name" or "folder" (see match_assignment)
    seconds: float = 0.0
    messages: list = field(default_factory=list)
    questions: list = field(default_factory=list)

    @property
    def recency(self) -> tuple:
        """Sort key of copies: the one that counts sorts last. A copy whose own metadata names
        its set outranks one matched by its file name, which outranks one matched by a folder
        (a scratch ``Untitled.ipynb`` handed in beside the set's notebook); then the later copy
        (see :mod:`.lms`; never a file time)."""
        rank = {"metadata": 2, "file name": 1}.get(self.matched, 0)
        return (rank, *(self.order or (False, 0.0, 0, copy_number(pathlib.Path(self.path).stem), self.path)))

    @property
    def score(self) -> float:
        return round(sum(q.score for q in self.questions) * self.factor, 6)

    @property
    def possible(self) -> float:
        return sum(q.possible for q in self.questions)

    def as_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("questions", "order", "attempt")}
        d["score"], d["possible"] = round(self.score, 6), self.possible
        d["questions"] = {q.name: {"score": q.score, "possible": q.possible, "messages": q.messages,
                                   "form_ok": q.form_ok} for q in self.questions}
        return d


def _clean(text: object, limit: int = 200) -> str:
    """Text made safe to print (:func:`.gradebook.printable`), at most 200 characters by default."""
    return printable(text, limit)


def shown(name: object) -> str:
    """A file name as text safe to print and to write as UTF-8.

    Bytes that are not UTF-8 become ``\\xNN`` and characters that are not printable
    (escape sequences, line breaks, bidirectional controls) ``\\xNN``/``\\uNNNN``.
    """
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                                              if ord(c) < 0x10000 else f"\\U{ord(c):08x}") for c in text)


_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings ignored).

    Linear in the length of ``data`` whatever it holds (escapes go first, so that a string
    is a quote, what is not a quote, and a quote: nothing for a regex to try again), and
    iterative, so that it can be asked of any bytes before they are parsed.
    """
    import itertools

    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", _ESCAPE.sub(b"", data)))
    steps = (1 if c in b"[{" else -1 for c in brackets)
    return max(itertools.accumulate(steps, initial=0))


def loads_bounded(data: bytes, depth: int):
    """``json.loads`` of ``data`` with at most ``depth`` levels of nesting; ``ValueError`` otherwise.

    Deeper JSON is refused before it is parsed (the parser and everything that later walks
    the value recurse); any error of the parser becomes a ``ValueError``.
    """
    if json_depth(data) > depth:
        raise ValueError(f"nested deeper than {depth} levels")
    try:
        return json.loads(data)
    except ValueError:
        raise
    except (RecursionError, MemoryError, TypeError) as e:
        raise ValueError(f"cannot be read ({type(e).__name__})") from None


# --------------------------------------------------------------------------- reading


def collect(paths: list) -> list[tuple[pathlib.Path, pathlib.Path, str | None]]:
    """``(path, root, refusal)`` for every submission under ``paths``; links are never followed.

    ``root`` is the folder given (for identity), or the file's own folder for a file given
    directly. ``refusal`` is one line when the entry is not a regular file.
    """
    out: list = []
    for given in map(pathlib.Path, paths):
        try:
            st = os.lstat(given)
        except OSError:
            out.append((given, given.parent, "not found"))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(given, given, out)
        else:
            out.append((given, given.parent, _refusal(given)))
    seen, unique = set(), []
    for item in out:
        if item[0] not in seen:
            seen.add(item[0])
            unique.append(item)
    return unique


def _walk(folder: pathlib.Path, root: pathlib.Path, out: list) -> None:
    """Depth first in name order, iteratively, at most :data:`MAX_FOLDER_DEPTH` folders down.

    A folder that cannot be read, or lies deeper, is listed with a refusal (never dropped
    without a word: a notebook in it would vanish from the report)."""
    stack = [(folder, 0)]
    while stack:
        folder, depth = stack.pop()
        if depth > MAX_FOLDER_DEPTH:
            out.append((folder, root, f"refused: not read, a folder more than {MAX_FOLDER_DEPTH} folders down "
                                      "(hand in the notebooks nearer the top)"))
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            if folder != root:
                out.append((folder, root, f"refused: this folder could not be read ({type(e).__name__})"))
            continue
        below = []
        for e in entries:
            p = pathlib.Path(e.path)
            if e.is_symlink() or not e.is_dir(follow_symlinks=False):
                if e.name.endswith(".ipynb") and not e.name.startswith("."):
                    out.append((p, root, _refusal(p)))
            elif e.name.endswith(".ipynb"):
                out.append((p, root, _refusal(p)))
            elif not e.name.startswith(".") and e.name != "__pycache__":
                below.append((p, depth + 1))
        stack.extend(reversed(below))


def _refusal(path: pathlib.Path) -> str | None:
    try:
        st = os.lstat(path)
    except OSError:
        return "not found"
    if stat.S_ISLNK(st.st_mode):
        return "refused: a symbolic link, not a file (hand in the notebook itself)"
    if stat.S_ISDIR(st.st_mode):
        return "refused: a folder, not a notebook file"
    if not stat.S_ISREG(st.st_mode):
        return "refused: not a regular file (a FIFO, socket or device)"
    return None


def read_notebook(path: pathlib.Path, limit: int = MAX_NOTEBOOK_BYTES):
    """``(notebook, mtime_ns, None)`` or ``(None, mtime_ns, why)``; never quotes the file's bytes."""
    nb, mtime, why, _ = _read(path, limit)
    return nb, mtime, why


def _read_bytes(path: pathlib.Path, limit: int):
    """``(bytes, stat, None)`` of the regular file ``path`` (no link followed, at most ``limit``
    bytes, the size checked before a byte is read), or ``(None, stat or None, why)``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        return None, None, ("refused: a symbolic link, not a file" if os.path.islink(path)
                            else f"cannot be opened ({os.strerror(e.errno or 0)})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, None, "refused: not a regular file"
        if st.st_size > limit:
            return None, st, f"refused: larger than {limit >> 20} MiB"
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            return None, st, f"refused: larger than {limit >> 20} MiB"
    finally:
        os.close(fd)
    return b"".join(chunks), st, None


def _read(path: pathlib.Path, limit: int = MAX_NOTEBOOK_BYTES):
    """:func:`read_notebook` and the SHA-256 of the bytes read (``None`` unless it is an nbformat 4
    notebook, which the box may be given as it is). Parsed once, validated once."""
    import nbformat

    data, st, why = _read_bytes(path, limit)
    mtime = st.st_mtime_ns if st is not None else 0
    if data is None:
        return None, mtime, why, None
    if path.suffix != ".ipynb":
        return None, mtime, f"not a Jupyter notebook (a {_clean(path.suffix, 12) or 'extension-less'} file; submit the .ipynb)", None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, mtime, "not a Jupyter notebook (it is not UTF-8 text)", None
    if json_depth(data) > MAX_NOTEBOOK_DEPTH:
        return None, mtime, f"not a Jupyter notebook this grader reads (nested deeper than {MAX_NOTEBOOK_DEPTH} levels)", None
    digest = hashlib.sha256(data).hexdigest()
    del data
    try:
        raw = json.loads(text)
    except ValueError as e:
        where = f" (line {e.lineno}, column {e.colno})" if hasattr(e, "lineno") else ""
        return None, mtime, f"not a Jupyter notebook (it is not valid JSON{where})", None
    del text
    if not isinstance(raw, dict) or type(raw.get("nbformat")) is not int:
        return None, mtime, "not a Jupyter notebook (its JSON has no nbformat version)", None
    version = raw["nbformat"]
    if version not in (3, 4):
        return None, mtime, f"not a Jupyter notebook this grader reads (nbformat {version}; save it as 4)", None
    cells = raw.get("cells") if version == 4 else [c for w in raw.get("worksheets") or [] if isinstance(w, dict)
                                                  for c in (w.get("cells") if isinstance(w.get("cells"), list) else [])]
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        return None, mtime, f"refused: more than {MAX_CELLS} cells (the grader reads at most that many)", None
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            minor = raw.get("nbformat_minor") if type(raw.get("nbformat_minor")) is int else 0
            nb = nbformat.convert(nbformat.versions[version].to_notebook_json(raw, minor=minor), 4)
            nbformat.validate(nb)
    except Exception:
        return None, mtime, f"not a Jupyter notebook (it does not follow the nbformat {version} schema)", None
    if not any(c.get("cell_type") == "code" for c in nb.cells):
        return None, mtime, "not a Jupyter notebook with code (it has no code cells)", None
    return nb, mtime, None, digest if version == 4 else None


_COPY = re.compile(r"^(.*?)(?:[-_ ]?copy\d*|\s*\(\d+\))+$", re.I)


def match_assignment(path: pathlib.Path, nb, known, messages: list, how: list | None = None) -> str | None:
    """The set of a notebook: its metadata (type-checked) first, then its file and folder names.

    ``how``, when given, gets ``"metadata"``, ``"file name"`` or ``"folder"`` appended."""
    how = [] if how is None else how
    if nb is not None:
        meta = nb.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        for key, inner in (("lanes", "set"), ("otter", "assignment_name")):
            block = meta.get(key)
            if block is None:
                continue
            if not isinstance(block, dict):
                messages.append(f"metadata.{key} is not an object: ignored")
                continue
            name = block.get(inner)
            if name is not None and type(name) is not str:
                messages.append(f"metadata.{key}.{inner} is not a string: ignored")
                continue
            if name in known:
                how.append("metadata")
                return name
    names = [path.stem, *[p.name for p in path.parents][:3]]
    for i, cand in enumerate(names):
        how[:] = ["file name" if i == 0 else "folder"]
        m = _COPY.match(cand)
        for c in (cand, m.group(1) if m else None):
            if c in known:
                return c
        for slug in known:  # the sets' own set_NN_slug, and Canvas-style names login_..._NN_slug
            if cand.endswith("_" + slug) or (m and m.group(1).endswith("_" + slug)):
                return slug
    return None


#: The chapters' notebooks, whose titles tell a chapter handed in as a set (this checkout's).
CHAPTERS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def _title(nb) -> str:
    """The first line of a notebook's first markdown cell, lower-cased, without the ``#``s."""
    for cell in nb.get("cells") or ():
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            source = cell.get("source")
            source = "".join(source) if isinstance(source, list) else str(source)
            lines = source.strip().splitlines()
            return lines[0].lstrip("#").strip().lower()[:200] if lines else ""
    return ""


_CHAPTER_TITLES: dict | None = None


def chapter_of(nb) -> str | None:
    """The number (``"03"``) of the chapter whose notebook ``nb`` is, by its title; ``None`` when it
    is none of :data:`CHAPTERS` (read once per run; none when the folder is missing)."""
    global _CHAPTER_TITLES
    if _CHAPTER_TITLES is None:
        _CHAPTER_TITLES = {}
        for path in sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb")):
            try:
                _CHAPTER_TITLES.setdefault(_title(json.loads(path.read_text(encoding="utf-8"))), path.name[:2])
            except (OSError, ValueError):
                continue
        _CHAPTER_TITLES.pop("", None)
    return _CHAPTER_TITLES.get(_title(nb))


# --------------------------------------------------------------------------- identity


def shard_of(login: str | None, n: int) -> int:
    """The shard (1..n) of ``login``; submissions without a login belong to shard 1."""
    if login is None:
        return 1
    return int.from_bytes(hashlib.sha256(login.encode()).digest()[:8], "big") % n + 1


# --------------------------------------------------------------------------- grading

#: A line assigning a name (``x = ...``, ``x: float = ...``), matched at a line's start only:
#: each line is looked at once, so the scan is linear in the cell's length.
_ASSIGN = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")


def cell_notes(nb, variables: tuple) -> dict:
    """Per code cell index: the answer variables it assigns, and its first line (to name it).

    What :func:`cell_errors_by_variable` needs of a notebook, so that its text need not be kept.
    Linear in the notebook's length (a line at a time; no pattern that scans past a line).
    """
    wanted = set(variables)
    notes = {}
    for index, cell in enumerate(nb.cells):
        source = cell.get("source") if cell.get("cell_type") == "code" else None
        if not isinstance(source, str):
            continue
        found = set()
        for line in source.split("\n"):
            m = _ASSIGN.match(line)
            if m and m.group(1) in wanted:
                found.add(m.group(1))
        hit = tuple(v for v in variables if v in found)
        start = source.lstrip()
        first = _clean(start[:4096].splitlines()[0], 60) if start else ""
        notes[index] = (hit, first)
    return notes


def cell_errors_by_variable(notes: dict, errors: list) -> tuple[dict, list]:
    """Errors of cells that assign an answer variable, and the other cells' errors (``notes``: :func:`cell_notes`)."""
    by_var: dict = {}
    other: list = []
    for e in errors[:100]:
        try:
            index, text = int(e["cell"]), _clean(e["error"])
            hit, first = notes[index]
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
        for v in hit:
            by_var.setdefault(v, text)
        if not hit:
            other.append(f"cell {index} raised {text} (cell starts {first!r})")
    return by_var, other


def _step1_failure(rc, timed_out: bool, limits: sandbox.Limits, why: str = "") -> str:
    import signal

    if timed_out:
        return (f"timed out: the notebook ran longer than the {limits.timeout_s:g} s limit, so every question "
                "scores 0. A cell probably never finishes (an infinite loop, or a very long sweep)")
    if rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return f"stopped: the notebook used more than {limits.cpu_s} s of CPU time, so every question scores 0"
    if rc == 0 and why == "unreadable":
        return ("the answers the notebook exported were overwritten or damaged afterwards (by a process the "
                "notebook started?), so every question scores 0")
    return ("the notebook stopped before its answers could be read (did a cell kill the process, for example "
            f"with os._exit(), or run out of memory?), so every question scores 0 (exit status {rc})")


def _answers(path: pathlib.Path) -> tuple[dict | None, str]:
    """What step 1 exported to ``path``, as data: ``(dict, "")``, or ``(None, "missing" or "unreadable")``.

    Bounded: at most :data:`MAX_ANSWERS_BYTES`, nested at most :data:`MAX_ANSWERS_DEPTH`
    levels, and it must encode back to JSON (the judge's input is built from it).
    """
    raw = sandbox.read_file(path, MAX_ANSWERS_BYTES)
    if raw is None:
        return None, "missing" if not os.path.lexists(path) else "unreadable"
    return _answers_of(raw)


def _answers_of(raw: bytes | None) -> tuple[dict | None, str]:
    """:func:`_answers` of the bytes the box sent (``None``: it had none it could send)."""
    if raw is None:
        return None, "unreadable"
    if not raw:
        return None, "missing"
    try:
        data = loads_bounded(raw, MAX_ANSWERS_DEPTH)
        json.dumps(data)
    except (ValueError, RecursionError, MemoryError, TypeError):
        return None, "unreadable"
    if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
        return None, "unreadable"
    return data, ""


def judge_program() -> str:
    """Step 2's program (``-c``, not ``-m``, so that the keys and the judge share one module),
    importing the same ``lanes`` and ``grading`` as this process (``-I`` ignores ``PYTHONPATH``)."""
    import lanes

    here = list(dict.fromkeys(str(pathlib.Path(m.__file__).resolve().parents[1])
                              for m in (lanes, sys.modules[__package__])))
    return (f"import sys; sys.path[:0] = {here!r}; "
            "from grading.judge import main; sys.exit(main(sys.argv[1:]))")


def start_judge(jobs: list, solutions: pathlib.Path | None, secret: str | None, folder: pathlib.Path,
                hide=(), site=None) -> subprocess.Popen:
    """Step 2 for ``jobs`` (one student's submissions): a fresh ``python -I`` judge, started.

    Its input, output and temp folder are files in ``folder`` (which goes with whatever the
    judge leaves when it is killed); read the result with :func:`judge_results`. ``site``: the
    run's box's copies of the packages, for the boxes a key starts (set 13's).
    """
    (folder / "tmp").mkdir()
    os.chmod(folder, 0o711)
    (folder / "in.json").write_text(json.dumps({"secret": secret, "hide": [str(h) for h in hide],
                                                "site": None if site is None else str(site), "jobs": jobs}))
    with open(folder / "in.json", "rb") as stdin, open(folder / "out.json", "wb") as out, \
            open(folder / "err.txt", "wb") as err:
        return subprocess.Popen([sys.executable, "-I", "-c", judge_program(),
                                 "--forms-only" if solutions is None else str(solutions)],
                                stdin=stdin, stdout=out, stderr=err, cwd=folder / "tmp", start_new_session=True,
                                env={**os.environ, "TMPDIR": str(folder / "tmp")})


def judge_results(proc: subprocess.Popen, folder: pathlib.Path) -> dict:
    """The scores of a finished :func:`start_judge`, keyed by job id; ``RuntimeError`` if it failed."""
    err = sandbox.read_file(folder / "err.txt", 1 << 20) or b""
    for line in err.decode(errors="replace").splitlines()[-40:]:
        print(_clean(line, 300), file=sys.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"the judge failed (exit {proc.returncode}); is lanes installed (pip install -e .)?")
    return {r["id"]: r for r in json.loads(sandbox.read_file(folder / "out.json", 64 << 20) or b"null")}


def grade(paths: list, *, solutions: pathlib.Path | None, limits: sandbox.Limits, jobs: int = 2,
          secret: str | None = None, roster: Roster | None = None, student: str | None = None,
          shard: tuple[int, int] = (1, 1), hide=(), budget: Budget = Budget(),
          progress=print, deadlines: Deadlines | None = None) -> tuple[list[Submission], str]:
    """Grade the submissions under ``paths``: ``(submissions, the box's one-line description)``.

    ``solutions=None`` checks answer forms only (practice feedback, no keys, no secret,
    no identity needed). Otherwise ``secret`` is the course secret (the tokens and the
    capstone's hidden seeds come from it). ``deadlines`` marks late copies and applies the
    late policy (:mod:`.deadlines`); ``budget`` bounds what each student may spend.
    Anything that goes wrong with one submission is that submission's (or, in step 2, that
    student's) failure alone: its status and messages say so and the others are graded.
    Paths are reported as :func:`shown` writes them; ``hide`` is covered in every box.
    """
    if not isinstance(budget, Budget):
        raise ValueError(f"budget must be a classroom.Budget (got {type(budget).__name__})")
    known = set(all_sets())
    exports = Exports(roster, known)
    forms_only = solutions is None
    subs: list[Submission] = []
    todo: list[tuple[Submission, pathlib.Path]] = []
    found: list = []  # (sub, path, refusal, origin) of every submission of this shard, identified, not yet read
    groups: list = []  # (graded submission, its group's other members' submissions)
    for path, root, refusal in collect(paths):
        sub = Submission(path=shown(path))
        try:
            origin = exports.origin(path, root)
            _identify(sub, origin, student, forms_only)
            if shard_of(sub.login, shard[1]) != shard[0]:
                continue
            subs.append(sub)
            if roster is not None and sub.login:
                sub.name = roster.names.get(sub.login, "")
            found.append((sub, path, refusal, origin))
        except Exception as e:  # one notebook never stops the class
            sub.status = CRASHED
            sub.messages.append(f"could not be read ({type(e).__name__})")
            if sub not in subs:
                subs.append(sub)
    chosen = _files_read(found, budget, known)
    for sub, path, refusal, origin in found:
        try:
            if sub.login is not None and id(sub) not in chosen and not refusal:
                refusal = (f"refused: not read, {sub.login} handed in more than {budget.files} files or "
                           f"{budget.read_mb:g} MiB of notebooks (the latest are read)")
            if refusal:
                sub.status = REFUSED if refusal.startswith("refused") else NOT_A_NOTEBOOK
                sub.messages.append(refusal)
                sub.assignment = match_assignment(path, None, known, [])
            else:
                nb, _, problem, digest = _read(path)
                how: list = []
                sub.assignment = match_assignment(path, nb, known, sub.messages, how)
                sub.matched = how[-1] if sub.assignment and how else ""
                if problem:
                    sub.status = REFUSED if problem.startswith("refused") else NOT_A_NOTEBOOK
                    sub.messages.append(problem)
                elif sub.matched != "metadata" and sub.assignment and chapter_of(nb):
                    sub.status = REFUSED  # not run: its cells would only fail, a line each
                    sub.messages.append(f"this is chapter {chapter_of(nb)}'s notebook, not set {sub.assignment[:2]}'s: "
                                        f"hand in the set notebook, exercises/{sub.assignment}/set_{sub.assignment}"
                                        ".ipynb")
                elif sub.assignment is None:
                    sub.status = UNKNOWN
                    sub.messages.append(f"cannot tell which exercise set this is (known: {', '.join(sorted(known))})")
                elif not forms_only and not (solutions / sub.assignment / "key.py").is_file():
                    sub.status = NO_KEY
                    sub.messages.append(f"no answer key {solutions / sub.assignment / 'key.py'}: grade from the "
                                        "instructor's checkout (the student repository has no solutions/)")
                elif not forms_only and sub.login is None:
                    sub.status = UNIDENTIFIED  # whose variant to grade is unknown: not run
                    owner = token_owner(nb, roster, secret)
                    if owner:
                        sub.messages[-1] += (f" (its STUDENT is {owner}'s token: if it is {owner}'s, name the file in "
                                             f"the roster's 'file' column or regrade it with --student {owner})")
                else:  # what step 1 needs of it: the file as read, and its cells' notes
                    todo.append((sub, _Copy(path, digest, cell_notes(nb, get_set(sub.assignment).variables))))
                del nb  # one notebook held at a time
            if sub.assignment is not None:
                sub.questions = [Question(q.name, q.points) for q in get_set(sub.assignment).questions]
                if sub.status != GRADED:
                    sub.messages[-1] += "; every question scores 0"
            if student is None and not forms_only and sub.login and len(origin.group) > 1:
                groups.append((sub, _group_members(sub, origin, shard, roster)))
                subs.extend(groups[-1][1])
        except Exception as e:  # one notebook never stops the class
            sub.status = CRASHED
            sub.messages.append(f"could not be read ({type(e).__name__})")
    _mark_counted(subs, forms_only, deadlines or Deadlines())
    before = {id(sub): len(sub.messages) for sub, _ in groups}
    isolation = "nothing was run"
    if todo:
        isolation = _run_step1_and_judge(todo, solutions=solutions, limits=limits, jobs=jobs, secret=secret,
                                         hide=hide, budget=budget, progress=progress)
    for sub in subs:  # a notebook named like a set that holds none of its answers: the chapter's?
        if sub.status == GRADED and sub.matched in ("file name", "folder") and sub.questions \
                and not any(q.form_ok for q in sub.questions):
            sub.messages.append(f"none of set {sub.assignment}'s answers were found in this notebook, and it is not "
                                f"the set's own (its metadata does not name the set): is it the chapter notebook? Hand "
                                f"in the set notebook, exercises/{sub.assignment}/set_{sub.assignment}.ipynb")
    for sub, members in groups:  # every member of a group submission gets what it earned
        for m in members:
            m.status, m.student, m.notebook_student, m.seconds = sub.status, sub.student, sub.notebook_student, sub.seconds
            m.questions = [Question(q.name, q.possible, q.score, list(q.messages), q.form_ok) for q in sub.questions]
            m.messages.extend(sub.messages[before[id(sub)]:])
    subs.sort(key=lambda s: (s.path, s.login or ""))
    return subs, isolation


@dataclass(frozen=True)
class _Copy:
    """A notebook to run: its path, the SHA-256 of the nbformat 4 bytes read (``None``: converted
    from nbformat 3, so read again) and its :func:`cell_notes`."""

    path: pathlib.Path
    digest: str | None
    notes: dict


def _files_read(found: list, budget: Budget, known) -> set:
    """``id`` of the submissions read: per student the latest ``budget.files`` of them, at most
    ``budget.read_mb`` MiB in all (sizes from the folder, before a byte is read), by
    :attr:`Submission.recency` (never the path order), each set's latest first (the set as
    the file and folder names tell it), then each set's next latest, ... so that the copy
    that counts is read however many copies there are."""
    by: dict = {}
    for sub, path, *_ in found:
        if sub.login is not None:
            by.setdefault(sub.login, []).append((sub, path))
    chosen: set = set()
    for items in by.values():
        items.sort(key=lambda item: item[0].recency, reverse=True)
        rank, seen = {}, {}
        for sub, path in items:
            guess = match_assignment(path, None, known, [])
            seen[guess] = rank[id(sub)] = seen.get(guess, 0) + 1
        size = {}
        for sub, path in items:
            try:
                size[id(sub)] = os.lstat(path).st_size
            except OSError:
                size[id(sub)] = 0
        left, count = budget.read_mb * (1 << 20), 0
        for i in sorted((id(sub) for sub, _ in items), key=lambda i: rank[i]):
            if count < budget.files and size[i] <= left:
                chosen.add(i)
                count += 1
                left -= size[i]
    return chosen


def _group_members(sub: Submission, origin, shard: tuple, roster) -> list:
    """A submission per other member of ``sub``'s group (in this shard), credited with ``sub``'s scores."""
    others = []
    for login in origin.group:
        if login == sub.login or shard_of(login, shard[1]) != shard[0]:
            continue
        m = Submission(path=sub.path, assignment=sub.assignment, login=login, status=sub.status,
                       submitted=sub.submitted, late=origin.late, order=sub.order, attempt=sub.attempt,
                       matched=sub.matched, name=roster.names.get(login, "") if roster is not None else "")
        m.messages.append(f"a group submission of {', '.join(origin.group)}: graded once, as {sub.login}'s "
                          "variant, and credited to every member")
        m.questions = [Question(q.name, q.possible) for q in sub.questions]
        others.append(m)
    if others:
        sub.messages.append(f"a group submission of {', '.join(origin.group)}: credited to every member")
    return others


_STUDENT_LINE = re.compile(r"^STUDENT\s*=\s*[\"']([A-Za-z0-9._-]{1,40})[\"']", re.M)


def token_owner(nb, roster, secret: str | None) -> str | None:
    """The roster student whose valid token a notebook's ``STUDENT = "..."`` line holds, else ``None``
    (read from the text, not run: to name who an unidentified file is probably from)."""
    if nb is None or roster is None or not secret:
        return None
    for cell in nb.cells[:500]:
        source = cell.get("source") if cell.get("cell_type") == "code" else None
        m = _STUDENT_LINE.search(source[:100_000]) if isinstance(source, str) else None
        if m:
            typed = m.group(1).lower()
            login = typed.rpartition("-")[0]
            try:
                return login if login in roster.names and student_token(login, secret) == typed else None
            except ValueError:
                return None
    return None


def _identify(sub: Submission, origin, student: str | None, forms_only: bool) -> None:
    """Set the login (unless forms only), the export's time and the copy order of ``sub``."""
    if student is not None:
        sub.login = check_login(student)
    elif not forms_only:
        sub.login = origin.login
        if sub.login is None:
            sub.messages.append(origin.why)
        elif origin.note:
            sub.messages.append(origin.note)
    when = origin.submitted
    sub.submitted = when.isoformat() if when is not None else None
    sub.late = origin.late
    sub.attempt = origin.attempt
    sub.order = (when is not None, when.timestamp() if when else 0.0, origin.upload,
                 copy_number(pathlib.Path(sub.path).stem), sub.path)


#: The note on a copy late by the LMS's own flag when a grace was given (the flag carries no time).
FLAG_NO_GRACE = ("the LMS flagged it late without saying when it was handed in, so --grace {:g} min cannot be "
                 "applied to it (move the due date in the LMS by the grace before downloading, to forgive it)")


def _mark_counted(subs: list[Submission], forms_only: bool, deadlines: Deadlines) -> None:
    """Mark lateness, flag copies and choose the one that counts per (login, set): the latest
    (``Submission.order``), or under the ``refuse`` policy the latest on time; apply the policy."""
    import datetime as dt

    groups: dict = {}
    for s in subs:
        if s.assignment:
            when = dt.datetime.fromisoformat(s.submitted) if s.submitted else None
            s.late, s.late_s = deadlines.lateness(s.assignment, when, s.late)
            if s.late:
                s.messages.append("handed in late" + (f" ({s.late_s / 3600:.2f} h after the deadline and grace)"
                                                     if s.late_s is not None else " (flagged by the LMS)"))
                if s.late_s is None and deadlines.grace_s > 0:
                    s.messages.append(FLAG_NO_GRACE.format(deadlines.grace_s / 60))
        if forms_only or (s.login and s.assignment):
            groups.setdefault((s.login, s.assignment) if not forms_only else (s.path,), []).append(s)
    for key, group in groups.items():
        group.sort(key=lambda s: s.recency)
        on_time = [s for s in group if not s.late]
        latest = on_time[-1] if deadlines.policy == "refuse" and on_time else group[-1]
        latest.counted = True
        if latest.late and deadlines.policy != "count":
            latest.factor = 0.0 if deadlines.policy == "refuse" else 1.0 - deadlines.penalty
            latest.messages.append(f"late policy: this copy earns {latest.factor:.0%} of its score")
        if len(group) > 1:
            why = "the latest on time" if latest is not group[-1] else "the latest"
            for s in group:
                if s is not latest and s.attempt and s.attempt == latest.attempt:
                    s.messages.append(f"another file of the same submission ({pathlib.Path(latest.path).name}) is "
                                      f"set {s.assignment}'s notebook; this one does not count")
                    continue
                s.messages.append(f"{len(group)} copies of set {s.assignment} were handed in by {s.login}: "
                                  + (f"this one ({why}) counts" if s is latest else
                                     f"only {why} counts ({pathlib.Path(latest.path).name}); this one does not"))


class _Job:
    """A student's step 1 (their notebooks, one after another in one box) or their step 2 (the judge)."""

    def __init__(self, subs: list, who: str, phase: str, proc, folder: pathlib.Path, deadline_s: float):
        self.subs, self.who, self.phase, self.proc, self.folder = subs, who, phase, proc, folder
        self.started, self.deadline_s = time.monotonic(), deadline_s
        self.notes: list = []  # step 1: each notebook's cell notes
        self.k = 0  # step 1: the notebook running now (its index in subs)
        self.since = self.started  # step 1: when it started
        self.lines = bytearray()  # step 1: what the box wrote that is not yet a whole line
        self.over_budget = False  # stopped because its student's time was spent

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def kill(self) -> None:
        if isinstance(self.proc, sandbox.BoxedProcess):
            self.proc.kill()
        elif self.proc.poll() is None:  # (once reaped, its pid may be another's)
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
            self.proc.wait()

    def reports(self) -> list:
        """Step 1: what the box reported since the last call, in order: ``(status, answers bytes
        or None)`` for notebook k = 1, 2, ... in turn (a ``<k> <status> <n>`` line and ``n``
        bytes); ``None`` for what is not the next one's report."""
        while True:
            try:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.lines += chunk
            if len(self.lines) > MAX_ANSWERS_BYTES + 64:
                break
        out = []
        while True:
            end = self.lines.find(b"\n", 0, 64)
            if end < 0:
                return [*out, None] if len(self.lines) > 64 else out
            m = re.fullmatch(rb"(\d{1,4}) (-?\d{1,4}) (-1|\d{1,7})", bytes(self.lines[:end]))
            if not m or int(m[1]) != self.k + 1 + len(out) or int(m[3]) > MAX_ANSWERS_BYTES:
                return [*out, None]
            n = int(m[3])
            if len(self.lines) < end + 1 + max(n, 0):
                return out  # the rest of its answers is on its way
            data = bytes(self.lines[end + 1:end + 1 + n]) if n >= 0 else None
            del self.lines[:end + 1 + max(n, 0)]
            out.append((int(m[2]), data))


def _run_step1_and_judge(todo, *, solutions, limits, jobs, secret, hide, budget, progress) -> str:
    """Both steps, ``jobs`` at a time: a box per student running their notebooks one after another
    (step 1, :func:`grading.runner.serve`), then a judge per student (step 2).

    Within :class:`Budget`: the latest ``budget.copies`` copies per set run, a notebook gets
    ``limits.timeout_s`` (its box is stopped past that, and the student's other notebooks go on
    in a new one), a judge gets ``budget.judge_s`` per submission, and the wall time of a
    student's jobs (those running at once added up) is stopped at ``budget.student_s``; what is
    not yet started then is not run.
    """
    sandbox.hide(hide)
    box = sandbox.Box(hide=hide, prefix="lanes-grade-")
    warn = sandbox.cgroup_warning()
    if warn:
        print(warn, file=sys.stderr)
    owner = {id(sub): sub.login or sub.path for sub, _ in todo}
    pending: dict = {}  # student -> [(sub, path)] still to run step 1, latest copy first
    for sub, path in todo:
        pending.setdefault(owner[id(sub)], []).append((sub, path))
    for who, items in pending.items():
        items.sort(key=lambda item: item[0].recency, reverse=True)
        by_set: dict = {}
        rank: dict = {}  # id(sub) -> 1 for its set's latest copy, 2 for the next, ...
        for sub, path in items:
            by_set[sub.assignment] = rank[id(sub)] = by_set.get(sub.assignment, 0) + 1
            if rank[id(sub)] > budget.copies:
                sub.status = REFUSED
                sub.messages.append(f"not run: only the latest {budget.copies} copies of a set are graded; "
                                    "every question scores 0")
        # each set's latest copy first, then each set's next latest, ...
        pending[who] = sorted([item for item in items if rank[id(item[0])] <= budget.copies],
                              key=lambda item: rank[id(item[0])])
    judged: dict = {}  # student -> judge jobs ready for step 2
    spent: dict = {}  # student -> seconds of finished jobs
    queue = [(who, items) for who, items in pending.items() if items]  # a box per student, in turn
    running: list[_Job] = []
    done, total = 0, sum(len(items) for _, items in queue)

    def finish(job: _Job, rc, data=None) -> None:  # the notebook job.k of a step 1 ended (rc None: stopped)
        nonlocal done
        done += 1
        ready = _finish_step1(job, rc, limits, solutions, secret, data)
        if ready is not None:
            judged.setdefault(job.who, []).append(ready)
        sub = job.subs[job.k][0]
        progress(f"[{done}/{total}] {sub.path}: step 1 {sub.status} in {sub.seconds:g} s")
        job.k += 1
        job.since = time.monotonic()

    try:
        while queue or judged or running:
            in_step1 = {job.who for job in running if job.phase == "run"}
            for who in [w for w in judged if w not in in_step1 and all(q[0] != w for q in queue)]:
                if len(running) >= max(1, jobs):
                    break
                batch = judged.pop(who)  # every step 1 of this student is done: one judge for them
                job = _start_step2(box, batch, who, solutions, secret, hide, budget.judge_s * len(batch))
                if job is not None:
                    running.append(job)
            while queue and len(running) < max(1, jobs):
                who, items = queue.pop(0)
                if spent.get(who, 0.0) >= budget.student_s:
                    for sub, _ in items:
                        sub.status = TIMEOUT
                        sub.messages.append(f"not run: this student's grading time ({budget.student_s:g} s) was "
                                            "spent on other notebooks; every question scores 0")
                    continue
                job = _start_step1(box, items, who, limits)
                if job is not None:
                    running.append(job)
            time.sleep(0.02)
            using: dict = {}
            for job in running:
                using[job.who] = using.get(job.who, 0.0) + job.elapsed
            for job in list(running):
                over = spent.get(job.who, 0.0) + using[job.who] > budget.student_s
                try:
                    if job.phase == "run":
                        ended = job.proc.poll() is not None
                        for report in job.reports():
                            if report is None:  # not the report expected: stop the box, as if it had ended
                                job.kill()
                                ended = True
                                break
                            finish(job, *report)
                        if job.k == len(job.subs):
                            ended = True
                        if not ended and time.monotonic() - job.since <= limits.timeout_s and not over:
                            continue
                    elif job.proc.poll() is None and job.elapsed <= job.deadline_s and not over:
                        continue
                    running.remove(job)
                    job.over_budget = over and job.proc.poll() is None
                    spent[job.who] = spent.get(job.who, 0.0) + job.elapsed
                    using[job.who] -= job.elapsed
                    if job.phase == "run":
                        job.kill()
                        if job.k < len(job.subs):  # the notebook running now failed; the rest go on in a new box
                            stopped = job.over_budget or time.monotonic() - job.since > limits.timeout_s
                            finish(job, None if stopped else job.proc.returncode, b"")
                            if job.k < len(job.subs):
                                queue.insert(0, (job.who, job.subs[job.k:]))
                    else:
                        _finish_step2(job)
                except Exception as e:  # this student's failure alone
                    if job in running:
                        running.remove(job)
                    for sub, _ in job.subs[job.k:] if job.phase == "run" else job.subs:
                        sub.status = CRASHED
                        sub.messages.append(f"could not be graded ({type(e).__name__})")
                finally:
                    if job not in running:
                        job.kill()
                        sandbox.remove_tree(job.folder)
    finally:
        try:
            for job in running:
                job.kill()
        finally:
            isolation = box.isolation
            box.close()
    return isolation


def _start_step1(box, items: list, who: str, limits) -> _Job | None:
    """One box running the student's notebooks ``items`` (``(sub, _Copy)``), in order: each is
    given to the box as the bytes that were read and checked (no second parse), or, converted
    from nbformat 3, written again."""
    import nbformat

    run, notes, slugs = [], [], []
    folder = None
    for sub, copy in items:
        try:
            folder = folder or pathlib.Path(tempfile.mkdtemp(prefix="job-", dir=box.base))
            target = folder / f"{len(run) + 1}.ipynb"
            if copy.digest is not None:
                data, _, problem = _read_bytes(copy.path, MAX_NOTEBOOK_BYTES)
                if problem is None and hashlib.sha256(data).hexdigest() != copy.digest:
                    problem = "the file changed after it was read"
                if problem:
                    raise ValueError(problem)
                target.write_bytes(data)
                del data
            else:
                nb, _, problem = read_notebook(copy.path)
                if problem:
                    raise ValueError(problem)
                target.write_text(nbformat.writes(nb), encoding="utf-8")
                del nb
            notes.append(copy.notes)
            run.append((sub, copy))
            slugs.append(sub.assignment)
        except Exception as e:
            sub.status = CRASHED
            sub.messages.append(f"could not start the sandbox: {type(e).__name__}: {_clean(e)}")
    try:
        if not run:
            raise ValueError("nothing to run")
        argv = sandbox.python_argv("grading.runner", "--serve", *slugs)
        proc = box.popen(argv, job_dir=folder, limits=limits, stdout=subprocess.PIPE)
        os.set_blocking(proc.stdout.fileno(), False)
    except Exception as e:
        for sub, _ in run:
            sub.status = CRASHED
            sub.messages.append(f"could not start the sandbox: {type(e).__name__}: {_clean(e)}")
        if folder is not None:
            sandbox.remove_tree(folder)
        return None
    job = _Job(run, who, "run", proc, folder, limits.timeout_s)
    job.notes = notes
    return job


def _finish_step1(job: _Job, rc, limits, solutions, secret, raw: bytes | None = b"") -> dict | None:
    """Read what notebook ``job.k`` exported (``rc``: its exit status; ``None``: stopped, still
    running; ``raw``: the answers the box sent, ``None``: none it could send); the judge's job for
    it, validated (``None`` when it failed)."""
    sub = job.subs[job.k][0]
    sub.seconds = round(time.monotonic() - job.since, 1)
    data, why = _answers_of(raw) if rc is not None else (None, "")
    if data is None:
        sub.status = TIMEOUT if rc is None else CRASHED
        if rc is None and job.over_budget:
            sub.messages.append("timed out: this student's grading time was spent, so every question scores 0")
        else:
            sub.messages.append(_step1_failure(rc, rc is None, limits, why))
        return None
    spec = get_set(sub.assignment)
    answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
    refused = data.get("refused") if isinstance(data.get("refused"), dict) else {}
    errors = data.get("errors") if isinstance(data.get("errors"), list) else []
    own = data.get("student")
    sub.notebook_student = _clean(own, 60) if type(own) is str else None
    why = NO_STUDENT if data.get("student_set") is False else None
    if solutions is None:  # practice feedback: the notebook's own STUDENT, if it is a valid one
        try:
            who = normalise_student(own)
        except ValueError:
            who = ""
        refusal = next((str(e["error"]) for e in errors if isinstance(e, dict)
                        and str(e.get("error", "")).startswith("NotAToken: ")), None)
        why = why or (f"the first code cell refused STUDENT ({_clean(refusal[11:])})" if refusal else None)
        line = why
    else:
        who = student_token(sub.login, secret)
        try:
            mine = normalise_student(own)
        except ValueError:
            mine = None
        why = why or token_mismatch(mine, sub.login, secret)
        line = why and (f"STUDENT in the notebook is not {sub.login}'s token ({why}): graded as {sub.login}'s "
                        "variant (set STUDENT to the token your instructor gave you)")
    by_var, other = cell_errors_by_variable(job.notes[job.k], errors)
    refused_first = data.get("student_set") is False or any(
        isinstance(e, dict) and _REFUSED.match(str(e.get("error", ""))) for e in errors)
    if why and refused_first:  # the cells that then failed for want of V are that one line's, not a line each
        other = [m for m in other if not _FROM_STUDENT.search(m)]
        by_var = {v: f"{t} (see the STUDENT line)" if _FROM_STUDENT.match(t) else t for v, t in by_var.items()}
    sub.messages.extend(other[:10])
    if line:
        sub.messages.append(line)
    sub.student = who
    ready = {"id": id(sub), "slug": sub.assignment, "student": who,
             "answers": {k: v for k, v in answers.items() if k in spec.variables},
             "refused": {k: _clean(v) for k, v in refused.items() if k in spec.variables},
             "cell_errors": by_var}
    json.dumps(ready)  # the judge's input must encode: a value that does not fails here, alone
    ready["sub"] = sub
    return ready


#: What the grader says of a notebook in which no cell sets ``STUDENT``.
NO_STUDENT = "no cell of the notebook sets STUDENT: was its first code cell, with STUDENT = \"<token>\", deleted?"
#: How the first code cell refuses a ``STUDENT`` (:class:`lanes.exercises.NotAToken`, or a value
#: no token can be).
_REFUSED = re.compile(r"NotAToken: |ValueError: STUDENT must ")
#: Errors that follow from the first code cell's refusing ``STUDENT`` (or from its absence).
_FROM_STUDENT = re.compile(r"(?:^|raised )(?:NotAToken: |NameError: name '(?:V|STUDENT|grader)' is not defined)")


def _start_step2(box, batch: list, who: str, solutions, secret, hide, deadline_s) -> _Job | None:
    subs = [(item.pop("sub"), None) for item in batch]
    folder = None
    try:
        folder = pathlib.Path(tempfile.mkdtemp(prefix="judge-", dir=box.base))
        proc = start_judge(batch, solutions, secret, folder, hide, box.site)
        return _Job(subs, who, "judge", proc, folder, deadline_s)
    except Exception as e:
        for sub, _ in subs:
            sub.status = CRASHED
            sub.messages.append(f"the judge could not be started ({type(e).__name__})")
        if folder is not None:
            sandbox.remove_tree(folder)
        return None


def _finish_step2(job: _Job) -> None:
    if job.proc.poll() is None:
        job.kill()
        for sub, _ in job.subs:
            sub.status = TIMEOUT
            sub.messages.append("the judge ran out of time (this student's grading time was spent); every question "
                                "scores 0" if job.over_budget else f"the judge ran out of time ({job.deadline_s:g} s "
                                f"for this student's {len(job.subs)} notebook(s)); every question scores 0")
        return
    results = judge_results(job.proc, job.folder)
    for sub, _ in job.subs:
        res = results.get(id(sub), {"error": "no result"})
        if "error" in res:
            sub.status = CRASHED
            sub.messages.append(f"the judge could not grade this set: {_clean(res['error'])}")
            continue
        for q in sub.questions:
            r = res["questions"].get(q.name, {})
            q.score = float(r.get("score", 0.0))
            q.messages.extend(_clean(m, NOTE_CHARS) for m in r.get("messages", []))
            q.form_ok = bool(r.get("form_ok"))
