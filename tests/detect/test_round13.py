"""Issue 17, round 13 (round 8 of the application-code work): kinds of application code that
read as secrets and are none. Each cause has a false case (no ``secret.*`` finding) and a
nearby real secret that must still be found.

Causes: names compared or read as members (``password1 != password2``, ``x_password->field``),
a list of names or a dict's next key after a password-named item, a template tag, a query
lookup on part of a stored hash, an enumeration member named by its field and value
(``PASSWORDMD5: 'md5'``), a prompt or a form label, a C address / YAML anchor / empty query
value, an address without credentials (fragments, format fields, RFC sections), a call, a
subscript or a type union after a name, a PEM BEGIN line cut by an ellipsis or a body of a
few repeated characters, a JWT header with a cut payload, version ranges of a lock file, a
volume's mount path, syntax notation (``key=value|ns_key=value``), a possessive in prose, a
snake_case name passed on as an argument, and documentation's code blocks introduced as an
example."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.confirm import compares_names, read_as_code
from domestique.detect.doc_examples import in_introduced_block
from domestique.detect.validators import not_code, not_made_up_jwt, pem_key_body

REAL_KEY_BODY = (
    "MIIEowIBAAKCAQEAtV5ASPZHu8qRtZHjQMhuOzE95B9EgE0VrbBG\n"
    "UeP3C4DSA7Lc360a9Y6yNd14tDdO9eGzMcNU77sVTUUJ596lLlGU\n"
)

QUIET = [
    # comparisons of two names, a member read through ->
    "if password1 and password2 and password1 != password2:\n",
    "    if (newPassword !== newPassword2) {\n",
    "  if (!s->__pyx_scope_normalize_password->tp_dictoffset && x) {\n",
    "    s->__pyx_scope_normalize_password->tp_getattro = PyObject_GenericGetAttr;\n",
    "  resetPassword({ key: resetKey, new_password: new_password1 })\n",
    # a list of names, a dict's next key
    '    "fields": ("username", "usable_password", "password1", "password2"),\n',
    '    field_order = ["old_password", "new_password1", "new_password2"]\n',
    'for setting in ["NAME", "USER", "PASSWORD", "HOST", "PORT"]:\n',
    '    attrs={"autocomplete": "current-password", "autofocus": True}\n',
    # a template tag where the value goes
    '<input type="submit" name="set-password" value="{% translate \'Change password\' %}">\n',
    # a query lookup on the stored hash's prefix
    'User.objects.filter(password__startswith="md5$").exclude(password__startswith="md5$$")\n',
    # an enumeration member named by the field and its value
    " *     AUTH_REQUIRED_PASSWORDMD5: 'md5',\n",
    # a prompt and form labels
    "    passphrase = getpass('Enter password: ')\n",
    "<h1>{hasCurrentPassword ? 'Change Password' : 'Set Password'}</h1>\n",
    # a C address, an empty query value read into the next parameter
    "  s->normalize_password = &__pyx_type_7asyncpg_normalize_password;\n",
    "https://open.example.org/cgi-bin/doc?action=dir_list&verify=1&token=&lang=zh_CN\n",
    # addresses without credentials
    '_STS_TOKEN_URL_PATTERN = "https://sts.{}/v1/token"\n',
    ".. _refresh token: https://tools.ietf.org/html/rfc6749#section-6\n",
    "    .. _Application Default Credentials: https://developers.google.com\\\n",
    'WSS_SAML_TOKEN_PROFILE_V2 = "http://docs.oasis-open.org/wss/saml-token-profile-1.1#SAMLV2.0"\n',
    # a call, a subscript, a type union after a name
    "        self._subject_token_supplier = _X509Supplier(\n",
    "        token = _XRegExp$exec2[0];\n",
    "    def sign(self, msg: bytes, key: Ed25519PrivateKey | Ed448PrivateKey) -> bytes:\n",
    # a PEM header cut by an ellipsis, a body of a few repeated characters
    '# support key files, e.g.\n# "-----BEGIN PRIVATE KEY-----...",\n',
    '{"private_key": "...-----BEGIN PRIVATE KEY-----... in PEM format"}\n',
    '"pem": "-----BEGIN PRIVATE KEY-----\\n...",\n',
    '"k": """-----BEGIN PRIVATE KEY-----\n' + "s3cr3t" * 10 + "\n-----END PRIVATE KEY-----\n",
    # a JWT's header and a cut payload, shortened for a page
    "          access_token: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdW\n",
    # version ranges under a password-like package name, a volume's mount path
    '        "minipass": "^5.0.0 || ^6.0.2 || ^7.0.0"\n',
    "    volumes:\n      - ../../allauth:/code/allauth\n",
    # syntax notation, a possessive in prose
    "# ns.key=value|ns_key=value (case insensitive)\n",
    '# a potential {..., "access_token": "attacker\'s AT"} input being leaked\n',
    # a snake_case name passed on as an argument
    "get_connection(\n    username=auth_user,\n    password=auth_password,\n    fail=f,\n)",
    # a string joined to a name, read from its closing quote on (minified script)
    'if(u+1>=s.length)throw new Error("Missing value for key: "+s[u]);i.set(s[u],s[u+1])\n',
    # documentation's code blocks introduced as an example
    (
        "The following is an example ``settings.py`` snippet defining two\n"
        'databases::\n\n    DATABASES = {\n        "default": {\n'
        '            "USER": "postgres_user",\n            "PASSWORD": "s3krit",\n'
        "        },\n    }\n"
    ),
    (
        "Let's consider another sample configuration. Here are the settings:\n\n"
        '```python\nDATABASES = {"auth_db": {"USER": "mysql_user", "PASSWORD": "swordfish"}}\n```\n'
    ),
    (
        "This example is for PostgreSQL:\n\n.. code-block:: python\n\n"
        '    DATABASES = {"default": {"PASSWORD": "mypassword"}}\n'
    ),
]

