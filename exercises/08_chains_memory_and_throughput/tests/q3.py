from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_max_batch_form(q3_max_batch):
    import numbers
    assert q3_max_batch is not Ellipsis, 'q3_max_batch is not answered yet: replace the ... with your answer'
    assert q3_max_batch is not None, 'q3_max_batch is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q3_max_batch, numbers.Real) and (not isinstance(q3_max_batch, bool)), 'q3_max_batch should be a whole number, not ' + type(q3_max_batch).__name__
    assert float(q3_max_batch).is_integer(), 'q3_max_batch should be a whole number'
    assert q3_max_batch >= 1, 'q3_max_batch should be at least 1'

