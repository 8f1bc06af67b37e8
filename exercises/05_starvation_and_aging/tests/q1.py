from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_peak_p99_floor_form(q1_peak_p99_floor):
    import numbers
    assert q1_peak_p99_floor is not Ellipsis, 'q1_peak_p99_floor is not answered yet: replace the ... with your answer'
    assert q1_peak_p99_floor is not None, 'q1_peak_p99_floor is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q1_peak_p99_floor, numbers.Real) and (not isinstance(q1_peak_p99_floor, bool)), 'q1_peak_p99_floor should be a whole number, not ' + type(q1_peak_p99_floor).__name__
    assert float(q1_peak_p99_floor).is_integer(), 'q1_peak_p99_floor should be a whole number'
    assert q1_peak_p99_floor >= 0, 'q1_peak_p99_floor should be at least 0'

