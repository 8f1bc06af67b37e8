from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 3

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_reserve_short_form(q2_reserve_short):
    import numbers
    assert q2_reserve_short is not Ellipsis, 'q2_reserve_short is not answered yet: replace the ... with your answer'
    assert q2_reserve_short is not None, 'q2_reserve_short is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_reserve_short, numbers.Real) and (not isinstance(q2_reserve_short, bool)), 'q2_reserve_short should be a whole number, not ' + type(q2_reserve_short).__name__
    assert float(q2_reserve_short).is_integer(), 'q2_reserve_short should be a whole number'
    assert q2_reserve_short >= 0, 'q2_reserve_short should be at least 0'
    assert q2_reserve_short <= 64, 'q2_reserve_short should be at most 64'

