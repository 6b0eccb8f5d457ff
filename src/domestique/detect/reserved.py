"""Values published for tests and examples, and names reserved so that they reach nobody.

A model's earlier answer, a README or a test fixture mentions them all the time: the card
numbers payment networks and processors publish for testing (4242 4242 4242 4242), the e-mail
domains reserved for examples (RFC 2606 and RFC 6761: ``example.com``/``.net``/``.org``, the
``.test``, ``.example``, ``.invalid`` and ``.localhost`` top-level domains), the telephone
numbers reserved for fiction (North American 555 numbers, the UK regulator's drama ranges), the
IBANs printed in the standard and in banks' documentation, vendors' no-reply sender addresses,
and the example passwords of well-known documentation (Oracle's ``scott``/``tiger``). None of
them is personal data or a credential anywhere, so the personal-data and credential rules turn
them down (validators in :mod:`domestique.detect.validators`).

Each predicate is pure, takes the matched value as written, and never raises: anything it cannot
read is *not* reserved (the finding stands).
"""

from __future__ import annotations

import re

# Card numbers published for testing by the card networks and the large processors' sandboxes
# (digits only). Any number whose digits between the issuer prefix and the check digit use at
# most two distinct digits (4111 1111 1111 1111, 5555 5555 5555 4444) is taken as made up too:
# about one real card number in a million has that shape.
TEST_CARD_NUMBERS = frozenset(
    {
        "4242424242424242", "4000056655665556", "4000002500003155", "4000002760003184",
        "4000000000003220", "4000000000009995", "4000000000000002", "4000000000000077",
        "4000000000000341", "4000008400001629", "4012888888881881", "4222222222222",
        "4005519200000004", "4009348888881881", "4012000033330026", "4012000077777777",
        "4217651111111119", "4500600000000061", "4917610000000000", "4444333322221111",
        "5555555555554444", "2223003122003222", "5200828282828210", "5105105105105100",
        "2223000048400011", "5454545454545454", "5425233430109903", "2222420000001113",
        "378282246310005", "371449635398431", "378734493671000", "6011111111111117",
        "6011000990139424", "6011981111111113", "6011000400000000", "3056930009020004",
        "36227206271667", "30569309025904", "38520000023237", "36259600000004",
        "3566002020360505", "3530111333300000", "6200000000000005", "6205500000000000004",
    }
)  # fmt: skip


def published_test_card(value: str) -> bool:
    """True for a published test card number or a synthetic one (see ``TEST_CARD_NUMBERS``)."""
    digits = "".join(c for c in value if "0" <= c <= "9")
    if digits in TEST_CARD_NUMBERS:
        return True
    return len(digits) >= 13 and len(set(digits[4:-1])) <= 2


# E-mail domains that can never deliver to a person: RFC 2606 / RFC 6761 second-level example
# domains and reserved top-level domains, and GitHub's published no-reply host for commits.
_RESERVED_DOMAIN_RE = re.compile(
    r"(?i)(?:^|\.)(?:example\.(?:com|net|org)|users\.noreply\.github\.com)$|"
    r"\.(?:test|example|invalid|localhost)$|^localhost$"
)
# Senders that are a service, not a person: no-reply and bounce addresses, mailer daemons; and
# the role mailboxes an organisation publishes (RFC 2142's abuse@, security@, support@, ...),
# the accounts tools log in as (git@ of an SSH remote, deploy@, ci@, a bot) and the generic
# desks (info@, sales@): a team's or a machine's address, no person's. A role word with a
# person's name (maria.support@) is not one of these.
_SERVICE_LOCAL_RE = re.compile(
    r"(?i)^(?:no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer[-_.]?daemon|postmaster|bounces?|"
    r"notifications?|"
    r"(?:(?:it|dev|devops|sec|team|site|web|prod|staging|ops|eng|app|platform|infra|release|"
    r"build|cloud|data|help|customer|tech|product|legal|billing|finance|accounts?)[-_.])?"
    r"(?:security|abuse|hostmaster|webmaster|admin|administrator|root|support|help|helpdesk|"
    r"info|contact|hello|sales|billing|accounts|privacy|legal|press|media|marketing|jobs|"
    r"careers|oncall|on-call|alerts?|monitoring|noc|soc|"
    r"deploy|deployer|deployment|release|releases|build|builder|ci|cd|jenkins|gitlab|github|"
    r"git|svn|hg|bot|robot|automation|service|services|system|sysadmin|daemon|cron|backup|"
    r"newsletter|feedback|status|"
    r"compliance|dpo|gdpr|vulnerability|disclosure|psirt|cert|csirt|incident|incidents)"
    r"(?:[-_.]?(?:team|desk|bot|\d{1,3}))?)(?:\+[^@]*)?$"
)
# Domains that hold service identities, not people: Google Cloud service accounts (and the
# workload identity pools federated ones, GitHub Actions' among them), AWS and Azure managed
# identities do not read mail.
_SERVICE_DOMAIN_RE = re.compile(
    r"(?i)(?:^|\.)(?:(?:iam|developer|appspot|cloudservices|cloudbuild|compute)\."
    r"gserviceaccount\.com|svc\.id\.goog|iam\.googleapis\.com|"
    r"(?:users\.)?noreply\.github\.com)$"
)


