"""The class roster: who is in the class, and every key an LMS export may name them by.

A roster is a table with a header row, read from a file exported by a spreadsheet or an
LMS. **Encoding**: UTF-8 (with or without a byte-order mark), otherwise Windows-1252 (what
Excel writes as "CSV"); text is compared after Unicode NFC normalisation. **Separator**:
``,``, ``;`` or a tab, whichever the header row uses most.

**Columns** (header names are compared case-insensitively; the first present wins):

- the login: ``login``, ``username``, ``sis login id``, ``login id``, ``student`` (unless a
  Canvas export, where ``Student`` is the name). A login that is an e-mail address gives its
  local part (``ines.ortega@uni.edu`` -> ``ines.ortega``) and the address becomes a key.
  With no login column, the GitHub username gives it, then the e-mail, then the first id
  (a GitHub Classroom roster's ``identifier`` for a student with no linked account). The
  login is what the tokens are made from (``grade.py tokens``).
- the GitHub username (a key, and the only column a GitHub Classroom repository's name is
  matched against): ``github_username``, ``github username``, ``github``.
- the name: ``name``, ``full name``, ``student name``, ``display name``, Canvas's
  ``student``, or ``first name`` and ``last name`` (or ``surname``) together.
- LMS user ids (keys): ``id``, ``user id``, ``user_id``, ``canvas user id``, ``sis user id``,
  ``sid``, ``student id``, ``student number``, ``github_id``, ``identifier``.
- e-mail (a key): ``email``, ``e-mail``, ``email address``.
- ``file``: the name of a handed-in file or folder that is this student's.
- the role: ``role``, ``roles``, ``course role``: a row whose role is given and is not a
  student's (Gradescope's Instructor, TA, Reader) is skipped, and one line says how many.

A bad row (no login, a login outside ``[a-z0-9._-]``, a key already another student's) is
named by its line and skipped; the rest of the roster stands (:attr:`Roster.problems`).
Canvas's ``Points Possible`` and ``Manual Posting`` rows are not students and are skipped
silently; its Test Student (the Student View's account) is skipped, saying what it is.
"""

from __future__ import annotations

import csv
import io
import pathlib
import unicodedata
from dataclasses import dataclass, field

from lanes.exercises.variants import check_login

__all__ = ["Roster", "load_roster", "nfc", "name_key", "rekey"]

#: Largest roster file read (bytes).
MAX_ROSTER_BYTES = 8 << 20

LOGIN_COLS = ("login", "username", "sis login id", "login id", "student")
GITHUB_COLS = ("github_username", "github username", "github", "github login")
ROLE_COLS = ("role", "roles", "course role")
#: Canvas's gradebook identity columns, in its order: an import matches its rows by them.
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
NAME_COLS = ("name", "full name", "student name", "display name", "student")
ID_COLS = ("id", "user id", "user_id", "canvas user id", "sis user id", "sid", "student id", "student number",
           "github_id", "identifier")
EMAIL_COLS = ("email", "e-mail", "email address", "e-mail address")
FIRST_COLS, LAST_COLS = ("first name", "firstname", "given name"), ("last name", "lastname", "surname", "family name")


def nfc(text: str) -> str:
    """``text`` in Unicode NFC (macOS zips write names in NFD)."""
    return unicodedata.normalize("NFC", text)


def name_key(text: str) -> str:
    """A name as compared: NFC, case-folded, spaces collapsed, ``"Last, First"`` (Canvas) read as
    ``"First Last"`` (Moodle, Gradescope): ``"Ortega,  Inés"`` and ``"Inés Ortega"`` -> ``"inés ortega"``."""
    text = nfc(text).casefold()
    if text.count(",") == 1:
        last, first = text.split(",")
        text = f"{first} {last}"
    return " ".join(text.split())


