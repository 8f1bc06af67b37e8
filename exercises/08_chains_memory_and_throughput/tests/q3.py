from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3

@test_case(points=0, hidden=False, 
    success_message="Form check passed. This does not check the value: the grader recomputes it for your variant.")
def test_q3_form(env):
    from lanes.exercises import public_check
    public_check('08_chains_memory_and_throughput', 'q3', env)

