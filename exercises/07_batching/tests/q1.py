from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_sizes_form(q1_sizes_wait_0, q1_sizes_wait_02):
    for name, v in (('q1_sizes_wait_0', q1_sizes_wait_0), ('q1_sizes_wait_02', q1_sizes_wait_02)):
        assert isinstance(v, (tuple, list)), name + ' should be a tuple of batch sizes'
        assert all((isinstance(x, int) and x >= 1 for x in v)), name + ' should hold whole numbers >= 1'
        assert sum(v) == 20, name + ' should account for all 20 requests'

