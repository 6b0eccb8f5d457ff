# ruff: noqa: E501 - each template is kept on one line, as the carrier file has it
"""Recall and false-flag rate on a generated set of secret-bearing and secret-free items.

    .venv/bin/python bench/eval_generated.py [--seed N] [--per-template K] [--show-misses N]
        [--show-flagged N] [--json OUT] [--dump ITEMS.jsonl]

Every item is written here from a template with seeded randomness, so each run with a new seed
draws fresh tokens, passwords, numbers and names (none copied from a corpus or from the rule
files). Positive templates put one secret or piece of personal data into a realistic carrier:
``.env`` and config files, code in several languages, logs, shell and curl lines, CI files,
chat and prose with phone numbers, SSNs, IBANs (with a valid mod-97 check), cards (valid
Luhn). Negative templates are what such places hold when they hold no secret: environment and
CI references (``os.environ[...]``, ``${{ secrets.X }}``, ``$(cat /run/secrets/x)``),
password-named fields and parameters, lock files with integrity hashes, UUIDs, trace ids,
commit and image digests, public keys, password hashes quoted in review text, identifiers of
services beside their names, placeholders, long identifiers and numbers that are not personal.

* recall: the share of positives where a finding (``secret.*``, ``infra.*`` or ``pii.*``)
  overlaps the planted value;
* flagged: the share of negatives with any finding at all.

Both are reported for all items, for the tune templates and for the held ones, and per tune
template. The first two batches of templates were written before the detector was run on them
and then tuned on (``--seed 17``, issue 17 round 7); the third batch (``h_*``, ``HELD``) was
written after that tuning began, measured before the fixes that followed and never shown
(``--show-*`` skip its items). Other seeds draw unseen values from the same templates.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import string
import sys
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from domestique.detect import Scanner
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
B64 = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"
B64URL = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


@dataclass
class Item:
    template: str
    label: str  # "positive" | "negative"
    text: str
    secret: str = ""  # for positives: the planted value (a finding must overlap it)


class Gen:
    """Random material for the templates."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def hex(self, n: int) -> str:
        return self.s(HEX, n)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))

    def word(self) -> str:
        return self.r.choice(WORDS)

    def name(self) -> str:
        return self.r.choice(FIRST) + " " + self.r.choice(LAST)

    def user(self) -> str:
        return self.r.choice(
            [
                self.r.choice(FIRST).lower(),
                self.r.choice(FIRST).lower() + "." + self.r.choice(LAST).lower(),
                self.r.choice(["svc", "app", "deploy", "ci", "etl", "backup"]) + "_" + self.word(),
            ]
        )

    def host(self) -> str:
        return self.r.choice(
            [
                f"db-{self.r.randint(1, 9)}.{self.word()}.internal",
                f"{self.word()}-prod.c{self.hex(10)}.eu-west-1.rds.amazonaws.com",
                f"10.{self.r.randint(0, 255)}.{self.r.randint(0, 255)}.{self.r.randint(1, 254)}",
                f"{self.word()}.{self.r.choice(DOMAINS)}",
            ]
        )

    def password(self) -> str:
        kind = self.r.randrange(4)
        if kind == 0:  # a generated one
            return self.s(
                string.ascii_letters + string.digits + "!@#%^&*_-+", self.r.randint(12, 24)
            )
        if kind == 1:  # words, digits, a symbol
            w = [self.word().capitalize() for _ in range(self.r.randint(2, 3))]
            return (
                self.r.choice("-_.!").join(w)
                + str(self.r.randint(10, 9999))
                + self.r.choice("!#$%*")
            )
        if kind == 2:  # a human one
            return (
                self.word().capitalize()
                + self.r.choice(["", "_", "."])
                + str(self.r.randint(1970, 2031))
                + self.r.choice(["!", "?", "#", "$", ""])
            )
        return self.s(string.ascii_letters + string.digits, self.r.randint(16, 32))

    # provider formats (from each provider's documented shape)
    def aws_id(self) -> str:
        return self.r.choice(["AKIA", "ASIA"]) + self.s(B32, 16)

    def aws_secret(self) -> str:
        while True:
            v = self.s(B64, 40)
            if any(c.isdigit() for c in v) and any(c.islower() for c in v):
                return v

    def github(self) -> str:
        body = self.s(B62, 30)
        crc = zlib.crc32(body.encode())
        out = ""
        while crc:
            crc, rem = divmod(crc, 62)
            out = B62[rem] + out
        return self.r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + body + out.rjust(6, "0")

    def jwt(self) -> str:
        def enc(obj: object) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

        head = enc({"alg": self.r.choice(["HS256", "RS256"]), "typ": "JWT"})
        body = enc(
            {
                "sub": str(self.r.randint(1, 10**6)),
                "iat": self.r.randint(1_600_000_000, 1_800_000_000),
            }
        )
        return f"{head}.{body}.{self.s(B64URL, 43)}"

    def b64_of(self, raw: str) -> str:
        return base64.b64encode(raw.encode()).decode()

    def iban(self) -> str:
        country, bban = self.r.choice(
            [
                ("DE", self.s(string.digits, 18)),
                ("FR", self.s(string.digits, 23)),
                ("NL", self.s(string.ascii_uppercase, 4) + self.s(string.digits, 10)),
                ("ES", self.s(string.digits, 20)),
                ("GB", self.s(string.ascii_uppercase, 4) + self.s(string.digits, 14)),
                ("IT", self.s(string.ascii_uppercase, 1) + self.s(string.digits, 22)),
                ("BE", self.s(string.digits, 12)),
            ]
        )
        digits = "".join(str(int(c, 36)) for c in bban + country + "00")
        check = 98 - int(digits) % 97
        compact = f"{country}{check:02d}{bban}"
        if self.r.random() < 0.6:
            return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
        return compact

    def card(self) -> str:
        prefix, n = self.r.choice([("4", 16), ("5" + str(self.r.randint(1, 5)), 16), ("37", 15)])
        while True:
            body = prefix + self.s(string.digits, n - len(prefix) - 1)
            if len(set(body[len(prefix) :])) < 4:
                continue
            total = 0
            for i, ch in enumerate(reversed(body)):
                d = int(ch) * 2 if i % 2 == 0 else int(ch)
                total += d - 9 if d > 9 else d
            full = body + str((10 - total % 10) % 10)
            if n == 16 and self.r.random() < 0.6:
                sep = self.r.choice([" ", "-"])
                return sep.join(full[i : i + 4] for i in range(0, 16, 4))
            return full

    def ssn(self) -> str:
        area = self.r.choice([x for x in range(1, 900) if x != 666])
        return f"{area:03d}-{self.r.randint(1, 99):02d}-{self.r.randint(1, 9999):04d}"

    def phone(self) -> str:
        kind = self.r.randrange(4)
        if kind == 0:
            area = self.r.choice([212, 312, 415, 617, 206, 303, 512, 702, 404, 713])
            ex = self.r.choice([x for x in range(201, 999) if x != 555])
            line = self.r.randint(1000, 9999)
            return self.r.choice(
                [f"({area}) {ex}-{line}", f"{area}-{ex}-{line}", f"+1 {area} {ex} {line}"]
            )
        if kind == 1:
            return f"07{self.r.randint(400, 599)} {self.r.randint(100000, 999999)}"
        if kind == 2:
            return f"+49 30 {self.r.randint(1000000, 99999999)}"
        return "+33 6 " + " ".join(f"{self.r.randint(10, 99)}" for _ in range(4))

    def email(self) -> str:
        first, last = self.r.choice(FIRST).lower(), self.r.choice(LAST).lower()
        return f"{first}.{last}@{self.r.choice(DOMAINS)}"


WORDS = [
    "orchid",
    "falcon",
    "granite",
    "harbor",
    "maple",
    "ember",
    "cobalt",
    "willow",
    "summit",
    "lantern",
    "meadow",
    "quartz",
    "river",
    "saffron",
    "thunder",
    "velvet",
    "juniper",
    "nimbus",
    "pepper",
    "copper",
    "tundra",
    "walnut",
    "breeze",
    "atlas",
    "beacon",
    "cedar",
    "delta",
    "echo",
    "fjord",
    "glacier",
    "horizon",
    "island",
    "jasper",
    "kestrel",
    "lotus",
]
FIRST = [
    "Maria",
    "James",
    "Aisha",
    "Chen",
    "Lukas",
    "Sofia",
    "Omar",
    "Priya",
    "Daniel",
    "Elena",
    "Tomasz",
    "Yuki",
    "Grace",
]
LAST = [
    "Garcia",
    "Smith",
    "Okafor",
    "Wang",
    "Muller",
    "Rossi",
    "Haddad",
    "Patel",
    "Novak",
    "Tanaka",
    "Fischer",
    "Silva",
]
DOMAINS = [
    "acme-corp.com",
    "northwind.io",
    "globex.net",
    "initech.co",
    "contoso-mail.com",
    "brightlane.de",
    "tidewater.org",
    "helio-labs.ai",
]

Template = Callable[[Gen], Item]
POSITIVE: dict[str, Template] = {}
NEGATIVE: dict[str, Template] = {}


def pos(fn: Callable[[Gen], tuple[str, str]]) -> Callable[[Gen], tuple[str, str]]:
    POSITIVE[fn.__name__] = lambda g: Item(fn.__name__, "positive", *fn(g))
    return fn


def neg(fn: Callable[[Gen], str]) -> Callable[[Gen], str]:
    NEGATIVE[fn.__name__] = lambda g: Item(fn.__name__, "negative", fn(g))
    return fn


HELD: set[str] = set()  # templates whose items are counted, never shown


def pos_held(fn: Callable[[Gen], tuple[str, str]]) -> Callable[[Gen], tuple[str, str]]:
    HELD.add(fn.__name__)
    return pos(fn)


def neg_held(fn: Callable[[Gen], str]) -> Callable[[Gen], str]:
    HELD.add(fn.__name__)
    return neg(fn)


H4: set[str] = set()  # the fourth batch (issue 17 round 3): reported on its own line


def pos_h4(fn: Callable[[Gen], tuple[str, str]]) -> Callable[[Gen], tuple[str, str]]:
    H4.add(fn.__name__)
    return pos(fn)


def neg_h4(fn: Callable[[Gen], str]) -> Callable[[Gen], str]:
    H4.add(fn.__name__)
    return neg(fn)


# ---------------------------------------------------------------- positives


@pos
def env_file_password(g: Gen) -> tuple[str, str]:
    pw = g.password()
    name = g.r.choice(
        [
            "DB_PASSWORD",
            "POSTGRES_PASSWORD",
            "MYSQL_ROOT_PASSWORD",
            "REDIS_PASSWORD",
            "SMTP_PASSWORD",
            "ADMIN_PASS",
            "RABBITMQ_DEFAULT_PASS",
        ]
    )
    text = (
        f"APP_ENV=production\nDB_HOST={g.host()}\nDB_USER={g.user()}\n{name}={pw}\nLOG_LEVEL=info\n"
    )
    return text, pw


@pos
def yaml_config_password(g: Gen) -> tuple[str, str]:
    pw = g.password()
    q = g.r.choice(['"', "'", ""])
    text = (
        f"database:\n  host: {g.host()}\n  port: 5432\n  username: {g.user()}\n"
        f"  password: {q}{pw}{q}\n  pool_size: 10\n"
    )
    return text, pw


@pos
def json_config_secret(g: Gen) -> tuple[str, str]:
    key = g.s(B62, g.r.randint(32, 48))
    name = g.r.choice(
        ["api_key", "apiKey", "client_secret", "secret_key", "access_token", "auth_token"]
    )
    text = json.dumps(
        {
            "service": g.word(),
            "endpoint": f"https://api.{g.r.choice(DOMAINS)}/v2",
            name: key,
            "timeout": 30,
        },
        indent=2,
    )
    return text, key


@pos
def python_password_literal(g: Gen) -> tuple[str, str]:
    pw = g.password().replace('"', "")
    text = g.r.choice(
        [
            f'conn = psycopg2.connect(host="{g.host()}", user="{g.user()}", password="{pw}", dbname="app")\n',
            f'DATABASES = {{"default": {{"ENGINE": "django.db.backends.postgresql", "NAME": "app", '
            f'"USER": "{g.user()}", "PASSWORD": "{pw}", "HOST": "{g.host()}"}}}}\n',
            f'smtp.login("{g.email()}", "{pw}")\n',
            f'ADMIN_PASSWORD = "{pw}"\n',
        ]
    )
    return text, pw


@pos
def java_properties_password(g: Gen) -> tuple[str, str]:
    pw = g.password()
    text = (
        f"spring.datasource.url=jdbc:postgresql://{g.host()}:5432/orders\n"
        f"spring.datasource.username={g.user()}\nspring.datasource.password={pw}\n"
    )
    return text, pw


@pos
def xml_password(g: Gen) -> tuple[str, str]:
    pw = g.password().replace("<", "").replace("&", "")
    text = g.r.choice(
        [
            f"<server>\n  <id>nexus</id>\n  <username>{g.user()}</username>\n  <password>{pw}</password>\n</server>\n",
            f'<add name="Main" connectionString="Server={g.host()};Database=app;User Id={g.user()};Password={pw};" />\n',
        ]
    )
    return text, pw


@pos
def database_url(g: Gen) -> tuple[str, str]:
    pw = g.s(string.ascii_letters + string.digits, g.r.randint(10, 24))
    scheme = g.r.choice(
        ["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqp", "mssql"]
    )
    text = g.r.choice(
        [
            f"DATABASE_URL={scheme}://{g.user()}:{pw}@{g.host()}:5432/app\n",
            f'engine = create_engine("{scheme}://{g.user()}:{pw}@{g.host()}/app")\n',
            f"  url: {scheme}://{g.user()}:{pw}@{g.host()}/prod\n",
        ]
    )
    return text, pw


