from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_peak_change_s_form(q2_peak_change_s):
    import numbers
    assert q2_peak_change_s is not Ellipsis, 'q2_peak_change_s is not answered yet: replace the ... with your answer'
    assert q2_peak_change_s is not None, 'q2_peak_change_s is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_peak_change_s, numbers.Real) and (not isinstance(q2_peak_change_s, bool)), 'q2_peak_change_s should be a whole number, not ' + type(q2_peak_change_s).__name__
    assert float(q2_peak_change_s).is_integer(), 'q2_peak_change_s should be a whole number'

