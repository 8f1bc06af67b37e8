from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_in_system_form(q1_in_system):
    import numbers
    assert q1_in_system is not Ellipsis, 'q1_in_system is not answered yet: replace the ... with your answer'
    assert q1_in_system is not None, 'q1_in_system is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q1_in_system, numbers.Real) and (not isinstance(q1_in_system, bool)), 'q1_in_system should be a number, not ' + type(q1_in_system).__name__
    assert True, 'q1_in_system should be a number'
    assert q1_in_system >= 0, 'q1_in_system should be at least 0'

