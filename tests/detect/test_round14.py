"""Issue 17, round 14 (detector recall shapes): for each cause, the secret in its shape is found,
and a secret-free text of a nearby shape is not.

1. Passwords a person chose, words and a number (``Velvet.river227``), after a telling flag or
   key, in builder calls, pool configs, YAML/TOML/INI; and more command-line password options.
2. Bare Discord bot tokens (their first part decodes to a snowflake id), Telegram bot tokens,
   Twilio auth tokens a few lines below the account SID.
3. Passwords passed by position to APIs with a documented parameter order.
4. Keys stated in chat prose and in XML settings.
5. A setting that names how passwords are stored (``password_hash_algorithm = argon2id``).
6. Ciphertext: SealedSecret ``encryptedData``, sops ``ENC[…]``, ansible-vault bodies.
"""

from __future__ import annotations

import base64

import pytest

from domestique.detect import Scanner
from domestique.detect.encrypted import encrypted_value, under_encrypted_data
from domestique.detect.validators import discord_bot_token, not_code, passphrase


def _findings(scanner: Scanner, text: str) -> list[tuple[str, str]]:
    return [
        (f.code, text[f.start : f.end])
        for f in scanner.scan(text)
        if f.code.startswith(("secret.", "pii."))
    ]


# (text, the secret value that must lie inside a finding)
FOUND = [
    # 1. passwords of words and a number
    ("mysqldump --password=copper-saffron-falcon84 appdb", "copper-saffron-falcon84"),
    ("backup-tool --password Velvet.river227 --host db", "Velvet.river227"),
    ("mysql -uroot -p'Velvet.river227' appdb", "Velvet.river227"),
    ('ds = DataSourceBuilder.create().username("app").password("Maple-tractor-77").build();',
     "Maple-tractor-77"),
    ('new PostgreSQLContainer<>("postgres:16").withPassword("Velvet.river227")',
     "Velvet.river227"),
    ('cfg.setPassword("Maple-tractor-77");', "Maple-tractor-77"),
    ("const pool = mysql.createPool({ host: 'db', user: 'app', password: 'Velvet.river227' });",
     "Velvet.river227"),
    ("db:\n  user: app\n  password: Velvet.river227\n", "Velvet.river227"),
    ('[database]\nuser = "app"\npassword = "Velvet.river227"\n', "Velvet.river227"),
    ("[db]\npassword = copper-saffron-falcon84\n", "copper-saffron-falcon84"),
    ("user = app\npassword = Velvet.river227\n", "Velvet.river227"),
    ("mongosh --host db -u admin -p 'Velvet.river227' --authenticationDatabase admin",
     "Velvet.river227"),
    ("sqlcmd -S db7 -U sa -P Maple-tractor-77 -Q 'SELECT 1'", "Maple-tractor-77"),
    ("ldapsearch -x -D 'cn=admin,dc=corp' -w copper-saffron-falcon84 -b 'dc=corp'",
     "copper-saffron-falcon84"),
    ("openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:Velvet.river227",
     "Velvet.river227"),
    ("smbclient //fs01/share -U backup%Maple-tractor-77 -c ls", "Maple-tractor-77"),
    ("sqlplus -s billing/Velvet.river227@db7:1521/ORCL", "Velvet.river227"),
    # 2. chat and SMS tokens
    ('client.run("MTA0ODI3MzYxOTM4NTcyMDkxMw.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5sD0fJ2hG8iO")',
     "MTA0ODI3MzYxOTM4NTcyMDkxMw.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5sD0fJ2hG8iO"),
    ("MTE4NzczMTcwODQ1MjM0NjgxOQ.Gq7Lm2.xPz9Kd3Rt8Ys1NcWq7Lm2xPz9Kd3Rt8Ys\n",
     "MTE4NzczMTcwODQ1MjM0NjgxOQ.Gq7Lm2.xPz9Kd3Rt8Ys1NcWq7Lm2xPz9Kd3Rt8Ys"),
    ("bot = telebot.TeleBot('5928374610:AAH7kq2Lm9xPzR4tW8vN1bC6yD3fG5hJ0sE')",
     "5928374610:AAH7kq2Lm9xPzR4tW8vN1bC6yD3fG5hJ0sE"),
    ("4839574813:AAFD39kkdpWt3ywyRZergyOLMbJhac61qc\n",
     "4839574813:AAFD39kkdpWt3ywyRZergyOLMbJhac61qc"),
    ("SID=AC3f9b2e7d1c8a4f6e0b5d9c2a7e1f4b8d\nFROM=+15005550006\nTO=+14155550100\n"
     "TOK=9c4e1a7f3b8d2e6c0a5f9b1d7e3c8a2f\n", "9c4e1a7f3b8d2e6c0a5f9b1d7e3c8a2f"),
    ("sms:\n  sid: AC3f9b2e7d1c8a4f6e0b5d9c2a7e1f4b8d\n  from: '+15005550006'\n"
     "  pw: 9c4e1a7f3b8d2e6c0a5f9b1d7e3c8a2f\n", "9c4e1a7f3b8d2e6c0a5f9b1d7e3c8a2f"),
    # 3. passwords by position
    ('Connection c = DriverManager.getConnection("jdbc:mysql://db:3306/app", "app", '
     '"Maple-tractor-77");', "Maple-tractor-77"),
    ('Connection c = ds.getConnection("app", "Velvet.river227");', "Velvet.river227"),
    ('db = MySQLdb.connect("localhost", "testuser", "Maple-tractor-77", "TESTDB")',
     "Maple-tractor-77"),
    ('db = pymysql.connect("localhost", "testuser", "Velvet.river227", "TESTDB")',
     "Velvet.river227"),
    ("$conn = mysqli_connect('localhost', 'app', 'Maple-tractor-77', 'shop');",
     "Maple-tractor-77"),
    ('$db = new mysqli("localhost", "app", "Velvet.river227", "shop");', "Velvet.river227"),
    ('$pdo = new PDO("mysql:host=db;dbname=shop", "app", "Maple-tractor-77");',
     "Maple-tractor-77"),
    ('con = cx_Oracle.connect("app", "Velvet.river227", "db:1521/orcl")', "Velvet.river227"),
    ('conn.simple_bind_s("cn=admin,dc=corp", "Maple-tractor-77")', "Maple-tractor-77"),
    ('db, err := sql.Open("mysql", "app:Velvet.river227@tcp(127.0.0.1:3306)/shop")',
     "Velvet.river227"),
    ('conn = mysql.connector.connect(host="db", user="app", password="Maple-tractor-77")',
     "Maple-tractor-77"),
    ('var c = new SqlConnection("Server=db;Database=app;User Id=app;Password=Velvet.river227;");',
     "Velvet.river227"),
    # 4. keys in prose and in XML or properties settings
    ("hey, my api key is 9f3a7c21b8e44d0f96a1c3e5b7d9f0a2 can you check?",
     "9f3a7c21b8e44d0f96a1c3e5b7d9f0a2"),
    ("use this token: 4kT9mQ2xW7pL3vN8cB5yH1zR", "4kT9mQ2xW7pL3vN8cB5yH1zR"),
    ("the client secret is Zq8Lm2Nx7Pr4Tw6Yv8Ab0Cd", "Zq8Lm2Nx7Pr4Tw6Yv8Ab0Cd"),
    ("I set the API key to 9f3a7c21b8e44d0f96a1c3e5b7d9f0a2 in prod",
     "9f3a7c21b8e44d0f96a1c3e5b7d9f0a2"),
    ("try with token 4kT9mQ2xW7pL3vN8cB5yH1zR and tell me", "4kT9mQ2xW7pL3vN8cB5yH1zR"),
    ('<add key="ApiKey" value="9f3a7c21b8e44d0f96a1c3e5b7d9f0a2"/>',
     "9f3a7c21b8e44d0f96a1c3e5b7d9f0a2"),
    ("<setting name='Stripe.SecretKey' value='sk9Qw7Er2Ty4Ui6Op8As'/>", "sk9Qw7Er2Ty4Ui6Op8As"),
    ("api.secret=9f3a7c21b8e44d0f96a1c3e5b7d9f0a2", "9f3a7c21b8e44d0f96a1c3e5b7d9f0a2"),
    # 5/6. beside the clean shapes: a real password and a plain value stay findings
    ("password = Velvet.river227\npassword_hash_algorithm = argon2id\n", "Velvet.river227"),
    ("password: AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq0x8iVAa6R7oAqzZnQpX0zZ9mYvQ3\n",
     "AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq0x8iVAa6R7oAqzZnQpX0zZ9mYvQ3"),
    ("spec:\n  encryptedData:\n    password: AgBy3i4OJSWK+PiTySYZZA9rO43cGDE\n"
     "  template:\n    stringData:\n      api_token: q8XvL2mR7tK9pW3zN5cY1bH6\n",
     "q8XvL2mR7tK9pW3zN5cY1bH6"),
]  # fmt: skip

