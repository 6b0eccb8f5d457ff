"""Package installs and runs from places other than the default registries.

``pip install requests`` fetches from PyPI under its name; ``pip install git+https://…``,
``pip install https://…/x.tar.gz``, ``--index-url``/``--extra-index-url`` to another index,
``npm exec github:…``, ``go run …@latest``, ``cargo install --git`` and their kind run whoever's
code the URL names at install time. So does ``python setup.py install`` (the project's own
script, with the machine's permissions). Pure functions over argument lists.
"""

from __future__ import annotations

import re

PIP_NAMES = frozenset({"pip", "pip3", "pipx", "uv", "uvx", "poetry", "pdm", "pipenv", "conda"})
NODE_NAMES = frozenset({"npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno"})
OTHER_NAMES = frozenset(
    {"go", "cargo", "gem", "composer", "bundle", "dotnet", "nuget", "brew", "mamba", "micromamba"}
)
NAMES = PIP_NAMES | NODE_NAMES | OTHER_NAMES

# A requirement that names a place instead of a package: URLs, VCS URLs, archives on a server.
_REMOTE_SPEC = re.compile(
    r"(?i)^(?:[\w.\[\],-]+\s*@\s*)?(?:git\+|hg\+|svn\+|bzr\+)?(?:https?|ftp|git|ssh)://|"
    r"^(?:git\+|hg\+|svn\+|bzr\+)|^git@[\w.-]+:"
)
# npm-family specs that are not registry packages.
_NODE_REMOTE = re.compile(
    r"(?i)^(?:github|gitlab|bitbucket|gist|git\+\w+|git|https?|file\+https?):|"
    r"^[\w.-]+/[\w.-]+(?:#.*)?$"  # user/repo: GitHub shorthand
)
_INDEX_OPTIONS = (
    "--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--trusted-host",
    "--index", "--default-index", "--registry", "--source", "--repository", "--add-source",
)  # fmt: skip
_DEFAULT_INDEXES = re.compile(
    r"(?i)^https://(?:pypi\.org|files\.pythonhosted\.org|registry\.npmjs\.org|"
    r"registry\.yarnpkg\.com|rubygems\.org|crates\.io|repo\.packagist\.org|api\.nuget\.org)(?:/|$)"
)
_INSTALL_VERBS = frozenset(
    {"install", "i", "add", "exec", "x", "dlx", "run", "create", "init", "require", "sync",
     "inject", "tool", "update", "upgrade", "global", "ci", "get"}
)  # fmt: skip
_GO_REMOTE = re.compile(r"^[\w-]+(?:\.[\w-]+)+/\S+@\S+$")


_GO_KNOWN = re.compile(
    r"(?i)^(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org|golang\.org|"
    r"google\.golang\.org|cloud\.google\.com|go\.googlesource\.com|k8s\.io|sigs\.k8s\.io|"
    r"go\.uber\.org|honnef\.co|mvdan\.cc|gotest\.tools|gopkg\.in|go\.etcd\.io|"
    r"go\.opentelemetry\.io|gocloud\.dev|buf\.build|connectrpc\.com|filippo\.io|"
    r"golang\.zx2c4\.com|tailscale\.com|go\.k6\.io|gotest\.tools|helm\.sh|istio\.io|"
    r"knative\.dev|go\.temporal\.io|entgo\.io|gorm\.io|gioui\.org|fyne\.io|go\.mozilla\.org|"
    r"storj\.io|cuelang\.org|cue\.dev|go\.starlark\.net|rsc\.io|9fans\.net|lukechampine\.com|"
    r"gvisor\.dev|go\.bytecodealliance\.org|go\.dagger\.io|dagger\.io|goreleaser\.com|"
    r"go\.jetify\.com|go\.step\.sm|github\.com)/"
)
_GO_DEFAULT_PROXY = re.compile(r"(?i)^(?:https://proxy\.golang\.org/?|direct|off)$")


def foreign_index_value(name: str, value: str) -> str | None:
    """The place a package-source variable (``PIP_INDEX_URL``, ``GOPROXY``, ``BUNDLE_MIRROR__…``)
    points installs to when it is not the default registry; None otherwise."""
    v = value.strip("'\"")
    if name == "GOPROXY":
        parts = [p for p in re.split(r"[,|]", v) if p]
        foreign = [p for p in parts if not _GO_DEFAULT_PROXY.match(p)]
        return foreign[0] if foreign else None
    if name.startswith("HOMEBREW_"):
        return v or None
    if name == "CONDA_CHANNELS":
        urls = [p for p in v.split(",") if "://" in p]
        return urls[0] if urls else None
    urls = [p for p in re.split(r"[\s,]+", v) if "://" in p or p.startswith("git@")]
    foreign = [u for u in urls if not _DEFAULT_INDEXES.match(u)]
    return foreign[0] if foreign else None