@dataclass(frozen=True)
class Roster:
    """Logins and names, and every key (file, folder, id, e-mail, login) -> login.

    ``names`` maps login -> display name; ``keys`` maps a case-folded NFC key -> login;
    ``by_name`` maps :func:`name_key` of a name -> login, or ``None`` when two students
    share that name; ``github`` maps a case-folded GitHub username -> login; ``problems``
    holds one line per skipped row; ``lms`` maps login -> the row's cells under Canvas's
    identity columns (:data:`CANVAS_IDENTITY`, as the file wrote them) and Gradescope's
    ``SID``, what a Canvas or Gradescope gradebook import needs back; ``headers`` the file's header row as written.
    """

    names: dict
    keys: dict
    by_name: dict
    problems: tuple = ()
    github: dict = field(default_factory=dict)
    lms: dict = field(default_factory=dict)
    headers: tuple = ()

    def lookup(self, key: str) -> str | None:
        """The login a file, folder, id, e-mail or login names (``None`` if none)."""
        return self.keys.get(nfc(key).strip().casefold())


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    return nfc(text)


def _column(header: list, names: tuple, taken=()) -> int | None:
    for want in names:
        for i, h in enumerate(header):
            if h == want and i not in taken:
                return i
    return None


def load_roster(path: pathlib.Path) -> Roster:
    """Read a roster file (see the module docstring); ``ValueError`` only when no row can be used."""
    path = pathlib.Path(path)
    with open(path, "rb") as f:
        data = f.read(MAX_ROSTER_BYTES + 1)
    if len(data) > MAX_ROSTER_BYTES:
        raise ValueError(f"roster {path}: larger than {MAX_ROSTER_BYTES >> 20} MiB")
    text = _decode(data)
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if not header or not any(h.strip() for h in header):
        raise ValueError(f"roster {path}: empty (a header row with 'login' and a row per student)")
    written = tuple(h.strip() for h in header)
    header = [" ".join(nfc(h).casefold().split()) for h in header]
    identity = {c: _column(header, (c.lower(),)) for c in (*CANVAS_IDENTITY, "SID")}  # (Gradescope's SID)
    canvas = "sis login id" in header or "login id" in header
    login_col = _column(header, LOGIN_COLS[:-1] if canvas else LOGIN_COLS)
    github_col = _column(header, GITHUB_COLS)
    email_col = _column(header, EMAIL_COLS)
    role_col = _column(header, ROLE_COLS)
    if login_col is None and email_col is None and github_col is None:
        raise ValueError(f"roster {path}: needs a column 'login' (or username, SIS Login ID, github_username, "
                         f"email); has {', '.join(repr(h) for h in header if h) or 'none'}")
    name_col = _column(header, NAME_COLS, taken={login_col})
    first_col, last_col = _column(header, FIRST_COLS), _column(header, LAST_COLS)
    id_cols = [i for i, h in enumerate(header) if h in ID_COLS and i != login_col]
    roles: dict = {}
    file_col = _column(header, ("file",))
    names: dict = {}
    keys: dict = {}
    by_name: dict = {}
    github: dict = {}
    lms: dict = {}
    problems: list = []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            problems.append(f"roster {path} line {start}: unreadable ({e}); row skipped")
            continue
        cell = lambda i: (row[i].strip() if i is not None and i < len(row) else "")  # noqa: E731
        if not any(c.strip() for c in row):
            continue
        name = cell(name_col) or " ".join(x for x in (cell(first_col), cell(last_col)) if x)
        raw, email, gh = cell(login_col), cell(email_col), cell(github_col).casefold()
        if not raw and (name.strip().lower() == "points possible" or "manual posting" in name.lower()
                        or any(c.strip().lower() == "manual posting" for c in row)):
            continue  # Canvas's second row (and the Manual Posting row of newer exports): not students
        if name_key(name) == "test student" and canvas:
            problems.append(f"roster {path} line {start}: Canvas's Test Student (the account of its Student View) "
                            "is not a student; row skipped")
            continue
        role = cell(role_col)
        if role and "student" not in role.casefold():
            roles[role] = roles.get(role, 0) + 1
            continue
        try:
            first_id = next((cell(i) for i in id_cols if cell(i)), "")
            if login_col is None:
                raw = gh or email or first_id
            if not raw and not email:
                raise ValueError("no login" + (" and no e-mail" if email_col is not None else ""))
            raw = raw or email
            if "@" in raw:
                email = email or raw
                raw = raw.split("@", 1)[0]
            login = check_login(raw)
            if login in names:
                raise ValueError(f"login {login!r} is on line {names[login][1]} already")
            if gh and github.get(gh, login) != login:
                raise ValueError(f"GitHub username {gh!r} is already {github[gh]}'s")
            mine = [login] + ([email] if email else []) + [gh] + [cell(i) for i in id_cols] + [cell(file_col)]
            mine = [k.casefold() for k in mine if k]
            for k in mine:
                if keys.get(k, login) != login:
                    raise ValueError(f"{k!r} is already {keys[k]}'s")
        except ValueError as e:
            problems.append(f"roster {path} line {start}: {e}; row skipped")
            continue
        names[login] = (name, start)
        lms[login] = {c: cell(i) for c, i in identity.items() if i is not None}
        if gh:
            github[gh] = login
        for k in mine:
            keys[k] = login
        if name:
            nk = name_key(name)
            by_name[nk] = None if nk in by_name else login
    if roles:
        problems.append(f"roster {path}: {sum(roles.values())} row(s) of people who are not students skipped "
                        f"(role {', '.join(sorted(roles))})")
    if not names:
        raise ValueError(f"roster {path}: no usable row" + (f" ({problems[0]})" if problems else ""))
    return Roster({k: v[0] for k, v in names.items()}, keys, by_name, tuple(problems), github, lms, written)