_CT = base64.b64encode(bytes(range(7, 250, 3)) * 3).decode()
CLEAN = [
    # 1. code that refers to a password, not one
    "token_hash = hashlib.sha256(token.encode()).hexdigest()",
    "password = self.cleaned_data.get('password1')",
    "password = settings.db01",
    "password: form.password12",
    "builder.password(config.db.password).build()",
    "psql -h db -p 5432 -U app",
    "mongosh --host db -u admin -p --authenticationDatabase admin",
    "ldapsearch -x -D 'cn=admin,dc=corp' -W -b 'dc=corp'",
    "openssl rsa -in k.pem -passin env:KEY_PASS -out plain.pem",
    # 2. the same shapes without a real id or token
    'client.run("MTAbODI3MzYxOTM4NTcyMDkxMw.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5sD0fJ2hG8iO")',
    'x = "MTIzNDU2Nzg5MDEy.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5sD0fJ2hG8iO"',
    "sid: AC3f9b2e7d1c8a4f6e0b5d9c2a7e1f4b8d\nmessage: SM9c4e1a7f3b8d2e6c0a5f9b1d7e3c8a2f\n",
    "12:AAshort",
    # 3. variables by position
    "conn = DriverManager.getConnection(DB_URL, USER, PASS);",
    'conn = DriverManager.getConnection(url, "app", System.getenv("DB_PASSWORD"));',
    "$conn = mysqli_connect($host, $user, $pass, $db);",
    'db, err := sql.Open("mysql", "app:${DB_PASSWORD}@tcp(db:3306)/shop")',
    # 4. prose and settings about keys
    "the token is stored in vault under kv/prod/app",
    "my api key is in the .env file",
    "use the token endpoint https://auth.example.net/oauth/token",
    '<add key="ApiKeyHeaderName" value="X-Api-Key" />',
    '<add key="ApiBaseUrl" value="https://api.corp.example/v2" />',
    # 5. how passwords are stored
    "password_hash_algorithm = argon2id",
    "PASSWORD_SCHEME: bcrypt",
    "password_encryption = scram-sha-256",
    "password_encoder = pbkdf2",
    'auth: { passwordHashing: "argon2id" }',
    # 6. ciphertext
    "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\nspec:\n"
    f"  encryptedData:\n    password: Ag{_CT}\n    api_token: Ag{_CT[::-1]}\n"
    "  template:\n    metadata:\n      name: db\n",
    '{"kind":"SealedSecret","spec":{"encryptedData":{"password":"Ag' + _CT + '"}}}',
    f"db:\n    password: ENC[AES256_GCM,data:{_CT[:40]},iv:{_CT[40:84]},tag:{_CT[84:108]},"
    "type:str]\n",
    f"DB_PASSWORD=ENC[AES256_GCM,data:{_CT[:24]},iv:{_CT[24:68]},tag:{_CT[68:92]},type:str]\n",
    f'{{"api_key": "ENC[AES256_GCM,data:{_CT[:60]},iv:{_CT[60:104]},type:str]"}}',
    "db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n"
    + "".join(f"          {bytes(range(i, i + 40)).hex()}\n" for i in range(0, 200, 40)),
    'secret_key: "-----BEGIN PGP MESSAGE-----\\nhQEMA5Kq2Lm9xPzRAQf/Tr3kQ9mXw7Lp2Zv5Nb8X\\n'
    '-----END PGP MESSAGE-----"',
]


