"""Whose hand-in is this, and when was it handed in: the layouts of the usual LMS exports.

Every name is compared after Unicode NFC normalisation (a zip made on macOS writes NFD)
and case-folding. Under the folder given to the grader (its *root*):

**Canvas** ("Download submissions"): flat files
``<lastfirst>_[LATE_]<user id>_<file id>_<file name>``. The user id is looked up in the
roster (an ``ID`` column; see :mod:`.roster`); ``LATE`` is Canvas's own lateness flag; a
larger file id is a later upload.

**Gradescope** ("Export submissions"): a folder ``submission_<id>/`` per submission and
``submission_metadata.yml`` beside them, whose ``:submitters:`` (``:email:``, ``:sid:``,
``:name:``) are looked up in the roster and whose ``:created_at:`` is the submission time.

**Moodle** ("Download all submissions"): a folder (or a file-name prefix)
``<Full Name>_<participant id>_assignsubmission_file_``; the participant id is looked up
in the roster's ids, otherwise the full name in its names (two students with one name are
reported, never guessed).

**GitHub Classroom** (a repository per student, cloned as ``<assignment>-<username>``): the
repository is its owner's: the folder name is ``<prefix>-<a GitHub username of the roster's
GitHub column>``, exactly, where the prefix is the one the other repositories beside it
share (a second account ``<anything>-<username>`` gives a prefix nobody else has, and is
nobody's).

**Identity comes from the LMS's own structure only.** With a roster, the folders on the way
to a file are read from the outside in; the first that names a student (a roster key, a
Gradescope or Moodle folder, a Classroom repository, a person's name), or that lies beside
one that does, is the submission: everything inside it (folders named by a classmate's
login, e-mail or name, a ``submission_metadata.yml``) is content, never identity, and a
submission time comes only from the export's own ``submission_metadata.yml`` at that level.
So the export may sit in folders of its own, as long as their names name nobody. A Canvas
or Moodle file name, a roster key or ``<login>_...`` decides for a file in no such folder:
flat files ``<login>_<anything>.ipynb`` are matched to the longest
roster login they start with (``jo_smith_01_x.ipynb`` is ``jo_smith``'s when both ``jo`` and
``jo_smith`` are on the roster). Without a roster, only a folder at the top named by a valid
login, or a flat name ``<login>_<set slug>.ipynb`` or ``<login>_set_<set slug>.ipynb`` (the
set's own file name; the slug ends it, so a login may hold ``_``), is read; any other
name is reported, not guessed. **The root itself** given to the grader, when it names a
student (a regrade: ``grade.py submissions/ines09 --roster ...``), makes everything under it
that student's.

**The LMS's own download** (a ``.zip`` given to the grader) is read as the folder it
unpacks to (:func:`unpack`); the report names its files ``<zip>/<member>``.

**Which copy counts** (several of one student for one set; in :mod:`.classroom`): a notebook
whose metadata names its set first, then the latest by the export's
own submission time (Gradescope), then by its upload order (Canvas file ids), then by the
copy number in the file name (``x.ipynb`` < ``x-Copy1.ipynb``/``x (1).ipynb`` <
``x-Copy2.ipynb``; Canvas's ``x-1.ipynb`` likewise), then by the path. File times are
never used: a ``git clone`` or an unzip resets them.
"""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import re
import stat
from dataclasses import dataclass

from lanes.exercises.variants import check_login

from .roster import Roster, name_key, nfc

__all__ = ["Origin", "Exports", "copy_number", "unpack"]

#: Largest ``submission_metadata.yml`` read (bytes; its size is checked before it is read: about
#: 10,000 submissions' entries, some 2 s of libyaml), and how many are read in one run.
MAX_METADATA_BYTES = 2 << 20
MAX_METADATA_FILES = 16
#: What is taken out of an LMS's download zip: at most this many members, each at most this large.
MAX_ZIP_MEMBERS = 100_000
MAX_ZIP_MEMBER_BYTES = 16 << 20

#: Entries of one folder looked at to tell whether it is the export's level (or a repositories' prefix).
MAX_LEVEL_ENTRIES = 20000

