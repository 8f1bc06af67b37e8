from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_total_wait_0_form(q2_total_wait_0):
    import numbers
    assert q2_total_wait_0 is not Ellipsis, 'q2_total_wait_0 is not answered yet: replace the ... with your answer'
    assert q2_total_wait_0 is not None, 'q2_total_wait_0 is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_total_wait_0, numbers.Real) and (not isinstance(q2_total_wait_0, bool)), 'q2_total_wait_0 should be a number, not ' + type(q2_total_wait_0).__name__
    assert True, 'q2_total_wait_0 should be a number'
    assert q2_total_wait_0 >= 0, 'q2_total_wait_0 should be at least 0'

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_total_wait_02_form(q2_total_wait_02):
    import numbers
    assert q2_total_wait_02 is not Ellipsis, 'q2_total_wait_02 is not answered yet: replace the ... with your answer'
    assert q2_total_wait_02 is not None, 'q2_total_wait_02 is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_total_wait_02, numbers.Real) and (not isinstance(q2_total_wait_02, bool)), 'q2_total_wait_02 should be a number, not ' + type(q2_total_wait_02).__name__
    assert True, 'q2_total_wait_02 should be a number'
    assert q2_total_wait_02 >= 0, 'q2_total_wait_02 should be at least 0'

