"""Real-shaped LMS exports graded by tests/test_term.py: data, not notebooks to run under nbval."""

collect_ignore_glob = ["*"]