FOUND = [
    # a literal compared or assigned is still one
    ('if password != "h7Kq2Lm9xPz":\n', "secret.password_assignment"),
    ("password: hunter7Xq\n", "secret.password_assignment"),
    ("password: password1\n", "secret.password_assignment"),
    ("<Pwd>fancy password</Pwd>\n", "secret.password_assignment"),
    # a pair of a name and its value (two items)
    ("define('DB_PASSWORD', 'h7Kq2Lm9xP');\n", "secret.password_assignment"),
    # a password that is not named by its field
    ("AUTH_REQUIRED_PASSWORD_V2: 'h7Kq2Lm9xP',\n", "secret.password_assignment"),
    # a sentence-like value is still a password when no form verb or prompt says otherwise
    ("AMQP_PASSWORD = 'tidy lantern'\n", "secret.password_assignment"),
    # an address with a generated piece, a token in a query
    (
        'WEBHOOK_TOKEN = "https://hooks.acmecorp.net/T8c2Kq9Xz/B3mVp7Lr1/q8Zt3vN1xR7mK2pL9wY4cB6d"\n',
        "secret.generic_secret",
    ),
    ("https://api.example.org/v1/items?token=Zq8Xv2Lm9Pk3Rt7Ws1Nb\n", "secret.generic_secret"),
    # an unquoted random value with no call after it
    ("api_key = Zq8Xv2Lm9Pk3Rt7Ws1Nb\n", "secret.generic_secret"),
    # a quoted token that opens with a plus sign
    ('api_key: "+Zq8Xv2Lm9Pk3Rt7Ws1Nb"\n', "secret.generic_secret"),
    # a real key body and a BEGIN line pasted without its body
    (
        "-----BEGIN RSA PRIVATE KEY-----\n" + REAL_KEY_BODY + "-----END RSA PRIVATE KEY-----\n",
        "secret.private_key",
    ),
    ("a key starts: -----BEGIN EC PRIVATE KEY-----\n", "secret.private_key"),
    # a password in a settings block that no paragraph calls an example
    (
        'Here are the settings::\n\n    DATABASES = {\n        "default": {\n'
        '            "PASSWORD": "h7Kq2Lm9xPq",\n        }\n    }\n',
        "secret.password_assignment",
    ),
    # an INI pair with a literal password
    ("user = operator\npassword = lemon_curd\n", "secret.password_pair"),
]