@pos
def curl_basic_user(g: Gen) -> tuple[str, str]:
    pw = g.password().replace("'", "")
    text = f"curl -sS -u {g.user()}:'{pw}' https://{g.host()}/api/v1/status\n"
    return text, pw


@pos
def http_basic_header(g: Gen) -> tuple[str, str]:
    cred = g.b64_of(f"{g.user()}:{g.password()}")
    text = g.r.choice(
        [
            f'curl -H "Authorization: Basic {cred}" https://{g.host()}/v1/items\n',
            f"GET /admin HTTP/1.1\nHost: {g.host()}\nAuthorization: Basic {cred}\nAccept: */*\n",
            f'headers = {{"Authorization": "Basic {cred}", "Accept": "application/json"}}\n',
        ]
    )
    return text, cred


@pos
def bearer_in_log(g: Gen) -> tuple[str, str]:
    tok = g.s(B64URL, g.r.randint(32, 64))
    text = (
        f"2025-03-{g.r.randint(10, 28)}T10:{g.r.randint(10, 59)}:07Z DEBUG http.client "
        f"send: b'GET /v2/reports HTTP/1.1\\r\\nHost: api.{g.r.choice(DOMAINS)}\\r\\n"
        f"Authorization: Bearer {tok}\\r\\n'\n"
    )
    return text, tok


@pos
def aws_keys_named(g: Gen) -> tuple[str, str]:
    sec = g.aws_secret()
    text = g.r.choice(
        [
            f"[default]\naws_access_key_id = {g.aws_id()}\naws_secret_access_key = {sec}\nregion = eu-west-1\n",
            f"export AWS_ACCESS_KEY_ID={g.aws_id()}\nexport AWS_SECRET_ACCESS_KEY={sec}\n",
        ]
    )
    return text, sec


@pos
def aws_pair_unnamed(g: Gen) -> tuple[str, str]:
    sec = g.aws_secret()
    kid = g.aws_id()
    text = g.r.choice(
        [
            f'session = boto3.Session("{kid}", "{sec}")\n',
            f"hey, the CI user is {kid} / {sec} until we rotate it\n",
            f"{g.user()},{kid},{sec},2024-11-0{g.r.randint(1, 9)}\n",
            f's3 = S3Client(region="us-east-1", creds=("{kid}", "{sec}"))\n',
        ]
    )
    return text, sec


@pos
def aws_access_key_only(g: Gen) -> tuple[str, str]:
    kid = g.aws_id()
    return f"Using access key {kid} for the backup job\n", kid


@pos
def github_token(g: Gen) -> tuple[str, str]:
    tok = g.github()
    text = g.r.choice(
        [
            f"GITHUB_TOKEN={tok}\n",
            f"git clone https://x-access-token:{tok}@github.com/{g.word()}/{g.word()}.git\n",
            f'gh = Github("{tok}")\n',
        ]
    )
    return text, tok


@pos
def slack_token(g: Gen) -> tuple[str, str]:
    tok = f"xoxb-{g.s(string.digits, 11)}-{g.s(string.digits, 13)}-{g.s(B62, 24)}"
    return f'client = WebClient(token="{tok}")\n', tok


@pos
def slack_webhook(g: Gen) -> tuple[str, str]:
    path = f"T{g.s(string.ascii_uppercase + string.digits, 8)}/B{g.s(string.ascii_uppercase + string.digits, 10)}/{g.s(B62, 24)}"
    url = f"https://hooks.slack.com/services/{path}"
    return f"  - curl -X POST -d @payload.json {url}\n", path


@pos
def stripe_key(g: Gen) -> tuple[str, str]:
    key = g.r.choice(["sk_live_", "rk_live_"]) + g.s(B62, g.r.randint(24, 99))
    return g.r.choice([f"stripe.api_key = '{key}'\n", f"STRIPE_SECRET_KEY={key}\n"]), key


@pos
def google_api_key(g: Gen) -> tuple[str, str]:
    key = "AIza" + g.s(B64URL, 35)
    return f'const firebaseConfig = {{ apiKey: "{key}", projectId: "{g.word()}-app" }};\n', key


@pos
def openai_key(g: Gen) -> tuple[str, str]:
    key = g.r.choice(
        [
            "sk-proj-" + g.s(B64URL, 74) + "T3BlbkFJ" + g.s(B64URL, 74),
            "sk-" + g.s(B62, 20) + "T3BlbkFJ" + g.s(B62, 20),
        ]
    )
    return f"OPENAI_API_KEY={key}\n", key


@pos
def anthropic_key(g: Gen) -> tuple[str, str]:
    key = "sk-ant-api03-" + g.s(B64URL, 93) + "AA"
    return f'client = anthropic.Anthropic(api_key="{key}")\n', key


@pos
def sendgrid_key(g: Gen) -> tuple[str, str]:
    key = f"SG.{g.s(B64URL, 22)}.{g.s(B64URL, 43)}"
    return f"SENDGRID_API_KEY='{key}'\n", key


@pos
def twilio_pair(g: Gen) -> tuple[str, str]:
    sid = "AC" + g.hex(32)
    tok = g.hex(32)
    text = g.r.choice(
        [
            f'client = Client("{sid}", "{tok}")\n',
            f"account_sid = '{sid}'\nauth_token = '{tok}'\n",
            f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}\n",
            f"twilio creds for staging: {sid} {tok}\n",
        ]
    )
    return text, tok


@pos
def jwt_token(g: Gen) -> tuple[str, str]:
    tok = g.jwt()
    return g.r.choice([f"Authorization: Bearer {tok}\n", f'{{"id_token": "{tok}"}}\n']), tok


@pos
def private_key(g: Gen) -> tuple[str, str]:
    kind = g.r.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    body = "\n".join(g.s(B64, 64) for _ in range(g.r.randint(4, 12)))
    if kind == "OPENSSH PRIVATE KEY":
        body = "b3BlbnNzaC1rZXktdjEAAAAA" + body[24:]
    text = f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----\n"
    return text, body[:40]


@pos
def npm_token(g: Gen) -> tuple[str, str]:
    tok = "npm_" + g.s(B62, 36)
    return f"//registry.npmjs.org/:_authToken={tok}\n", tok


@pos
def pypi_token(g: Gen) -> tuple[str, str]:
    tok = "pypi-AgEIcHlwaS5vcmc" + g.s(B64URL, g.r.randint(60, 150))
    return f"[pypi]\n  username = __token__\n  password = {tok}\n", tok


@pos
def datadog_key(g: Gen) -> tuple[str, str]:
    key = g.hex(32)
    return g.r.choice([f"DD_API_KEY={key}\n", f"datadog:\n  apiKey: {key}\n"]), key


@pos
def vault_and_misc_tokens(g: Gen) -> tuple[str, str]:
    tok = g.r.choice(
        [
            "hvs." + g.s(B62, 24),
            "dop_v1_" + g.hex(64),
            "shpat_" + g.hex(32),
            "glpat-" + g.s(B64URL, 20),
            "xoxp-"
            + g.s(string.digits, 12)
            + "-"
            + g.s(string.digits, 12)
            + "-"
            + g.s(string.digits, 13)
            + "-"
            + g.hex(32),
            "key-" + g.hex(32),
        ]
    )
    return g.r.choice([f"TOKEN={tok}\n", f'auth = "{tok}"\n', f"token: {tok}\n"]), tok


@pos
def discord_webhook(g: Gen) -> tuple[str, str]:
    tail = f"{g.s(string.digits, 18)}/{g.s(B64URL, 68)}"
    return f"WEBHOOK=https://discord.com/api/webhooks/{tail}\n", tail


@pos
def telegram_bot(g: Gen) -> tuple[str, str]:
    tok = f"{g.r.randint(10**8, 10**10)}:AA{g.s(B64URL, 33)}"
    return f"bot = telebot.TeleBot('{tok}')\n", tok


@pos
def azure_storage(g: Gen) -> tuple[str, str]:
    key = base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(64))).decode()
    text = (
        f"DefaultEndpointsProtocol=https;AccountName={g.word()}store;AccountKey={key};"
        "EndpointSuffix=core.windows.net\n"
    )
    return text, key


@pos
def generic_secret_named(g: Gen) -> tuple[str, str]:
    val = g.s(B62 + "-_", g.r.randint(24, 48))
    name = g.r.choice(
        [
            "SECRET_KEY",
            "JWT_SECRET",
            "SESSION_SECRET",
            "API_TOKEN",
            "CLIENT_SECRET",
            "WEBHOOK_SECRET",
            "ENCRYPTION_KEY",
            "signing_secret",
        ]
    )
    sep = g.r.choice(["=", ": ", " = "])
    q = g.r.choice(['"', "'", ""])
    return f"{name}{sep}{q}{val}{q}\n", val


@pos
def mysql_cli(g: Gen) -> tuple[str, str]:
    pw = g.s(string.ascii_letters + string.digits, g.r.randint(10, 18))
    text = g.r.choice(
        [
            f"mysql -h {g.host()} -u {g.user()} -p{pw} orders < dump.sql\n",
            f"sshpass -p '{pw}' ssh {g.user()}@{g.host()}\n",
            f"docker login -u {g.user()} -p {pw} registry.{g.r.choice(DOMAINS)}\n",
            f"PGPASSWORD={pw} psql -h {g.host()} -U {g.user()} app\n",
        ]
    )
    return text, pw


@pos
def prose_password(g: Gen) -> tuple[str, str]:
    pw = g.password()
    text = g.r.choice(
        [
            f"Hi {g.r.choice(FIRST)}, the password for the staging admin account is {pw} - please change it after login.\n",
            f"New wifi password: {pw}\n",
            f"I reset your account, your temporary password is `{pw}`.\n",
            f"login: {g.user()}\npassword: {pw}\n",
        ]
    )
    return text, pw


@pos
def pii_phone(g: Gen) -> tuple[str, str]:
    ph = g.phone()
    text = g.r.choice(
        [
            f"Please call me back at {ph} after 3pm.\n",
            f"{g.name()}, mobile {ph}, asked about the invoice.\n",
            f"Contact: {g.name()} ({ph})\n",
            f"You can reach our on-call engineer on {ph}.\n",
        ]
    )
    return text, ph


@pos
def pii_ssn(g: Gen) -> tuple[str, str]:
    ssn = g.ssn()
    text = g.r.choice(
        [
            f"Employee {g.name()}, SSN {ssn}, start date 2024-02-01\n",
            f"my social security number is {ssn} if you need it for the form\n",
            f"name,ssn,dob\n{g.name()},{ssn},1987-04-12\n",
        ]
    )
    return text, ssn


@pos
def pii_iban(g: Gen) -> tuple[str, str]:
    iban = g.iban()
    text = g.r.choice(
        [
            f"Please transfer the deposit to IBAN {iban} ({g.name()}).\n",
            f"Bank details: {iban}, BIC {g.s(string.ascii_uppercase, 6)}2X\n",
            f"refund to {iban} please\n",
        ]
    )
    return text, iban


@pos
def pii_card(g: Gen) -> tuple[str, str]:
    card = g.card()
    text = g.r.choice(
        [
            f"card number {card} exp 0{g.r.randint(1, 9)}/2{g.r.randint(6, 9)} cvv {g.r.randint(100, 999)}\n",
            f"Customer paid with {card}.\n",
        ]
    )
    return text, card


@pos
def pii_email(g: Gen) -> tuple[str, str]:
    em = g.email()
    return f"Forwarding the complaint from {g.name()} <{em}> to support.\n", em


# ---------------------------------------------------------------- negatives


@neg
def ci_yaml_secrets(g: Gen) -> str:
    name = g.r.choice(
        ["DB_PASSWORD", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "DOCKERHUB_TOKEN", "API_KEY"]
    )
    return (
        f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n"
        f"      {name}: ${{{{ secrets.{name} }}}}\n"
        f"      GITHUB_TOKEN: ${{{{ secrets.GITHUB_TOKEN }}}}\n"
        f"    steps:\n      - uses: actions/checkout@v4\n"
        f'      - run: echo "${{{{ secrets.{name} }}}}" | docker login -u {g.user()} --password-stdin\n'
    )


@neg
def shell_secret_refs(g: Gen) -> str:
    return g.r.choice(
        [
            "export DB_PASSWORD=$(cat /run/secrets/db_password)\n",
            f'TOKEN="$(vault kv get -field=token secret/{g.word()})"\n',
            'password="$1"\nmysql -u "$DB_USER" -p"$DB_PASSWORD" -h "$DB_HOST"\n',
            "export GITHUB_TOKEN=${GITHUB_TOKEN:?missing}\n",
            'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com/v1/me\n',
        ]
    )


@neg
def compose_secret_refs(g: Gen) -> str:
    return (
        f"services:\n  db:\n    image: postgres:16\n    environment:\n"
        f"      POSTGRES_USER: {g.user()}\n      POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD}}\n"
        f"      POSTGRES_PASSWORD_FILE: /run/secrets/db_password\n"
        f"    secrets:\n      - db_password\n"
    )


@neg
def python_env_refs(g: Gen) -> str:
    return g.r.choice(
        [
            'password = os.environ["DB_PASSWORD"]\n',
            'api_key = os.getenv("OPENAI_API_KEY")\n',
            "SECRET_KEY = env('DJANGO_SECRET_KEY')\n",
            'token = settings.GITHUB_TOKEN or os.environ.get("GH_TOKEN", "")\n',
            'self.password = kwargs.pop("password", None)\n',
        ]
    )


