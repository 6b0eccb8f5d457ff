"""Published test values and reserved names are neither personal data nor credentials."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect import reserved as r
from domestique.detect.validators import iban_mod97, luhn


@pytest.mark.parametrize(
    "number",
    ["4242 4242 4242 4242", "4111-1111-1111-1111", "5555555555554444", "378282246310005",
     "4000 0566 5566 5556", "6011 1111 1111 1117", "3566 0020 2036 0505"],
)  # fmt: skip
def test_published_test_cards_are_recognised(number: str) -> None:
    """The networks' and processors' test numbers (all Luhn-valid) are test values."""
    assert luhn(number)
    assert r.published_test_card(number)


def test_every_listed_test_card_passes_luhn() -> None:
    """The list holds real test numbers, not typos that could never match a card anyway."""
    assert all(luhn(n) for n in r.TEST_CARD_NUMBERS)


@pytest.mark.parametrize("number", ["4539 1488 0343 6467", "5168 4412 2363 0339"])
def test_ordinary_card_numbers_are_not_test_values(number: str) -> None:
    """A Luhn-valid number of ordinary shape stays a card."""
    assert not r.published_test_card(number)


def test_every_listed_example_iban_is_valid() -> None:
    """The example IBANs pass mod 97, so leaving them out changes a real decision."""
    assert all(iban_mod97(i) for i in r.EXAMPLE_IBANS)
    assert r.example_iban("DE89 3704 0044 0532 0130 00")
    assert not r.example_iban("DE75 5121 0800 1245 1261 99")


@pytest.mark.parametrize(
    ("address", "reserved"),
    [
        ("jane@example.com", True),
        ("ops@billing.example.org", True),
        ("a@corp.test", True),
        ("a@b.invalid", True),
        ("x@host.example", True),
        ("y@dev.localhost", True),
        ("noreply@github.com", True),
        ("no-reply@accounts.google.com", True),
        ("do-not-reply@bank.io", True),
        ("MAILER-DAEMON@mx.corp.io", True),
        ("4231+octocat@users.noreply.github.com", True),
        ("jane@example.co.uk", False),
        ("jane@examples.com", False),
        ("noreply.ada@clinic.org", False),
        ("ada@test.com", False),
        ("not-an-address", False),
    ],
)
def test_non_personal_email(address: str, reserved: bool) -> None:
    """RFC 2606 / 6761 example domains and service senders; look-alikes stay personal."""
    assert r.non_personal_email(address) is reserved


@pytest.mark.parametrize(
    ("number", "fictional"),
    [
        ("(212) 555-0187", True),
        ("415-555-0132", True),
        ("1-800-555-0199", True),
        ("+1 202 555 0143", True),
        ("555-0100", True),
        ("+44 20 7946 0958", True),
        ("020 7946 0123", True),
        ("07700 900461", True),
        ("+61 491 570 156", True),
        ("(212) 736-0187", False),
        ("+44 20 3318 0958", False),
        ("+49 30 5550 1234", False),
        ("555", False),
    ],
)
def test_fictional_phone(number: str, fictional: bool) -> None:
    """North American 555 numbers and the UK and Australian fiction ranges only."""
    assert r.fictional_phone(number) is fictional


@pytest.mark.parametrize(
    ("value", "example"),
    [("tiger", True), ("Hunter2", True), ("correct horse battery staple", True),
     ("yourStrong(!)Password", True), ("tigers-and-lions", False), ("Tr0ub4dor-3x", False),
     ("changeit", True), ("tiger^5HHH", True), ("Tiger2#X", True), ("tiger123", False),
     ("hunter2!", False), ("tigerlily9!", False), ("tiger^5HHHHHH", False)],
)  # fmt: skip
def test_example_password(value: str, example: bool) -> None:
    """Only the passwords famous documentation prints as its example, also with the short
    suffix of two or more character classes a complexity policy asks for (not one class: a
    word with digits appended is how real passwords are made)."""
    assert r.example_password(value) is example


@pytest.mark.parametrize(
    "text",
    [
        "Use the Stripe test card 4242 4242 4242 4242 (exp 12/34, CVC 123).",
        "Contact jane.doe@example.com or call (555) 555-0123.",
        "Sent by GitHub <noreply@github.com> to you.",
        "Pay to DE89 3704 0044 0532 0130 00 as in the docs.",
        'engine = create_engine("postgresql+psycopg2://scott:tiger@localhost/test")',
        "DSN=some_dsn;UID=scott;PWD=tiger",
    ],
)
def test_model_output_with_famous_values_is_clean(scanner: Scanner, text: str) -> None:
    """A reply that mentions only famous test values yields no finding (a replayed answer
    must never block a session)."""
    assert scanner.scan(text) == []


def test_real_values_next_to_famous_ones_are_still_found(scanner: Scanner) -> None:
    """Recognising the test values does not hide a real one beside them."""
    text = "test card 4242 4242 4242 4242, real card 4539 1488 0343 6467, ada@analytical.co.uk"
    codes = sorted(f.code for f in scanner.scan(text))
    assert codes == ["pii.credit_card", "pii.email"]