def option_values(args: list[str], options: tuple[str, ...]) -> list[str]:
    """Every value given to one of ``options`` (``-o V``, ``--opt V``, ``--opt=V``)."""
    out: list[str] = []
    for i, a in enumerate(args):
        for o in options:
            if a == o and i + 1 < len(args):
                out.append(args[i + 1])
            elif o.startswith("--") and a.startswith(o + "="):
                out.append(a.split("=", 1)[1])
    return out


def untrusted_install(name: str, args: list[str]) -> str | None:
    """Why ``name args`` installs or runs code from an untrusted place; None when it does not."""
    if name in ("conda", "mamba", "micromamba"):
        return _other_sources(name, args) or (_pip(name, args) if name == "conda" else None)
    if name in PIP_NAMES:
        return _pip(name, args)
    if name in NODE_NAMES:
        return _node(name, args)
    if name == "go" and args[:1] == ["run"]:
        remote = [a for a in args[1:] if _GO_REMOTE.match(a) and not a.startswith("golang.org/")]
        if remote:
            return f"go {args[0]} builds and runs {remote[0]} from its repository"
        return None
    if name == "go" and args[:1] == ["install"]:
        # A module from a code host or a well-known project's own domain is the tool's usual
        # install (Go builds run no package code); another domain serves whatever its owner
        # put there, on a path the user may not have meant (a look-alike of a known tool).
        foreign = [a for a in args[1:] if _GO_REMOTE.match(a) and not _GO_KNOWN.match(a)]
        if foreign:
            return f"go install builds {foreign[0][:60]} from a module host that is not a known one"
        return None
    if name == "cargo" and args[:1] == ["install"]:
        for o in ("--git", "--registry", "--index"):
            if o in args or any(a.startswith(o + "=") for a in args):
                return f"cargo install {o} builds code from a repository"
        return None
    if name in ("gem", "composer", "bundle", "dotnet", "nuget", "brew"):
        why = _other_sources(name, args)
        if why:
            return why
        values = option_values(args, _INDEX_OPTIONS)
        if any(not _DEFAULT_INDEXES.match(v) for v in values):
            return f"{name} installs from another source ({values[0][:60]})"
        if name == "brew" and args[:1] == ["install"] and any(_REMOTE_SPEC.match(a) for a in args):
            return "brew installs a formula from a URL"
    return None


def _other_sources(name: str, args: list[str]) -> str | None:
    """gem/brew/bundle/conda shapes that name a place: a URL to install, a source or tap added."""
    verbs = [a for a in args if not a.startswith("-")]
    if name == "gem":
        if verbs[:1] == ["install"] and any(_REMOTE_SPEC.match(a) for a in verbs[1:]):
            return "gem installs a gem from a URL"
        if verbs[:1] == ["sources"]:
            added = option_values(args, ("--add", "-a"))
            if any(not _DEFAULT_INDEXES.match(v) for v in added):
                return f"gem sources adds {added[0][:60]}: later installs come from there"
    elif (
        name == "composer"
        and verbs[:1] == ["config"]
        and any(v.startswith("repositories.") or v == "repositories" for v in verbs[1:3])
    ):
        urls = [v for v in verbs if "://" in v or v.startswith("git@")]
        if urls:
            return f"composer config adds the repository {urls[0][:60]}: packages come from there"
    elif name == "brew" and verbs[:1] == ["tap"] and len(verbs) >= 3:
        return f"brew taps formulae from {verbs[2][:60]}"
    elif name == "bundle" and verbs[:1] == ["config"]:
        keys = [v for v in verbs[1:] if v not in ("set", "--global", "--local")]
        if keys and keys[0].lower().startswith("mirror.") and any("://" in k for k in keys[1:]):
            return f"bundle config sets a mirror ({keys[-1][:60]}): installs come from there"
    elif name in ("conda", "mamba", "micromamba"):
        channels = option_values(args, ("-c", "--channel"))
        remote = [c for c in channels if "://" in c]
        if remote and bool({"install", "create", "update", "env"} & set(verbs)):
            return f"{name} installs from the channel {remote[0][:60]}"
        if verbs[:2] == ["config", "--add"] or ("--add" in args and "channels" in args):
            urls = [v for v in verbs if "://" in v]
            if urls:
                return f"{name} config adds the channel {urls[0][:60]}"
    return None