@neg
def form_fields(g: Gen) -> str:
    return g.r.choice(
        [
            'password1 = forms.CharField(label=_("Password"), strip=False, widget=forms.PasswordInput)\n',
            'password2 = forms.CharField(label=_("Password confirmation"), widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))\n',
            "new_password = serializers.CharField(write_only=True, min_length=8)\n",
            '<input type="password" name="password" id="id_password" autocomplete="current-password">\n',
            'password: str = Field(..., min_length=12, description="The account\'s password")\n',
            "api_key: SecretStr\n",
        ]
    )


@neg
def password_parameters(g: Gen) -> str:
    return g.r.choice(
        [
            "def connect(self, host, port=22, username=None, auth_password=None, key_filename=None):\n",
            "    return self._login(username=username, password=password, token=token)\n",
            "if not check_password(raw_password, user.password):\n    raise AuthenticationFailed()\n",
            "def set_password(self, raw_password):\n    self.password = make_password(raw_password)\n",
            "client.connect(hostname=host, username=user, password=self.password, timeout=10)\n",
            "func Login(ctx context.Context, username, password string) (*Session, error) {\n",
        ]
    )


@neg
def format_strings(g: Gen) -> str:
    return g.r.choice(
        [
            'key = "{model_key}.{field_name}".format(model_key=model_key, field_name=name)\n',
            'cache_key = f"{prefix}:{user_id}:{token_type}"\n',
            'msg = "Invalid password for user %s" % username\n',
            'log.info("rotating secret %s (version %d)", secret_name, version)\n',
            'secret_path = f"secret/data/{env}/{service}"\n',
        ]
    )


@neg
def go_rust_java_refs(g: Gen) -> str:
    return g.r.choice(
        [
            'password := os.Getenv("DB_PASSWORD")\n',
            'cfg.Password = viper.GetString("database.password")\n',
            'let token = std::env::var("GITHUB_TOKEN")?;\n',
            '@Value("${spring.datasource.password}")\nprivate String password;\n',
            'String apiKey = System.getenv("API_KEY");\n',
            "const token = req.headers.authorization?.split(' ')[1];\n",
            "const secret = process.env.JWT_SECRET;\n",
        ]
    )


@neg
def infra_refs(g: Gen) -> str:
    return g.r.choice(
        [
            "  password = var.db_password\n  username = var.db_username\n",
            "  master_password = random_password.db.result\n",
            'ansible_become_password: "{{ vault_become_password }}"\n',
            "        - name: DB_PASSWORD\n          valueFrom:\n            secretKeyRef:\n              name: db-credentials\n              key: password\n",
            "auth:\n  existingSecret: redis-auth\n  existingSecretPasswordKey: redis-password\n",
        ]
    )


@neg
def npm_lock(g: Gen) -> str:
    name = g.word()
    integrity = base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(64))).decode()
    return (
        f'    "node_modules/{name}": {{\n      "version": "{g.r.randint(1, 9)}.{g.r.randint(0, 20)}.{g.r.randint(0, 9)}",\n'
        f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-1.2.3.tgz",\n'
        f'      "integrity": "sha512-{integrity}",\n      "license": "MIT"\n    }},\n'
    )


@neg
def python_lock(g: Gen) -> str:
    name = g.word()
    return g.r.choice(
        [
            f'[[package]]\nname = "{name}"\nversion = "2.1.0"\nfiles = [\n'
            f'    {{file = "{name}-2.1.0-py3-none-any.whl", hash = "sha256:{g.hex(64)}"}},\n'
            f'    {{file = "{name}-2.1.0.tar.gz", hash = "sha256:{g.hex(64)}"}},\n]\n',
            f"{name}==2.1.0 \\\n    --hash=sha256:{g.hex(64)} \\\n    --hash=sha256:{g.hex(64)}\n",
            f'[[package]]\nname = "{name}"\nversion = "0.4.2"\nsource = {{ registry = "https://pypi.org/simple" }}\n'
            f'sdist = {{ url = "https://files.pythonhosted.org/packages/{g.hex(2)}/{g.hex(2)}/{g.hex(60)}/{name}-0.4.2.tar.gz", hash = "sha256:{g.hex(64)}", size = 12345 }}\n',
        ]
    )


@neg
def other_locks(g: Gen) -> str:
    name = g.word()
    h1 = base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(32))).decode()
    return g.r.choice(
        [
            f'[[package]]\nname = "{name}"\nversion = "0.3.7"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{g.hex(64)}"\n',
            f"github.com/{g.word()}/{name} v1.{g.r.randint(0, 9)}.0 h1:{h1}\n",
            f'{name}@^1.2.0:\n  version "1.2.4"\n  resolved "https://registry.yarnpkg.com/{name}/-/{name}-1.2.4.tgz#{g.hex(40)}"\n  integrity sha1-{base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(20))).decode()}\n',
        ]
    )


@neg
def uuids(g: Gen) -> str:
    u = g.uuid()
    return g.r.choice(
        [
            f'{{"id": "{u}", "status": "active", "created_at": "2025-01-0{g.r.randint(1, 9)}T12:00:00Z"}}\n',
            f"request_id={u} method=GET path=/api/orders status=200 duration_ms={g.r.randint(3, 900)}\n",
            f"GET /api/v1/customers/{u}/invoices HTTP/1.1\n",
            f'tenant_id = "{u}"\n',
            f"subscription_id: {u}\nresource_group: rg-{g.word()}\n",
        ]
    )


@neg
def trace_ids(g: Gen) -> str:
    return (
        f"ts=2025-02-1{g.r.randint(0, 9)}T08:15:{g.r.randint(10, 59)}Z level=info trace_id={g.hex(32)} "
        f'span_id={g.hex(16)} msg="request completed" user_id={g.r.randint(1000, 99999)}\n'
    )


@neg
def git_and_digests(g: Gen) -> str:
    return g.r.choice(
        [
            f"commit {g.hex(40)}\nAuthor: CI Bot <ci@example.com>\nDate:   Mon Mar 3 10:12:01 2025 +0000\n",
            f"image: ghcr.io/{g.word()}/{g.word()}@sha256:{g.hex(64)}\n",
            f"{g.hex(64)}  {g.word()}-1.4.2-linux-amd64.tar.gz\n",
            f"Merge pull request #{g.r.randint(100, 9999)} from {g.word()}/fix-{g.word()} ({g.hex(7)})\n",
            f'ETag: "{g.hex(32)}"\n',
            f"- uses: actions/setup-node@{g.hex(40)} # v4.0.2\n",
        ]
    )


@neg
def public_keys(g: Gen) -> str:
    return g.r.choice(
        [
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)} {g.user()}@laptop\n",
            f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{g.s(B64, 300)} deploy@ci\n",
            "-----BEGIN PUBLIC KEY-----\n"
            + "\n".join(g.s(B64, 64) for _ in range(4))
            + "\n-----END PUBLIC KEY-----\n",
            "-----BEGIN CERTIFICATE-----\nMII"
            + g.s(B64, 61)
            + "\n"
            + "\n".join(g.s(B64, 64) for _ in range(6))
            + "\n-----END CERTIFICATE-----\n",
        ]
    )


@neg
def hash_in_review(g: Gen) -> str:
    salt = g.s(B64.replace("+", "."), 22)
    return g.r.choice(
        [
            f"Nit: the fixture stores the bcrypt hash `$2b$12${salt}{g.s(B64.replace('+', '.'), 31)}`, so the test never sees a plain password.\n",
            f"> The seeded admin row has password `pbkdf2_sha256$600000${g.s(B62, 22)}${g.s(B64, 43)}=` - that's the Django hasher output, fine to keep.\n",
            f"We compare against the stored digest ({g.hex(64)}) rather than the password itself.\n",
        ]
    )


@neg
def service_ids(g: Gen) -> str:
    return g.r.choice(
        [
            f'stripe_customer_id = "cus_{g.s(B62, 14)}"\n',
            f"Stripe charge ch_{g.s(B62, 24)} succeeded for order {g.r.randint(10000, 99999)}\n",
            f"Sentry event {g.hex(32)} captured for release {g.hex(12)}\n",
            f"Twilio message SM{g.hex(32)} delivered\n",
            f"slack channel: C0{g.s(string.ascii_uppercase + string.digits, 9)}\n",
            f'"paypal_order_id": "{g.s(string.ascii_uppercase + string.digits, 17)}"\n',
            f"AWS request id: {g.uuid()}\n",
            f"github run {g.r.randint(10**9, 10**10)} attempt 1 (sha {g.hex(40)})\n",
            f"datadog monitor {g.r.randint(10**6, 10**8)} triggered: p99 latency\n",
        ]
    )


@neg
def placeholders(g: Gen) -> str:
    return g.r.choice(
        [
            "STRIPE_SECRET_KEY=sk_live_your_key_here\nSTRIPE_WEBHOOK_SECRET=whsec_...\n",
            "DB_PASSWORD=changeme\nREDIS_PASSWORD=\n",
            "OPENAI_API_KEY=<your-openai-key>\n",
            'api_key = "YOUR_API_KEY"\n',
            "password: ********\n",
            "AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
            "token: REDACTED\n",
        ]
    )


@neg
def long_identifiers(g: Gen) -> str:
    return g.r.choice(
        [
            "class AbstractPasswordResetTokenGeneratorFactoryBean(BaseTokenGenerator):\n",
            "def test_password_reset_token_expires_after_configured_timeout(self):\n",
            f'<script src="/static/js/main.{g.hex(8)}.chunk.js"></script>\n',
            f'<link rel="stylesheet" href="/assets/app-{g.hex(20)}.css">\n',
            "from .validators import UserAttributeSimilarityValidator, CommonPasswordValidator\n",
            "SESSION_COOKIE_NAME = 'sessionid'\nCSRF_COOKIE_NAME = 'csrftoken'\n",
            "migrations.AlterField(model_name='user', name='password', field=models.CharField(max_length=128, verbose_name='password'))\n",
        ]
    )


@neg
def data_urls_and_blobs(g: Gen) -> str:
    return g.r.choice(
        [
            f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{g.s(B64, 120)}=">\n',
            f'"sourcesContent": null, "mappings": "{g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/;,", 120)}"\n',
            f"font: url(data:font/woff2;base64,d09GMgABAAAAA{g.s(B64, 100)}) format('woff2');\n",
        ]
    )


@neg
def prose_numbers(g: Gen) -> str:
    return g.r.choice(
        [
            f"Release 4.{g.r.randint(0, 20)}.{g.r.randint(0, 9)} ships on 2025-0{g.r.randint(1, 9)}-1{g.r.randint(0, 9)}; build {g.r.randint(20240101, 20251231)}.{g.r.randint(1, 9)}.\n",
            f"Order #{g.r.randint(100000, 999999)} was shipped in {g.r.randint(2, 9)} parcels, total ${g.r.randint(10, 999)}.{g.r.randint(10, 99)}.\n",
            f"The job took {g.r.randint(1000, 9999)} ms at timestamp {g.r.randint(1_600_000_000, 1_800_000_000)}.\n",
            f"See issue #{g.r.randint(1000, 99999)} and PR #{g.r.randint(1000, 99999)} for the discussion.\n",
            f"Listening on 0.0.0.0:{g.r.randint(1024, 65535)}, {g.r.randint(2, 64)} workers, pid {g.r.randint(100, 99999)}\n",
            f"ISBN 978-{g.r.randint(0, 1)}-{g.r.randint(100, 999)}-{g.r.randint(10000, 99999)}-{g.r.randint(0, 9)}\n",
            f"Support: call (212) 555-01{g.r.randint(10, 99)} or write to help@example.com.\n",
            f"Memory: {g.r.randint(1000000, 99999999)} bytes in {g.r.randint(100000, 999999)} objects\n",
        ]
    )


@neg
def config_no_secret(g: Gen) -> str:
    return (
        f"server:\n  host: 0.0.0.0\n  port: {g.r.randint(1024, 9999)}\n"
        f"auth:\n  provider: oidc\n  issuer: https://login.{g.r.choice(DOMAINS)}/\n"
        f"  client_id: {g.word()}-web\n  password_min_length: 12\n  token_ttl: 3600\n"
        f"  session_key_prefix: sess\n"
    )


@neg
def docs_prose_auth(g: Gen) -> str:
    return g.r.choice(
        [
            "Set the `Authorization` header to `Bearer <token>`, where the token comes from `/oauth/token`.\n",
            "If the password is wrong three times in a row the account is locked for 15 minutes.\n",
            "The API key is read from the `EXAMPLE_API_KEY` environment variable; never commit it.\n",
            "Rotate the secret with `vault write -f auth/approle/role/ci/secret-id` and restart the job.\n",
            "Passwords must be at least 12 characters and may not match the user name.\n",
        ]
    )


# ---------------------------------------------------------------- more carriers (round 7, second
# batch, written before running them)


@pos
def pgpass_and_credentials_files(g: Gen) -> tuple[str, str]:
    pw = g.s(string.ascii_letters + string.digits, g.r.randint(10, 20))
    text = g.r.choice(
        [
            f"{g.host()}:5432:app:{g.user()}:{pw}\n",
            f"https://{g.user()}:{pw}@git.{g.r.choice(DOMAINS)}\n",
            f"[client]\nuser={g.user()}\npassword={pw}\nhost={g.host()}\n",
            f"machine ftp.{g.r.choice(DOMAINS)} login {g.user()} password {pw}\n",
        ]
    )
    return text, pw


