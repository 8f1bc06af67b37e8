"""The class every grading test shares: honest and hostile notebooks, graded once per session."""
