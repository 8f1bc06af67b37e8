"""What a student learns from the grader must not let them search for the answer.

The feedback scores the copy that counts only (four copies, one per option, would otherwise
show which option is right); the others are listed by name.
"""

from __future__ import annotations

from grading import classroom
from grading.gradebook import feedback_markdown, report
from lanes.exercises import get_set

SLUG = "01_slots_and_littles_law"


def _copy(letter: str, right: bool, counted: bool) -> classroom.Submission:
    s = classroom.Submission(path=f"dave/{SLUG}-{letter}.ipynb", assignment=SLUG, login="dave", counted=counted)
    s.questions = [classroom.Question(q.name, q.points, score=q.points if q.name != "q4" or right else 0.0,
                                      messages=[] if q.name != "q4" or right else ["q4_choice is not the best option"])
                   for q in get_set(SLUG).questions]
    s.messages.append(f"4 copies of set {SLUG} were handed in by dave")
    return s


def test_feedback_scores_only_the_copy_that_counts():
    copies = [_copy("a", False, False), _copy("b", True, False), _copy("c", False, False), _copy("d", False, True)]
    rep = report(copies, pass_mark=0.5, sandbox_line="-", roster={"dave": "Dave D"})
    text = feedback_markdown("dave", rep["submissions"], rep["class"]["dave"])
    q4 = get_set(SLUG).question("q4")
    assert text.count("| q4 |") == 1 and f"| q4 | 0 | {q4.points:g} |" in text, text  # the counted copy's row only
    assert "not the best option" in text and text.count("Score ") == 1, text
    for letter in "abc":  # the others by name, no score, no status, no message
        assert f"{SLUG}-{letter}.ipynb" in text
        assert f"## {SLUG}: {SLUG}-{letter}.ipynb" not in text
    assert f"## {SLUG}: other copies (not counted, not scored)" in text
