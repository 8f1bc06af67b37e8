from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_busy_slots_form(q1_busy_slots):
    import numbers
    assert q1_busy_slots is not Ellipsis, 'q1_busy_slots is not answered yet: replace the ... with your answer'
    assert q1_busy_slots is not None, 'q1_busy_slots is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q1_busy_slots, numbers.Real) and (not isinstance(q1_busy_slots, bool)), 'q1_busy_slots should be a number, not ' + type(q1_busy_slots).__name__
    assert True, 'q1_busy_slots should be a number'
    assert q1_busy_slots >= 0, 'q1_busy_slots should be at least 0'

