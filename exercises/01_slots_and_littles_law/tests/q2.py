from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_measured_form(q2_measured):
    import numbers
    assert q2_measured is not Ellipsis, 'q2_measured is not answered yet: replace the ... with your answer'
    assert q2_measured is not None, 'q2_measured is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_measured, numbers.Real) and (not isinstance(q2_measured, bool)), 'q2_measured should be a number, not ' + type(q2_measured).__name__
    assert True, 'q2_measured should be a number'
    assert q2_measured >= 0, 'q2_measured should be at least 0'
    assert q2_measured <= 64, 'q2_measured should be at most 64'

