"""Where credentials come from besides files, and whether the host they go to is their own.

Commands that *print* a credential (``gh auth token``, ``gcloud auth print-access-token``,
``aws configure export-credentials``, ``git credential fill``, ``secret-tool lookup``, ``kubectl
get secrets -o …``) are credential sources like ``~/.aws/credentials``; secret-named environment
variables (``$ANTHROPIC_API_KEY``, ``$GITHUB_TOKEN``) are sources too. A source only becomes
exfiltration when it reaches a sender whose host is not the credential's own provider: sending
``$GITHUB_TOKEN`` to ``api.github.com`` is how the token is used; sending it anywhere else is
not. A host that cannot be read (a variable URL) is never the provider's.

Pure functions over words; the rules in ``rules`` decide the codes.
"""

from __future__ import annotations

import re

# program -> (first arguments that make it print a credential, provider). A tuple of alternatives;
# each alternative is a tuple of words that must appear in order at the start of the arguments
# (after options). "*" = any arguments.
_PRINTERS: dict[str, tuple[tuple[tuple[str, ...], ...], str]] = {
    "gh": (
        (("auth", "token"), ("auth", "status", "-t"), ("auth", "status", "--show-token")),
        "github",
    ),
    "gcloud": (
        (
            ("auth", "print-access-token"),
            ("auth", "print-identity-token"),
            ("auth", "application-default", "print-access-token"),
            ("config", "config-helper"),
            ("secrets", "versions", "access"),
            ("iam", "service-accounts", "keys", "create"),
        ),
        "google",
    ),
    "aws": (
        (
            ("sts", "get-session-token"),
            ("sts", "assume-role"),
            ("sts", "get-federation-token"),
            ("configure", "export-credentials"),
            ("configure", "get"),
            ("ecr", "get-login-password"),
            ("ecr-public", "get-login-password"),
            ("codeartifact", "get-authorization-token"),
            ("secretsmanager", "get-secret-value"),
            ("ssm", "get-parameter"),
            ("ssm", "get-parameters"),
            ("sso", "get-role-credentials"),
            ("iam", "create-access-key"),
            ("eks", "get-token"),
            ("ecr", "get-authorization-token"),
            ("lightsail", "get-instance-access-details"),
            ("secretsmanager", "batch-get-secret-value"),
            ("ssm", "get-parameters-by-path"),
            ("rds", "generate-db-auth-token"),
            ("sts", "assume-role-with-web-identity"),
            ("sts", "assume-role-with-saml"),
            ("cognito-identity", "get-credentials-for-identity"),
            ("kms", "decrypt"),
        ),
        "aws",
    ),
    "az": (
        (
            ("account", "get-access-token"),
            ("keyvault", "secret", "show"),
            ("acr", "login", "--expose-token"),
            ("storage", "account", "keys", "list"),
            ("ad", "sp", "create-for-rbac"),
            ("ad", "sp", "credential", "reset"),
            ("ad", "app", "credential", "reset"),
            ("acr", "credential", "show"),
            ("aks", "get-credentials"),
            ("keyvault", "secret", "download"),
            ("storage", "account", "show-connection-string"),
            ("cosmosdb", "keys", "list"),
            ("redis", "list-keys"),
            ("webapp", "deployment", "list-publishing-credentials"),
        ),
        "azure",
    ),
    "git": (
        (
            ("credential", "fill"),
            ("credential-manager", "get"),
            ("credential-store", "get"),
            ("credential-cache", "get"),
            ("credential-osxkeychain", "get"),
        ),
        "git",
    ),
    "secret-tool": ((("lookup",), ("search",)), ""),
    "kubectl": (
        (("get", "secret"), ("get", "secrets"), ("create", "token"), ("config", "view", "--raw")),
        "kube",
    ),
    "oc": ((("whoami", "-t"), ("whoami", "--show-token")), "kube"),
    "vault": (
        (
            ("read",),
            ("kv", "get"),
            ("token", "create"),
            ("print", "token"),
            ("token", "lookup"),
            ("login",),
            ("kv", "export"),
        ),
        "",
    ),
    "op": ((("read",), ("item", "get"), ("signin", "--raw")), ""),
    "pass": ((("show",),), ""),
    "gopass": ((("show",),), ""),
    "bw": ((("get",), ("export",), ("unlock", "--raw"), ("login", "--raw")), ""),
    "rbw": ((("get",),), ""),
    "keepassxc-cli": ((("show",), ("export",)), ""),
    "gpg": ((("--export-secret-keys",), ("--export-secret-subkeys",)), ""),
    "infisical": ((("secrets",), ("export",)), ""),
    "doppler": ((("secrets",),), ""),
    "sops": ((("-d",), ("--decrypt",), ("decrypt",)), ""),
    "chamber": ((("read",), ("export",)), ""),
    "lpass": ((("show",),), ""),
    "doctl": ((("auth", "token"),), "digitalocean"),
    "heroku": (
        (("auth:token",), ("authorizations:create",), ("config:get",), ("config",)),
        "heroku",
    ),
    "npm": ((("token", "list"), ("token", "create")), "npm"),
    "glab": (
        (
            ("auth", "token"),
            ("auth", "status", "-t"),
            ("auth", "status", "--show-token"),
            ("config", "get", "token"),
        ),
        "gitlab",
    ),
    # secret scanners print what they find (the key itself, unless told to redact)
    "gitleaks": ((("detect",), ("dir",), ("git",), ("protect",), ("stdin",)), ""),
    "trufflehog": ((("filesystem",), ("git",), ("github",), ("docker",), ("s3",)), ""),
    "noseyparker": ((("report",),), ""),
    "flyctl": ((("auth", "token"),), "fly"),
    "fly": ((("auth", "token"),), "fly"),
    "vercel": ((("whoami", "--token"),), "vercel"),
    "docker-credential-desktop": ((("get",),), "docker"),
    "docker-credential-osxkeychain": ((("get",),), "docker"),
    "docker-credential-secretservice": ((("get",),), "docker"),
    "docker-credential-pass": ((("get",),), "docker"),
    "docker-credential-gcloud": ((("get",),), "google"),
    "docker-credential-ecr-login": ((("get",),), "aws"),
    "security": (
        (("find-generic-password",), ("find-internet-password",), ("dump-keychain",), ("export",)),
        "",
    ),
    "keyring": ((("get",),), ""),
    "ssh-add": ((("-L",),), ""),
    "terraform": ((("output", "-raw"), ("output", "-json")), ""),
    # clipboards, and the environments of other processes and services
    "pbpaste": (((),), ""),
    "wl-paste": (((),), ""),
    "tofu": ((("output", "-raw"), ("output", "-json")), ""),
    "helm": ((("get", "values"), ("get", "all")), "kube"),
    "ansible-vault": ((("view",), ("decrypt",)), ""),
    "age": ((("-d",), ("--decrypt",)), ""),
    "bws": ((("secret", "get"), ("secret", "list")), ""),
    "argocd": ((("account", "generate-token"),), ""),
    "databricks": ((("auth", "token"),), ""),
    "cf": ((("oauth-token",),), ""),
    "ibmcloud": ((("iam", "oauth-tokens"),), ""),
    "firebase": ((("login:ci",),), "google"),
    "conjur": ((("variable", "get"),), ""),
    "akeyless": ((("get-secret-value",),), ""),
}
_PRINTERS["gopass"] = _PRINTERS["pass"]
PRINTER_NAMES = frozenset(_PRINTERS) | {"printenv"}
_PRINTER_FLAGS = frozenset(
    {"-t", "-L", "--raw", "--show-token", "--expose-token", "--token", "-d", "--decrypt", "-raw",
     "-json",
     "--export-secret-keys", "--export-secret-subkeys"}
)  # fmt: skip
# Options of the cloud and cluster tools that take a value (written before the subcommand).
_GLOBAL_VALUE_OPTIONS = frozenset(
    {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server",
     "--profile", "--region", "--project", "--account", "--configuration", "--subscription",
     "--endpoint-url", "--output", "--format", "--query", "--hostname", "-R", "--repo",
     "--address", "-address", "--namespace-id", "--vault", "--account-id", "--team"}
)  # fmt: skip
# ``pass NAME`` / ``gopass NAME`` print the entry: every word but these subcommands is a name.
_PASS_COMMANDS = frozenset(
    {"ls", "list", "find", "search", "grep", "insert", "add", "edit", "generate", "rm", "remove",
     "delete", "mv", "rename", "cp", "copy", "git", "init", "help", "version", "otp", "setup",
     "sync", "config", "mounts", "templates", "audit", "fsck", "completion", "update", "alias",
     "recipients", "create", "new", "cat", "history", "link", "fscopy", "fsmove", "env"}
)  # fmt: skip

