from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_util_short_form(q3_util_short):
    import numbers
    assert q3_util_short is not Ellipsis, 'q3_util_short is not answered yet: replace the ... with your answer'
    assert q3_util_short is not None, 'q3_util_short is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q3_util_short, numbers.Real) and (not isinstance(q3_util_short, bool)), 'q3_util_short should be a number, not ' + type(q3_util_short).__name__
    assert True, 'q3_util_short should be a number'
    assert q3_util_short >= 0, 'q3_util_short should be at least 0'
    assert q3_util_short <= 1, 'q3_util_short should be at most 1'