@pytest.mark.parametrize("text", QUIET)
def test_application_code_that_is_no_secret(scanner: Scanner, text: str) -> None:
    assert [f.code for f in scanner.scan(text) if f.code.startswith("secret.")] == []


@pytest.mark.parametrize(("text", "code"), FOUND)
def test_a_real_secret_nearby_is_still_found(scanner: Scanner, text: str, code: str) -> None:
    assert code in {f.code for f in scanner.scan(text)}


@pytest.mark.parametrize(
    ("whole", "value", "quoted", "expected"),
    [
        ("password1 != password2:", "password2:", False, True),
        ("newPassword !== newPassword2)", "newPassword2)", False, True),
        (">x_password->tp_getattro", "tp_getattro", True, True),
        ('password != "h7Kq2Lm9"', "h7Kq2Lm9", True, False),
        ("password = other_name", "other_name", False, False),
    ],
)  # fmt: skip
def test_compares_names(whole: str, value: str, quoted: bool, expected: bool) -> None:
    assert compares_names(whole, value, quoted) is expected


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ("x = _X509Supplier(", "_X509Supplier", True),
        ("key: Ed25519Key | Ed448Key", "Ed25519Key", True),
        ('("a_password", "password1", "password2")', "password1", True),
        ('{"new-password", "autofocus": True}', "autofocus", True),
        ("define('DB_PASSWORD', 'h7Kq2Lm9xP');", "h7Kq2Lm9xP", False),
        ("key: Zq8Xv2Lm9Pk3", "Zq8Xv2Lm9Pk3", False),
    ],
)  # fmt: skip
def test_read_as_code(text: str, value: str, expected: bool) -> None:
    s = text.index(value)
    ms = text.index("'") if "define" in text else (text.index('"') if '"' in text else 0)
    assert read_as_code(text, ms, s, s + len(value)) is expected


def test_pem_key_body_cut_or_filler() -> None:
    assert pem_key_body("-----BEGIN PRIVATE KEY-----...") is False
    assert pem_key_body('-----BEGIN PRIVATE KEY-----\\n"...') is False
    filler = "-----BEGIN PRIVATE KEY-----\n" + "s3cr3t" * 12 + "\n-----END"
    assert pem_key_body(filler) is False
    real = "-----BEGIN RSA PRIVATE KEY-----\n" + REAL_KEY_BODY + "-----END"
    assert pem_key_body(real) is True
    assert pem_key_body("-----BEGIN EC PRIVATE KEY-----") is True


def test_jwt_header_with_a_cut_payload() -> None:
    assert not_made_up_jwt("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdW") is False
    assert not_made_up_jwt("eyJub3RhIjoiaGVhZGVyIn0.eyJzdW") is True  # no alg: no header
    assert not_made_up_jwt("Zq8Xv2Lm9Pk3.Rt7Ws1Nb") is True


def test_not_code_argument_passed_on() -> None:
    assert not_code("auth_password,") is False
    assert not_code("lemon_curd") is True
    assert not_code("h7Kq2Lm9xP,") is True


def test_block_intro_needs_the_marker_in_its_own_paragraph() -> None:
    text = (
        "An example of something else.\n\nHere are the settings::\n\n"
        '    x = {\n        "PASSWORD": "h7Kq2Lm9xPq",\n    }\n'
    )
    assert in_introduced_block(text, text.index("h7K")) is False
    text2 = "For example::\n\n    x = {\n        'PASSWORD': 'h7Kq2Lm9xPq',\n    }\n"
    assert in_introduced_block(text2, text2.index("h7K")) is True
    # a closing fence has no language: no block is opened there
    text3 = "for example:\n\n```python\nx = 1\n```\npassword = 'h7Kq2Lm9xPq'\n"
    assert in_introduced_block(text3, text3.index("h7K")) is False