@pytest.mark.parametrize(("text", "secret"), FOUND)
def test_the_secret_in_its_shape_is_found(scanner: Scanner, text: str, secret: str) -> None:
    found = _findings(scanner, text)
    assert any(secret in value or value in secret for _, value in found), found


@pytest.mark.parametrize("text", CLEAN)
def test_a_nearby_clean_shape_is_not_flagged(scanner: Scanner, text: str) -> None:
    assert _findings(scanner, text) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [("Velvet.river227", True), ("copper-saffron-falcon84", True), ("Maple-tractor-77", True),
     ("maple_tractor_77!", True), ("hashlib.sha256", False), ("self.user01", False),
     ("form.password12", False), ("Maple-77", False), ("copper-saffron", False),
     ("np.float64", False)],
)  # fmt: skip
def test_passphrase(value: str, expected: bool) -> None:
    assert passphrase(value) is expected
    if expected:
        assert not_code(value)


def test_discord_bot_token_decodes_a_snowflake() -> None:
    good = "MTA0ODI3MzYxOTM4NTcyMDkxMw.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5sD0fJ2hG8iO"
    assert discord_bot_token(good)
    # the same shape: letters in the id, an id too short, a filler HMAC, a second part too long
    assert not discord_bot_token("MTAbODI3MzYxOTM4NTcyMDkxMw.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5s")
    assert not discord_bot_token("MTIzNDU2Nzg5MDEy.GhK3xQ.Vb8mN2pL7qR4tW9zX1cY6uE3aK5sD0fJ2h")
    assert not discord_bot_token("MTA0ODI3MzYxOTM4NTcyMDkxMw.GhK3xQ." + "a" * 38)
    assert not discord_bot_token("MTA0ODI3MzYxOTM4NTcyMDkxMw.GhK3xQz.Vb8mN2pL7qR4tW9zX1cY6uE3aK5s")


def test_encrypted_envelopes_and_sealed_maps() -> None:
    assert encrypted_value("ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]")
    assert encrypted_value("$ANSIBLE_VAULT;1.1;AES256")
    assert not encrypted_value("ENCRYPTED_Zq8Lm2Nx7Pr4")
    yaml = "spec:\n  encryptedData:\n    a: AgX\n    b: AgY\n  template:\n    c: Z\n"
    assert under_encrypted_data(yaml, yaml.index("AgX"))
    assert under_encrypted_data(yaml, yaml.index("AgY"))
    assert not under_encrypted_data(yaml, yaml.index("Z\n"))
    assert not under_encrypted_data("encryptedData: false\npassword: x\n", 28)
    js = '{"encryptedData": {"a": "AgX"}, "b": "Y"}'
    assert under_encrypted_data(js, js.index("AgX"))
    assert not under_encrypted_data(js, js.index('Y"'))
