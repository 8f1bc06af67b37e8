from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_short_ttft_fcfs_s_form(q1_short_ttft_fcfs_s):
    import numbers
    assert q1_short_ttft_fcfs_s is not Ellipsis, 'q1_short_ttft_fcfs_s is not answered yet: replace the ... with your answer'
    assert q1_short_ttft_fcfs_s is not None, 'q1_short_ttft_fcfs_s is not defined: run its answer cell (did it raise an error?)'
    assert isinstance(q1_short_ttft_fcfs_s, numbers.Real) and (not isinstance(q1_short_ttft_fcfs_s, bool)), 'q1_short_ttft_fcfs_s should be a number, not ' + type(q1_short_ttft_fcfs_s).__name__
    assert True, 'q1_short_ttft_fcfs_s should be a number'
    assert q1_short_ttft_fcfs_s >= 0, 'q1_short_ttft_fcfs_s should be at least 0'