def tls_off(name: str, args: list[str]) -> str | None:
    """``pip install --trusted-host H`` / ``pip config set global.trusted-host H``: installs from
    H without checking its certificate (anyone on the path can serve the code)."""
    if name not in PIP_NAMES:
        return None
    hosts = option_values(args, ("--trusted-host", "--allow-insecure-host"))
    if hosts:
        return f"{name} --trusted-host {hosts[0][:60]} installs without certificate checks"
    verbs = [a for a in args if not a.startswith("-")]
    if verbs[:2] == ["config", "set"] and len(verbs) >= 4 and verbs[2].endswith("trusted-host"):
        return f"{name} config trusts {verbs[3][:60]} without certificate checks"
    return None


def _pip(name: str, args: list[str]) -> str | None:
    verbs = [a for a in args if not a.startswith("-")]
    if name in ("pip", "pip3", "uv") and verbs[:2] in (["config", "set"],) and len(verbs) >= 4:
        key = verbs[2].lower()
        if key.endswith(("index-url", "extra-index-url")) and _DEFAULT_INDEXES.match(verbs[3]):
            return None  # pip config set global.index-url https://pypi.org/simple: the default
        if key.endswith(("index-url", "extra-index-url", "trusted-host", "find-links")):
            return f"{name} config sets {verbs[2]}: every later install comes from there"
        return None
    installing = (
        name in ("uvx", "pipx")
        or bool({"install", "add", "run", "sync", "download", "wheel", "inject"} & set(verbs))
        or verbs[:2] == ["tool", "run"]
    )
    if not installing:
        return None
    values = option_values(args, _INDEX_OPTIONS)
    local = set(option_values(args, ("--find-links", "-f")))
    for v in values:
        if v in local and "://" not in v:
            continue  # --find-links ./wheels: a folder of this machine
        if not _DEFAULT_INDEXES.match(v):
            return f"{name} installs from another index ({v[:60]})"
    for v in option_values(args, ("-r", "--requirement", "-c", "--constraint")):
        if re.match(r"(?i)^(?:https?|ftp)://", v) or _DOWNLOADED.search(v):
            return f"{name} installs what a requirements file on a server lists ({v[:60]})"
    if any(_DOWNLOADED.search(a) for a in args):
        return f"{name} installs the packages a download names"
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        spec = a
        if a.startswith(("--spec=", "--from=", "--with=")):
            spec = a.split("=", 1)[1]
        elif a in ("--spec", "--from", "--with") and i + 1 < len(args):
            spec = args[i + 1]
        elif a in _INDEX_OPTIONS or a in _PIP_VALUE_OPTIONS:
            skip = True  # the option's value was judged above, or is a local path
            continue
        if _REMOTE_SPEC.match(spec):
            return f"{name} installs {spec[:60]} from a URL or repository"
    return None


# A substitution that downloads: pip install $(curl -s URL), -r <(wget -qO- URL)
_DOWNLOADED = re.compile(r"[$<]\(\s*(?:curl|wget|http|xh|fetch)\b")


_PIP_VALUE_OPTIONS = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root",
     "--cache-dir", "--python", "-p", "--src", "--log", "--cert", "--client-cert", "--proxy",
     "--platform", "--python-version", "--implementation", "--abi", "--progress-bar"}
)  # fmt: skip


