"""Issue 17, round 15 (an outside snippet set's causes, fourth session): personal data read in
its context (fiction phone numbers however dialled, digits a header or label names otherwise,
role and service addresses, a public key's comment), references and templates that are no
values (a detect-secrets baseline's hashes, Ruby constant paths, Jinja/Helm expressions with
filters, a placeholder key file, field words as a value), and the recall gaps (Go MySQL DSNs,
basic-auth headers set by a web server, typed constants, tool password options, configuration
keys that hold a password without saying so). Each quiet case has a real value in the same
place that is still found."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.context import key_comment, named_otherwise, not_run_on
from domestique.detect.reserved import fictional_phone, non_personal_email
from domestique.detect.validators import not_field_words

_FLAG = ("secret.", "pii.")

QUIET = [
    # 1. numbers reserved for fiction (NXX 555), also dialled with +1 and no area code, or 001
    "Call us at (415) 555-0142 for help",
    "Mary: 555-0187",
    "Phone: +1 555-0142",
    "mobile: 001 415 555 0199",
    # 2. digits in a column, after a label or under a comment that names them otherwise
    "name,order_number,total\nAna,207-348-2948,12.00\nBo,617-349-2240,3.50\n",
    "sku\tqty\twarehouse\n207-348-2948\t3\tB\n",
    "| invoice_id | amount |\n|---|---|\n| 207-348-2948 | 10.00 |\n",
    "tracking_number: 207-348-2948\n",
    "# tracking numbers\n207-348-2948\n",
    "Order #207-348-2948 shipped today",
    "id 415-863-0132-77 in the log",
    # 3. role and service mailboxes, service identities, a public key's comment
    "Report vulnerabilities to security@orchard-farms.com.",
    "git remote add origin git@github.com:orchard/app.git",
    "Questions? support@orchard-farms.com or admin@orchard-farms.com",
    "From: deploy@orchard-farms.com (ci@orchard-farms.com)",
    '"client_email": "ci-runner@orchard-prod-42.iam.gserviceaccount.com"',
    "member: serviceAccount:gh-actions@orchard-prod.iam.gserviceaccount.com",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGfq3mR8vT2kLw9xN4bP7sY1cH6jD0eZ5aQ2uV8nM3oK "
    "maria.lopez@orchard-farms.com\n",
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: Maria Lopez <maria.lopez@orchard-farms.com>\n",
    # 4. a detect-secrets baseline: the hex is a SHA-1 of a secret
    '{"type": "Secret Keyword", "filename": "app.py", '
    '"hashed_secret": "5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8", "is_verified": false}',
    'token_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    # 5. references: a Ruby constant path and call, lookups in other languages
    "  credentials: Aws::Credentials.new(\n    Rails.application.credentials.dig(:aws, :key)\n",
    "secret = Rails.application.credentials.dig(:aws, :secret_access_key)",
    'api_key = ENV.fetch("STRIPE_API_KEY")',
    "token = Config::Secrets.load_token",
    'secret_key = config.get("secret")',
    'api_token = Secret.from_env("API_TOKEN")',
    # 6. a template expression with filters and lookups
    "login_password: \"{{ lookup('env', 'PGPASS') }}\"",
    "api_key: \"{{ api_key | default('') }}\"",
    "password: {{ .Values.db.password | quote }}",
    'secret_token: "{% raw %}{{ token }}{% endraw %}"',
    "secret_key_base: <%= ENV.fetch('SECRET_KEY_BASE') %>",
    # 7. a service-account key file whose key id and key are placeholders
    '{"type": "service_account", "project_id": "p", "private_key_id": "<key-id>", '
    '"private_key": "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"}',
    # 8. form data in API docs: the field's own words with filler digits
    'curl https://api.acme.io/v1/hooks \\\n  -H "Authorization: Bearer YOUR_API_TOKEN" \\\n'
    "  -d url=https://hooks.acme.io/orders \\\n  -d secret=mywebhooksecret1 \\\n"
    "  -d token=token12345678 \\\n  -d events[]=order.created\n",
    # 11. a type annotation with no value
    "password: str = None",
    "let key: String = String::new();",
    # 12, 13: the options and keys with references
    "vsql -h db -U dbadmin -w $VSQL_PASSWORD",
    "keytool -list -keystore k.jks -storepass ${STORE_PASS}",
    "requirepass ${REDIS_PASSWORD}",
    "ldap_default_authtok_type = password",
    # 9: a DSN built from variables
    'dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s", user, pass, host, name)',
]

FOUND = [
    # 1, 2: a real number nearby, under a phone header, after a phone label
    ("Call us at (415) 863-0142 for help", "pii.phone"),
    ("Phone: +1 415 863 0142", "pii.phone"),
    ("name,phone,city\nAna,207-348-2948,Boston\n", "pii.phone"),
    ("customer,order_number,phone\nAna Silva,207-348-2948,(617) 349-2240\n", "pii.phone"),
    ("id,mobile\n1,207.348.2948\n", "pii.phone"),
    ("phone_number: 207-348-2948\n", "pii.phone"),
    # 3: a person's address in a customer record, with a role word in the domain
    ("customer: maria.lopez@orchard-farms.com, tier gold", "pii.email"),
    ("Contact maria.lopez@support-desk.io for the refund", "pii.email"),
    ("ssh-ed25519 key owner is maria.lopez@orchard-farms.com", "pii.email"),
    # 4: a secret under a name that is no hash
    ('"api_secret": "Zq8vR2pLm7Wn4tY6kJs9Hb3x"', "secret.generic_secret"),
    # 5: a literal beside the same names
    ('secret = "Zq8vR2pLm7Wn4tY6kJs9Hb3x"', "secret.generic_secret"),
    # 6: a literal after a template
    ("login_password: \"{{ lookup('env', 'PGPASS') }}\"\nadmin_password: \"Qz8vR2pLm7\"",
     "secret.password_assignment"),
    # 7: a key file with key material
    (
        '{"type": "service_account", "private_key_id": '
        '"07f80e222f828767efc2f91624a8940f1f836f99"}',
        "secret.gcp_service_account",
    ),
    # 8: a generated value in the same form data
    ("curl https://api.acme.io/v1/hooks -d secret=Zq8vR2pLm7Wn4tY6kJs9", "secret.generic_secret"),
    # 9
    ('const dsn = "app:Hq7vLx2mPz@tcp(db.internal:3306)/orders?parseTime=true"',
     "secret.go_mysql_dsn"),
    ('sql.Open("mysql", "root:Wn4tY6kJs9@unix(/var/run/mysqld/mysqld.sock)/app")',
     "secret.go_mysql_dsn"),
    # 10
    ('proxy_set_header Authorization "Basic ZGVwbG95OlF6OHZSMnBMbTc=";', "secret.http_basic_auth"),
    ('RequestHeader set Authorization "Basic ZGVwbG95OlF6OHZSMnBMbTc="', "secret.http_basic_auth"),
    ('http-request set-header Authorization "Basic ZGVwbG95OlF6OHZSMnBMbTc="',
     "secret.http_basic_auth"),
    # 11
    ('const WEATHER_API_KEY: &str = "q8XvL2mR7tK9pW3zN5cY1bH6";', "secret.generic_secret"),
    ('const apiKey: string = "q8XvL2mR7tK9pW3zN5cY1bH6";', "secret.generic_secret"),
    ('val apiKey: String = "q8XvL2mR7tK9pW3zN5cY1bH6"', "secret.generic_secret"),
    ('var apiKey string = "q8XvL2mR7tK9pW3zN5cY1bH6"', "secret.generic_secret"),
    ('let apiKey: String = "q8XvL2mR7tK9pW3zN5cY1bH6"', "secret.generic_secret"),
    ('static DB_PASSWORD: &str = "Qz8vR2pLm7";', "secret.password_assignment"),
    # 12
    ("vsql -h db -U dbadmin -w Qz8vR2pLm7 -c 'select 1'", "secret.tool_password_option"),
    ("keytool -importkeystore -srcstorepass Qz8vR2pLm7 -deststorepass Wn4tY6kJs9",
     "secret.tool_password_option"),
    ("smbclient //fs01/share -U backup%Qz8vR2pLm7", "secret.cli_password_option"),
    # -w and pass: are found by the command-line password rule of the other round-8 branch
    ("ldapsearch -x -D cn=admin,dc=corp -w Qz8vR2pLm7 -b dc=corp", "secret.cli_password_option"),
    ("openssl rsa -in key.pem -passin pass:Wn4tY6kJs9 -out plain.pem",
     "secret.cli_password_option"),
    # 13
    ("ldap_default_authtok = Qz8vR2pLm7", "secret.config_password_key"),
    ("bindpw Qz8vR2pLm7", "secret.config_password_key"),
    ("rootpw Qz8vR2pLm7", "secret.config_password_key"),
    ("vrrp_instance VI_1 {\n  authentication {\n    auth_pass Qz8vR2pL\n  }\n}",
     "secret.config_password_key"),
    ("masterauth Kettle-Drum42", "secret.config_password_key"),
    ("requirepass Qz8vR2pLm7", "secret.config_password_key"),
]  # fmt: skip


@pytest.mark.parametrize("text", QUIET)
def test_the_false_shape_is_not_reported(scanner: Scanner, text: str) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert [x for x in found if x[0].startswith(_FLAG)] == []


@pytest.mark.parametrize(("text", "code"), FOUND)
def test_a_real_value_nearby_is_found(scanner: Scanner, text: str, code: str) -> None:
    assert code in {f.code for f in scanner.scan(text)}


@pytest.mark.parametrize(
    ("value", "fiction"),
    [("(415) 555-0142", True), ("+1 555-0142", True), ("001 415 555 0199", True),
     ("011 1 415 555 0100", True), ("+1 415 863 0142", False), ("001 415 863 0142", False),
     ("+44 20 7946 0958", True), ("+49 30 5550142", False)],
)  # fmt: skip
def test_fictional_phone_however_dialled(value: str, fiction: bool) -> None:
    assert fictional_phone(value) is fiction


@pytest.mark.parametrize(
    ("address", "personal"),
    [("security@orchard.com", False), ("git@github.com", False), ("noreply@x.io", False),
     ("svc@p.iam.gserviceaccount.com", False), ("it-support@orchard.com", False),
     ("maria.lopez@orchard.com", True), ("support.maria@orchard.com", True),
     ("maria@support.orchard.com", True)],
)  # fmt: skip
def test_role_addresses(address: str, personal: bool) -> None:
    assert non_personal_email(address) is not personal


def test_context_filters_read_their_own_line() -> None:
    t = "order_id,phone\n207-348-2948,617-349-2240\n"
    first, second = t.index("207"), t.index("617")
    assert named_otherwise(t, first, first + 12) is True
    assert named_otherwise(t, second, second + 12) is False
    assert named_otherwise("207-348-2948", 0, 12) is False  # nothing names it: a finding
    assert not_run_on("415-863-0132-77", 0, 12) is True
    assert not_run_on("415-863-0132.", 0, 12) is False
    line = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 ana@x.io"
    assert key_comment(line, line.index("ana"), len(line)) is True
    assert key_comment("owner ana@x.io", 6, 14) is False


@pytest.mark.parametrize(
    ("value", "passes"),
    [("mysecret123", False), ("token12345678", False), ("x-api-key-value1", False),
     ("mywebhooksecret1", False), ("Zq8vR2pLm7Wn4tY6", True), ("secretary-2024", True),
     ("order_created_v2", True)],
)  # fmt: skip
def test_not_field_words(value: str, passes: bool) -> None:
    assert not_field_words(value) is passes


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("db_user: app\ndb_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  3437\n", False),
        ("db_password: !secret mariadb_password\n", False),
        ("MasterUserPassword: !Ref DbPassword\n", False),
        ('{"id": "wh_1", "secret": "(shown once in the dashboard)"}', False),
        ("db_password: Qz8vR2pLm7!vault\n", True),
        ('{"id": "wh_1", "secret": "whsec_Qz8vR2pLm7Wn4tY6kJs9Hb3xC5dF"}', True),
    ],
)
def test_yaml_tags_and_notes_are_no_values(text: str, found: bool, scanner: Scanner) -> None:
    """A YAML tag names where the value comes from, a parenthesised note of words says where
    it is: neither is the secret (lead, outside set D)."""
    codes = [f.code for f in scanner.scan(text) if f.code.startswith("secret.")]
    assert bool(codes) is found, codes
