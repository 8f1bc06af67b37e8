from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_p99_s_form(q2_p99_s):
    import numbers
    assert q2_p99_s is not Ellipsis, 'q2_p99_s is not answered yet: replace the ... with your answer'
    assert q2_p99_s is not None, 'q2_p99_s is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_p99_s, numbers.Real) and (not isinstance(q2_p99_s, bool)), 'q2_p99_s should be a whole number, not ' + type(q2_p99_s).__name__
    assert float(q2_p99_s).is_integer(), 'q2_p99_s should be a whole number'
    assert q2_p99_s >= 0, 'q2_p99_s should be at least 0'

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_late_fraction_form(q2_late_fraction):
    import numbers
    assert q2_late_fraction is not Ellipsis, 'q2_late_fraction is not answered yet: replace the ... with your answer'
    assert q2_late_fraction is not None, 'q2_late_fraction is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_late_fraction, numbers.Real) and (not isinstance(q2_late_fraction, bool)), 'q2_late_fraction should be a number, not ' + type(q2_late_fraction).__name__
    assert True, 'q2_late_fraction should be a number'
    assert q2_late_fraction >= 0, 'q2_late_fraction should be at least 0'
    assert q2_late_fraction <= 1, 'q2_late_fraction should be at most 1'

