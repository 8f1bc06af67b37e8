"""The course secret an instructor can live with: ``grade.py init`` says how to back it up,
and a lost secret comes back from the backup with every token unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _grade(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LANES_TEST_SECRET", "LANES_COURSE_SECRET_FILE")}
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env=env)


def test_a_lost_secret_is_restored_from_its_backup_with_the_same_tokens(tmp_path):
    secret, backup = tmp_path / "course" / ".lanes-course-secret", tmp_path / "password-manager.txt"
    roster = tmp_path / "roster.csv"
    roster.write_text("login,name\nalice,Alice A\nbob,Bob B\n", encoding="utf-8")
    made = _grade("init", "--secret", str(secret))
    assert made.returncode == 0, made.stderr
    said = made.stdout
    assert "Back it up now" in said and f"cat {secret}" in said and "--restore" in said, said
    assert "write-only" in said and "can never be read back" in said, said
    assert secret.read_text() not in said  # the secret itself is never printed
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    handed_out = _grade("tokens", "--roster", str(roster), "--secret", str(secret))
    assert handed_out.returncode == 0, handed_out.stderr
    backup.write_text(secret.read_text())  # what the instructor copied

    secret.unlink()  # lost
    back = _grade("init", "--restore", "--secret", str(secret), stdin=backup.read_text())
    assert back.returncode == 0, back.stderr
    fingerprint = said.split("fingerprint ")[1][:8]
    assert f"fingerprint {fingerprint}" in back.stdout
    again = _grade("tokens", "--roster", str(roster), "--secret", str(secret))
    assert again.stdout == handed_out.stdout and "alice-" in again.stdout

    # Another secret needs --force; a bad line is refused; the restored secret stays.
    other = _grade("init", "--restore", "--secret", str(secret), stdin="x" * 40 + "\n")
    assert other.returncode == 2 and "--force" in other.stderr
    short = _grade("init", "--restore", "--secret", str(secret), stdin="short\n")
    assert short.returncode == 2 and "at least 16 characters" in short.stderr
    assert secret.read_text() == backup.read_text()