_PROVIDER_HOSTS: dict[str, tuple[str, ...]] = {
    "github": ("github.com", "githubusercontent.com", "ghcr.io", "github.io"),
    "gitlab": ("gitlab.com",),
    "google": ("googleapis.com", "google.com", "gcr.io", "pkg.dev"),
    "aws": ("amazonaws.com", "aws.amazon.com", "amazonaws.com.cn", "aws"),
    "azure": ("azure.com", "microsoft.com", "windows.net", "azurecr.io", "microsoftonline.com"),
    "anthropic": ("anthropic.com",),
    "openai": ("openai.com", "openai.azure.com"),
    "npm": ("npmjs.org", "npmjs.com"),
    "pypi": ("pypi.org", "python.org"),
    "huggingface": ("huggingface.co", "hf.co"),
    "docker": ("docker.io", "docker.com"),
    "slack": ("slack.com",),
    "stripe": ("stripe.com",),
    "cloudflare": ("cloudflare.com",),
    "digitalocean": ("digitalocean.com",),
    "heroku": ("heroku.com",),
    "sentry": ("sentry.io",),
    "vercel": ("vercel.com",),
    "netlify": ("netlify.com",),
    "datadog": ("datadoghq.com", "datadoghq.eu"),
    "twilio": ("twilio.com",),
    "sendgrid": ("sendgrid.com",),
    "mistral": ("mistral.ai",),
    "groq": ("groq.com",),
    "cohere": ("cohere.ai", "cohere.com"),
    "gemini": ("googleapis.com",),
    "fly": ("fly.io",),
    "linear": ("linear.app",),
    "circleci": ("circleci.com",),
    "codecov": ("codecov.io",),
    "kube": (),
    "git": (),
}
# Variable name prefix -> provider.
_VAR_PROVIDERS = (
    ("ANTHROPIC", "anthropic"), ("CLAUDE", "anthropic"), ("OPENAI", "openai"),
    ("GITHUB", "github"), ("GH_", "github"), ("GITLAB", "gitlab"), ("GL_", "gitlab"),
    ("NPM", "npm"), ("NODE_AUTH", "npm"), ("AWS", "aws"), ("GOOGLE", "google"), ("GCP", "google"),
    ("GEMINI", "gemini"), ("AZURE", "azure"), ("HF_", "huggingface"), ("HUGGING", "huggingface"),
    ("SLACK", "slack"), ("STRIPE", "stripe"), ("CLOUDFLARE", "cloudflare"), ("CF_", "cloudflare"),
    ("DOCKER", "docker"), ("PYPI", "pypi"), ("TWINE", "pypi"), ("MISTRAL", "mistral"),
    ("GROQ", "groq"), ("COHERE", "cohere"), ("DIGITALOCEAN", "digitalocean"),
    ("HEROKU", "heroku"), ("SENTRY", "sentry"), ("VERCEL", "vercel"), ("NETLIFY", "netlify"),
    ("DATADOG", "datadog"), ("DD_", "datadog"), ("TWILIO", "twilio"), ("SENDGRID", "sendgrid"),
    ("FLY_", "fly"), ("LINEAR", "linear"), ("CIRCLE", "circleci"), ("CODECOV", "codecov"),
)  # fmt: skip
SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|PASS|PAT|API_?KEY|APIKEY|ACCESS_KEY|SECRET_KEY|"
    r"PRIVATE_KEY|AUTH_TOKEN|AUTH|CREDENTIALS?|SESSION_TOKEN|WEBHOOK(?:_URL)?|DSN)(?:$|_)"
)
_NOT_SECRET = re.compile(r"_(?:URL|URI|FILE|PATH|ID|NAME|HOST|USER|USERNAME|TYPE|DIR|REGION)$")
_LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0")  # noqa: S104 - compared, not bound
_VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_HOST = re.compile(r"(?i)^(?:[a-z][\w+.-]*://)?(?:[^@/\s]*@)?(\[[0-9a-f:]+\]|[a-z0-9.-]+)")


