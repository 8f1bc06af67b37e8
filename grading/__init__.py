"""Grading a class: the instructor's side of the exercise sets, apart from what students install.

What ``scripts/grade.py`` runs (it is a thin command over :mod:`grading.classroom`):

- :mod:`.sandbox`: the allow-list box (bubblewrap) every student's code runs in;
- :mod:`.runner`: step 1, run inside the box: executes a notebook and exports its answers;
- :mod:`.judge`: step 2, a fresh process per student: scores the answers with the keys;
- :mod:`.online`: set 13's online judge (a submitted policy runs in the box);
- :mod:`.classroom`: a class graded: identity, copies, budgets, shards;
- :mod:`.roster`, :mod:`.lms`, :mod:`.deadlines`, :mod:`.gradebook`: rosters, LMS exports,
  deadlines, and what is written (report, gradebook, feedback).

The student side (set specs, answer forms, variants, public checks, ``source_of``) is
:mod:`lanes.exercises`; this package imports it, never the reverse. It lives in the
instructor's checkout only: the ``lanes`` wheel does not ship it and
``scripts/export_student_repo.py`` leaves it out of the student repository.
"""
