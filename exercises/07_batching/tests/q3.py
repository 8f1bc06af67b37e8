from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_best_wait_s_form(q3_best_wait_s):
    import numbers
    assert isinstance(q3_best_wait_s, numbers.Real) and (not isinstance(q3_best_wait_s, bool)), 'q3_best_wait_s should be a number of seconds'
    assert any((abs(q3_best_wait_s - w) < 1e-09 for w in (0.0, 0.02, 0.2))), 'q3_best_wait_s should be one of 0.0, 0.02, 0.2'