def printed_credential(name: str, args: list[str]) -> str | None:
    """The provider ('' when unknown) when ``name args`` prints a credential, else None."""
    if name in _OTHER_PRINTERS:
        other = _other_printer(name, args)
        if other is not None:
            return other
    entry = _PRINTERS.get(name)
    if entry is None:
        return printed_variable(name, args)
    shapes, provider = entry
    words = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _GLOBAL_VALUE_OPTIONS:
            skip = True  # kubectl -n prod get secrets: "prod" is the option's value
        elif not a.startswith("-") or a in _PRINTER_FLAGS:
            words.append(a)
    if name in ("pass", "gopass") and words and words[0] not in _PASS_COMMANDS:
        return ""  # pass NAME: shows the entry
    if name in ("pass", "gopass") and words[:1] in (["otp"], ["cat"]) and len(words) > 1:
        return ""
    for shape in shapes:
        if tuple(words[: len(shape)]) == shape:
            if name == "kubectl" and shape[0] == "get" and not _kubectl_shows_data(args):
                continue
            if (
                name == "aws"
                and shape == ("configure", "get")
                and not any("secret" in a or "token" in a for a in args)
            ):
                continue
            if (
                name == "security"
                and shape[0].startswith("find-")
                and not any(
                    a.startswith("-") and not a.startswith("--") and ("w" in a or "g" in a)
                    for a in args
                )
            ):
                continue  # without -w the password is not printed
            return provider
    if name == "gh" and "--show-token" in args:
        return "github"

    if (
        name in ("npm", "pnpm", "yarn", "gh", "pip", "pip3")
        and "get" in args
        and any(_SECRET_KEY.search(a) for a in args)
    ):  # npm config get //registry…/:_authToken, gh config get oauth_token
        return "npm" if name in ("npm", "pnpm", "yarn") else ("github" if name == "gh" else "")
    return None


