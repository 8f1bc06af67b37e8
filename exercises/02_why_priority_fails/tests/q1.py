from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q1_choice_form(q1_choice):
    assert q1_choice is not Ellipsis, 'q1_choice is not answered yet: replace the ... with your letter'
    assert q1_choice is not None, 'q1_choice is not defined: run its answer cell'
    assert isinstance(q1_choice, str), 'q1_choice should be one letter in quotes, such as "a"'
    assert q1_choice.strip().lower() in ('a', 'b', 'c', 'd'), 'q1_choice should be one letter: a, b, c, d'