CANVAS = re.compile(r"^(?P<who>[^_]+)_(?:(?P<late>LATE)_)?(?P<uid>\d+)_(?P<fid>\d+)_(?P<file>.+)$")
MOODLE = re.compile(r"^(?P<who>.+?)_(?P<pid>\d+)_assign(?:submission|feedback)_[a-z]+_(?P<file>.*)$")
GRADESCOPE = re.compile(r"^submission_(?P<id>\d+)$")
_COPY = re.compile(r"(?:[-_ ]copy(?P<a>\d*)|\s*\((?P<b>\d+)\)|-(?P<c>\d+))$", re.I)


class _NotRead(Exception):
    """A ``submission_metadata.yml`` beyond the limits: why it was not read."""


@dataclass(frozen=True)
class Origin:
    """Who handed a file in and when, as far as the export tells.

    ``login`` is ``None`` when nobody could be matched (``why`` says so); ``export`` names
    the layout; ``submitted`` is the export's own submission time (aware, UTC) or ``None``;
    ``upload`` the export's upload order (Canvas file id, 0 when none); ``late`` the LMS's
    own lateness flag (``None`` when it has none); ``note`` a remark for the report;
    ``attempt`` names the LMS's submission the file came in (a Gradescope or Moodle folder),
    ``""`` when the export does not tell; ``group`` every roster student of a group submission
    (Gradescope), each of whom is credited with it.
    """

    login: str | None
    why: str = ""
    export: str = ""
    submitted: dt.datetime | None = None
    upload: int = 0
    late: bool | None = None
    note: str = ""
    attempt: str = ""
    group: tuple = ()


def copy_number(stem: str) -> int:
    """0 for ``x``, n for ``x-Copy<n>``, ``x (n)`` and ``x-n``, 1 for ``x copy``/``x-Copy``."""
    n = 0
    while True:
        m = _COPY.search(stem)
        if not m or m.start() == 0:
            return n
        n = max(n, int(m.group("a") or m.group("b") or m.group("c") or 1))
        stem = stem[:m.start()]


def _utc(value) -> dt.datetime | None:
    if isinstance(value, str):
        text = value.strip()
        m = re.match(r"^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.\d+)?\s*(Z|[-+]\d\d:?\d\d)?$", text)
        if not m:
            return None
        zone = (m.group(3) or "+00:00").replace("Z", "+00:00")
        zone = zone if ":" in zone else zone[:3] + ":" + zone[3:]
        value = dt.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{zone}")
    if isinstance(value, dt.datetime):
        value = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)
    return None


def _field(d: dict, name: str):
    return d.get(":" + name, d.get(name)) if isinstance(d, dict) else None


