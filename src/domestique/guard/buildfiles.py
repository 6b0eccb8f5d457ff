"""Text written into files a tool runs or installs from (issue 17, round 8).

A file some tool runs by itself (pytest's ``conftest.py``, ``setup.py``, a Makefile's recipes,
``package.json`` scripts, ``.envrc`` after ``direnv allow``, git hooks) holds code: what is
written there is judged as the code it is (:func:`code_in`). A file installs and builds read
their sources from (requirements, lock files, ``go.mod``, ``Cargo.toml``, a Dockerfile's
``FROM``, a CI workflow) holds places: text that points them at another source is
:func:`sources_in`. Plain edits (a version bumped, a test added) give nothing.

Pure functions of a path (as :func:`~domestique.guard.paths.canonical_for_match` gives it) and
the text written; the unfold stage calls them for every literal text it sees written (echo,
printf, cat/tee here-documents, ``sed -i`` replacements, interpreter writes).
"""

from __future__ import annotations

import json
import re

from domestique.guard.rules.vocab import is_control_variable

# Python files a tool runs without being named: pytest, pip/setuptools, nox, fabric, doit, invoke
_PYTHON_RUN = re.compile(r"(?:^|/)(?:conftest|setup|noxfile|fabfile|dodo|pavement|tasks)\.py$")
# Shell files a tool runs: direnv's .envrc, git hooks (also husky's and a hooksPath folder)
_SHELL_RUN = re.compile(
    r"(?:^|/)(?:\.envrc|\.env\.sh|\.git/hooks/[^/]+|\.husky/[^/]+|\.githooks/[^/]+)$"
)
_MAKEFILE = re.compile(r"(?:^|/)(?:GNUmakefile|[Mm]akefile|[^/]+\.mk)$")
_JUSTFILE = re.compile(r"(?:^|/)\.?[Jj]ustfile$")
_PACKAGE_JSON = re.compile(r"(?:^|/)package\.json$")
_RUBY_RUN = re.compile(r"(?:^|/)(?:Rakefile|rakefile|Gemfile|[^/]+\.gemspec)$")
_JS_RUN = re.compile(
    r"(?:^|/)(?:[\w.-]+\.config\.(?:js|cjs|mjs|ts)|\.eslintrc\.c?js|\.prettierrc\.c?js|"
    r"Gruntfile\.js|gulpfile\.js)$"
)
_PRE_COMMIT = re.compile(r"(?:^|/)\.pre-commit-config\.ya?ml$")
_GO_SOURCE = re.compile(r"\.go$")
_RECIPE = re.compile(r"(?m)^\t+(.+)$|^[^\t#=\n][^:=\n]*::?[^;=\n]*;(.+)$")
_JUST_RECIPE = re.compile(r"(?m)^(?:\t| {2,})(?![#])(.+)$")
_SCRIPT_ENTRY = re.compile(r'"([\w:.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"')
_GO_GENERATE = re.compile(r"(?m)^\s*//go:generate\s+(.+)$")
_ENTRY = re.compile(r"(?m)^\s*-?\s*entry:\s*(.+)$")


def code_in(path: str, text: str) -> list[tuple[str, str]]:
    """(language, code) pieces ``text`` puts into ``path`` that a tool runs by itself."""
    if _PYTHON_RUN.search(path):
        return [("python", text)]
    if _SHELL_RUN.search(path):
        return [("shell", text)]
    if _MAKEFILE.search(path):
        recipes = [m.group(1) or m.group(2) for m in _RECIPE.finditer(text)]
        if not recipes:
            return []
        # make's `$$` is a `$` for the shell, `$(HOME)` the environment's HOME
        code = "\n".join(r.strip().lstrip("@-+") for r in recipes if r)
        return [("shell", re.sub(r"\$[({](\w+)[)}]", r"$\1", code.replace("$$", "$")))]
    if _JUSTFILE.search(path):
        lines = [m.group(1).strip().lstrip("@-") for m in _JUST_RECIPE.finditer(text)]
        return [("shell", "\n".join(lines))] if lines else []
    if _PACKAGE_JSON.search(path):
        return [("shell", s) for s in _package_scripts(text)]
    if _RUBY_RUN.search(path):
        return [("ruby", text)]
    if _JS_RUN.search(path):
        return [("node", text)]
    if _PRE_COMMIT.search(path):
        return [("shell", m.group(1).strip().strip("'\"")) for m in _ENTRY.finditer(text)]
    if _GO_SOURCE.search(path) and "go:generate" in text:
        return [("shell", m.group(1)) for m in _GO_GENERATE.finditer(text)]
    return []