def _node(name: str, args: list[str]) -> str | None:
    verbs = [a for a in args if not a.startswith("-")]
    setting = verbs[1:] if verbs[:2] == ["config", "set"] else verbs if verbs[:1] == ["set"] else []
    key = setting[1].split("=", 1)[0] if len(setting) >= 2 else ""
    if key == "registry" or key.endswith(":registry"):
        value = setting[2] if len(setting) >= 3 else ""
        if "=" in setting[1]:  # npm config set registry=URL
            value = setting[1].split("=", 1)[1]
        if not _DEFAULT_INDEXES.match(value):  # not the official registry set back
            return f"{name} config sets a registry: every later install comes from there"
    if (  # yarn berry: yarn config set npmRegistryServer URL (or a scope's)
        len(verbs) >= 4
        and verbs[:2] == ["config", "set"]
        and verbs[2].split(".")[-1] in ("npmRegistryServer", "npmPublishRegistry")
        and not _DEFAULT_INDEXES.match(verbs[3])
    ):
        return f"{name} config sets the registry server: every later install comes from there"
    values = option_values(args, ("--registry",))
    if (
        verbs[:1]
        and verbs[0] in _INSTALL_VERBS
        and any(not _DEFAULT_INDEXES.match(v) for v in values)
    ):
        return f"{name} installs from another registry ({values[0][:60]})"
    if name == "deno":
        if verbs[:1] in (["run"], ["install"], ["x"]) and any(
            re.match(r"(?i)^https?://", v) for v in verbs[1:2]
        ):
            return "deno runs code from a URL"
        return None
    for spec in option_values(args, ("--package", "-p")):
        if (
            name in ("npx", "pnpx", "bunx", "npm", "pnpm", "yarn")
            and (_NODE_REMOTE.match(spec) or _REMOTE_SPEC.match(spec))
            and not spec.startswith(("@", ".", "/", "~"))
        ):
            return f"{name} runs the package {spec[:60]} from a repository or URL"
    runs_specs = name in ("npx", "pnpx", "bunx") or (bool(verbs[:1]) and verbs[0] in _INSTALL_VERBS)
    if not runs_specs:
        return None
    candidates = verbs if name in ("npx", "pnpx", "bunx") else verbs[1:]
    if name == "yarn" and verbs[:1] == ["global"]:
        candidates = verbs[2:]
    for spec in candidates[:1] if name in ("npx", "pnpx", "bunx") or verbs[0] in (
        "exec", "x", "dlx", "create", "init",
    ) else candidates:  # fmt: skip
        if spec.startswith(("@", ".", "/", "~")) and not spec.startswith("@http"):
            continue  # a scoped registry package or a local folder
        if _NODE_REMOTE.match(spec) or _REMOTE_SPEC.match(spec):
            return f"{name} installs or runs {spec[:60]} from a repository or URL"
    return None


PLUGIN_NAMES = frozenset(
    {"helm", "kubectl", "asdf", "mise", "ansible-galaxy", "code", "code-insiders", "cursor",
     "codium", "windsurf", "poetry", "vagrant", "krew", "flatpak", "oc", "ansible-pull",
     "docker", "podman", "pre-commit", "luarocks", "cpanm", "cpan", "rscript", "r", "julia",
     "gh"}
)  # fmt: skip
_LANG_REMOTE = re.compile(
    r"install_(?:github|gitlab|git|url|bitbucket)\s*\(|repos\s*=\s*[\"'](?!https://cloud\.r-project)"
    r"https?://|Pkg\.add\s*\(\s*url\s*="
)
_URLISH = re.compile(r"(?i)^(?:git\+)?(?:https?|git|ssh|ftp)://|^git@[\w.-]+:")


