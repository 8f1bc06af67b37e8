from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_ceiling_rps_form(q2_ceiling_rps):
    import numbers
    assert q2_ceiling_rps is not Ellipsis, 'q2_ceiling_rps is not answered yet: replace the ... with your answer'
    assert q2_ceiling_rps is not None, 'q2_ceiling_rps is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_ceiling_rps, numbers.Real) and (not isinstance(q2_ceiling_rps, bool)), 'q2_ceiling_rps should be a number, not ' + type(q2_ceiling_rps).__name__
    assert True, 'q2_ceiling_rps should be a number'
    assert q2_ceiling_rps >= 0, 'q2_ceiling_rps should be at least 0'

