"""Whose hand-in is this, and when was it handed in: the layouts of the usual LMS exports.

Every name is compared after Unicode NFC normalisation (a zip made on macOS writes NFD)
and case-folding. Under the folder given to the grader (its *root*):

**Canvas** ("Download submissions"): flat files
``<lastfirst>_[LATE_]<user id>_<file id>_<file name>``. The user id is looked up in the
roster (an ``ID`` column; see :mod:`.roster`); ``LATE`` is Canvas's own lateness flag; a
larger file id is a later upload.

**Gradescope** ("Export submissions"): a folder ``submission_<id>/`` per submission and
``submission_metadata.yml`` beside them (at any depth under the root), whose ``:submitters:`` (``:email:``, ``:sid:``,
``:name:``) are looked up in the roster and whose ``:created_at:`` is the submission time.

**Moodle** ("Download all submissions"): a folder (or a file-name prefix)
``<Full Name>_<participant id>_assignsubmission_file_``; the participant id is looked up
in the roster's ids, otherwise the full name in its names (two students with one name are
reported, never guessed).

**GitHub Classroom** (a repository per student, cloned as ``<assignment>-<login>``): the
longest roster login the folder name ends with after a ``-``.

With a roster, the outermost folder on the way to the file that a roster key names
decides (so the export may sit in a folder of its own), then the innermost that ends in a
login or is a student's name, then a Canvas or Moodle file name. **A folder per
student** named by a roster key (login, id, e-mail, ``file``) or, without a
roster, by a valid login; **flat files** ``<login>_<anything>.ipynb`` matched to the longest
roster login they start with (``jo_smith_01_x.ipynb`` is ``jo_smith``'s when both ``jo`` and
``jo_smith`` are on the roster). Without a roster a flat name is read only as
``<login>_<set slug>.ipynb`` or ``<login>_set_<set slug>.ipynb`` (the set's own file
name; the slug ends it, so a login may hold ``_``); any other flat
name is reported, not guessed. **One student's own folder** given to the grader (a
regrade: ``grade.py submissions/ines09 --roster ...``) is identified by its own name.

**Which copy counts** (several of one student for one set): the latest by the export's
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

__all__ = ["Origin", "Exports", "copy_number"]

#: Largest ``submission_metadata.yml`` read (bytes; its size is checked before it is read: about
#: 10,000 submissions' entries, some 2 s of libyaml), and how many are read in one run.
MAX_METADATA_BYTES = 2 << 20
MAX_METADATA_FILES = 16

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
    own lateness flag (``None`` when it has none); ``note`` a remark for the report.
    """

    login: str | None
    why: str = ""
    export: str = ""
    submitted: dt.datetime | None = None
    upload: int = 0
    late: bool | None = None
    note: str = ""


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


class Exports:
    """Identity and submission time of hand-ins under the roots given to the grader."""

    def __init__(self, roster: Roster | None, sets=()):
        self.roster = roster
        self.sets = sorted(sets, key=len, reverse=True)
        self._meta: dict = {}

    # ------------------------------------------------------------------ public

    def origin(self, path: pathlib.Path, root: pathlib.Path) -> Origin:
        """Who handed ``path`` (found under ``root``) in, and when."""
        try:
            parts = [nfc(p) for p in pathlib.Path(path).relative_to(root).parts]
        except ValueError:
            parts = [nfc(pathlib.Path(path).name)]
        root = pathlib.Path(root)
        levels = range(len(parts) - 1) if self.roster is not None else range(min(1, len(parts) - 1))
        first = None
        for loose in (False, True):  # a roster key from the outermost folder in; then names, innermost first
            for i in (reversed(levels) if loose else levels):
                o = self._folder(parts[i], root.joinpath(*parts[:i]), loose)
                if o.login is not None:
                    return o
                first = first or o
        if first is None:
            o = self._flat(parts[-1])
        elif CANVAS.match(parts[-1]) or MOODLE.match(parts[-1]):  # an export inside a folder of its own
            o = self._flat(parts[-1])
        else:
            o = first
        if o.login is None and self.roster is not None:
            own = self.student_folder(root)
            if own is not None:
                return Origin(own, export="one student's folder", submitted=o.submitted, upload=o.upload,
                              late=o.late)
        return o

    def student_folder(self, folder: pathlib.Path) -> str | None:
        """The roster student whose own folder ``folder`` is (by its name), else ``None``."""
        if self.roster is None:
            return None
        o = self._folder(nfc(pathlib.Path(folder).resolve().name), pathlib.Path(folder).resolve().parent)
        return o.login

    # ------------------------------------------------------------------ layouts

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

    def _folder(self, name: str, root: pathlib.Path, loose: bool = True) -> Origin:
        """Who a folder names: with ``loose`` False only exact keys (a roster key, a Gradescope or
        Moodle folder), with it True also a GitHub Classroom suffix or a person's name."""
        m = GRADESCOPE.match(name)
        if m:
            return self._gradescope(name, root)
        m = MOODLE.match(name + ("" if name.endswith("_") else "_"))
        if m:
            return self._moodle(m)
        if self.roster is None:
            try:
                return Origin(check_login(name), export="folder per login")
            except ValueError:
                return Origin(None, "cannot tell whose this is: put it in a folder named after the login, "
                                    "name it <login>_<set>.ipynb, or pass --roster")
        login = self._roster_login(name)
        if login:
            return Origin(login, export="folder per student")
        if not loose:
            return Origin(None, "no student of the roster handed this in (its folder name is not a login, id, "
                                "e-mail, file or name of the roster)")
        folded = name.casefold()
        hits = [x for x in self.roster.names if folded.endswith("-" + x)]
        if hits:
            return Origin(max(hits, key=len), export="GitHub Classroom")
        login, why = self._by_name(name)
        if login:
            return Origin(login, export="folder per person (by name)")
        return Origin(None, "no student of the roster handed this in (its folder name is not a login, id, "
                            "e-mail, file or name of the roster)")

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
        found = []
        for p in people:
            login = self._roster_login(str(_field(p, "email") or ""), str(_field(p, "sid") or ""))
            if login is None and _field(p, "name"):
                login = self._by_name(str(_field(p, "name")))[0]
            if login and login not in found:
                found.append(login)
        if not found:
            return Origin(None, "none of its submitters (by e-mail, sid or name) is in the roster",
                          export="Gradescope", submitted=when)
        note = (f"a group submission of {', '.join(found)}: graded as {found[0]}'s only" if len(found) > 1 else "")
        return Origin(found[0], export="Gradescope", submitted=when, note=note)

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
