from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q4_rr_share_b_form(q4_rr_share_b):
    import numbers
    assert q4_rr_share_b is not Ellipsis, 'q4_rr_share_b is not answered yet: replace the ... with your answer'
    assert q4_rr_share_b is not None, 'q4_rr_share_b is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q4_rr_share_b, numbers.Real) and (not isinstance(q4_rr_share_b, bool)), 'q4_rr_share_b should be a number, not ' + type(q4_rr_share_b).__name__
    assert True, 'q4_rr_share_b should be a number'
    assert q4_rr_share_b >= 0, 'q4_rr_share_b should be at least 0'
    assert q4_rr_share_b <= 1, 'q4_rr_share_b should be at most 1'