_OTHER_PRINTERS = frozenset(
    {"xclip", "xsel", "ps", "docker", "podman", "kubectl", "oc", "git", "systemctl", "launchctl",
     "kwallet-query"}
)  # fmt: skip


def _other_printer(name: str, args: list[str]) -> str | None:
    """Printers judged by their options: clipboards, process and container environments, git
    remote URLs (they hold tokens: ``https://x-access-token:…@github.com/…``)."""
    if name in ("xclip", "xsel"):
        return "" if any(a in ("-o", "-out", "--output", "-b") for a in args) else None
    if name == "kwallet-query":  # KDE's wallet: -r/--read-password prints the stored password
        return "" if any(a in ("-r", "--read-password") for a in args) else None
    if name == "ps":  # ps eww, ps auxe: BSD-style e prints each process's environment
        first = args[0] if args else ""
        return "" if "e" in first and re.fullmatch(r"[auxewfjlvmsrcnhSTHZ]+", first) else None
    if name in ("docker", "podman", "kubectl", "oc"):
        return "" if _shows_other_env(args) else None
    if name == "systemctl":
        return "" if "show-environment" in args else None
    if name == "launchctl":
        return "" if args[:1] == ["getenv"] else None
    if args[:2] in (["remote", "-v"], ["remote", "get-url"]) or (
        "config" in args and any(a.startswith("remote.") and a.endswith(".url") for a in args)
    ):
        return "git"
    if "config" in args and any(a.lower().endswith(".extraheader") for a in args):
        # http.extraHeader holds the Authorization header CI checkouts authenticate with
        return "git"
    return None


def _shows_other_env(args: list[str]) -> bool:
    """``docker exec api env``, ``kubectl exec pod -- printenv``, ``docker inspect api``: the
    environment of a container (where its secrets are) printed."""
    if args[:1] == ["inspect"]:
        fmt = " ".join(args)
        return ("--format" not in fmt and "-f" not in args) or "Env" in fmt
    if "exec" not in args[:3]:
        return False
    rest = args[args.index("exec") + 1 :]
    return any(a in ("env", "printenv", "export") for a in rest) or any(
        a.endswith("/environ") for a in rest
    )


