from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_gap_s_form(q3_gap_s):
    import numbers
    assert q3_gap_s is not Ellipsis, 'q3_gap_s is not answered yet: replace the ... with your answer'
    assert q3_gap_s is not None, 'q3_gap_s is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q3_gap_s, numbers.Real) and (not isinstance(q3_gap_s, bool)), 'q3_gap_s should be a number, not ' + type(q3_gap_s).__name__
    assert True, 'q3_gap_s should be a number'
    assert q3_gap_s >= 0, 'q3_gap_s should be at least 0'

