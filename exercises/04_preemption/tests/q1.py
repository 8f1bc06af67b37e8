from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 3

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_best_policy_form(q1_best_policy):
    import lanes
    assert isinstance(q1_best_policy, str), 'q1_best_policy should be a policy spec in quotes, such as "reserve:4"'
    assert q1_best_policy.strip() in lanes.DEFAULT_POLICIES, 'q1_best_policy should be one of the anchor table specs: ' + ', '.join(lanes.DEFAULT_POLICIES)

