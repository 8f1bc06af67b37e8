from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q4_break_even_gbps_form(q4_break_even_gbps):
    import numbers
    assert q4_break_even_gbps is not Ellipsis, 'q4_break_even_gbps is not answered yet: replace the ... with your answer'
    assert q4_break_even_gbps is not None, 'q4_break_even_gbps is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q4_break_even_gbps, numbers.Real) and (not isinstance(q4_break_even_gbps, bool)), 'q4_break_even_gbps should be a number, not ' + type(q4_break_even_gbps).__name__
    assert True, 'q4_break_even_gbps should be a number'
    assert q4_break_even_gbps >= 0, 'q4_break_even_gbps should be at least 0'

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q4_verdict_form(q4_verdict):
    assert q4_verdict in ('swap', 'recompute'), 'q4_verdict should be "swap" or "recompute"'