def unpack(archive: pathlib.Path, folder: pathlib.Path) -> list:
    """Take the notebooks and ``submission_metadata.yml`` files of an LMS's download zip (Canvas's
    "Download Submissions", Gradescope's "Export Submissions") out into ``folder``, keeping their
    paths; the lines for members left in it (a path that climbs out, a link, one too large).

    Nothing else is taken out (a student's own zip stays a file in it, as in the LMS); each
    member is read at most :data:`MAX_ZIP_MEMBER_BYTES` + 1 bytes, whatever its header says.
    ``ValueError`` when ``archive`` is not a zip file.
    """
    import stat
    import zipfile

    problems: list = []
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as e:
        raise ValueError(f"{archive}: not a zip file an LMS writes ({type(e).__name__})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_MEMBERS:
            problems.append(f"{archive}: only its first {MAX_ZIP_MEMBERS} members are read")
        for info in infos[:MAX_ZIP_MEMBERS]:
            name = info.filename.replace("\\", "/")
            parts = [p for p in name.split("/") if p not in ("", ".")]
            base = parts[-1] if parts else ""
            if info.is_dir() or not (base.endswith(".ipynb") or base == "submission_metadata.yml"):
                continue
            if name.startswith("/") or ".." in parts or ":" in parts[0]:
                problems.append(f"{archive}: member {name[:200]!r} left in the zip (its path leaves the folder)")
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                problems.append(f"{archive}: member {name[:200]!r} left in the zip (a symbolic link)")
                continue
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src:
                data = src.read(MAX_ZIP_MEMBER_BYTES + 1)
            if len(data) > MAX_ZIP_MEMBER_BYTES:
                problems.append(f"{archive}: member {name[:200]!r} left in the zip (larger than "
                                f"{MAX_ZIP_MEMBER_BYTES >> 20} MiB)")
                continue
            target.write_bytes(data)
    return problems


class Exports:
    """Identity and submission time of hand-ins under the roots given to the grader."""

    def __init__(self, roster: Roster | None, sets=()):
        self.roster = roster
        self.sets = sorted(sets, key=len, reverse=True)
        self._meta: dict = {}
        self._levels: dict = {}
        self._repo_prefixes: dict = {}

    # ------------------------------------------------------------------ public

    def origin(self, path: pathlib.Path, root: pathlib.Path) -> Origin:
        """Who handed ``path`` (found under ``root``) in, and when (see the module docstring)."""
        try:
            parts = [nfc(p) for p in pathlib.Path(path).relative_to(root).parts]
        except ValueError:
            parts = [nfc(pathlib.Path(path).name)]
        root = pathlib.Path(root)
        if self.roster is None:  # a folder per login at the top, else the file's own name
            if len(parts) > 1:
                o = self._folder(parts[0], root)
                return self._flat(parts[-1]) if CANVAS.match(parts[-1]) or MOODLE.match(parts[-1]) else o
            return self._flat(parts[-1])
        own = self._own(root)
        if own is not None:  # the root is one student's own folder: everything under it is theirs
            return own
        for i in range(len(parts) - 1):
            parent = root.joinpath(*parts[:i])
            o = self._folder(parts[i], parent)
            if o.login is not None or o.export in ("Gradescope", "Moodle") or self._level_names_someone(parent):
                return o  # the export's level: what lies inside this folder is content, never identity
        return self._flat(parts[-1])

    def student_folder(self, folder: pathlib.Path) -> str | None:
        """The roster student whose own folder ``folder`` is (by its name), else ``None``."""
        o = self._own(pathlib.Path(folder))
        return None if o is None else o.login

    # ------------------------------------------------------------------ layouts

    def _own(self, folder: pathlib.Path) -> Origin | None:
        if self.roster is None:
            return None
        folder = pathlib.Path(folder).resolve()
        o = self._folder(nfc(folder.name), folder.parent)
        if o.login is None:
            return None
        return Origin(o.login, export=f"one student's folder ({o.export})", submitted=o.submitted, attempt=o.attempt)

    def _level_names_someone(self, parent: pathlib.Path) -> bool:
        """Whether a folder or notebook directly in ``parent`` names a student: then ``parent``
        holds the export's submissions, and a folder in it that names nobody is nobody's."""
        key = str(parent)
        if key not in self._levels:
            found = False
            try:
                with os.scandir(parent) as it:
                    for n, e in enumerate(it):
                        if n >= MAX_LEVEL_ENTRIES:
                            break
                        name = nfc(e.name)
                        if name.startswith("."):
                            continue
                        if e.is_dir(follow_symlinks=False):
                            found = self._folder(name, parent).login is not None
                        elif name.endswith(".ipynb"):
                            found = self._flat(name).login is not None
                        if found:
                            break
            except OSError:
                pass
            self._levels[key] = found
        return self._levels[key]

    def _roster_login(self, *keys: str) -> str | None:
        for k in keys:
            if k and self.roster is not None:
                login = self.roster.lookup(k)
                if login:
                    return login
        return None

    def _by_name(self, name: str) -> tuple[str | None, str]:
        key = name_key(name)
        if self.roster is None or key not in self.roster.by_name:
            return None, f"no roster student is named {name!r}"
        login = self.roster.by_name[key]
        if login is None:
            return None, f"two or more roster students are named {name!r}: add an id column or a 'file' column"
        return login, ""

    def _prefixes(self, parent: pathlib.Path) -> dict:
        """How many folders in ``parent`` are ``<prefix>-<a roster GitHub username>``, per prefix."""
        key = str(parent)
        if key not in self._repo_prefixes:
            counts: dict = {}
            try:
                with os.scandir(parent) as it:
                    for n, e in enumerate(it):
                        if n >= MAX_LEVEL_ENTRIES:
                            break
                        if e.is_dir(follow_symlinks=False):
                            for p in {p for p, _ in self._repo_candidates(nfc(e.name))}:
                                counts[p] = counts.get(p, 0) + 1
            except OSError:
                pass
            self._repo_prefixes[key] = counts
        return self._repo_prefixes[key]

    def _repo_candidates(self, name: str) -> list:
        folded = name.casefold()
        return [(folded[:-len(gh) - 1], gh) for gh in self.roster.github
                if len(folded) > len(gh) + 1 and folded.endswith("-" + gh)]

    def _classroom(self, name: str, parent: pathlib.Path) -> Origin | None:
        """A GitHub Classroom repository ``<assignment>-<GitHub username>``: the username exactly
        one of the roster's GitHub column, after the prefix the other repositories here share."""
        cands = self._repo_candidates(name) if self.roster is not None else []
        if not cands:
            return None
        counts = dict(self._prefixes(parent))
        for p, _ in cands:
            counts[p] = max(1, counts.get(p, 0))  # (the folder itself, when it is not on disk)
        prefix, gh = max(cands, key=lambda c: (counts[c[0]], len(c[1])))
        if counts[prefix] < 2 and len(counts) > 1:
            return Origin(None, f"its folder name is not <assignment>-<GitHub username> with the prefix the other "
                                f"repositories here share (no other one starts {prefix + '-'!r})",
                          export="GitHub Classroom")
        return Origin(self.roster.github[gh], export="GitHub Classroom")

    def _folder(self, name: str, root: pathlib.Path) -> Origin:
        """Who a folder ``name`` in ``root`` names: a Gradescope or Moodle folder, a roster key,
        a GitHub Classroom repository, a person's name."""
        m = GRADESCOPE.match(name)
        if m:
            return self._gradescope(name, root)
        m = MOODLE.match(name + ("" if name.endswith("_") else "_"))
        if m:
            o = self._moodle(m)
            return Origin(o.login, o.why, o.export, attempt=str(root / name))
        if self.roster is None:
            try:
                return Origin(check_login(name), export="folder per login")
            except ValueError:
                return Origin(None, "cannot tell whose this is: put it in a folder named after the login, "
                                    "name it <login>_<set>.ipynb, or pass --roster")
        login = self._roster_login(name)
        if login:
            return Origin(login, export="folder per student")
        repo = self._classroom(name, root)
        if repo is not None:
            return repo
        login, why = self._by_name(name)
        if login:
            return Origin(login, export="folder per person (by name)")
        hint = "" if self.roster.github else "; a GitHub Classroom repository needs a github_username column"
        return Origin(None, "no student of the roster handed this in (its folder name is not a login, id, "
                            f"e-mail, file, GitHub repository or name of the roster{hint})")

    def _flat(self, name: str) -> Origin:
        stem = name[:-len(".ipynb")] if name.endswith(".ipynb") else name
        m = CANVAS.match(name)
        if m:
            late = bool(m.group("late"))
            if self.roster is None:
                return Origin(None, "a Canvas export: pass --roster with the students' Canvas user ids "
                                    "(an 'ID' column)", export="Canvas", upload=int(m.group("fid")), late=late)
            login = self._roster_login(m.group("uid"))
            why = "" if login else f"Canvas user id {m.group('uid')} is not in the roster (add an 'ID' column)"
            return Origin(login, why, export="Canvas", upload=int(m.group("fid")), late=late)
        m = MOODLE.match(name)
        if m:
            return self._moodle(m)
        if self.roster is not None:
            login = self._roster_login(name, stem)
            if login:
                return Origin(login, export="file named in the roster")
            folded = stem.casefold()
            hits = [x for x in self.roster.names if folded == x or folded.startswith(x + "_")]
            if hits:
                return Origin(max(hits, key=len), export="<login>_... file")
            return Origin(None, "no student of the roster handed this in (its file name does not start with a "
                                "roster login and an '_')")
        for slug in self.sets:
            m = re.match(rf"^(?P<who>.+?)_(?:set_)?{re.escape(slug)}(?:[-_ ].*|\s*\(\d+\))?$", stem, re.I)
            if m:
                try:
                    return Origin(check_login(m.group("who")), export="<login>_<set> file")
                except ValueError:
                    break
        return Origin(None, "cannot tell whose this is without a roster: name it <login>_<set slug>.ipynb, "
                            "put it in a folder named after the login, or pass --roster")

    def _moodle(self, m: re.Match) -> Origin:
        if self.roster is None:
            return Origin(None, "a Moodle export: pass --roster (with the students' names or participant ids)",
                          export="Moodle")
        login = self._roster_login(m.group("pid"))
        if login:
            return Origin(login, export="Moodle")
        login, why = self._by_name(m.group("who"))
        return Origin(login, why, export="Moodle")

    def _gradescope(self, name: str, root: pathlib.Path) -> Origin:
        meta = self._metadata(root)
        if isinstance(meta, str):
            return Origin(None, meta, export="Gradescope")
        entry = meta.get(name)
        if not isinstance(entry, dict):
            return Origin(None, f"{name} is not in submission_metadata.yml", export="Gradescope")
        when = _utc(_field(entry, "created_at"))
        people = _field(entry, "submitters")
        people = [p for p in people if isinstance(p, dict)] if isinstance(people, list) else []
        if self.roster is None:
            return Origin(None, "a Gradescope export: pass --roster (keyed on e-mail or student id)",
                          export="Gradescope", submitted=when)
        found, missing = [], []
        for p in people[:50]:
            email, sid, who = (str(_field(p, k) or "")[:100] for k in ("email", "sid", "name"))
            login = self._roster_login(email, sid)
            if login is None and who:
                login = self._by_name(who)[0]
            if login and login not in found:
                found.append(login)
            elif not login:
                missing.append(f"{who or 'no name'} (e-mail {email or 'none'}, SID {sid or 'none'})")
        if not found:
            return Origin(None, "none of its submitters is in the roster by e-mail, SID or name: "
                                + ("; ".join(missing) or "it lists no submitter"), export="Gradescope", submitted=when)
        note = "; ".join(f"a submitter not in the roster: {m}" for m in missing)
        return Origin(found[0], export="Gradescope", submitted=when, note=note, attempt=str(root / name),
                      group=tuple(found))

    def _metadata(self, root: pathlib.Path):
        key = str(root)
        if key not in self._meta:
            path = root / "submission_metadata.yml"
            try:
                import yaml

                if len(self._meta) >= MAX_METADATA_FILES:
                    raise _NotRead(f"not read: more than {MAX_METADATA_FILES} in one run")
                with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
                    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                        raise _NotRead("not read: not a regular file")
                    if os.fstat(f.fileno()).st_size > MAX_METADATA_BYTES:
                        raise _NotRead(f"not read: larger than {MAX_METADATA_BYTES >> 20} MiB")
                    data = f.read(MAX_METADATA_BYTES + 1)
                if len(data) > MAX_METADATA_BYTES:
                    raise _NotRead(f"not read: larger than {MAX_METADATA_BYTES >> 20} MiB")
                meta = yaml.load(data.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                self._meta[key] = meta if isinstance(meta, dict) else "submission_metadata.yml is not a mapping"
            except FileNotFoundError:
                self._meta[key] = ("a Gradescope export's folder: keep submission_metadata.yml beside the "
                                   "submission_<id> folders")
            except ImportError:
                self._meta[key] = "reading submission_metadata.yml needs PyYAML (pip install pyyaml)"
            except _NotRead as e:
                self._meta[key] = f"submission_metadata.yml {e}"
            except Exception as e:  # a broken file: every submission of it is unidentified, with one reason
                self._meta[key] = f"submission_metadata.yml could not be read ({type(e).__name__})"
        return self._meta[key]
