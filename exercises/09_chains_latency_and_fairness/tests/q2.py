from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q2_rho_max_form(q2_rho_max):
    import numbers
    assert q2_rho_max is not Ellipsis, 'q2_rho_max is not answered yet: replace the ... with your answer'
    assert q2_rho_max is not None, 'q2_rho_max is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q2_rho_max, numbers.Real) and (not isinstance(q2_rho_max, bool)), 'q2_rho_max should be a number, not ' + type(q2_rho_max).__name__
    assert True, 'q2_rho_max should be a number'
    assert q2_rho_max >= 0, 'q2_rho_max should be at least 0'
    assert q2_rho_max <= 1, 'q2_rho_max should be at most 1'