def plugin_install(name: str, args: list[str]) -> str | None:
    """Plugin and extension installs that fetch someone's code from a URL or file: ``helm plugin
    install URL``, ``kubectl krew install --manifest-url``, ``asdf plugin add N
    URL``, ``ansible-galaxy install git+…``, ``code --install-extension x.vsix``, a poetry
    repository set in its configuration."""
    verbs = [a for a in args if not a.startswith("-")]
    if (
        name == "gh"
        and verbs[:1] in (["extension"], ["ext"], ["extensions"])
        and (verbs[1:2] in (["install"], ["i"]))
    ):
        repos = [v for v in verbs[2:] if v not in (".", "./") and not v.startswith("./")]
        if repos:
            return f"gh extension install fetches and later runs {repos[0][:60]} (anyone's code)"
    if (
        name == "helm"
        and verbs[:2] == ["plugin", "install"]
        and any(_URLISH.match(v) for v in verbs)
    ):
        return "helm plugin install runs code from a repository"
    if (
        name in ("kubectl", "krew")
        and "install" in verbs
        and any(a.startswith(("--manifest-url", "--archive")) for a in args)
    ):
        return "krew installs a plugin from a manifest or archive elsewhere"
    if (
        name in ("asdf", "mise")
        and verbs[:2] in (["plugin", "add"], ["plugins", "install"])
        and any(_URLISH.match(v) for v in verbs[2:])
    ):
        return f"{name} adds a plugin from a repository"
    if (
        name == "ansible-galaxy"
        and "install" in verbs
        and any(_URLISH.match(v) or v.startswith("git+") for v in verbs)
    ):
        return "ansible-galaxy installs a role or collection from a repository"
    if name in ("code", "code-insiders", "cursor", "codium", "windsurf"):
        for v in option_values(args, ("--install-extension",)):
            if v.lower().endswith(".vsix") or "://" in v:
                return f"{name} installs an extension from a file ({v[:60]})"
    if (
        name == "poetry"
        and verbs[:1] == ["config"]
        and any(v.lower().startswith("repositories.") for v in verbs[1:2])
        and any("://" in v and not _DEFAULT_INDEXES.match(v) for v in verbs[2:])
    ):
        return "poetry config sets a repository: later installs can come from there"
    if name in ("kubectl", "oc") and verbs[:1] in (["apply"], ["create"], ["replace"]):
        files = option_values(args, ("-f", "--filename", "-k", "--kustomize"))
        if any("://" in f for f in files):
            return f"{name} {verbs[0]} runs workloads from a URL"
    if name == "ansible-pull" and any("://" in v or v.startswith("git@") for v in args):
        return "ansible-pull runs a playbook from a repository on this machine"
    if (
        name in ("docker", "podman")
        and verbs[:1] == ["build"]
        and any(_URLISH.match(v) for v in verbs[1:])
    ):
        return f"{name} build runs a build from a repository"
    if (
        name == "helm"
        and verbs[:1] in (["install"], ["upgrade"])
        and any("://" in v for v in verbs[1:])
    ):
        return "helm installs a chart from a URL"
    if name == "pre-commit" and verbs[:1] == ["try-repo"]:
        return "pre-commit try-repo runs hooks from a repository"
    if name in ("luarocks", "cpanm", "cpan") and (
        any(a.startswith(("--server", "--from", "--only-server")) for a in args)
        or any("://" in v for v in verbs)
    ):
        return f"{name} installs from a server or URL"
    if name in ("rscript", "r", "julia") and any(_LANG_REMOTE.search(a) for a in args):
        return f"{name} installs a package from a repository or URL"
    if name == "flatpak" and verbs[:1] == ["install"] and any("://" in v for v in verbs[1:]):
        return "flatpak installs an application from a URL"
    if (
        name == "vagrant"
        and verbs[:2] == ["plugin", "install"]
        and any(v.endswith(".gem") or "://" in v for v in verbs[2:])
    ):
        return "vagrant installs a plugin from a file or URL"
    return None


def foreign_publish(name: str, args: list[str]) -> str | None:
    """Where ``npm publish --registry X`` / ``twine upload --repository-url X`` sends the
    project when X is not the default registry; None otherwise."""
    if not args:
        return None
    if name in ("npm", "pnpm", "yarn") and "publish" in args:
        values = option_values(args, ("--registry",))
    elif name == "twine" and args[0] == "upload":
        values = option_values(args, ("--repository-url",))
    elif (name in ("cargo", "gem", "poetry", "uv") and "publish" in args) or args[:1] == ["push"]:
        values = option_values(args, ("--index", "--registry", "--host", "--publish-url", "-r"))
    else:
        return None
    foreign = [v for v in values if "://" in v and not _DEFAULT_PUBLISH.match(v)]
    return foreign[0] if foreign else None


_DEFAULT_PUBLISH = re.compile(
    r"(?i)^https://(?:registry\.npmjs\.org|upload\.pypi\.org|test\.pypi\.org|crates\.io|"
    r"rubygems\.org)(?:/|$)"
)


def setup_py_install(args: list[str]) -> bool:
    """``python setup.py install`` / ``develop``: the project's own script, run to install."""
    return len(args) >= 2 and args[0].endswith("setup.py") and args[1] in ("install", "develop")


def pip_module_args(args: list[str]) -> list[str] | None:
    """``python -m pip install …`` -> ``['install', …]``; None when not ``-m pip``."""
    for i, a in enumerate(args):
        if a == "-m" and i + 1 < len(args):
            return args[i + 2 :] if args[i + 1] in ("pip", "pip3", "uv") else None
        if a.startswith("-m") and len(a) > 2:
            return args[i + 1 :] if a[2:] in ("pip", "pip3") else None
        if not a.startswith("-"):
            return None
    return None
