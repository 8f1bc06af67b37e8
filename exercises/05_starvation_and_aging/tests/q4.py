from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q4_preempted_aging_form(q4_preempted_aging):
    import numbers
    assert q4_preempted_aging is not Ellipsis, 'q4_preempted_aging is not answered yet: replace the ... with your answer'
    assert q4_preempted_aging is not None, 'q4_preempted_aging is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q4_preempted_aging, numbers.Real) and (not isinstance(q4_preempted_aging, bool)), 'q4_preempted_aging should be a whole number, not ' + type(q4_preempted_aging).__name__
    assert float(q4_preempted_aging).is_integer(), 'q4_preempted_aging should be a whole number'
    assert q4_preempted_aging >= 0, 'q4_preempted_aging should be at least 0'

