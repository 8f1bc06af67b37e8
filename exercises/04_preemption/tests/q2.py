from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_batch_done_form(q2_batch_done):
    import numbers
    assert q2_batch_done is not Ellipsis, 'q2_batch_done is not answered yet: replace the ... with your answer'
    assert q2_batch_done is not None, 'q2_batch_done is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_batch_done, numbers.Real) and (not isinstance(q2_batch_done, bool)), 'q2_batch_done should be a whole number, not ' + type(q2_batch_done).__name__
    assert float(q2_batch_done).is_integer(), 'q2_batch_done should be a whole number'
    assert q2_batch_done >= 0, 'q2_batch_done should be at least 0'

