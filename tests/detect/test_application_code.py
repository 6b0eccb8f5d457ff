"""Application code, configuration and lock files hold no secret: the shapes that used to be
flagged (issue 17) and the secrets in unusual shapes that used to be missed."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner

# Written here (shapes of ordinary application code: forms, settings, templates, lock files,
# translations, docs that quote famous example values), not copied from any project.
CLEAN = [
    'password1 = forms.CharField(label=_("Password"), strip=False, widget=forms.PasswordInput)',
    'password2 = forms.CharField(label="Password confirmation", widget=forms.PasswordInput())',
    "def connect(host, auth_password=None, auth_user=None):",
    "send_mail(subject, message, from_email, auth_user=user, auth_password=password)",
    'msg = "{model_key} password must be changed: {password_field}".format(model_key=k)',
    'key = "{model_key}.{field_name}"',
    'password = os.environ["DB_PASSWORD"]',
    "DB_PASSWORD: ${{ secrets.DB_PASSWORD }}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "export DB_PASSWORD=$(cat /run/secrets/db_password)",
    'PGPASSWORD="$(cat /run/secrets/pg)" psql -h db',
    (
        '"integrity": "sha512-7o0ZcCx8xC+5sGdK8S0u9yR6b3zT0M1lW8nq9Hq7Jx0LZt4vY'
        '0b2Yb9s6F8cXz2Q1k3cP5Y9b0t7T6nJb3a0Kw==",'
    ),
    'hash = "sha256:4a9b1c7e3f0d2e8b6a5c9d1f3e7b2a4c6d8e0f1a3b5c7d9e2f4a6b8c0d1e3f5a"',
    'checksum = "b7e5c1f0a9d3e2c4b6a8f0e1d3c5b7a9f2e4d6c8b0a1f3e5d7c9b2a4f6e8d0c1"',
    (
        'resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#5'
        'b8a3f0b1c2d4e6f8a0b1c3d5e7f9a2b4c6d8e0f"'
    ),
    'session_id = "3f2b8c1e-9a7d-4e5f-8b6c-1d2e3f4a5b6c"',
    "request_id: 7c9e6679-7425-40de-944b-e07fc1f90ae7",
    'correlation_key = "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"',
    'cache_key = f"{prefix}:{user_id}:{digest}"',
    'github_repo = "pallets/flask-sqlalchemy2"',
    "Built with mapbox-gl-js2 v3.1.2 and sentry 7f3a2c1 commit",
    "twilio account AC_sid is in settings.TWILIO_ACCOUNT_SID",
    "SECRET_KEY = 'development key'",
    "api_key: 'value with quotes and spaces'",
    "Card for tests: 4242 4242 4242 4242, exp 12/34",
    "pay with 4000 0566 5566 5556 or 5555 5555 5555 4444",
    (
        "mail me at jane.doe@example.com or ops@corp.test or a@b.invalid or x@h"
        "ost.example or y@foo.localhost"
    ),
    "From: GitHub <noreply@github.com>, no-reply@accounts.google.com, notifications@github.com",
    "Call (212) 555-0187 or 415-555-0132 or +1 800 555 0199",
    'docker run -v "$PWD":/app -w /app python:3.12 pytest',
    "IBAN DE89 3704 0044 0532 0130 00 and GB82 WEST 1234 5698 7654 32 are examples.",
    'engine = create_engine("postgresql+psycopg2://scott:tiger@localhost/test")',
    'passive_deletes="all"',
    "@pytest.mark.parametrize(('username', 'password', 'message'), (",
    "__slots__ = ('scheme', 'user', 'password', 'host', 'tld')",
    "user: str\\npassword: SecretStr",
    'self.assertEqual(user.check_password("pass word"), True)',
    '<a href="https://github.com/sqlalchemy/sqlalchemy2-stubs">sqlalchemy2-stubs</a>',
    "_id = 'change-031952863e78271a6465312378851202'",
    "spd_str_key = {_column_as_key(key) for key in spd}",
    "via table1.primary_key==table2.primary_key",
    'password = models.CharField(_("password"), max_length=128)',
    "def set_password(self, raw_password):",
    "self.password = make_password(raw_password)",
    '"password_mismatch": _("The two password fields didn’t match."),',
    'msgid "Password"\nmsgstr "Kennwort"',
    'msgid "Password:"\nmsgstr "Mot de passe :"',
    (
        'msgid "Enter the same password as before, for verification."\nmsgstr "G'
        'eben Sie das gleiche Passwort zur Bestätigung ein."'
    ),
    '{% trans "Password" %}',
    (
        'AUTH_PASSWORD_VALIDATORS = [{"NAME": "django.contrib.auth.password_val'
        'idation.UserAttributeSimilarityValidator"}]'
    ),
    (
        'DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "P'
        'ASSWORD": "", "HOST": ""}}'
    ),
    '"PASSWORD": env("DB_PASSWORD"),',
    'key_salt = "django.contrib.auth.tokens.PasswordResetTokenGenerator"',
    'var passwordInput = document.getElementById("id_password");',
    (
        '<input type="password" name="password" autocomplete="current-password"'
        ' required id="id_password">'
    ),
    "password_changed(password, user=None, password_validators=None)",
    (
        'error_messages = {"password_incorrect": _("Your old password was enter'
        'ed incorrectly. Please enter it again.")}'
    ),
    'template_name = "registration/password_reset_form.html"',
    (
        'path("password_change/done/", views.PasswordChangeDoneView.as_view(), '
        'name="password_change_done"),'
    ),
    "token_generator = default_token_generator",
    'CSRF_COOKIE_NAME = "csrftoken"',
    'SESSION_COOKIE_NAME = "sessionid"',
    "secret = settings.SECRET_KEY if secret is None else secret",
    'cache_key = "%s.%s" % (key_prefix, hashlib.md5(url.encode()).hexdigest())',
    'hasher = "pbkdf2_sha256"',
    'self.assertEqual(form.errors["password2"], [str(form.error_messages["password_mismatch"])])',
    'password_hash = make_password("correct horse")',
    "'password': ReadOnlyPasswordHashField(label=_(\"Password\"))",
    'auth_token = request.headers.get("X-Auth-Token")',
    'TOKEN_PATTERN = re.compile(r"^[0-9a-f]{32}$")',
    'api_key = "api_key_" + uuid.uuid4().hex',
    'secret_key_fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", [])',
    'token = "%s-%s" % (ts_b36, hash_string)',
    "ssh_key_fingerprint: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    (
        '"resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz", '
        '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+L'
        'FTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="'
    ),
    (
        'name = "requests"\nversion = "2.32.3"\nsource = { registry = "https://py'
        'pi.org/simple" }\nsdist = { url = "https://files.pythonhosted.org/packa'
        "ges/63/70/2bf7780ad2d390a8d301ad0b550f1581eadbd9a20f896afe06353c2a2913"
        '/requests-2.32.3.tar.gz", hash = "sha256:55365417734eb18255590a9ff9eb9'
        '7e9e1da868d4ccd6402399eaf68af20a760", size = 131218 }'
    ),
    (
        '[[package]]\nname = "serde"\nchecksum = "3fb1c873e1b9b056a4dc4c0c198b24c'
        '3ffa059243875552b2bd0933b1aee4ce2"'
    ),
    (
        '"dependencies": {"@types/node": {"version": "20.11.5", "resolved": "ht'
        'tps://registry.npmjs.org/@types/node/-/node-20.11.5.tgz", "integrity":'
        ' "sha512-g557vgQjUUfN76MZAN/dt1z3dzcUsimuysco0KeluHgrPdJXkP/XdAURgyO2W'
        '9fZWHRtRBiVKzKn8vyOAwlG+w=="}}'
    ),
    # references to a secret kept elsewhere (environment, vaults, CI secrets, YAML tags)
    "password: ${{ secrets.DB_PASSWORD }}",
    "env: { PASSWORD: process.env.DB_PASSWORD }",
    "export PGPASSWORD=$(vault kv get -field=password secret/db)",
    (
        "PGPASSWORD=$(aws secretsmanager get-secret-value --secret-id prod/db"
        " --query SecretString --output text)"
    ),
    'echo "$TOKEN" | docker login ghcr.io -u bot --password-stdin',
    "password: !vault |",
    'password: "{{ vault_db_password }}"',
    "password = var.db_password",
    "password = data.aws_secretsmanager_secret_version.db.secret_string",
    "password: ${DB_PASSWORD:-changeme}",
    "set PASSWORD=%DB_PASSWORD%",
    "$password = $env:DB_PASSWORD",
    "password = ENV['DB_PASSWORD']",
    'String password = System.getenv("DB_PASSWORD");',
    'password := os.Getenv("DB_PASSWORD")',
    'let password = std::env::var("DB_PASSWORD")?;',
    "'password' => config('database.connections.mysql.password'),",
    'const password = Deno.env.get("DB_PASSWORD");',
    "const apiKey = import.meta.env.VITE_API_KEY;",
    'api_key = secrets.get("API_KEY")',
    'token = keyring.get_password("svc", "user")',
    "DB_PASSWORD_FILE=/run/secrets/db_password",
    "password_file: /etc/app/password.txt",
    'password = open("/run/secrets/db").read().strip()',
    'client_secret = credentials["client_secret"]',
    "aws_secret_access_key = session.get_credentials().secret_key",
    "GITHUB_TOKEN: ${{ github.token }}",
    "token: ${{ steps.app-token.outputs.token }}",
    'password = getpass.getpass("Password: ")',
    'password = request.form["password"]',
    '"password": self.cleaned_data.get("password1"),',
    'password = <%= ENV["DB_PASSWORD"] %>',
    "password=${{ env.PW }}",
    "API_KEY=${API_KEY:?API_KEY must be set}",
    # identifiers, public keys and key bindings under key-named fields
    (
        "ssh_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGfq3mR8vT2kLw9xN4bP7sY1c"
        "H6jD0eZ5aQ2uV8nM3oK deploy@ci"
    ),
    (
        'public_key = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vK2p9mQ3xL8wT5nR'
        '1sY4hJ6dF0cZ2aE8bG3uV7iN9oP deploy"'
    ),
    '{ "key": "ctrl+shift+p", "command": "workbench.action.showCommands" }',
    "git config user.signingkey 3AA5C34371567BD2",
    'signing_key = "3AA5C34371567BD2"',
    "token_hash = hashlib.sha256(token.encode()).hexdigest()",
    '"keywords": ["token", "auth", "oauth2", "jwt"],',
    'primaryKey: "3f2b8c1e-9a7d-4e5f-8b6c-1d2e3f4a5b6c"',
    'dedupe_key: "order-2024-000918-retry-3"',
    'token_type_hint = "refresh_token"',
    'auth_method = "client_secret_basic"',
    "grant_type=authorization_code&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    'state = "af0ifjsldkj"',
    'secret_name = "prod/app/db-credentials-7Fk2Q"',
    "secretRef: { name: db-secret-7f9c2, key: password }",
    'token_url = "https://oauth2.googleapis.com/token"',
    (
        "keyId: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK#z6Mkh"
        "aXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'"
    ),
    '"resourceKey": "0-AbCdEfGhIjKlMnOp"',
    'key = "node_modules/.cache/babel-loader/3f2b8c1e9a7d4e5f8b6c1d2e3f4a5b6c"',
    "itemKey = `${section}-${index}-${item.id}`",
    "key={`row-${rowIndex}-${colIndex}`}",
    "<li key={item.uuid}>",
    'i18nKey="welcome.title.v2"',
    "const ACCESS_TOKEN_TTL = 3600;",
    'OAUTH_REDIRECT_URI = "https://app.local.test/callback"',
    'auth_header = f"Bearer {token}"',
    'authorization = "Bearer " + token',
    'secret_version = "projects/my-proj/secrets/db-pass/versions/3"',
    # documentation idioms: famous example passwords made to pass a complexity policy, URL
    # templates (a placeholder host, placeholder user and password), anti-forgery tokens,
    # resource identifiers beside a service's name
    'engine = create_engine("mssql+pyodbc://scott:tiger^7QQQ@mssql2019:1433/test?driver=ODBC")',
    "CREATE LOGIN scott WITH PASSWORD = 'tiger^7QQQ';",
    "trustStorePassword=changeit",
    "dbtype://username:Kx%2Fq9@hostspec/database",
    'create_engine("mysql+pymysql://some_user:some_pass@some_host/test?charset=utf8mb4")',
    "redis://deploy:Vb7-kettle@your_host:6379/0",
    "MultiHostUrl('https://foo.com:443,foo:bar@bar.com/x')",
    'broker_url = "amqp://myuser:mypassword@localhost:5672/myvhost"',
    'CELERY_BROKER_URL = "amqp://guest:guest@localhost:5672//"',
    "cache = redis://root:root@127.0.0.1:6379/0",
    '<input type="hidden" name="csrfmiddlewaretoken" value="Qw7Er2Ty9Ui4Op1As6Df3Gh8Jk5Lz0Xc">',
    "X-CSRFToken: Qw7Er2Ty9Ui4Op1As6Df3Gh8Jk5Lz0Xc",
    'xsrf_token = "Mn3Bv8Cx1Za6Sd4Fg9Hj2Kl7Qw5Er0Ty"',
    "twilio message SM4c0a7d2e9b1f6a3c8e5d0b7a4f1c9e2d was delivered",
    # words, counting runs and hexspeak in a value's place
    'url = URL("https://ann%40mail.example:a%20secret@api.example.net:8443/x")',
    'assert url.password == "a secret"',
    'url.copy_with(username="ann", password="my password")',
    'URL("https://api.internal/", username="ann", password="123 456")',
    'token = "abcdefghijklmnopqrstuvwxyzABCDEF"',
    "Authorization: Bearer deadbeef12346",
    "rediss://[[username]:[password]]@localhost:6379/0",
    # a service's name as the start of a module path or a type name; string annotations
    "from stripe.events._v1_topup_failed_event import (",
    '"V1PlanUpdatedEventNotification": ("stripe.events._v1_plan_updated_event", False),',
    'def init(host: str, secret_key: "Optional[str]" = None, public_key: "Optional[str]" = None):',
    '    input_tokens_cached: "Optional[int]" = None,',
    # field-name lists, positional format fields, defaults everyone knows, minified code
    'Credential = namedtuple("Credential", ["username", "password", "mechanism_properties"])',
    "userpwd = '{}:{}'.format(user, pw)",
    "{'userid': 'guest', 'password': 'guest', 'port': 5672}",
    "firebird://sysdba:masterkey@db.internal//data/app.fdb",
    'Client(username="user name", password="pass/word")',
    'LOGGER.info(f"setup: {AUTH=} {SSL=} {TEST_ARGS=}")',
    '{key:"_pullDefinitions",value:function(c,l){}}',
    "(w?!e.metaKey||e.ctrlKey:e.metaKey||!e.ctrlKey)",
]


@pytest.mark.parametrize("text", CLEAN)
def test_application_code_yields_no_finding(scanner: Scanner, text: str) -> None:
    """Form fields, parameters, references, record keys, UUIDs, names, lock-file hashes and
    famous example values are not secrets or personal data."""
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == []


FOUND = [
    ("here are the keys AKIAZ7VRSQ5TJN2DOWLM Qx3vN8pL2mR7tY9wK4sJ6hF1dG5bZ0cX8eV2nM7a",
     "secret.aws_secret_access_key_near_id", "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"),
    ('client = Client("AC8f4e2a1c9b3d7e6f5a0c2b4d6e8f1a3c", "3c1a8f6e4d2b0c5a7f9e3d1b6c4a2e8f")',
     "secret.twilio_auth_token", "3c1a8f6e4d2b0c5a7f9e3d1b6c4a2e8f"),
    ('requests.get(url, auth=("deploy", "Tr0ub4dor-3x"))',
     "secret.basic_auth_pair", "Tr0ub4dor-3x"),
    ('headers: { Authorization: `Basic ${btoa("deploy:Tr0ub4dor-3x")}` }',
     "secret.basic_auth_pair", "Tr0ub4dor-3x"),
    ("sshpass -p 'Tr0ub4dor-3x' ssh deploy@host", "secret.sshpass_password", "Tr0ub4dor-3x"),
    ("The password for the admin account is Tr0ub4dor-3x.",
     "secret.prose_password_unquoted", "Tr0ub4dor-3x"),
    ("my number is 415 863 0132, thanks", "pii.phone", "415 863 0132"),
    ("UK mobile: 07911 123456", "pii.phone", "07911 123456"),
    ("Her SSN is 536-90-4399.", "pii.us_ssn", "536-90-4399"),
    ("iban: de75 5121 0800 1245 1261 99", "pii.iban", "de75 5121 0800 1245 1261 99"),
    ("IBAN: NL02-ABNA-0123-4567-89", "pii.iban", "NL02-ABNA-0123-4567-89"),
    ("card 4539 1488 0343 6467 exp 12/29", "pii.credit_card", "4539 1488 0343 6467"),
    ("write to ada@analytical-engines.co.uk", "pii.email", "ada@analytical-engines.co.uk"),
    ("jdbc:oracle:thin:billing/Quill-Orbit7@db7.corp.local:1521/ORCL",
     "secret.jdbc_oracle_password", "Quill-Orbit7"),
    ('ods.setURL("jdbc:oracle:thin:svc/harb@ur42@//db7.corp.local:1521/ledger");',
     "secret.jdbc_oracle_password", "harb@ur42"),
    ("<Password>k3ttle<drum!</Password>", "secret.password_assignment", "k3ttle<drum!"),
    ("apiVersion: v1\nkind: Secret\ndata:\n  token: c3ZjLWJ1aWxkOkh4Ny1mZXJyeQ==\n",
     "secret.kubernetes_secret", "c3ZjLWJ1aWxkOkh4Ny1mZXJyeQ=="),
    # an AWS secret beside its key id: on the next line, before it, after a prompt's name
    ('s3 = S3Client("AKIAZ7VRSQ5TJN2DOWLM",\n    "Qx3vN8pL2mR7tY9wK4sJ6hF1dG5bZ0cX8eV2nM7a")',
     "secret.aws_secret_access_key_near_id", "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"),
    ('"Qx3vN8pL2mR7tY9wK4sJ6hF1dG5bZ0cX8eV2nM7a"  # goes with AKIAZ7VRSQ5TJN2DOWLM',
     "secret.aws_secret_access_key_near_id", "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"),
    ("AWS Secret Access Key [None]: Qx3vN8pL2mR7tY9wK4sJ6hF1dG5bZ0cX8eV2nM7a",
     "secret.aws_secret_access_key", "Qx3vN8pL2mR7tY9wK4sJ6hF1dG5bZ0cX8eV2nM7a"),
    # default accounts on a real host, and a famous word with a one-class suffix, stay findings
    ("mysql://root:root@10.20.3.4:3306/app", "secret.database_url", "root"),
    ("amqp://guest:guest@10.0.3.7:5672//", "secret.database_url", "guest"),
    ("password = 'tiger123'", "secret.password_assignment", "tiger123"),
    ("postgresql://deploy:Tr0ub4dor-3x@db.internal/app", "secret.database_url", "Tr0ub4dor-3x"),
    ('hs = new HubSpotClient("5c2e7a91-3b8d-4f6a-9e1c-7d4b2a8f0e63")', "secret.service_credential",
     "5c2e7a91-3b8d-4f6a-9e1c-7d4b2a8f0e63"),
    ("heroku_key 5c2e7a91-3b8d-4f6a-9e1c-7d4b2a8f0e63 (expires)", "secret.service_credential",
     "5c2e7a91-3b8d-4f6a-9e1c-7d4b2a8f0e63"),
    # where the structure proves the credential, hexspeak is still its value
    ("export BUNDLE_GEMS__PKGS__CORP=cafebabe:deadbeef", "secret.bundler_credentials",
     "cafebabe:deadbeef"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "code", "value"), FOUND)
def test_secrets_in_unusual_shapes_are_found(
    scanner: Scanner, text: str, code: str, value: str
) -> None:
    """Recall gaps closed: each value is found, under its code, exactly over its span."""
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert (code, value) in found


def test_a_real_password_beside_form_code_is_still_found(scanner: Scanner) -> None:
    """The application-code filters drop the field, never a literal assigned next to it."""
    text = 'password = forms.CharField()\nDB_PASSWORD = "Tr0ub4dor-3x"\n'
    assert [text[f.start : f.end] for f in scanner.scan(text)] == ["Tr0ub4dor-3x"]