def rekey(old_path: pathlib.Path, new_path: pathlib.Path) -> tuple[str, list]:
    """Another LMS's roster ``new_path`` keyed on the logins of ``old_path`` (the roster the tokens
    were made from), so that grading with it keeps every token: ``(CSV text, lines)``.

    Each student of the new roster is found in the old one by any key they share (e-mail, an
    id, GitHub username, login, ``file``), else by name; the result is the new roster's file
    with a ``login`` column (its own replaced, or a new first column) holding the old login.
    ``lines`` names each student found in one roster only (they keep the new roster's login).
    """
    old, new = load_roster(old_path), load_roster(new_path)
    with open(new_path, "rb") as f:
        text = _decode(f.read(MAX_ROSTER_BYTES + 1)[:MAX_ROSTER_BYTES])
    delimiter = max(",;\t", key=text.split("\n", 1)[0].count)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header = [" ".join(h.casefold().split()) for h in rows[0]]
    col = header.index("login") if "login" in header else None
    out_rows = [rows[0] if col is not None else ["login", *rows[0]]]
    lines, found = [], set()
    for row in rows[1:]:
        cells = [c.strip() for c in row if c.strip()]
        login = next((new.lookup(c) for c in cells if new.lookup(c)), None)
        if login is None:
            out_rows.append(row if col is not None else ["", *row])
            continue
        mine = next((old.lookup(c) for c in cells if old.lookup(c)), None)
        if mine is None:
            mine = old.by_name.get(name_key(new.names.get(login, "")))
        if mine is None:
            lines.append(f"{new_path}: {login} ({new.names.get(login, '')}) is not in {old_path}: keeps {login!r}, "
                         "so their token is the one of that login")
            mine = login
        found.add(mine)
        if col is not None:
            row = list(row) + [""] * (col + 1 - len(row))
            row[col] = mine
            out_rows.append(row)
        else:
            out_rows.append([mine, *row])
    lines += [f"{old_path}: {x} ({old.names[x]}) is not in {new_path}" for x in sorted(set(old.names) - found)]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(out_rows)
    return buf.getvalue(), lines