@pos
def code_password_other_languages(g: Gen) -> tuple[str, str]:
    pw = g.password().replace('"', "").replace("'", "").replace("\\", "")
    text = g.r.choice(
        [
            f"define('DB_PASSWORD', '{pw}');\n",
            f"$password = '{pw}';\n",
            f'const dbPassword = "{pw}";\n',
            f'var creds = new NetworkCredential("{g.user()}", "{pw}");\n',
            f'\tPassword: "{pw}",\n',
            f'private static final String PASSWORD = "{pw}";\n',
            f'  config.password = "{pw}"\n',
            f'let db_pass = "{pw}";\n',
        ]
    )
    return text, pw


@pos
def infra_files_password(g: Gen) -> tuple[str, str]:
    pw = g.password().replace('"', "")
    text = g.r.choice(
        [
            f'db_password = "{pw}"\n',
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: {pw}\n",
            f"[web]\n{g.host()} ansible_user={g.user()} ansible_password={pw}\n",
            f'postgresql:\n  auth:\n    username: {g.user()}\n    password: "{pw}"\n',
            f'        env:\n        - name: ADMIN_PASSWORD\n          value: "{pw}"\n',
        ]
    )
    return text, pw


@pos
def chat_credentials(g: Gen) -> tuple[str, str]:
    pw = g.password()
    text = g.r.choice(
        [
            f"creds for the test box: {g.user()} / {pw}\n",
            f"user: {g.user()} pass: {pw}\n",
            f"pw is {pw} (same as last time)\n",
            f"my password is {pw}, can you check why login fails?\n",
            f"Username: {g.user()}\nPassword: {pw}\n",
        ]
    )
    return text, pw


@pos
def token_in_url_or_cli(g: Gen) -> tuple[str, str]:
    tok = g.s(B62, g.r.randint(32, 40))
    text = g.r.choice(
        [
            f"https://api.{g.r.choice(DOMAINS)}/v1/export?api_key={tok}&format=csv\n",
            f"GET /hooks/notify?token={tok} HTTP/1.1\n",
            f"deploy-cli login --token {tok}\n",
            f'curl -H "X-API-Key: {tok}" https://api.{g.r.choice(DOMAINS)}/v3/items\n',
            f"helm install app ./chart --set auth.apiKey={tok}\n",
        ]
    )
    return text, tok


@pos
def pii_ssn_shapes(g: Gen) -> tuple[str, str]:
    ssn = g.ssn()
    shown = g.r.choice([ssn, ssn.replace("-", " "), ssn.replace("-", "")])
    text = g.r.choice(
        [
            f"Applicant SSN: {shown}\n",
            f"SSN {shown} on file for {g.name()}\n",
            f"The W-2 lists social security no. {shown}.\n",
        ]
    )
    return text, shown


@pos
def pii_phone_shapes(g: Gen) -> tuple[str, str]:
    ph = g.r.choice(
        [
            f"+44 20 {g.r.randint(3000, 8999)} {g.r.randint(1000, 9999)}",
            f"+1-{g.r.choice([646, 718, 917, 213, 310])}-{g.r.randint(201, 549)}-{g.r.randint(1000, 9999)}",
            f"0{g.r.randint(151, 179)} {g.r.randint(1000000, 9999999)}",
            f"+61 4{g.r.randint(10, 99)} {g.r.randint(100, 999)} {g.r.randint(100, 999)}",
            f"+91 {g.r.randint(70000, 99999)} {g.r.randint(10000, 99999)}",
        ]
    )
    text = g.r.choice(
        [
            f"phone: {ph}\n",
            f"Tel. {ph}\n",
            f"{g.name()} - {ph}\n",
            f"text me on {ph} when you arrive\n",
        ]
    )
    return text, ph


@pos
def pii_iban_shapes(g: Gen) -> tuple[str, str]:
    iban = g.iban()
    shown = g.r.choice([iban, iban.lower(), iban.replace(" ", "")])
    text = g.r.choice(
        [f"IBAN: {shown}\n", f"account {shown} ({g.name()})\n", f'"iban": "{shown}",\n']
    )
    return text, shown


@neg
def i18n_messages(g: Gen) -> str:
    return g.r.choice(
        [
            '  "password_placeholder": "Enter your password",\n',
            '  "passwordTooShort": "Password must be at least 8 characters",\n',
            '  "auth.token.expired": "Your session has expired, please sign in again",\n',
            'msgid "Password confirmation"\nmsgstr "Confirmation du mot de passe"\n',
            "password_reset_subject = Reset your password\n",
            '  "api_key_label": "API key",\n',
        ]
    )


@neg
def schemas_and_types(g: Gen) -> str:
    return g.r.choice(
        [
            "        password:\n          type: string\n          format: password\n          minLength: 8\n",
            '  "password": {"type": "string", "minLength": 8, "writeOnly": true},\n',
            "  password?: string;\n  apiKey: string | null;\n",
            "  password: String!\n  token: String\n",
            "  password_hash VARCHAR(255) NOT NULL,\n  api_token CHAR(64) UNIQUE,\n",
            "    private String password;\n    public void setPassword(String password) { this.password = password; }\n",
            "    public string Password { get; set; }\n",
            "  password String\n  resetToken String? @unique\n",
        ]
    )


@neg
def docstrings(g: Gen) -> str:
    return g.r.choice(
        [
            "    :param password: The password to authenticate with.\n    :param token: An API token.\n",
            "        password (str): The user's password. Never logged.\n",
            "    Args:\n        api_key: the key from the dashboard (Settings > API).\n",
            "   * @param {string} password - plain text, hashed before storage\n",
            "# secret_key: used to sign session cookies; set it in the environment\n",
        ]
    )


@neg
def redacted_logs(g: Gen) -> str:
    return g.r.choice(
        [
            f"POST /login user={g.user()} password=[FILTERED] status=302\n",
            'Parameters: {"user"=>{"email"=>"[FILTERED]", "password"=>"[FILTERED]"}}\n',
            f"connecting to postgres://{g.user()}:***@{g.host()}:5432/app\n",
            "token=<redacted> expires_in=3600 scope=read\n",
            f"Login failed for user '{g.user()}': password authentication failed\n",
            "config.filter_parameters += [:password, :token, :secret]\n",
        ]
    )


@neg
def pagination_and_nonces(g: Gen) -> str:
    return g.r.choice(
        [
            f'{{"items": [], "nextPageToken": "{g.s(B64URL, 24)}"}}\n',
            f'  "cursor": "{base64.b64encode(json.dumps({"id": g.r.randint(1, 10**6)}).encode()).decode()}",\n',
            f'<script nonce="{g.s(B64, 22)}==">\n',
            f'<script src="https://cdn.jsdelivr.net/npm/{g.word()}@3/dist/x.min.js" integrity="sha384-{g.s(B64, 64)}" crossorigin="anonymous"></script>\n',
            f'  "kid": "{g.s(B64URL, 43)}",\n  "kty": "RSA",\n',
            f"Host key fingerprint is SHA256:{g.s(B64, 43)}\n",
            f'  "checksum": "{g.hex(40)}",\n  "size": {g.r.randint(1000, 99999)}\n',
        ]
    )


@neg
def public_client_values(g: Gen) -> str:
    return g.r.choice(
        [
            f"STRIPE_PUBLISHABLE_KEY=pk_live_{g.s(B62, 24)}\n",
            f"GA_MEASUREMENT_ID=G-{g.s(string.ascii_uppercase + string.digits, 10)}\n",
            f'  "sentry_release": "{g.word()}@{g.hex(12)}",\n',
            f"SENTRY_DSN_PUBLIC_PROJECT_ID={g.r.randint(100000, 9999999)}\n",
            f"AWS_REGION=eu-west-1\nAWS_DEFAULT_OUTPUT=json\nAWS_PROFILE={g.word()}\n",
        ]
    )


@neg
def keys_that_are_not_secret(g: Gen) -> str:
    return g.r.choice(
        [
            "    id = models.AutoField(primary_key=True)\n",
            f"    sort_key = '{g.word()}#{g.r.randint(1, 999)}'\n",
            "keybindings:\n  - key: ctrl+shift+p\n    command: palette\n",
            f'  s3_key = f"uploads/{{user_id}}/{g.word()}.csv"\n',
            f'    partition_key = "{g.word()}-{g.r.randint(1, 64)}"\n',
            "KEY_UP = 38\nKEY_DOWN = 40\n",
            f'translation_key = "errors.{g.word()}.not_found"\n',
        ]
    )


# ---------------------------------------------------------------- fourth batch (tune): more
# secret-free carriers, written after the held batch was measured


@neg
def n4_ci_and_build_files(g: Gen) -> str:
    return g.r.choice(
        [
            "  - name: Publish\n    env:\n      TWINE_USERNAME: __token__\n      TWINE_PASSWORD: ${{ secrets.PYPI_API_TOKEN }}\n    run: twine upload dist/*\n",
            "      - uses: docker/login-action@v3\n        with:\n          username: ${{ github.actor }}\n          password: ${{ secrets.GITHUB_TOKEN }}\n",
            "deploy:\n  script:\n    - helm upgrade app ./chart --set image.tag=$CI_COMMIT_SHA --set auth.existingSecret=app-auth\n",
            "ENV PIP_INDEX_URL=https://pypi.org/simple\nARG GIT_SHA\nLABEL org.opencontainers.image.revision=$GIT_SHA\n",
        ]
    )


@neg
def n4_app_settings(g: Gen) -> str:
    return g.r.choice(
        [
            "AUTH_PASSWORD_VALIDATORS = [\n    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'},\n]\n",
            'PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]\nSESSION_COOKIE_SECURE = True\n',
            "JWT_ALGORITHM = 'RS256'\nJWT_ACCESS_TOKEN_EXPIRES = 900\nJWT_TOKEN_LOCATION = ['headers', 'cookies']\n",
            f"OAUTH2_PROVIDER = {{'ACCESS_TOKEN_EXPIRE_SECONDS': {g.r.randint(300, 86400)}, 'ROTATE_REFRESH_TOKEN': True}}\n",
            "spring.security.oauth2.client.registration.github.client-id=${GITHUB_CLIENT_ID}\nspring.security.oauth2.client.registration.github.client-secret=${GITHUB_CLIENT_SECRET}\n",
        ]
    )


@neg
def n4_code_auth_logic(g: Gen) -> str:
    return g.r.choice(
        [
            "    token = request.headers.get('Authorization', '').removeprefix('Bearer ')\n",
            "    if not secrets.compare_digest(token, expected_token):\n        raise PermissionDenied\n",
            "    user.set_password(form.cleaned_data['password1'])\n",
            "    api_key = APIKey.objects.get(prefix=prefix, hashed_key=hash_key(raw))\n",
            "const { data: { session } } = await supabase.auth.getSession();\nconst token = session?.access_token;\n",
            'let secret = env::var("JWT_SECRET").expect("JWT_SECRET must be set");\n',
            "    password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())\n",
            "func (c *Client) SetToken(token string) { c.token = token }\n",
        ]
    )


@neg
def n4_tests_and_fixtures(g: Gen) -> str:
    return g.r.choice(
        [
            "    def test_login_rejects_wrong_password(self):\n        resp = self.client.post('/login', {'username': 'u', 'password': ''})\n",
            "    assert response.json()['detail'] == 'Invalid token'\n",
            "    monkeypatch.setenv('API_KEY', 'test')\n",
            "  it('refreshes the access token when it expires', async () => {\n",
        ]
    )


@neg
def n4_logs_ops(g: Gen) -> str:
    return g.r.choice(
        [
            f"{g.r.randint(10, 23)}:{g.r.randint(10, 59)}:01 INFO  auth: token refreshed for user_id={g.r.randint(1, 99999)} expires_in=3600\n",
            f"WARN  vault: lease {g.word()}/creds/app/{g.s(B62, 24)} renewed for 768h\n",
            f"kubectl create secret generic {g.word()}-tls --from-file=tls.crt --from-file=tls.key\n",
            "ssh-keygen -t ed25519 -C deploy@ci -f ~/.ssh/id_ed25519 -N ''\n",
            f"Generated new API key {g.word()}-key (id {g.uuid()}); the secret is shown once in the dashboard.\n",
        ]
    )


@neg
def n4_docs_and_markdown(g: Gen) -> str:
    return g.r.choice(
        [
            "| Variable | Description |\n|---|---|\n| `DATABASE_PASSWORD` | password of the app's database user |\n",
            "1. Copy `.env.example` to `.env` and set `SECRET_KEY` to a long random string.\n",
            "> **Note:** the token is only valid for 24 hours; request a new one with `POST /auth/refresh`.\n",
            "Use `--password-stdin` instead of `-p` so the password does not end up in your shell history.\n",
        ]
    )


@neg
def n4_ids_and_hashes(g: Gen) -> str:
    return g.r.choice(
        [
            f'  "image_digest": "sha256:{g.hex(64)}",\n',
            f'  "x-request-id": "{g.hex(32)}",\n',
            f"Object key: uploads/{g.uuid()}/{g.word()}.png (etag {g.hex(32)})\n",
            f'  "public_key_fingerprint": "SHA256:{g.s(B64, 43)}",\n',
            f'"sessionId": "{g.uuid()}", "traceparent": "00-{g.hex(32)}-{g.hex(16)}-01"\n',
            f'<input type="hidden" name="authenticity_token" value="{g.s(B64, 86)}==">\n',
        ]
    )


# ---------------------------------------------------------------- held-out templates (round 7,
# third batch): written after the first two batches were tuned on and measured before any fix
# that followed; their items are never printed (--show-* skips them), only counted.