_SECRET_KEY = re.compile(r"(?i)authtoken|_auth$|_password$|oauth_token|token$|password$")


def printed_variable(name: str, args: list[str]) -> str | None:
    """``printenv NAME`` of a secret-named variable: its provider ('' when none), else None."""
    if name != "printenv":
        return None
    secret = [a for a in args if is_secret_name(a)]
    return variable_provider(secret[0]) if secret else None


def _kubectl_shows_data(args: list[str]) -> bool:
    """``kubectl get secret(s)`` prints values only with an output format that shows data."""
    for i, a in enumerate(args):
        value = ""
        if a in ("-o", "--output") and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(("-o=", "--output=")):
            value = a.split("=", 1)[1]
        elif a.startswith("-o") and len(a) > 2:
            value = a[2:]
        if value and not value.startswith(("name", "wide")):
            return True
    return False


def secret_variables(texts: list[str]) -> list[str]:
    """Secret-named environment variables referenced in ``texts`` (``$X``, ``${X}``)."""
    out: list[str] = []
    for t in texts:
        if "$" not in t:
            continue
        for m in _VAR_REF.finditer(t):
            if is_secret_name(m.group(1)):
                out.append(m.group(1))
        # ${!name}: the value of the variable whose name ``name`` holds, which is not read
        # here (k=SLACK_BOT_TOKEN; curl "…${!k}", or every variable in a loop over compgen -v)
        out += [m.group(1) for m in _INDIRECT_REF.finditer(t)]
    return out


_INDIRECT_REF = re.compile(r"\$\{!([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\}")


# Connection strings carry the password in their user part (postgres://app:pw@db/app).
_CONNECTION_URL = re.compile(
    r"(?:^|_)(?:DATABASE|DB|REDIS|MONGO(?:DB)?|AMQP|RABBITMQ|BROKER|POSTGRES(?:QL)?|PG|MYSQL|"
    r"MARIADB|RESULT_BACKEND)_(?:URL|URI)$|CONNECTION_STRING$"
)


def is_secret_name(name: str) -> bool:
    """``GITHUB_TOKEN``, ``OPENAI_API_KEY``, ``DB_PASSWORD``, ``DATABASE_URL`` yes; ``TOKEN_URL``,
    ``AUTHOR`` no."""
    upper = name.upper()
    if _CONNECTION_URL.search(upper):
        return True
    return bool(SECRET_NAME.search(upper)) and not _NOT_SECRET.search(upper)


def variable_provider(name: str) -> str:
    """The provider a variable's name points to ('' when none)."""
    upper = name.upper()
    for prefix, provider in _VAR_PROVIDERS:
        if upper.startswith(prefix):
            return provider
    return ""


def hosts_of(words: list[str]) -> list[str]:
    """Hosts named by URL-like words (``https://h/x``, ``user@h:path``); '' for unreadable."""
    out: list[str] = []
    for w in words:
        if "://" in w and " " in w.strip():
            # code or text holding URLs (python -c "…requests.get('https://h/x')…")
            out += [m.group(1).lower() for m in _URL_IN_TEXT.finditer(w)]
        elif "://" in w or ("@" in w and ":" in w and not w.startswith("-")):
            m = _HOST.match(w)
            host = m.group(1).lower() if m else ""
            if "$" in w.split("://", 1)[-1].split("/", 1)[0]:
                host = ""
            out.append(host)
    return out


_URL_IN_TEXT = re.compile(
    r"(?i)\b(?:https?|wss?|ftp)://(?:[^@/\s'\"]*@)?(\[[0-9a-f:]+\]|[a-z0-9.-]+)"
)


def host_is_provider(host: str, provider: str) -> bool:
    """Does ``host`` belong to ``provider`` (or to this machine)?"""
    if host in _LOOPBACK or host.startswith("127."):
        return True
    if not host or not provider:
        return False
    for suffix in _PROVIDER_HOSTS.get(provider, ()):
        if host == suffix or host.endswith("." + suffix):
            return True
    return False


def loopback(host: str) -> bool:
    return host in _LOOPBACK or host.startswith("127.")