def non_personal_email(address: str) -> bool:
    """True for an address at a reserved example domain, a service identity's domain, or a
    role or service mailbox (no-reply, security@, deploy@, git@)."""
    local, sep, domain = address.rpartition("@")
    if not sep or not local or not domain:
        return False
    return bool(
        _RESERVED_DOMAIN_RE.search(domain)
        or _SERVICE_DOMAIN_RE.search(domain)
        or _SERVICE_LOCAL_RE.match(local)
    )


# Telephone numbers reserved for fiction and examples, by their national significant number:
# North America, the whole 555 exchange (555-0100..0199 is reserved for fiction, 555-1212 is
# directory assistance, the rest was never assigned to subscribers); the UK regulator's drama
# ranges; Australia's fiction ranges.
_FICTIONAL_UK_RE = re.compile(
    r"^(?:2079460\d{3}|1(?:1[3-8]|[2-6]1)4960\d{3}|2896496\d{3}|2920180\d{3}|1632960\d{3}|"
    r"7700900\d{3}|8081570\d{3}|9098790\d{3}|3069990\d{3})$"
)
_FICTIONAL_AU_RE = re.compile(r"^(?:[2378](?:5550|7010)\d{4}|49157\d{4})$")


def fictional_phone(value: str) -> bool:
    """True for a number from a range reserved for fiction (``555-0123``, ``020 7946 0958``),
    however it is dialled: ``+1``, ``001`` or ``011`` before it, the area code left out
    (``+1 555-0142``)."""
    raw = value.strip()
    digits = "".join(c for c in raw if "0" <= c <= "9")
    international = raw.startswith("+")
    if not international and digits.startswith(("00", "011")) and len(digits) > 9:
        # an international call prefix (00 in most of the world, 011 from North America)
        digits = digits[3:] if digits.startswith("011") else digits[2:]
        international = True
    if international and digits.startswith("1") and len(digits) in (8, 11):
        # NANP: +1 NPA NXX XXXX, or +1 NXX XXXX with the area code left out
        return digits[-7:-4] == "555"
    if international and digits.startswith("44"):
        return bool(_FICTIONAL_UK_RE.match(digits[2:]))
    if international and digits.startswith("61"):
        return bool(_FICTIONAL_AU_RE.match(digits[2:]))
    if international:
        return False
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    if len(digits) == 10 and digits[3:6] == "555":  # NANP: NPA NXX XXXX
        return True
    if digits.startswith("0"):
        return bool(_FICTIONAL_UK_RE.match(digits[1:]) or _FICTIONAL_AU_RE.match(digits[1:]))
    return len(digits) == 7 and digits.startswith("555")


# IBANs printed as examples by the standard's registry, the European payments council and
# banks' documentation (compact form).
EXAMPLE_IBANS = frozenset(
    {
        "GB82WEST12345698765432", "GB29NWBK60161331926819", "GB33BUKB20201555555555",
        "DE89370400440532013000", "FR1420041010050500013M02606", "NL91ABNA0417164300",
        "BE68539007547034", "CH9300762011623852957", "AT611904300234573201",
        "ES9121000418450200051332", "IT60X0542811101000000123456", "SE4550000000058398257466",
        "NO9386011117947", "DK5000400440116243", "FI2112345600000785", "IE29AIBK93115212345678",
        "PL61109010140000071219812874", "PT50000201231234567890154", "LU280019400644750000",
    }
)  # fmt: skip


def example_iban(value: str) -> bool:
    """True for one of the IBANs printed as examples (``EXAMPLE_IBANS``)."""
    return "".join(c for c in value if c.isalnum()).upper() in EXAMPLE_IBANS


