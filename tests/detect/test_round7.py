"""Issue 17, round 7: causes of false findings in application code and recall shapes, each with
examples written here (no project's or corpus's text)."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.confirm import looks_like_code_reference, names_itself
from domestique.detect.validators import pem_key_body

CLEAN = [
    # names that only start with "pass": a library, an argument kind, WebAuthn passkeys
    'PASSLIB_TEST_MODE="full" pytest',
    '    _PassArg.context: "context",',
    'PASSKEYS = "passkeys"',
    # a value that is its own name, passed on or set as an enumeration member
    "        self.proxy_password = proxy_password\n        self.proxy_user = proxy_user",
    "            sip_auth_password=sip_auth_password,",
    # expressions, a JSON number, a setting about the password
    "    pwd_salt = pwd+salt",
    '        "password": 864000,',
    "password_min_length: 12",
    '    pass_arg = "environment"',
    # the field word in a list of names
    'BasicAuth = namedtuple("BasicAuth", ["login", "password", "encoding"])',
    'users = {"password", "user2"}',
    # URNs, plain URLs, query strings, JOSE algorithm names, key files
    'GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"',
    '    "openid.ns.oauth": "http://specs.openid.net/extensions/oauth/1.0",',
    "assert url == 'http://example.net/get?key=value2&key=value1'",
    'self.setdefault("id_token_encrypted_response_enc", "A256GCM")',
    "_default_key = '/certs/server.key'",
    # the OAuth RFCs' example tokens, the fields' names as a basic-auth pair
    '  "access_token":"2YotnFZFEjr1zCsicMWpAA",\n  "refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA",',
    "oauth_token=hh5s93j4hdidpola&oauth_token_secret=hdhd0244k9j7ao03&",
    "Authorization: Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW",
    'headers={"Authorization": "Basic bG9naW46cGFzcw=="}',
    # prose in a value's place: words, a description, a message, a streamed text token
    'TOKEN_DATA: "template data / text",',
    '        refresh_token="demo_refresh_token_12345",',
    "Authorization: Bearer a-token-string",
    '  "passwordTooShort": "Password must be at least 8 characters",',
    'data: {"token": "Gunicorn\'s "}',
    # a cut-down PEM block in documentation
    "For example, `-----BEGIN RSA PRIVATE KEY----- MIIEpQIBAAKCAQEAt2x9Lm4QzR8vKp0. -----END RSA"
    " PRIVATE KEY-----`",
    # a GitHub Actions expression, a page cursor, a mask, a publishable key, GraphQL types
    "        key: ubuntu-latest-node-${{ hashFiles('package-lock.json') }}",
    '{"items": [], "nextPageToken": "n0PppnXXC5Er4d7nSDtRjqZK"}',
    'Parameters: {"user"=>{"password"=>"[FILTERED]"}}',
    "STRIPE_PUBLISHABLE_KEY=pk_live_vBvhiN8B0go6f07MKrWHcFFU",
    "type User {\n  password: String!\n  token: String\n}",
    "const token = req.headers.authorization?.split(' ')[1];",
    # a go.sum line, a Django migration's dependency, 40 x's under the AWS name
    "github.com/acme/widget v1.4.0 h1:6MuH8zLipAQTax+xpczV406B9BxEyysYxG4jzavw3lw=",
    "    dependencies = [('authtoken', '0003_tokenproxy')]",
    "AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    # references in a Kubernetes env list, a shadow line, the fields' names in a .pgpass
    "  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n",
    "daemon:*:17000:0:99999:7:::",
    "tool login --token $DEPLOY_TOKEN",
    # a package's version range, minified script, a CSS rule, an unpacked argument
    '    "requires": {\n      "minipass": "^2.2.1"\n    }',
    "authorizePassword=i=>s=>{let{authActions:u}=s,{schema:m,name:v}=i;return u}",
    "{onChangeKey:u}=this.props;s(u,i)",
    '"use-credentials"===e.crossOrigin?t.credentials="include":"anonymous"',
    '.fa-key:before{content:"\\f084"}.fa-user-secret:before{content:"\\f21b"}',
    "        token = expect(*LITERAL_TOKENS, TokenKind.LEFT_BRACKET)",
    'h(_,null,h("label",null,"Password:"),s?h("code",null," ******"):null)',
    # prose around "login ... password", a URL template, the next name in a list
    'msgid "Enter your login and password below"',
    'URL_TOKEN = "realms/{realm-name}/protocol/openid-connect/token"',
    'h("input",{type:"password","data-name":"password"})',
    '"HTTPAUTH_USER": "someuser",\n"HTTPAUTH_PASS": "somepass",',
    "        auth: OneLogin_Saml2_Auth,\n        credentials: OAuth2PasswordRequestForm,",
    'token_instance: "AbstractAccessToken | AbstractRefreshToken"',
    "        ('password', 'Resource owner password-based'),",
    # a lifetime under a token's name, a template's closing tag read as a value, the alphabet
    '    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=5),',
    '<p>{% translate "TOTP Secret:" %} <a href="{{ otpauth_url }}">',
    'SECRET_KEY = "ABCDEFGHIJKLMNOPQRSTUVWXYZ1234567890"',
]


@pytest.mark.parametrize("text", CLEAN)
def test_round7_application_code_yields_no_finding(scanner: Scanner, text: str) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == []


FOUND = [
    # a generated password of letters only is no variable name
    ("machine ftp.corp.test login deploy password TtdDyJXzUUbUZZsTWNW",
     "secret.password_assignment", "TtdDyJXzUUbUZZsTWNW"),
    ("mysql -h db.internal -u app -pBggGvhSiQCNw orders", "secret.password_assignment",
     "BggGvhSiQCNw"),
    # prose, chat and credential pairs
    ("the password for the staging admin account is Kestrel_77x - change it",
     "secret.prose_password_unquoted", "Kestrel_77x"),
    ("pw is Lantern.1983$ (same as before)", "secret.prose_password_unquoted", "Lantern.1983$"),
    ("creds for the test box: deploy / Tr0ub4dor-3x", "secret.prose_credential_pair",
     "Tr0ub4dor-3x"),
    # carriers: a Kubernetes env list, an ECS definition, a .pgpass line, a login call, CLI
    ("        env:\n        - name: ADMIN_PASSWORD\n          value: \"Glacier.2027#\"\n",
     "secret.env_list_password", "Glacier.2027#"),
    ('{"name": "DB_PASSWORD", "value": "h7Kq2Lm9xP"}', "secret.env_list_password", "h7Kq2Lm9xP"),
    ("db-2.corp.internal:5432:app:deploy:y4ZLJX2htCp58Fu6J", "secret.pgpass_entry",
     "y4ZLJX2htCp58Fu6J"),
    ('smtp.login("ops@corp-mail.net", "Kestrel_1987$")', "secret.basic_auth_pair",
     "Kestrel_1987$"),
    ("docker login -u deploy -p tw1wMObh0NLpnJp registry.corp.net",
     "secret.registry_login_password", "tw1wMObh0NLpnJp"),
    ("deploy-cli login --token 0WHfZDbApkeq5satxwoY6VaOWjQbB0LlMjaW", "secret.cli_token_flag",
     "0WHfZDbApkeq5satxwoY6VaOWjQbB0LlMjaW"),
    ('ht.set_password("someuser", "Zr4kT9mQ2x")', "secret.password_assignment", "Zr4kT9mQ2x"),
    # phone numbers grouped as their country groups them, after "contact"
    ("Please call me back at +49 30 61397283 after 3pm.", "pii.phone", "+49 30 61397283"),
    ("text me on +91 92123 50620 when you arrive", "pii.phone", "+91 92123 50620"),
    ("Contact: Ana Silva (07486 776476)", "pii.phone", "07486 776476"),
    # a full PEM key joined from string literals is still a key
    ('"-----BEGIN PRIVATE KEY-----" +\n"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" +\n'
     '"-----END PRIVATE KEY-----"', "secret.private_key", None),
    # two words with the field's name may be the password; a value two switches of case is too
    ("<Password>fancy password</Password>", "secret.password_assignment", "fancy password"),
    ("IRC_PASS=irc_pass", "secret.env_file_password", "irc_pass"),
    # counted hex digits stay findings where they stand (only the whole alphabet is a filler)
    ('api_key = "1234567890abcdef1234567890abcdef"', "secret.generic_secret",
     "1234567890abcdef1234567890abcdef"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "code", "value"), FOUND)
def test_round7_secrets_are_found(
    scanner: Scanner, text: str, code: str, value: str | None
) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    if value is None:
        assert code in [c for c, _ in found]
    else:
        assert (code, value) in found


@pytest.mark.parametrize(
    ("value", "reference"),
    [("newPassword", True), ("PyLong_FromSsize_t", True), ("getHTTPResponse", True),
     ("xNewValue", True), ("TtdDyJXzUUbUZZsTWNW", False), ("JiQCHwpYeVFEVzmnT", False),
     ("pwd+salt", True), ("zf2HfhiVftjgScfnxxAZvySpn5o-b9uUXOnp_U-KlUQu7h", False)],
)  # fmt: skip
def test_unquoted_names_and_random_letters(value: str, reference: bool) -> None:
    """An unquoted value of words is code; letters whose case flips as often as a random
    string's, or pieces with digits inside, are a value."""
    assert looks_like_code_reference(value, quoted=False) is reference


def test_names_itself() -> None:
    assert names_itself('PASSKEYS = "passkeys"', "passkeys")
    assert names_itself("self.auth_password = auth_password", "auth_password")
    assert not names_itself("IRC_PASS=irc_pass", "irc_pass", exact=True)
    assert not names_itself('PASSWORD = "Kestrel_77x"', "Kestrel_77x")


def test_pem_key_body() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
    assert pem_key_body(f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----")
    assert pem_key_body(f"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----")
    assert not pem_key_body("-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----")
    assert not pem_key_body("-----BEGIN RSA PRIVATE KEY----- MIIEpQ…uyf. -----END RSA")
    assert pem_key_body("-----BEGIN RSA PRIVATE KEY-----\nMIIEow")  # no END: not judged here
