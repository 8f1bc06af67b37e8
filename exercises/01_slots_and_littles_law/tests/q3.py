from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_idle_at_peak_form(q3_idle_at_peak):
    import numbers
    assert q3_idle_at_peak is not Ellipsis, 'q3_idle_at_peak is not answered yet: replace the ... with your answer'
    assert q3_idle_at_peak is not None, 'q3_idle_at_peak is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q3_idle_at_peak, numbers.Real) and (not isinstance(q3_idle_at_peak, bool)), 'q3_idle_at_peak should be a number, not ' + type(q3_idle_at_peak).__name__
    assert True, 'q3_idle_at_peak should be a number'
    assert q3_idle_at_peak >= 0, 'q3_idle_at_peak should be at least 0'
    assert q3_idle_at_peak <= 64, 'q3_idle_at_peak should be at most 64'