# Passwords that well-known documentation prints as the example (Oracle's scott/tiger demo
# schema, SQL Server's container quick start, the xkcd strip about password strength, the IRC
# joke) and the documented defaults everyone knows (the Java key store's changeit, Firebird's
# SYSDBA masterkey), compared lower-cased with separators removed: they protect nothing.
EXAMPLE_PASSWORDS = frozenset(
    {
        "tiger", "hunter2", "correcthorsebatterystaple", "tr0ub4dor3", "tr0ub4dor&3",
        "yourstrongpassword", "yourstrongpassw0rd", "yourstrong(!)password",
        "yourstrong@passw0rd", "mysecretpassword", "examplepassword", "topsecret",
        "changeit", "masterkey",
        # the OAuth 2.0 RFC's resource owner (johndoe) and client (s6BhdRkqt3) passwords
        "a3ddj3w", "gx1fbat3bv",
    }
)  # fmt: skip
_FOLD_RE = re.compile(r"[\s_\-.]+")
# Documentation adds a suffix to an example password where a server enforces complexity (SQL
# Server wants 3 of upper case, lower case, digits, symbols: tiger^5HHH): up to 6 characters,
# no lower-case letter, bringing all three missing classes. A suffix of one or two classes
# (tiger123, hunter2!, Tiger@123, Topsecret!2024) is how people make real passwords from words:
# those stay findings.
_COMPLEXITY_SUFFIX_RE = re.compile(r"^[^a-z\s]{2,6}$")


def _complexity_suffix(suffix: str) -> bool:
    if not _COMPLEXITY_SUFFIX_RE.match(suffix):
        return False
    classes = (
        any(c.isupper() for c in suffix)
        + any(c.isdigit() for c in suffix)
        + any(not c.isalnum() for c in suffix)
    )
    return classes == 3


def example_password(value: str) -> bool:
    """True for a password that well-known documentation prints as its example (also with a
    complexity suffix, ``tiger^5HHH``)."""
    bare = _FOLD_RE.sub("", value.strip().strip("\"'`"))
    folded = bare.lower()
    if folded in EXAMPLE_PASSWORDS:
        return True
    for word in EXAMPLE_PASSWORDS:
        if folded.startswith(word) and _complexity_suffix(bare[len(word) :]):
            return True
    return False


# Tokens, codes and client secrets that the OAuth RFCs print in their examples (OAuth 1.0: RFC
# 5849; OAuth 2.0 and bearer tokens: RFC 6749, 6750, 7009, 7636, 7662; OpenID Connect Core):
# every OAuth library quotes them in its documentation, and they grant nothing anywhere.
EXAMPLE_TOKENS = frozenset(
    {
        "2YotnFZFEjr1zCsicMWpAA", "tGzv3JOkF0XG5Qx2TlKWIA", "SplxlOBeZQQYbYS6WxSbIA",
        "7Fjfp0ZBr1KtDRbnfVdmIw", "czZCaGRSa3F0MzpnWDFmQmF0M2JW", "mF_9.B5f-4.1JqM",
        "h480djs93hd8", "45ghiukldjahdnhzdauz", "SlAV32hkKG", "8xLOxBtZp8",
        "dpf43f3p2l4k3l03", "kd94hf93k423kf44", "hh5s93j4hdidpola", "hdhd0244k9j7ao03",
        "hfdp7dh39dks9884", "nnch734d00sl2jdk", "pfkkdhi9sl3r4s00", "9djdj82h48djs9d2",
        "kkk9d7dh3k39sjv7", "j49sk3j29djd", "dh893hdasih9",
        "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    }
)  # fmt: skip


def example_token(value: str) -> bool:
    """True for a token an OAuth RFC prints as its example (``EXAMPLE_TOKENS``), as written."""
    return value.strip().strip("\"'`") in EXAMPLE_TOKENS


def example_basic_credential(user: str, password: str) -> bool:
    """True for the HTTP basic-auth RFCs' example credential (Aladdin / open sesame) or a
    user with a documentation example password."""
    folded = _FOLD_RE.sub("", password.strip().lower())
    if user.lower() in _FIELD_USERS and folded in _FIELD_PASSWORDS:
        return True  # login:pass, user:password: the fields' names, not values
    return (user == "Aladdin" and folded == "opensesame") or example_password(password)


_FIELD_USERS = frozenset({"login", "user", "username", "name"})
_FIELD_PASSWORDS = frozenset({"pass", "password", "passwd", "pwd", "secret"})