@pos_held
def h_terraform_provider(g: Gen) -> tuple[str, str]:
    sec = g.aws_secret()
    text = f'provider "aws" {{\n  region     = "eu-central-1"\n  access_key = "{g.aws_id()}"\n  secret_key = "{sec}"\n}}\n'
    return text, sec


@pos_held
def h_notebook_cell(g: Gen) -> tuple[str, str]:
    key = "sk-proj-" + g.s(B64URL, 48)
    text = f'   "source": [\n    "import openai\\n",\n    "openai.api_key = \\"{key}\\"\\n"\n   ]\n'
    return text, key


@pos_held
def h_dockerfile_env(g: Gen) -> tuple[str, str]:
    tok = g.r.choice(["npm_" + g.s(B62, 36), g.s(B62, 32)])
    name = g.r.choice(["NPM_TOKEN", "API_KEY", "SENTRY_AUTH_TOKEN", "LICENSE_KEY"])
    text = f"FROM node:20-alpine\nWORKDIR /app\nENV {name}={tok}\nRUN npm ci\n"
    return text, tok


@pos_held
def h_appsettings_connection(g: Gen) -> tuple[str, str]:
    pw = g.password().replace('"', "").replace(";", "")
    text = (
        '{\n  "ConnectionStrings": {\n    "DefaultConnection": "Server=tcp:'
        f'{g.word()}.database.windows.net,1433;Initial Catalog=app;User ID={g.user()};Password={pw};Encrypt=True;"\n  }}\n}}\n'
    )
    return text, pw


@pos_held
def h_go_struct(g: Gen) -> tuple[str, str]:
    pw = g.password().replace('"', "").replace("\\", "")
    text = f'cfg := &mysql.Config{{\n\tUser:   "{g.user()}",\n\tPasswd: "{pw}",\n\tNet:    "tcp",\n\tAddr:   "{g.host()}:3306",\n}}\n'
    return text, pw


@pos_held
def h_access_log_password(g: Gen) -> tuple[str, str]:
    pw = g.s(string.ascii_letters + string.digits, g.r.randint(8, 16))
    text = f'10.0.{g.r.randint(0, 255)}.{g.r.randint(1, 254)} - - [12/Mar/2025:10:14:22 +0000] "GET /login?user={g.user()}&password={pw} HTTP/1.1" 302 0\n'
    return text, pw


@pos_held
def h_chat_db_password(g: Gen) -> tuple[str, str]:
    pw = g.password()
    text = g.r.choice(
        [
            f"here's the prod db password: {pw}\n",
            f"FYI root pw on the new box = {pw}\n",
            f"the staging password changed, it's now {pw}\n",
        ]
    )
    return text, pw


@pos_held
def h_proxy_url(g: Gen) -> tuple[str, str]:
    pw = g.s(string.ascii_letters + string.digits, 12)
    text = g.r.choice(
        [
            f"HTTPS_PROXY=http://{g.user()}:{pw}@proxy.{g.r.choice(DOMAINS)}:3128\n",
            f"proxy = http://{g.user()}:{pw}@10.1.2.3:8080\n",
        ]
    )
    return text, pw


@pos_held
def h_provider_formats(g: Gen) -> tuple[str, str]:
    tok = g.r.choice(
        [
            "github_pat_11" + g.s(string.ascii_uppercase + string.digits, 20) + "_" + g.s(B62, 59),
            "GOCSPX-" + g.s(B64URL, 28),
            "hf_" + g.s(string.ascii_letters, 34),
            g.s(B62, 3) + "8Q~" + g.s(B64URL + "~.", 34),
        ]
    )
    name = g.r.choice(["TOKEN", "CLIENT_SECRET", "HF_TOKEN", "AZURE_CLIENT_SECRET"])
    return f"{name}={tok}\n", tok


@pos_held
def h_sentry_dsn(g: Gen) -> tuple[str, str]:
    key = g.hex(32)
    text = f'sentry_sdk.init(dsn="https://{key}@o{g.r.randint(100000, 999999)}.ingest.sentry.io/{g.r.randint(1000000, 9999999)}")\n'
    return text, key


@pos_held
def h_npmrc_auth(g: Gen) -> tuple[str, str]:
    cred = g.b64_of(f"{g.user()}:{g.password()}")
    return f"registry=https://npm.{g.r.choice(DOMAINS)}/\n_auth={cred}\nalways-auth=true\n", cred


