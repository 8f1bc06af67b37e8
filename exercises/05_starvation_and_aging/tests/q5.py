from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q5_p99_aging_form(q5_p99_aging):
    import numbers
    assert q5_p99_aging is not Ellipsis, 'q5_p99_aging is not answered yet: replace the ... with your answer'
    assert q5_p99_aging is not None, 'q5_p99_aging is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q5_p99_aging, numbers.Real) and (not isinstance(q5_p99_aging, bool)), 'q5_p99_aging should be a whole number, not ' + type(q5_p99_aging).__name__
    assert float(q5_p99_aging).is_integer(), 'q5_p99_aging should be a whole number'
    assert q5_p99_aging >= 0, 'q5_p99_aging should be at least 0'

