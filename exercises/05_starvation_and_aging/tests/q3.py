from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q3_choice_form(q3_choice):
    assert q3_choice is not Ellipsis, 'q3_choice is not answered yet: replace the ... with your letter'
    assert q3_choice is not None, 'q3_choice is not defined: run its answer cell'
    assert isinstance(q3_choice, str), 'q3_choice should be one letter in quotes, such as "a"'
    assert q3_choice.strip().lower() in ('a', 'b', 'c', 'd'), 'q3_choice should be one letter: a, b, c, d'

