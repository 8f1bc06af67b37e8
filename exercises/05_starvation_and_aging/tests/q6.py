from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 1

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q6_choice_form(q6_choice):
    assert q6_choice is not Ellipsis, 'q6_choice is not answered yet: replace the ... with your letter'
    assert q6_choice is not None, 'q6_choice is not defined: run its answer cell'
    assert isinstance(q6_choice, str), 'q6_choice should be one letter in quotes, such as "a"'
    assert q6_choice.strip().lower() in ('a', 'b', 'c', 'd'), 'q6_choice should be one letter: a, b, c, d'

