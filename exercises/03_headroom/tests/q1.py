from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 3

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_reserve_anchor_form(q1_reserve_anchor):
    import numbers
    assert q1_reserve_anchor is not Ellipsis, 'q1_reserve_anchor is not answered yet: replace the ... with your answer'
    assert q1_reserve_anchor is not None, 'q1_reserve_anchor is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q1_reserve_anchor, numbers.Real) and (not isinstance(q1_reserve_anchor, bool)), 'q1_reserve_anchor should be a whole number, not ' + type(q1_reserve_anchor).__name__
    assert float(q1_reserve_anchor).is_integer(), 'q1_reserve_anchor should be a whole number'
    assert q1_reserve_anchor >= 0, 'q1_reserve_anchor should be at least 0'
    assert q1_reserve_anchor <= 64, 'q1_reserve_anchor should be at most 64'

