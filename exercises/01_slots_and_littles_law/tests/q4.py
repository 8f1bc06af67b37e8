from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1

@test_case(points=0, hidden=False, 
    success_message="Public check passed: the answer has the right form. This is NOT full marks: hidden tests that check the value run when the notebook is graded.")
def test_q4_choice_form(q4_choice):
    assert q4_choice is not Ellipsis, 'q4_choice is not answered yet: replace the ... with your letter'
    assert q4_choice is not None, 'q4_choice is not defined: run its answer cell'
    assert isinstance(q4_choice, str), 'q4_choice should be one letter in quotes, such as "a"'
    assert q4_choice.strip().lower() in ('a', 'b', 'c', 'd'), 'q4_choice should be one letter: a, b, c, d'