def _package_scripts(text: str) -> list[str]:
    """The script commands of package.json text: its ``scripts`` object when the text is JSON,
    else every ``"name": "value"`` pair of a fragment that mentions scripts."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        scripts = data.get("scripts")
        if isinstance(scripts, dict):
            return [v for v in scripts.values() if isinstance(v, str)]
        return []
    if '"scripts"' not in text and not re.search(r'"(?:pre|post)?(?:install|prepare)"', text):
        return []
    return [
        m.group(2).replace('\\"', '"') for m in _SCRIPT_ENTRY.finditer(text)
        if m.group(1) != "scripts"
    ]  # fmt: skip


# ---------------------------------------------------------------- sources

_REQUIREMENTS = re.compile(
    r"(?:^|/)(?:requirements|constraints)[\w.-]*\.(?:txt|in)$|(?:^|/)requirements/[^/]+\.(?:txt|in)$"
)
_LOCK_FILES = re.compile(
    r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lock|"
    r"poetry\.lock|Pipfile\.lock|pdm\.lock|uv\.lock|Cargo\.lock|Gemfile\.lock|composer\.lock|"
    r"go\.sum|packages\.lock\.json|Podfile\.lock|mix\.lock|pubspec\.lock)$"
)
_REGISTRY_CONFIG = re.compile(
    r"(?:^|/)(?:\.npmrc|\.yarnrc(?:\.yml)?|pip\.conf|pip\.ini|\.condarc|\.gemrc|bunfig\.toml|"
    r"\.cargo/config(?:\.toml)?|\.bundle/config|Pipfile|Gemfile)$"
)
_GO_MOD = re.compile(r"(?:^|/)go\.mod$")
_CARGO_TOML = re.compile(r"(?:^|/)Cargo\.toml$")
_PYPROJECT = re.compile(r"(?:^|/)pyproject\.toml$")
_DOCKERFILE = re.compile(
    r"(?:^|/)(?:(?:Docker|Container)file(?:\.[\w.-]+)?|[\w.-]+\.(?:Dockerfile|dockerfile))$"
)
_WORKFLOW = re.compile(
    r"(?:^|/)(?:\.github/workflows/[^/]+|\.gitlab-ci[^/]*|\.circleci/config|azure-pipelines|"
    r"bitbucket-pipelines|\.drone|\.travis)\.ya?ml$"
)

# Registries installs use by default (their own download hosts included).
_DEFAULT_HOSTS = frozenset(
    {"registry.npmjs.org", "registry.yarnpkg.com", "registry.npmmirror.com", "pypi.org",
     "files.pythonhosted.org", "pypi.python.org", "crates.io", "index.crates.io",
     "static.crates.io", "rubygems.org", "index.rubygems.org", "repo.packagist.org",
     "packagist.org", "api.nuget.org", "conda.anaconda.org",
     "repo.anaconda.com", "registry.bower.io", "pub.dev", "cdn.cocoapods.org", "hex.pm",
     "repo.hex.pm", "repo.maven.apache.org", "repo1.maven.org", "jsr.io",
     "npm.pkg.github.com", "maven.pkg.github.com", "rubygems.pkg.github.com"}
)  # fmt: skip
_URL = re.compile(
    r"(?i)\b(?:git\+|hg\+|svn\+|bzr\+)?(?:https?|git|ssh|ftp)://([^/\s'\"<>@]+@)?([^/\s'\"<>:#?]+)"
)
_SCP_URL = re.compile(r"\bgit@([\w.-]+):")
_INDEX_LINE = re.compile(
    r"(?m)^\s*(?:-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host)(?:=|\s+)(\S+)"
)
_REQ_REMOTE = re.compile(
    r"(?m)^\s*(?:[\w.\[\],-]+\s*@\s*)?(?:git\+|hg\+|svn\+|bzr\+)?\w+://\S+|^\s*(?:git\+|hg\+|svn\+|bzr\+)\S+"
)
_GO_REPLACE = re.compile(r"(?m)^\s*(?:replace\s+)?(\S+)(?:\s+v\S+)?\s*=>\s*(\S+)")
_SECRET_EXPR = re.compile(r"\$\{\{\s*secrets\.(\w+)\s*\}\}")
_MAPPING_ONLY = re.compile(r"^\s*-?\s*[\w.-]+:\s*[\"']?\$\{\{\s*secrets\.\w+\s*\}\}[\"']?\s*$")
_PRINTS = re.compile(
    r"(?:^|[|;&(]\s*|\brun:\s*)(?:echo|printf|cat|base64|xxd|od|rev|tee|printenv)\b|\|\s*(?:base64|xxd|od|rev|sed|tr)\b"
)


def default_hosts_in(text: str) -> list[str]:
    """The default registry hosts named in ``text`` (a sed pattern that swaps one out)."""
    low = text.lower().replace("\\.", ".")
    return [h for h in _DEFAULT_HOSTS if h in low]


def installs_from(path: str) -> bool:
    """Is ``path`` a file installs read their sources from?"""
    return any(p.search(path) for p in (_REQUIREMENTS, _LOCK_FILES, _REGISTRY_CONFIG, _GO_MOD,
                                        _CARGO_TOML, _PYPROJECT, _PACKAGE_JSON))  # fmt: skip


def _foreign_urls(text: str) -> list[str]:
    """Hosts of the URLs in ``text`` that are no default registry."""
    out = [m.group(2).lower() for m in _URL.finditer(text)]
    out += [m.group(1).lower() for m in _SCP_URL.finditer(text)]
    return [h for h in out if h not in _DEFAULT_HOSTS and not h.endswith(".pythonhosted.org")]


_CARGO_SOURCE = re.compile(
    r"(?m)^\s*\[(?:patch\.|source\.|tool\.(?:uv\.index|poetry\.source|pdm\.source))|"
    r"\bgit\s*=\s*['\"]|\bregistry(?:-index)?\s*=\s*['\"]|git\+\w+://|\bindex-url\s*="
)
_NODE_DEPENDENCY = re.compile(
    r'"[\w@/.-]+"\s*:\s*"((?:git\+\w+|git|https?|github|gitlab|bitbucket|file\+https?):[^"]*)"'
)
_FROM = re.compile(r"(?im)^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)")


def _installs(why: str) -> list[tuple[str, str]]:
    return [("cmd.untrusted_install", why)]


def sources_in(path: str, text: str) -> list[tuple[str, str]]:
    """(code, message) for text that points ``path``'s installs or builds at another source,
    or (CI) prints a secret."""
    base = path.rsplit("/", 1)[-1]
    if _REQUIREMENTS.search(path):
        for index in _INDEX_LINE.finditer(text):
            if _foreign_urls(index.group(1)) or "://" not in index.group(1):
                return _installs(f"{base} sends installs to {index.group(1)[:60]}")
        remote = _REQ_REMOTE.search(text)
        return _installs(f"{base} installs from {remote.group().strip()[:60]}") if remote else []
    if _LOCK_FILES.search(path) or _REGISTRY_CONFIG.search(path):
        foreign = _foreign_urls(text)
        return _installs(f"{base} points installs at {foreign[0]}") if foreign else []
    if _GO_MOD.search(path):
        for rep in _GO_REPLACE.finditer(text):
            why = foreign_replace(rep.group(1), rep.group(2))
            if why:
                return _installs(f"go.mod {why}")
        return []
    if _CARGO_TOML.search(path) or _PYPROJECT.search(path):
        foreign = _foreign_urls(text) if _CARGO_SOURCE.search(text) else []
        return _installs(f"{base} builds from {foreign[0]}") if foreign else []
    if _PACKAGE_JSON.search(path):
        dep = _NODE_DEPENDENCY.search(text)
        return _installs(f"package.json depends on {dep.group(1)[:60]}") if dep else []
    if _DOCKERFILE.search(path):
        for image in _FROM.finditer(text):
            why = foreign_image(image.group(1))
            if why:
                return _installs(f"the Dockerfile builds FROM {why}")
        return []
    if _WORKFLOW.search(path) and "secrets." in text:
        return _workflow_secrets(text)
    return []


def _workflow_secrets(text: str) -> list[tuple[str, str]]:
    """A CI step that prints a secret (``echo ${{ secrets.X }} | base64``: the log shows it,
    masking defeated) is a credential read; one that sends it is judged as shell by the
    caller (:func:`workflow_code`)."""
    for line in text.splitlines():
        if "secrets." not in line or _MAPPING_ONLY.match(line):
            continue  # `token: ${{ secrets.X }}`, `env: NAME: ${{ secrets.X }}`: handed to a step
        if _PRINTS.search(line):
            name = _SECRET_EXPR.search(line)
            return [
                (
                    "cmd.credential_read",
                    f"a CI step prints the secret {name.group(1) if name else ''} to its log",
                )
            ]
    return []


def workflow_code(path: str, text: str) -> list[str]:
    """The shell lines of CI text that use a secret, each ``${{ secrets.X }}`` as ``"$X"``
    (judged where it is sent: ``curl -d "$AWS_SECRET_ACCESS_KEY" https://…``)."""
    if not _WORKFLOW.search(path) or "secrets." not in text:
        return []
    out = []
    for line in text.splitlines():
        if "secrets." in line and not _MAPPING_ONLY.match(line):
            body = re.sub(r"^\s*-?\s*(?:run|script|command):\s*\|?", "", line).strip()
            body = re.sub(r"^\s*-\s+", "", body)
            out.append(_SECRET_EXPR.sub(_secret_variable, body))
    return out


def _secret_variable(m: re.Match[str]) -> str:
    """``${{ secrets.X }}`` as the shell variable it amounts to, named so that it reads as a
    secret (every value under ``secrets.`` is one, whatever its name)."""
    from domestique.guard.flows import is_secret_name

    name = m.group(1)
    return '"$' + (name if is_secret_name(name) else name + "_SECRET") + '"'


def _module_root(path: str) -> tuple[str, ...]:
    """A module path's host and owner (``github.com/gin-gonic``), or its host and first part."""
    parts = path.split("@", 1)[0].strip("\"'").split("/")
    return tuple(parts[:2])


def foreign_replace(old: str, new: str) -> str | None:
    """Why ``replace OLD => NEW`` points a Go module elsewhere: NEW is not a local folder and
    names another host or owner than OLD. None otherwise."""
    if new.startswith(("./", "../", "/", "~")) or new in (".", ".."):
        return None
    if _module_root(old) == _module_root(new):
        return None  # the same module at another version
    return f"replaces {old[:50]} with {new[:60]}"


# Public registries an image may name; and Docker Hub spelled in full.
_KNOWN_REGISTRIES = re.compile(
    r"(?i)^(?:docker\.io|index\.docker\.io|registry-1\.docker\.io|ghcr\.io|quay\.io|gcr\.io|"
    r"[a-z]+\.gcr\.io|[a-z0-9-]+-docker\.pkg\.dev|mcr\.microsoft\.com|public\.ecr\.aws|"
    r"\d+\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com|registry\.k8s\.io|k8s\.gcr\.io|"
    r"registry\.gitlab\.com|nvcr\.io|cgr\.dev|registry\.access\.redhat\.com|registry\.redhat\.io|"
    r"[a-z0-9-]+\.azurecr\.io|docker\.elastic\.co|registry\.fedoraproject\.org|lscr\.io|"
    r"localhost(?::\d+)?|127\.0\.0\.1(?::\d+)?)$"
)
_DIGIT_LETTERS = str.maketrans("0134578", "oleastb")


def foreign_image(ref: str) -> str | None:
    """Why a ``FROM`` image is not from a known place: a registry host that is no public one,
    or a Docker Hub namespace dressed as an official image (``pyth0n-official/python``)."""
    if ref.startswith("$") or ref.lower() == "scratch" or "/" not in ref:
        return None  # a build argument, an official image, no image
    first, rest = ref.split("/", 1)
    if "." in first or ":" in first or first == "localhost":
        if not _KNOWN_REGISTRIES.match(first):
            return f"{ref[:60]} (registry {first} is no known public one)"
        if first.lower() not in ("docker.io", "index.docker.io", "registry-1.docker.io"):
            return None
        if "/" not in rest:
            return None
        first, rest = rest.split("/", 1)
    namespace = first.lower()
    name = rest.split(":", 1)[0].split("@", 1)[0].rsplit("/", 1)[-1].lower()
    folded = namespace.translate(_DIGIT_LETTERS)
    if namespace != "library" and (
        "official" in namespace or folded == "library" or (folded != namespace and name in folded)
    ):
        return f"{ref[:60]} (namespace {first} poses as an official image's)"
    return None


_PERL_IN_PLACE = re.compile(r"^-[a-zA-Z]*i")
_SED_TEXT = re.compile(r"(?:^|[;\n])\s*(?:\$|\d+|/[^/]*/)?\s*[aic]\\?\s*(.*?)(?=$|\n)", re.S)


def sed_inserted(script: str) -> list[tuple[str, str]]:
    """(pattern, text) a sed script puts into a file: each ``s`` command's pattern and
    replacement, and the text of ``a``/``i``/``c`` commands (GNU one-line forms and ``a\\``;
    pattern "")."""
    out: list[tuple[str, str]] = []
    i = 0
    n = len(script)
    while i < n:
        j = script.find("s", i)
        if j < 0 or j + 1 >= n:
            break
        d = script[j + 1]
        before = script[j - 1] if j > 0 else ""
        if d.isalnum() or d in " \n\\" or before.isalpha() or before == "\\":
            i = j + 1
            continue
        parts: list[str] = []
        k = j + 2
        cur = ""
        while k < n and len(parts) < 2:
            c = script[k]
            if c == "\\" and k + 1 < n:
                nxt = script[k + 1]
                cur += nxt if nxt == d else ("\n" if nxt == "n" else c + nxt)
                k += 2
                continue
            if c == d:
                parts.append(cur)
                cur = ""
            else:
                cur += c
            k += 1
        if len(parts) == 2:
            out.append((parts[0], parts[1].replace("\\t", "\t")))
        i = k
    if not out:
        for m in _SED_TEXT.finditer(script):
            if m.group(1).strip():
                out.append(("", m.group(1).replace("\\n", "\n").replace("\\t", "\t")))
    return out


def in_place_edit(name: str, words: list[str]) -> tuple[list[tuple[str, str]], list[str]] | None:
    """``sed -i SCRIPT FILE…`` / ``perl -pi -e CODE FILE…``: the (pattern, text) pairs the edit
    puts into the files, and the files; None when it edits nothing in place (or reads its
    script from a file)."""
    scripts: list[str] = []
    files: list[str] = []
    if name == "perl":  # perl -pi -e 's#old#NEW#' FILE: sed's substitution, in place
        if not any(_PERL_IN_PLACE.match(w) for w in words):
            return None
        for k, w in enumerate(words):
            if w.startswith("-") and not w.startswith("--"):
                if w.endswith("e") and k + 1 < len(words):
                    scripts.append(words[k + 1])
            elif k == 0 or words[k - 1][:1] != "-" or not words[k - 1].endswith("e"):
                files.append(w)
    elif not any(w.startswith(("-i", "--in-place")) for w in words):
        return None
    i = len(words) if name == "perl" else 0
    while i < len(words):
        t = words[i]
        if t in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            i += 2
            continue
        if t.startswith("--expression="):
            scripts.append(t.split("=", 1)[1])
        elif t in ("-f", "--file") or t.startswith("-"):
            if t in ("-f", "--file"):
                return None  # a script in a file: not read
        elif (
            not scripts
            and not files
            and not any(w in ("-e", "--expression") or w.startswith("--expression=") for w in words)
        ):
            scripts.append(t)
        else:
            files.append(t)
        i += 1
    return [p for s in scripts for p in sed_inserted(s)], files


# Cron tables: their commands run on schedule (judged as shell where they are written).
CRON_FILE = re.compile(
    r"(?:^|/)(?:etc/crontab|etc/cron\.d/[^/]+|var/spool/cron/(?:crontabs/)?[^/]+)$"
)
_CRON_SPECIAL = re.compile(r"^@\w+\s+")
_CRON_SCHEDULE = re.compile(r"^(?:\S+\s+){5}")


def cron_commands(table: str, *, user_field: bool) -> str:
    """The commands of a cron table, one a line (schedules, variables and comments dropped)."""
    out: list[str] = []
    for raw in table.replace("\\n", "\n").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or re.match(r"^[A-Za-z_]\w*=", line):
            continue
        rest = (
            _CRON_SPECIAL.sub("", line, count=1)
            if line.startswith("@")
            else (_CRON_SCHEDULE.sub("", line, count=1))
        )
        if user_field and rest:
            rest = rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else ""
        if rest:
            out.append(rest)
    return "\n".join(out)


# Env files agent CLIs load by themselves: Codex's CODEX_HOME/.env, Gemini CLI's ~/.gemini/.env,
# a project's .gemini/.env and ~/.env, the same under an agent's config folder.
_AGENT_ENV_FILE = re.compile(
    r"(?:^~/\.env|(?:^|/)\.(?:codex|claude|gemini|cursor|copilot|aider)/(?:[^/]+/)*"
    r"\.env(?:\.[\w-]+)?|^~/\.config/(?:codex|claude|gemini)/(?:[^/]+/)*\.env)$"
)
_ASSIGNED = re.compile(r"(?m)^\s*(?:export\s+)?([A-Za-z_]\w*)\s*=")


def agent_env_control(path: str, text: str) -> str | None:
    """The proxy or model-endpoint variable ``text`` sets in an env file an agent loads at
    start (``ANTHROPIC_BASE_URL=…`` into ``~/.codex/.env``): every later session of that
    agent is routed around the firewall. None for another file or no such variable."""
    if not _AGENT_ENV_FILE.search(path):
        return None
    return next((m.group(1) for m in _ASSIGNED.finditer(text) if is_control_variable(m.group(1))),
                None)  # fmt: skip
