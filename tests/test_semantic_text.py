import pytest

from uncertainty_lab.semantic.text import normalise_answer


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("The  Canberra!", "canberra"),
        ("Canberra.", "canberra"),
        ("  an Apple a day ", "apple day"),
        ("São Paulo", "sao paulo"),
        ("“Yes” — definitely", "yes definitely"),
        ("Theatre", "theatre"),  # 'the' only as a whole word
        ("It boils at 100°C.", "it boils at 100 c"),
        ("", ""),
    ],
)
def test_normalise_answer(raw, expected):
    assert normalise_answer(raw) == expected


def test_rejects_non_strings():
    with pytest.raises(TypeError, match="text must be a string"):
        normalise_answer(None)
