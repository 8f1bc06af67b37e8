from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_chunks_form(q3_chunks):
    import numbers
    assert q3_chunks is not Ellipsis, 'q3_chunks is not answered yet: replace the ... with your answer'
    assert q3_chunks is not None, 'q3_chunks is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q3_chunks, numbers.Real) and (not isinstance(q3_chunks, bool)), 'q3_chunks should be a whole number, not ' + type(q3_chunks).__name__
    assert float(q3_chunks).is_integer(), 'q3_chunks should be a whole number'
    assert q3_chunks >= 1, 'q3_chunks should be at least 1'