@pos_held
def h_pii_mixed(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(4)
    if kind == 0:
        v = g.ssn()
        return f"Patient: {g.name()}, DOB 04/12/1987, SSN {v}\n", v
    if kind == 1:
        v = f"+44 7{g.r.randint(400, 999)} {g.r.randint(100000, 999999)}"
        return f"Driver {g.name()} can be reached at {v}.\n", v
    if kind == 2:
        v = g.card()
        return f'{{"event": "charge.failed", "card_number": "{v}", "amount": 4200}}\n', v
    v = g.iban()
    return f"name;iban;amount\n{g.name()};{v};120.00\n", v


@neg_held
def h_dockerfile_no_secret(g: Gen) -> str:
    return (
        "FROM node:20-alpine\nARG NPM_TOKEN\n"
        "RUN --mount=type=secret,id=npm_token NPM_TOKEN=$(cat /run/secrets/npm_token) npm ci\n"
        'ENV NODE_ENV=production API_KEY=""\n'
    )


@neg_held
def h_terraform_variables(g: Gen) -> str:
    return g.r.choice(
        [
            'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n',
            'resource "aws_db_instance" "main" {\n  username = var.db_user\n  password = data.aws_secretsmanager_secret_version.db.secret_string\n}\n',
            'output "api_token" {\n  value     = module.auth.token\n  sensitive = true\n}\n',
        ]
    )


@neg_held
def h_gitlab_ci(g: Gen) -> str:
    return (
        "build:\n  stage: build\n  script:\n"
        '    - echo "$CI_JOB_TOKEN" | docker login -u gitlab-ci-token --password-stdin $CI_REGISTRY\n'
        "    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHORT_SHA .\n"
    )


@neg_held
def h_k8s_secret_refs(g: Gen) -> str:
    return (
        f"spec:\n  imagePullSecrets:\n    - name: regcred\n  containers:\n    - name: {g.word()}\n"
        f"      envFrom:\n        - secretRef:\n            name: {g.word()}-env\n"
    )


@neg_held
def h_cloud_templates(g: Gen) -> str:
    return g.r.choice(
        [
            "      MasterUserPassword: '{{resolve:secretsmanager:prod/db:SecretString:password}}'\n",
            "      MasterUserPassword: !Ref DBPassword\n",
            "  password: {{ .Values.postgresql.auth.password | b64enc | quote }}\n",
            f'    "tenantId": "{g.uuid()}",\n    "subscriptionId": "{g.uuid()}",\n',
        ]
    )


@neg_held
def h_sql_and_diffs(g: Gen) -> str:
    return g.r.choice(
        [
            "ALTER TABLE users ADD COLUMN password_digest varchar(255) NOT NULL DEFAULT '';\n",
            f"diff --git a/app/auth.py b/app/auth.py\nindex {g.hex(7)}..{g.hex(7)} 100644\n",
            "CREATE INDEX idx_api_tokens_user_id ON api_tokens (user_id);\n",
        ]
    )


@neg_held
def h_lock_hashes(g: Gen) -> str:
    return g.r.choice(
        [
            f"  /{g.word()}@2.3.1:\n    resolution: {{integrity: sha512-{base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(64))).decode()}}}\n",
            f'            "hashes": [\n                "sha256:{g.hex(64)}",\n                "sha256:{g.hex(64)}"\n            ],\n',
            f'{g.word()} = {{ version = "1.2.0", checksum = "{g.hex(64)}" }}\n',
        ]
    )


@neg_held
def h_manifest_public_key(g: Gen) -> str:
    return f'{{\n  "manifest_version": 3,\n  "name": "{g.word()} helper",\n  "key": "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{g.s(B64, 120)}"\n}}\n'


@neg_held
def h_docs_placeholders(g: Gen) -> str:
    return g.r.choice(
        [
            "curl -u <client_id>:<client_secret> -d grant_type=client_credentials https://auth.example.com/token\n",
            "Authorization: Bearer <your-jwt>\n",
            "keytool -genkey -alias tomcat -keystore keystore.jks -storepass:env KS_PASS\n",
            "export OPENAI_API_KEY=sk-...\n",
        ]
    )


@neg_held
def h_web_ids(g: Gen) -> str:
    return g.r.choice(
        [
            f'ETag: W/"{g.hex(8)}-{g.s(B64URL, 27)}"\n',
            f'<meta name="google-site-verification" content="{g.s(B64URL, 43)}" />\n',
            f"Set-Cookie: _ga=GA1.1.{g.r.randint(10**8, 10**9)}.{g.r.randint(1_600_000_000, 1_800_000_000)}; Path=/\n",
            f'"build_id": "{g.hex(40)}", "run_number": {g.r.randint(100, 9999)}\n',
        ]
    )


# ---------------------------------------------------------------- fourth batch (``h4_*``, issue 17
# round 3): written before the detector was run on them; measured once as a held figure before
# any fix of that round, then tuned on. Reported as their own line (``H4``).


def _b64bytes(g: Gen, n: int) -> str:
    return base64.b64encode(bytes(g.r.getrandbits(8) for _ in range(n))).decode()


@pos_h4
def h4_js_config_secret(g: Gen) -> tuple[str, str]:
    val = g.s(B62 + "-_", g.r.randint(28, 48))
    text = g.r.choice(
        [
            f"module.exports = {{\n  port: 8080,\n  jwtSecret: '{val}',\n  expiresIn: '1h',\n}};\n",
            f'const config = {{ clientId: "{g.word()}-web", clientSecret: "{val}", redirectUri: "/cb" }};\n',
            f'export const API_TOKEN = "{val}";\n',
            f"  session: {{ secret: '{val}', resave: false, saveUninitialized: false }},\n",
        ]
    )
    return text, val


@pos_h4
def h4_go_code_secret(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(4)
    if kind == 0:
        v = g.s(B62, 40)
        return (
            f'const apiToken = "{v}"\n\nfunc newClient() *Client {{ return &Client{{token: apiToken}} }}\n',
            v,
        )
    if kind == 1:
        v = f"xoxb-{g.s(string.digits, 12)}-{g.s(string.digits, 13)}-{g.s(B62, 24)}"
        return f'\tapi := slack.New("{v}")\n', v
    if kind == 2:
        v = g.aws_secret()
        return f'\tos.Setenv("AWS_SECRET_ACCESS_KEY", "{v}")\n', v
    v = g.password().replace('"', "").replace("\\", "")
    return (
        f'\tdsn := fmt.Sprintf("host=%s user=%s password=%s dbname=app", host, "{g.user()}", "{v}")\n',
        v,
    )


@pos_h4
def h4_aws_secret_unnamed(g: Gen) -> tuple[str, str]:
    kid, sec = g.aws_id(), g.aws_secret()
    text = g.r.choice(
        [
            f"Access key ID,Secret access key\n{kid},{sec}\n",
            f'AWSCredentials creds = new BasicAWSCredentials("{kid}", "{sec}");\n',
            f'const creds = new AWS.Credentials("{kid}", "{sec}");\n',
            f'\tcreds := credentials.NewStaticCredentials("{kid}", "{sec}", "")\n',
            f"aws configure set aws_access_key_id {kid} && aws configure set aws_secret_access_key {sec}\n",
            f"key {kid}\nsecret {sec}\n",
        ]
    )
    return text, sec


@pos_h4
def h4_aws_iam_output(g: Gen) -> tuple[str, str]:
    sec = g.aws_secret()
    text = (
        '{\n    "AccessKey": {\n        "UserName": "' + g.user() + '",\n'
        f'        "AccessKeyId": "{g.aws_id()}",\n        "Status": "Active",\n'
        f'        "SecretAccessKey": "{sec}",\n        "CreateDate": "2025-04-02T09:12:44+00:00"\n    }}\n}}\n'
    )
    return text, sec


@pos_h4
def h4_twilio_shapes(g: Gen) -> tuple[str, str]:
    sid, tok = "AC" + g.hex(32), g.hex(32)
    text = g.r.choice(
        [
            f"const client = require('twilio')('{sid}', '{tok}');\n",
            f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{tok} --data-urlencode 'Body=hi'\n",
            f"twilio:\n  account_sid: {sid}\n  auth_token: {tok}\n  from: '+1{g.r.randint(2012000000, 9899999999)}'\n",
            f'TwilioClient.Init("{sid}", "{tok}");\n',
            f"client = Client(account_sid, '{tok}')\n",
        ]
    )
    return text, tok


@pos_h4
def h4_basic_auth_shapes(g: Gen) -> tuple[str, str]:
    pw = g.password().replace("'", "").replace('"', "").replace("\\", "")
    kind = g.r.randrange(6)
    if kind == 0:
        return f'r = requests.get(url, auth=("{g.user()}", "{pw}"), timeout=10)\n', pw
    if kind == 1:
        return f"auth = HTTPBasicAuth('{g.user()}', '{pw}')\n", pw
    if kind == 2:
        return f"  auth: {{ username: '{g.user()}', password: '{pw}' }},\n", pw
    if kind == 3:
        pw = pw.replace("&", "").replace("!", "")
        return f"wget --user={g.user()} --password={pw} https://{g.host()}/backup.tar.gz\n", pw
    if kind == 4:
        cred = g.b64_of(f"{g.user()}:{pw}")
        return (
            f"> GET /api/health HTTP/1.1\n> Host: {g.host()}\n> Authorization: Basic {cred}\n> User-Agent: curl/8.5.0\n",
            cred,
        )
    cred = g.b64_of(f"{g.user()}:{pw}")
    return f'{{"name": "Authorization", "value": "Basic {cred}"}},\n', cred


@pos_h4
def h4_password_shapes(g: Gen) -> tuple[str, str]:
    pw = g.password().replace("'", "").replace('"', "").replace("\\", "")
    kind = g.r.randrange(8)
    if kind == 0:
        return f'ADMIN_PASSWORD="{pw}"\n', pw
    if kind == 1:
        return f"redis-cli -h {g.host()} -a '{pw}' ping\n", pw
    if kind == 2:
        return f'  "pwd": "{pw}",\n', pw
    if kind == 3:
        return f'$secure = ConvertTo-SecureString "{pw}" -AsPlainText -Force\n', pw
    if kind == 4:
        return f"echo '{pw}' | sudo -S systemctl restart nginx\n", pw
    if kind == 5:
        return f"htpasswd -b -c /etc/nginx/.htpasswd {g.user()} '{pw}'\n", pw
    if kind == 6:
        return f"spring:\n  datasource:\n    username: {g.user()}\n    password: '{pw}'\n", pw
    return f"./manage.py createsuperuser --username {g.user()} --password '{pw}'\n", pw


@pos_h4
def h4_stack_trace_secret(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = "sk_live_" + g.s(B62, 32)
        return (
            'Traceback (most recent call last):\n  File "/app/billing/settings.py", line 12, in <module>\n'
            f"    stripe.api_key = \"{v}\"\nNameError: name 'stripe' is not defined\n",
            v,
        )
    if kind == 1:
        v = g.s(B62, 32)
        return (
            f"requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.{g.r.choice(DOMAINS)}', port=443): "
            f"Max retries exceeded with url: /v1/sync?access_token={v} (Caused by NewConnectionError)\n",
            v,
        )
    v = g.s(string.ascii_letters + string.digits, 14)
    return (
        f"sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server failed\n"
        f"(Background on this error at: https://sqlalche.me/e/20/e3q8)\n  engine url: postgresql://{g.user()}:{v}@{g.host()}:5432/app\n",
        v,
    )


@pos_h4
def h4_log_token_leak(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(4)
    ts = f"2025-05-{g.r.randint(10, 28)} 0{g.r.randint(1, 9)}:{g.r.randint(10, 59)}:{g.r.randint(10, 59)},{g.r.randint(100, 999)}"
    if kind == 0:
        v = g.s(B64URL, 40)
        return (
            f'{ts} DEBUG urllib3.connectionpool: https://auth.{g.r.choice(DOMAINS)}:443 "POST /oauth/token?client_id=web&client_secret={v} HTTP/1.1" 200 512\n',
            v,
        )
    if kind == 1:
        v = g.github()
        return (
            f"{ts} INFO  git: cloning https://{v}@github.com/{g.word()}/{g.word()}.git into /srv/build\n",
            v,
        )
    if kind == 2:
        v = "glpat-" + g.s(B64URL, 20)
        return f"{ts} WARN  runner: retrying with PRIVATE-TOKEN: {v}\n", v
    v = g.s(B62, 36)
    return (
        f'10.2.{g.r.randint(0, 255)}.{g.r.randint(1, 254)} - - [03/Jun/2025:11:02:17 +0000] "GET /api/export?apikey={v}&fmt=json HTTP/1.1" 200 18233\n',
        v,
    )


@pos_h4
def h4_har_headers(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = g.jwt()
        return (
            f'          {{\n            "name": "authorization",\n            "value": "Bearer {v}"\n          }},\n',
            v,
        )
    if kind == 1:
        v = g.s(B62, 40)
        return f'          {{ "name": "X-Api-Key", "value": "{v}" }},\n', v
    v = g.github()
    return (
        f"GET /repos/{g.word()}/{g.word()} HTTP/1.1\r\nHost: api.github.com\r\nAuthorization: token {v}\r\n\r\n",
        v,
    )


@pos_h4
def h4_provider_tokens_a(g: Gen) -> tuple[str, str]:
    v = g.r.choice(
        [
            "lin_api_" + g.s(B62, 40),
            "ntn_" + g.s(string.digits, 11) + g.s(B62, 35),
            f"PMAK-{g.hex(24)}-{g.hex(34)}",
            "dp.st." + g.word() + "." + g.s(B62, 43),
            "dapi" + g.hex(32),
            "glsa_" + g.s(B62, 32) + "_" + g.hex(8),
            "NRAK-" + g.s(string.ascii_uppercase + string.digits, 27),
            "pul-" + g.hex(40),
        ]
    )
    text = g.r.choice(
        [
            f"TOKEN={v}\n",
            f'  "token": "{v}",\n',
            f"export API_KEY='{v}'\n",
            f"    api_key: {v}\n",
        ]
    )
    return text, v


@pos_h4
def h4_provider_tokens_b(g: Gen) -> tuple[str, str]:
    v = g.r.choice(
        [
            g.s(B62, 14) + ".atlasv1." + g.s(B62, 67),
            "figd_" + g.s(B64URL, 40),
            "pat" + g.s(B62, 14) + "." + g.hex(64),
            "r8_" + g.s(B62, 37),
            "gsk_" + g.s(B62, 52),
            "xai-" + g.s(B62, 80),
            "pplx-" + g.s(B62, 48),
            "shpss_" + g.hex(32),
            "sntrys_" + g.s(B64URL, 60),
        ]
    )
    text = g.r.choice(
        [
            f'client = Client(token="{v}")\n',
            f"credentials:\n  default: {v}\n",
            f"$ deploy --auth {v}\n",
            f"[auth]\nkey = {v}\n",
        ]
    )
    return text, v


@pos_h4
def h4_gcp_service_account(g: Gen) -> tuple[str, str]:
    lines = [g.s(B64, 64) for _ in range(g.r.randint(6, 12))]
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + lines[0][32:]
    key = (
        "-----BEGIN PRIVATE KEY-----\\n"
        + "\\n".join([body, *lines[1:]])
        + "\\n-----END PRIVATE KEY-----\\n"
    )
    project = f"{g.word()}-{g.r.randint(100000, 999999)}"
    text = (
        f'{{\n  "type": "service_account",\n  "project_id": "{project}",\n  "private_key_id": "{g.hex(40)}",\n'
        f'  "private_key": "{key}",\n  "client_email": "ci@{project}.iam.gserviceaccount.com"\n}}\n'
    )
    return text, body[:40]


@pos_h4
def h4_k8s_secret_data(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = g.b64_of(g.password())
        return (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {g.word()}-db\ntype: Opaque\ndata:\n  password: {v}\n",
            v,
        )
    if kind == 1:
        v = g.b64_of(f"{g.user()}:{g.password()}")
        return (
            f'{{\n  "auths": {{\n    "registry.{g.r.choice(DOMAINS)}": {{\n      "auth": "{v}"\n    }}\n  }}\n}}\n',
            v,
        )
    v = g.b64_of(g.s(B62, 40))
    return f"data:\n  api-token: {v}\n  username: {g.b64_of(g.user())}\n", v


@pos_h4
def h4_terraform_secrets(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(4)
    if kind == 0:
        v = g.password().replace('"', "").replace("\\", "").replace("$", "")
        return (
            f'resource "aws_db_instance" "main" {{\n  engine   = "postgres"\n  username = "app"\n  password = "{v}"\n}}\n',
            v,
        )
    if kind == 1:
        v = g.github()
        return f'provider "github" {{\n  owner = "{g.word()}"\n  token = "{v}"\n}}\n', v
    if kind == 2:
        v = g.s(B62, 3) + "8Q~" + g.s(B64URL + "~.", 34)
        return (
            f'provider "azurerm" {{\n  features {{}}\n  client_id     = "{g.uuid()}"\n  client_secret = "{v}"\n  tenant_id     = "{g.uuid()}"\n}}\n',
            v,
        )
    v = g.hex(40)
    return f'provider "datadog" {{\n  api_key = var.datadog_api_key\n  app_key = "{v}"\n}}\n', v


@pos_h4
def h4_dockerfile_secret(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(4)
    if kind == 0:
        v = g.password().replace('"', "").replace(" ", "").replace("$", "")
        return f"FROM postgres:16\nENV POSTGRES_USER=app\nENV POSTGRES_PASSWORD={v}\n", v
    if kind == 1:
        v = g.github()
        return (
            f'FROM golang:1.22 AS build\nARG GITHUB_TOKEN={v}\nRUN git config --global url."https://$GITHUB_TOKEN@github.com/".insteadOf "https://github.com/"\n',
            v,
        )
    if kind == 2:
        v = g.s(string.ascii_letters + string.digits, 20)
        return (
            f"RUN pip install --extra-index-url https://{g.user()}:{v}@pypi.{g.r.choice(DOMAINS)}/simple -r requirements.txt\n",
            v,
        )
    v = "npm_" + g.s(B62, 36)
    return f'RUN echo "//registry.npmjs.org/:_authToken={v}" > .npmrc && npm ci && rm .npmrc\n', v


@pos_h4
def h4_shell_history(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(6)
    pw = g.s(string.ascii_letters + string.digits + "_.", g.r.randint(10, 20))
    if kind == 0:
        return f"  512  export PGPASSWORD='{pw}'\n  513  psql -h {g.host()} -U {g.user()}\n", pw
    if kind == 1:
        return f"mysqldump -u root -p'{pw}' --all-databases > all.sql\n", pw
    if kind == 2:
        v = "key-" + g.hex(32)
        return (
            f"curl -s --user 'api:{v}' https://api.mailgun.net/v3/{g.r.choice(DOMAINS)}/messages -F to=ops\n",
            v,
        )
    if kind == 3:
        return (
            f"openssl enc -aes-256-cbc -salt -in backup.tar -out backup.enc -pass pass:{pw}\n",
            pw,
        )
    if kind == 4:
        v = "hvs." + g.s(B62, 24)
        return f"vault login {v}\n", v
    return f"az login -u {g.user()}@{g.r.choice(DOMAINS)} -p '{pw}'\n", pw


@pos_h4
def h4_markdown_leak(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = f"SG.{g.s(B64URL, 22)}.{g.s(B64URL, 43)}"
        return f"## Setup\n\n```bash\nexport SENDGRID_API_KEY={v}\npython send.py\n```\n", v
    if kind == 1:
        v = g.password().replace("|", "")
        return (
            f"| Environment | User | Password |\n|---|---|---|\n| staging | {g.user()} | {v} |\n",
            v,
        )
    v = g.s(B62, 32)
    return f"Use the staging API key `{v}` for local testing.\n", v


@pos_h4
def h4_chat_secrets(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(5)
    if kind == 0:
        v = g.github()
        return f"can you try with this token: {v}\n", v
    if kind == 1:
        v = g.hex(32)
        return f"[10:42] {g.r.choice(FIRST)}: the api key for the sandbox is {v}\n", v
    if kind == 2:
        v = g.password()
        return f"vpn password is {v} btw\n", v
    if kind == 3:
        v = g.password()
        return f"just use admin/{v} to log in for now\n", v
    v = g.password()
    return f"> {g.r.choice(FIRST)}: pass: {v}\n> {g.r.choice(FIRST)}: thanks!\n", v


@pos_h4
def h4_pii_prose(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(8)
    if kind == 0:
        v = g.ssn().replace("-", " ")
        return f"{g.name()}'s social is {v}, please update the HR record.\n", v
    if kind == 1:
        v = f"{g.r.choice([415, 628, 310, 917, 646])}.{g.r.randint(201, 549)}.{g.r.randint(1000, 9999)}"
        return f"Her number is {v}, call after lunch.\n", v
    if kind == 2:
        v = f"+1 ({g.r.choice([206, 425, 503, 971])}) {g.r.randint(201, 549)}-{g.r.randint(1000, 9999)}"
        return f"Reach {g.name()} at {v} for the site visit.\n", v
    if kind == 3:
        v = f"01{g.r.choice([51, 52, 57, 60, 70, 71, 76])} {g.r.randint(1000000, 9999999)}"
        return f"Handy: {v} (Herr {g.r.choice(LAST)})\n", v
    if kind == 4:
        v = "06 " + " ".join(f"{g.r.randint(10, 99)}" for _ in range(4))
        return f"Mon portable : {v}\n", v
    if kind == 5:
        v = f"+81 90-{g.r.randint(1000, 9999)}-{g.r.randint(1000, 9999)}"
        return f"Tanaka-san's mobile is {v}.\n", v
    if kind == 6:
        v = g.ssn()
        return f"Per our call, the claimant's SSN is {v} and DOB is 1979-03-02.\n", v
    v = f"+353 8{g.r.randint(3, 9)} {g.r.randint(100, 999)} {g.r.randint(1000, 9999)}"
    return f"If I'm not answering email, ring me on {v}.\n", v


@pos_h4
def h4_iban_shapes(g: Gen) -> tuple[str, str]:
    country, bban = g.r.choice(
        [
            ("CH", g.s(string.digits, 17)),
            ("AT", g.s(string.digits, 16)),
            ("PL", g.s(string.digits, 24)),
            ("SE", g.s(string.digits, 20)),
            ("IE", g.s(string.ascii_uppercase, 4) + g.s(string.digits, 14)),
            ("DE", g.s(string.digits, 18)),
        ]
    )
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    compact = f"{country}{98 - int(digits) % 97:02d}{bban}"
    v = g.r.choice([compact, " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))])
    text = g.r.choice(
        [
            f"<CdtrAcct>\n  <Id>\n    <IBAN>{v}</IBAN>\n  </Id>\n</CdtrAcct>\n",
            f"Hi, my new bank account is {v}, can you send the refund there?\n",
            f"Kontoinhaber: {g.name()}\nIBAN {v}\n",
            f"payout_account={v} currency=EUR\n",
        ]
    )
    return text, v


@pos_h4
def h4_pii_records(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = g.card()
        return (
            f'{{"level":"error","msg":"payment declined","pan":"{v}","merchant":"{g.word()}"}}\n',
            v,
        )
    if kind == 1:
        v = g.ssn()
        return (
            f"employee_id,full_name,social_security_number\n{g.r.randint(1000, 9999)},{g.name()},{v}\n",
            v,
        )
    v = g.card()
    return f"my card is {v}, expiry 0{g.r.randint(1, 9)}/2{g.r.randint(6, 9)}\n", v


@pos_h4
def h4_connection_strings(g: Gen) -> tuple[str, str]:
    pw = g.s(string.ascii_letters + string.digits, g.r.randint(10, 20))
    text = g.r.choice(
        [
            f"jdbc:mysql://{g.host()}:3306/orders?user={g.user()}&password={pw}&useSSL=true\n",
            f"Driver={{ODBC Driver 18 for SQL Server}};Server={g.host()};Uid={g.user()};Pwd={pw};\n",
            f"MONGO_URI=mongodb://{g.user()}:{pw}@mongo-0.{g.word()}:27017,mongo-1.{g.word()}:27017/app?replicaSet=rs0\n",
            f"REDIS_URL=redis://:{pw}@{g.host()}:6379/0\n",
            f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{g.user()}" password="{pw}";\n',
            f"CELERY_BROKER_URL=amqps://{g.user()}:{pw}@rabbit.{g.r.choice(DOMAINS)}:5671/vhost\n",
        ]
    )
    return text, pw


@pos_h4
def h4_private_key_embedded(g: Gen) -> tuple[str, str]:
    lines = [g.s(B64, 64) for _ in range(g.r.randint(5, 10))]
    kind = g.r.randrange(3)
    if kind == 0:
        body = "\n    ".join(lines)
        return (
            f"data:\n  tls.crt: LS0tLS1CRUdJTi...\n  tls.key: |\n    -----BEGIN EC PRIVATE KEY-----\n    {body}\n    -----END EC PRIVATE KEY-----\n",
            lines[0],
        )
    if kind == 1:
        body = "\\n".join(lines)
        return (
            f'PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\\n{body}\\n-----END RSA PRIVATE KEY-----"\n',
            lines[0],
        )
    body = "\n".join(lines)
    return (
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n=Ab3x\n-----END PGP PRIVATE KEY BLOCK-----\n",
        lines[0],
    )


@pos_h4
def h4_oauth_tokens(g: Gen) -> tuple[str, str]:
    v = g.r.choice(
        [
            "ya29.a0" + g.s(B64URL, 150),
            "1//0" + g.s(B64URL, 99),
            "EAAB" + g.s(B62, 180),
            "sl.B" + g.s(B64URL, 130),
        ]
    )
    name = g.r.choice(["access_token", "refresh_token"])
    text = g.r.choice(
        [
            f'{{"{name}": "{v}", "expires_in": 3599, "token_type": "Bearer"}}\n',
            f"{name.upper()}={v}\n",
            f'creds = Credentials(token=None, refresh_token="{v}")\n',
        ]
    )
    return text, v


@pos_h4
def h4_webhook_urls(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = f"{g.uuid()}@{g.uuid()}/IncomingWebhook/{g.hex(32)}/{g.uuid()}"
        return f'TEAMS_WEBHOOK = "https://{g.word()}.webhook.office.com/webhookb2/{v}"\n', v
    if kind == 1:
        v = f"{g.r.randint(10**8, 10**10)}:AA{g.s(B64URL, 33)}"
        return (
            f"curl -s https://api.telegram.org/bot{v}/sendMessage -d chat_id=42 -d text=deployed\n",
            v,
        )
    v = f"T{g.s(string.ascii_uppercase + string.digits, 10)}/B{g.s(string.ascii_uppercase + string.digits, 10)}/{g.s(B62, 24)}"
    return f'  "slack": {{ "url": "https://hooks.slack.com/services/{v}", "channel": "#ops" }}\n', v


@pos_h4
def h4_python_settings(g: Gen) -> tuple[str, str]:
    kind = g.r.randrange(3)
    if kind == 0:
        v = g.s(string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)", 50)
        return (
            f"# SECURITY WARNING: keep the secret key used in production secret!\nSECRET_KEY = '{v}'\n",
            v,
        )
    if kind == 1:
        v = g.s(B64URL, 43) + "="
        return f"FERNET_KEY = b'{v}'\ncipher = Fernet(FERNET_KEY)\n", v
    v = g.hex(64)
    return f'app.secret_key = bytes.fromhex("{v}")\n', v


# ---- h4 negatives


@neg_h4
def h4_env_example(g: Gen) -> str:
    return g.r.choice(
        [
            "# copy to .env and fill in\nDB_PASSWORD=\nAPI_KEY=your-api-key\nSECRET_KEY=change-me\n",
            "STRIPE_SECRET_KEY=<stripe secret key>\nSTRIPE_PUBLISHABLE_KEY=<publishable key>\n",
            "AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID}\nAWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}\n",
            "SENTRY_DSN=\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
            "# JWT_SECRET=generate with: openssl rand -hex 32\nJWT_SECRET=\n",
        ]
    )


@neg_h4
def h4_env_refs_code(g: Gen) -> str:
    return g.r.choice(
        [
            "const apiKey = import.meta.env.VITE_API_KEY;\n",
            'if pw, ok := os.LookupEnv("DB_PASSWORD"); ok {\n\tcfg.Password = pw\n}\n',
            "SECRET_KEY = config('SECRET_KEY')\nDEBUG = config('DEBUG', default=False, cast=bool)\n",
            'const token = Deno.env.get("GITHUB_TOKEN");\n',
            'password = ENV.fetch("DATABASE_PASSWORD") { raise "DATABASE_PASSWORD missing" }\n',
            "secret_access_key: <%= Rails.application.credentials.dig(:aws, :secret_access_key) %>\n",
            "      DB_PASSWORD: ${env:DB_PASSWORD}\n      API_KEY: ${ssm:/prod/api-key}\n",
            "        password: '%env(DATABASE_PASSWORD)%'\n",
        ]
    )


@neg_h4
def h4_ci_refs(g: Gen) -> str:
    return g.r.choice(
        [
            "      - uses: docker/login-action@v3\n        with:\n          username: ${{ vars.DOCKERHUB_USER }}\n          password: ${{ secrets.DOCKERHUB_TOKEN }}\n",
            "      - run: echo $DOCKERHUB_PASSWORD | docker login -u $DOCKERHUB_USERNAME --password-stdin\n",
            "    environment {\n        AWS_SECRET = credentials('aws-prod-secret')\n    }\n",
            "withCredentials([string(credentialsId: 'sonar-token', variable: 'SONAR_TOKEN')]) {\n    sh 'mvn sonar:sonar -Dsonar.login=$SONAR_TOKEN'\n}\n",
            "  - script: git push https://$(System.AccessToken)@dev.azure.com/org/proj/_git/repo\n",
            "    - pipe: atlassian/bitbucket-upload-file:0.3.2\n      variables:\n        BITBUCKET_APP_PASSWORD: $APP_PASSWORD\n",
        ]
    )


@neg_h4
def h4_checksums(g: Gen) -> str:
    return g.r.choice(
        [
            f"{g.hex(64)}  {g.word()}_{g.r.randint(1, 9)}.{g.r.randint(0, 20)}.0_linux_amd64.tar.gz\n{g.hex(64)}  {g.word()}_1.2.0_darwin_arm64.tar.gz\n",
            f"{g.hex(7)} Fix token refresh race\n{g.hex(7)} Bump {g.word()} from 1.2.0 to 1.3.0\n",
            f"Digest: sha256:{g.hex(64)}\nStatus: Downloaded newer image for {g.word()}:latest\n",
            f'<script src="https://cdn.jsdelivr.net/npm/{g.word()}@3.1.0/dist/{g.word()}.min.js" integrity="sha384-{_b64bytes(g, 48)}" crossorigin="anonymous"></script>\n',
            f"github.com/{g.word()}/{g.word()} v0.{g.r.randint(1, 30)}.0/go.mod h1:{_b64bytes(g, 32)}\n",
            f"  md5: {g.hex(32)}\n  sha1: {g.hex(40)}\n",
            f'      url = "https://github.com/{g.word()}/{g.word()}/archive/v1.0.tar.gz";\n      hash = "sha256-{_b64bytes(g, 32)}";\n',
        ]
    )


@neg_h4
def h4_ids(g: Gen) -> str:
    ulid_alpha = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    return g.r.choice(
        [
            f'metadata:\n  name: {g.word()}-7d9f8\n  uid: {g.uuid()}\n  resourceVersion: "{g.r.randint(10**6, 10**8)}"\n',
            f'  "objectId": "{g.uuid()}",\n  "appId": "{g.uuid()}",\n',
            f"arn:aws:iam::{g.r.randint(10**11, 10**12 - 1)}:role/{g.word()}-deploy\n",
            f'{{"_id": {{"$oid": "{g.hex(24)}"}}, "status": "shipped"}}\n',
            f"order_id=01{g.s(ulid_alpha, 24)} state=paid\n",
            f'  "payment_intent": "pi_{g.s(B62, 24)}",\n  "customer": "cus_{g.s(B62, 14)}",\n',
            f"message id <{g.hex(16)}.{g.r.randint(10**9, 10**10)}@mail.{g.r.choice(DOMAINS)}> queued\n",
            f"snowflake {g.r.randint(10**17, 10**18)} in guild {g.r.randint(10**17, 10**18)}\n",
        ]
    )


@neg_h4
def h4_lock_files(g: Gen) -> str:
    name = g.word()
    return g.r.choice(
        [
            f'    "{name}": {{\n      "version": "1.0.{g.r.randint(0, 9)}",\n      "resolved": "https://registry.npmjs.org/{name}/-/{name}-1.0.4.tgz",\n      "integrity": "sha1-{_b64bytes(g, 20)}"\n    }},\n',
            f'        {{\n            "name": "{g.word()}/{name}",\n            "version": "v2.3.1",\n            "dist": {{\n                "type": "zip",\n                "shasum": "{g.hex(40)}"\n            }}\n        }},\n',
            f"CHECKSUMS\n  {name} (1.4.0) sha256={g.hex(64)}\n  rack (3.0.8) sha256={g.hex(64)}\n",
            f"SPEC CHECKSUMS:\n  Alamofire: {g.hex(40)}\n  {name.capitalize()}Kit: {g.hex(40)}\n",
            f'"{name}@npm:^2.0.0":\n  version: 2.0.3\n  resolution: "{name}@npm:2.0.3"\n  checksum: 10c0/{g.hex(128)}\n  languageName: node\n',
            f'      "locked": {{\n        "narHash": "sha256-{_b64bytes(g, 32)}",\n        "owner": "NixOS",\n        "rev": "{g.hex(40)}",\n        "type": "github"\n      }},\n',
        ]
    )


@neg_h4
def h4_base64_blobs(g: Gen) -> str:
    return g.r.choice(
        [
            f'  "thumbnail": "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA{_b64bytes(g, 120)}",\n',
            f'Content-Type: image/png; name="logo.png"\nContent-Transfer-Encoding: base64\n\niVBORw0KGgoAAAANSUhEUgAA{_b64bytes(g, 42)}\n{_b64bytes(g, 57)}\n{_b64bytes(g, 57)}\n',
            f'background-image: url("data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9{_b64bytes(g, 60)}");\n',
            f'<img alt="" src="data:image/gif;base64,R0lGODlhAQABAIAAAP{_b64bytes(g, 30)}">\n',
            f"DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(b'\\n\\x0c{g.word()}.proto\\x12\\x03api\"{g.s(B62, 40)}')\n",
        ]
    )


@neg_h4
def h4_minified_js(g: Gen) -> str:
    short = string.ascii_letters
    return g.r.choice(
        [
            f'!function(e){{var t={{}};function n(r){{if(t[r])return t[r].exports;var o=t[r]={{i:r,l:!1,exports:{{}}}};return e[r].call(o.exports,o,o.exports,n),o.l=!0,o.exports}}n.p="/static/";n.h="{g.hex(20)}"}}([]);\n',
            f'n.p+"static/js/"+({{}}[e]||e)+"."+{{0:"{g.hex(8)}",1:"{g.hex(8)}",2:"{g.hex(8)}"}}[e]+".chunk.js"\n',
            f'var {g.s(short, 2)}={g.s(short, 1)}("{g.s(B62, 6)}"),{g.s(short, 2)}=function(e,t){{return e.{g.s(short, 3)}(t)}};//# sourceMappingURL=main.{g.hex(8)}.js.map\n',
            f'const o="{g.s(B62 + "_$", 64)}";function r(e){{let t="";for(let n=0;n<e;n++)t+=o[Math.random()*64|0];return t}}\n',
        ]
    )


@neg_h4
def h4_signed_public_urls(g: Gen) -> str:
    return g.r.choice(
        [
            f'<img src="https://images.{g.r.choice(DOMAINS)}/photos/{g.r.randint(10**6, 10**7)}.jpg?ixlib=rb-4.0.3&w=800&q=80&s={g.hex(32)}">\n',
            f"https://www.gravatar.com/avatar/{g.hex(32)}?s=80&d=identicon\n",
            f"https://d{g.s(string.ascii_lowercase + string.digits, 13)}.cloudfront.net/video/intro.mp4?Expires={g.r.randint(1_700_000_000, 1_800_000_000)}&Signature={g.s(B64URL.replace('_', '~'), 172)}__&Key-Pair-Id=K{g.s(string.ascii_uppercase + string.digits, 13)}\n",
            f"X-Hub-Signature-256: sha256={g.hex(64)}\nX-GitHub-Event: push\nX-GitHub-Delivery: {g.uuid()}\n",
            f"Stripe-Signature: t={g.r.randint(1_700_000_000, 1_800_000_000)},v1={g.hex(64)}\n",
            f"https://avatars.githubusercontent.com/u/{g.r.randint(10**5, 10**8)}?v=4\n",
        ]
    )


@neg_h4
def h4_fake_fixtures(g: Gen) -> str:
    return g.r.choice(
        [
            '    client = ApiClient(token="x" * 40)\n',
            '    monkeypatch.setenv("STRIPE_API_KEY", "sk_test_" + "0" * 24)\n',
            '    user = UserFactory(password="test")\n',
            "  const token = 'fake-token';\n  expect(await verify(token)).toBe(false);\n",
            '    settings.SECRET_KEY = "not-a-real-secret"\n',
            "    assert redact('ghp_' + 'a' * 36) == '[REDACTED]'\n",
            '    api_key="dummy",\n',
            "        password: 'password',\n",
            '    TOKEN = "0123456789abcdef0123456789abcdef"\n',
        ]
    )


@neg_h4
def h4_templating_placeholders(g: Gen) -> str:
    return g.r.choice(
        [
            "  password: {{ mysql_root_password }}\n",
            "DATABASE_URL=postgres://{{ db_user }}:{{ db_password }}@{{ db_host }}/app\n",
            "conn_str = 'host=%(host)s user=%(user)s password=%(password)s' % params\n",
            'url = f"https://{user}:{password}@{host}/repo.git"\n',
            "    <password>${env.NEXUS_PASSWORD}</password>\n",
            "api_key: <API_KEY>\ntoken: [REDACTED]\nsecret: '***'\n",
            "  token: @@DEPLOY_TOKEN@@\n",
            "  apiKey: {{ .Values.apiKey | quote }}\n",
        ]
    )


@neg_h4
def h4_stack_traces_clean(g: Gen) -> str:
    return g.r.choice(
        [
            'Traceback (most recent call last):\n  File "/app/auth/tokens.py", line 88, in verify_token\n    payload = jwt.decode(token, key, algorithms=["HS256"])\njwt.exceptions.ExpiredSignatureError: Signature has expired\n',
            "org.springframework.security.authentication.BadCredentialsException: Bad credentials\n\tat org.springframework.security.authentication.dao.AbstractUserDetailsAuthenticationProvider.authenticate(AbstractUserDetailsAuthenticationProvider.java:141)\n\tat org.springframework.security.authentication.ProviderManager.authenticate(ProviderManager.java:182)\n",
            f"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x{g.hex(6)}]\n\ngoroutine 1 [running]:\nmain.(*TokenStore).Get(0x0, {{0xc0000{g.hex(5)}, 0x24}})\n",
            "JsonWebTokenError: invalid signature\n    at /app/node_modules/jsonwebtoken/verify.js:171:19\n    at getSecret (/app/node_modules/jsonwebtoken/verify.js:97:14)\n",
            'psycopg2.OperationalError: FATAL:  password authentication failed for user "app"\n',
        ]
    )


@neg_h4
def h4_logs_clean(g: Gen) -> str:
    return g.r.choice(
        [
            f'level=info ts=2025-06-0{g.r.randint(1, 9)}T10:00:00Z msg="token validated" sub={g.r.randint(1, 10**6)} kid={g.hex(16)} exp={g.r.randint(1_700_000_000, 1_800_000_000)}\n',
            f"[auth] password check failed for user_id={g.r.randint(1, 99999)} (attempt 3/5)\n",
            f'10.0.{g.r.randint(0, 255)}.{g.r.randint(1, 254)} - - [03/Jun/2025:11:02:17 +0000] "GET /static/js/app.{g.hex(8)}.js HTTP/2.0" 200 48213\n',
            f'  Normal  Pulled  12s  kubelet  Successfully pulled image "ghcr.io/{g.word()}/api@sha256:{g.hex(64)}"\n',
            f"INFO  session {g.hex(32)} expired after 1800s of inactivity\n",
            f"DEBUG cache hit key=user:{g.r.randint(1, 10**6)}:perms etag={g.hex(16)}\n",
        ]
    )


@neg_h4
def h4_docs_about_secrets(g: Gen) -> str:
    return g.r.choice(
        [
            "Set `GITHUB_TOKEN` to a fine-grained personal access token (they start with `github_pat_`).\n",
            "Slack bot tokens look like `xoxb-` followed by numbers and letters; never paste one in an issue.\n",
            "To rotate a key, run `aws iam create-access-key --user-name ci` and delete the old one.\n",
            '```bash\nexport API_KEY=<your key>\ncurl -H "Authorization: Bearer $API_KEY" https://api.example.com\n```\n',
            "| Name | Required | Description |\n|---|---|---|\n| `password` | yes | the user's password, 8-128 characters |\n",
        ]
    )


@neg_h4
def h4_chat_clean(g: Gen) -> str:
    return g.r.choice(
        [
            "did you rotate the prod db password yet?\n",
            "the token expired again, I'll regenerate it after standup\n",
            "password is in 1Password under 'staging db'\n",
            "use the key from vault, not the one in the wiki - that one is revoked\n",
            "my password manager generated a 24-char one, works now\n",
            "> can you send me the api key?\n> no, request access in #platform and it will be shared through vault\n",
        ]
    )


@neg_h4
def h4_http_dump_clean(g: Gen) -> str:
    return g.r.choice(
        [
            f'HTTP/2 200\ncontent-type: application/json\nx-request-id: {g.uuid()}\netag: "{g.hex(32)}"\ncf-ray: {g.hex(16)}-FRA\n',
            f"X-Amzn-Trace-Id: Root=1-{g.hex(8)}-{g.hex(24)}\nContent-MD5: {_b64bytes(g, 16)}\n",
            f"Digest: sha-256={_b64bytes(g, 32)}\nStrict-Transport-Security: max-age=63072000; includeSubDomains\n",
            f"Content-Security-Policy: script-src 'self' 'nonce-{_b64bytes(g, 16)}'\n",
            "> POST /v1/login HTTP/1.1\n> Content-Type: application/json\n> Authorization: Bearer ${TOKEN}\n",
        ]
    )


@neg_h4
def h4_public_config(g: Gen) -> str:
    return g.r.choice(
        [
            f"GOOGLE_CLIENT_ID={g.r.randint(10**11, 10**12)}-{g.s(string.ascii_lowercase + string.digits, 32)}.apps.googleusercontent.com\n",
            f'  messagingSenderId: "{g.r.randint(10**11, 10**12)}",\n  appId: "1:{g.r.randint(10**11, 10**12)}:web:{g.hex(22)}",\n',
            f'<script src="https://js.stripe.com/v3/"></script>\n<script>const stripe = Stripe("pk_live_{g.s(B62, 99)}");</script>\n',
            f'<div class="g-recaptcha" data-sitekey="6L{g.s(B64URL, 38)}"></div>\n',
            f"mapboxgl.accessToken = 'pk.eyJ1Ijoi{g.s(B64URL, 40)}.{g.s(B64URL, 22)}';\n",
            f'  "algolia": {{ "appId": "{g.s(string.ascii_uppercase + string.digits, 10)}", "indexName": "docs" }},\n',
        ]
    )


@neg_h4
def h4_terraform_clean(g: Gen) -> str:
    return g.r.choice(
        [
            'resource "random_password" "db" {\n  length  = 32\n  special = true\n}\n',
            f'  kms_key_id = "arn:aws:kms:eu-west-1:{g.r.randint(10**11, 10**12 - 1)}:key/{g.uuid()}"\n',
            f'  ami           = "ami-0{g.hex(16)}"\n  subnet_id     = "subnet-0{g.hex(16)}"\n  vpc_security_group_ids = ["sg-0{g.hex(16)}"]\n',
            '  password = data.vault_generic_secret.db.data["password"]\n',
            'resource "aws_secretsmanager_secret" "api" {\n  name = "prod/api-token"\n}\n',
        ]
    )


@neg_h4
def h4_dockerfile_clean(g: Gen) -> str:
    return g.r.choice(
        [
            f"FROM python:3.12-slim@sha256:{g.hex(64)}\nARG PIP_INDEX_URL\nRUN --mount=type=secret,id=pip,target=/root/.netrc pip install -r requirements.txt\n",
            'ENV PATH="/opt/venv/bin:$PATH" PYTHONDONTWRITEBYTECODE=1\nHEALTHCHECK CMD curl -f http://localhost:8000/health || exit 1\n',
            'COPY --chown=app:app . /app\nUSER app\nCMD ["gunicorn", "app:create_app()"]\n',
            "ARG GITHUB_TOKEN\nRUN --mount=type=secret,id=gh GITHUB_TOKEN=$(cat /run/secrets/gh) go mod download\n",
        ]
    )


@neg_h4
def h4_crypto_code(g: Gen) -> str:
    return g.r.choice(
        [
            "key = Fernet.generate_key()\ncipher = Fernet(key)\n",
            "sig = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()\n",
            "private_key = serialization.load_pem_private_key(pem_bytes, password=None)\n",
            "token = secrets.token_urlsafe(32)\n",
            "const hash = crypto.createHash('sha256').update(password + salt).digest('hex');\n",
            'Password string `json:"password" validate:"required,min=8"`\n',
            f'const passwordResetTemplateID = "d-{g.hex(32)}"\n',
            r"const PASSWORD_RE = /^(?=.*[A-Z])(?=.*\d).{8,}$/;" + "\n",
        ]
    )


def build(seed: int, per_template: int) -> list[Item]:
    """``per_template`` items of each template, each template drawing from its own generator
    (seeded with the seed and its name: adding a template changes no other's items)."""
    items: list[Item] = []
    for templates in (POSITIVE, NEGATIVE):
        for name in sorted(templates):
            g = Gen(random.Random(f"{seed}:{name}"))
            items.extend(templates[name](g) for _ in range(per_template))
    return items


def _rates(rows: list[tuple[Item, bool]]) -> dict[str, object]:
    pos = [ok for it, ok in rows if it.label == "positive"]
    neg = [bad for it, bad in rows if it.label == "negative"]
    return {
        "positives": len(pos),
        "found": sum(pos),
        "recall": round(sum(pos) / len(pos), 4) if pos else None,
        "negatives": len(neg),
        "negatives_flagged": sum(neg),
        "flag_rate": round(sum(neg) / len(neg), 4) if neg else None,
    }


def evaluate(items: list[Item], scanner: Scanner) -> dict[str, object]:
    """Recall and flag rate over all items, the tune templates and the held ones."""
    per: dict[str, list[int]] = {}
    rows: list[tuple[Item, bool]] = []
    misses: list[Item] = []
    flagged: list[tuple[Item, str]] = []
    for it in items:
        findings = scanner.scan(it.text)
        row = per.setdefault(it.template, [0, 0])
        row[1] += 1
        if it.label == "positive":
            i = it.text.find(it.secret)
            a, b = (i, i + len(it.secret)) if i >= 0 else (0, len(it.text))
            ok = any(f.start < b and a < f.end for f in findings)
            row[0] += ok
            rows.append((it, ok))
            if not ok and it.template not in HELD:
                misses.append(it)
        else:
            row[0] += bool(findings)
            rows.append((it, bool(findings)))
            if findings and it.template not in HELD:
                f = findings[0]
                flagged.append((it, f"{f.code} {it.text[max(0, f.start - 30) : f.end + 5]!r}"))
    return {
        "all": _rates(rows),
        "tune_templates": _rates([r for r in rows if r[0].template not in HELD | H4]),
        "held_templates": _rates([r for r in rows if r[0].template in HELD]),
        "h4_templates": _rates([r for r in rows if r[0].template in H4]),
        "per_template": {k: f"{v[0]}/{v[1]}" for k, v in sorted(per.items()) if k not in HELD},
        "_misses": misses,
        "_flagged": flagged,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--per-template", type=int, default=40)
    ap.add_argument("--show-misses", type=int, default=0)
    ap.add_argument("--show-flagged", type=int, default=0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--dump", type=Path, help="write the items as JSON lines")
    args = ap.parse_args()
    items = build(args.seed, args.per_template)
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as fh:
            for it in items:
                fh.write(json.dumps(it.__dict__) + "\n")
    scanner = Scanner(builtin_rules(), Fingerprinter(os.urandom(32)))
    res = evaluate(items, scanner)
    misses = res.pop("_misses")
    flagged = res.pop("_flagged")
    assert isinstance(misses, list)
    assert isinstance(flagged, list)
    for it in misses[: args.show_misses]:
        print(f"MISS {it.template}: {it.text!r}", file=sys.stderr)
    for it, why in flagged[: args.show_flagged]:
        print(f"FLAG {it.template}: {why}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    print(f"seed {args.seed}: {len(items)} items")
    for part in ("all", "tune_templates", "held_templates", "h4_templates"):
        r = res[part]
        assert isinstance(r, dict)
        print(
            f"{part:15} recall {r['recall']} ({r['found']}/{r['positives']}), "
            f"negatives flagged {r['flag_rate']} ({r['negatives_flagged']}/{r['negatives']})"
        )
    per = res["per_template"]
    assert isinstance(per, dict)
    for k, v in sorted(per.items()):
        kind = "pos" if k in POSITIVE else "neg"
        print(f"  {kind} {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
