from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3

@test_case(points=0, hidden=False, 
    success_message="Form check passed. This does not check the value: the grader recomputes it for your variant.")
def test_q4_form(env):
    from lanes.exercises import public_check
    public_check('02_why_priority_fails', 'q4', env)

