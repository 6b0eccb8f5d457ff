"""RE2 confirmation and acceptance: a rule's regex in its windows, then the checks on a value.

A window is searched with the rule's regex compiled without captures (the DFA alone), close
windows first as one range (most hold no match); the groups of a match are read once per
distinct match. RE2 is linear-time, so no input can make a regex backtrack. A rule's patterns
are compiled on its first use (:class:`CompiledRule`).

A matched value is then accepted or turned down (:func:`accept`): length, entropy, the rule's
allow and deny patterns, placeholders (``${VAR}``, ``<your-token>``, ``DB_PASSWORD``), code that
refers to a secret rather than holding it (``os.environ[...]``, ``self.password``), values
inside resource identifiers (ARNs, OCIDs), and the rule's validators.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import re2

from domestique.detect.code_after import read_as_code
from domestique.detect.context import CONTEXT_FILTERS
from domestique.detect.doc_examples import shown_as_example
from domestique.detect.encrypted import encrypted_value, under_encrypted_data
from domestique.detect.entropy import shannon_entropy
from domestique.detect.re2opts import (
    compile_for_ascii,
    compile_once,
    counts_relaxed,
    first_match,
    found,
    groups_at,
    iter_spans,
    iter_spans_in,
    match_spans,
)
from domestique.detect.reserved import example_password, example_token
from domestique.detect.ruleset import Rule
from domestique.detect.validators import (
    VALIDATORS,
    passphrase,
    placeholder_phrase,
    spells_field_name,
)

MAX_WINDOW_GROWTH = 64 * 1024
# Windows of a rule this close are first searched as one range (see ``_first_matches``): an RE2
# call costs about as much as its DFA's walk over a few hundred characters.
BATCH_GAP = 512

# Values that stand for a secret rather than being one (generic rules only): template
# variables (${VAR}, {{ var }}, #{var}, {var}, %%VAR%%, %(var)s, <your-token>), placeholder words,
# environment-variable names (DB_PASSWORD), paths.
_PLACEHOLDER_RE = re2.compile(
    r"(?i)(?:example|sample|your[_\- ]?|changeme|change[_\-]me|placeholder|dummy|redacted|"
    r"variable|fake|xxxx|\*\*\*|\.\.\.|…|insert[_\- ]|replace[_\- ]?me|\btodo\b|fixme|"
    r"\$\{[A-Za-z_][A-Za-z0-9_.:\-]*(?::-[^}]*)?\}|\{\{\s*[A-Za-z_.][A-Za-z0-9_.|' \-]*\}\}|\$\{\{|"
    # a URN names a thing (urn:ietf:params:oauth:grant-type:jwt-bearer); value1, value2
    r"^urn:[a-z0-9][a-z0-9\-]*:|^(?:value|val)\d*$|"
    # a URL of a host and a path of words and versions (a specification's namespace); a path
    # with a generated piece (a webhook's) is not this
    r"^https?://[A-Za-z0-9.\-]+(?::\d+)?(?:/(?:[A-Za-z]+(?:[._\-][A-Za-z]+)*|v?\d+(?:\.\d+)*))*/?$|"
    # the same with a fragment, a format field or word pieces that end in a number (an RFC's
    # section, a profile's version: /html/rfc6749#section-6, /v1/token, sts.{}), or cut by a
    # line continuation's backslash
    r"^https?://[A-Za-z0-9.\-]*(?:\{\}[A-Za-z0-9.\-]*)?(?::\d+)?"
    r"(?:/(?:[A-Za-z]+\d{0,4}|\d+)(?:[._\-](?:[A-Za-z]+\d{0,4}|\d+))*)*/?"
    r"(?:#(?:[A-Za-z]+\d{0,4}|\d+)(?:[._\-](?:[A-Za-z]+\d{0,4}|\d+))*)?\\?$|"
    # a template tag (Django's and Jinja's {% translate 'Change password' %}, ERB's <%= %>)
    r"^\{%|^<%|"
    # a YAML tag that names where the value comes from (Ansible's !vault |, Home Assistant's
    # !secret db_password, CloudFormation's !Ref DbPassword); a note in parentheses made of
    # words ("secret": "(shown once in the dashboard)")
    r"^!(?:vault|secret|env_var|env|include|unsafe|encrypted|Ref|Sub|GetAtt|ImportValue|Join|"
    r"Select|FindInMap|Base64|GetAZs|If)(?:[ \t]|$)|^\((?:[A-Za-z']+[ ,.-]+){2,}[A-Za-z']+\)$|"
    # a YAML anchor (&default_token), a C address (&__pyx_type_x), a query's empty value read
    # into the next parameter (token=&lang=zh_CN)
    r"^&[A-Za-z_][A-Za-z0-9_]*(?:=[^&\s]*)?$|"
    # a whole value that is one template expression with filters, lookups or calls (Jinja and
    # Ansible {{ lookup('env', 'X') | default('') }}, Helm {{ .Values.x | quote }}, a {% … %}
    # tag, ERB's <%= … %>): the template engine fills the value in
    r"^\{\{-?[ \t]*[A-Za-z_.$(][^{}]*\}\}$|^\{%-?[ \t]*[a-z].*%\}$|^<%=?-?[ \t]*[^%]*%>$|"
    r"#\{[^}]*\}|^\{[^{}]*\}$|%%[^%]*%%|%\([A-Za-z_]+\)[sd]|%[-0-9.]*[sdrx]\b|"
    r"<[A-Za-z_][A-Za-z0-9_ \-]*>|&lt;[A-Za-z_][A-Za-z0-9_ \-]*&gt;|"
    r"(?:^|[^{A-Za-z0-9])\{[A-Za-z_][A-Za-z0-9_.\-]*(?:![rsa])?(?::[^{}]*)?\}(?:[^}A-Za-z0-9]|$)|"
    r"^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\}|\([^)]*\))$|"
    r"^(?:none|null|nil|true|false|yes|no|on|off|enabled|disabled|undefined|password|secret|"
    r"token|string|str|bytes|required|optional|empty|n/?a|tbd|test|abc123|123456|1234|foo|bar|"
    r"baz|qux|foobar|xyz|pass|passwd|pwd|pw|user|username|login|text)[!?:]?$|"
    # a version or a version range (a package's, "minipass": "^2.2.1")
    r"^[~^<>=!]{0,2}[ \t]*v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]{1,12})?"
    # ... or several, as a lock file writes them ("minipass": "^5.0.0 || ^6.0.2 || ^7.0.0")
    r"(?:[ \t]*(?:\|\||,)?[ \t]*[~^<>=!]{0,2}[ \t]*v?\d+(?:\.\d+){1,3}"
    r"(?:[-+][0-9A-Za-z.]{1,12})?)*$|"
    # a log's mask (Rails' [FILTERED])
    r"^\[(?:filtered|redacted|hidden|masked|removed|omitted|sensitive|secret)\]$|"
    r"^(?:some|my|the|a|an)[_\-](?:pass|passwd|password|pwd|secret|token|key|api[_\-]?key)$|"
    r"^some(?:pass|passwd|password|pwd|secret|token|key)$|^(?:my|new|old)(?:password|secret)$|"
    # positional format fields and separators only: '{}:{}', '{0}@{1}'
    r"^[^A-Za-z0-9{}]*(?:\{\d*\}[^A-Za-z0-9{}]*)+$)"
)
_FIELD_WORDS_RE = re.compile(
    r"(?i)^(?:password|passwords|passwd|passphrase|pass|secret|secrets|token|tokens|key|keys)$"
)


_WORD_PART_SPLIT_RE = re.compile(r"[-/]")
_FORM_VERBS = frozenset(
    {"enter", "set", "change", "reset", "confirm", "repeat", "retype", "choose", "create",
     "update", "forgot", "show", "hide", "current", "new", "old", "verify"}
)  # fmt: skip


def _about_the_field(value: str) -> bool:
    """A sentence of three or more words that names the field: a message about it ("Password
    must be at least 8 characters", "Enter your password", "Resource owner password-based"),
    not its value."""
    words = value.split()
    if len(words) == 2:
        # two words, letters only, the field's after a form's verb, or ending in a prompt's
        # colon: a label or a prompt ("Set Password", "Enter password: "), not a value ("fancy
        # password" may be one)
        bare = [w.strip(".,:;!?'\"()") for w in words]
        if not (all(w.isalpha() for w in bare) and _FIELD_WORDS_RE.match(bare[1])):
            return False
        return bare[0].lower() in _FORM_VERBS or value.rstrip().endswith(":")
    if len(words) < 3:
        return False
    return any(
        _FIELD_WORDS_RE.match(part)
        for w in words
        for part in _WORD_PART_SPLIT_RE.split(w.strip(".,:;!?'\"()"))
    )


_PROSE_WORD_RE = re2.compile(r"^[A-Za-z][a-z]*(?:['\x{2019}][a-z]+)?[.,;:!?]?$")
# (also a string joined to a name read from the closing quote on: "...for key: "+s[u]);)
_ACROSS_QUOTES_RE = re2.compile(
    r"^\s*(?:[)\]}][,;.?:)\]}]|%\}|\}\}|%>|\+[ \t]*[A-Za-z_$][\w$.]*[\[()])"
)
_SCRIPT_RE = re2.compile(
    r"\}=|\}\)|=>|\)\{|^[A-Za-z_$][\w$.]*\?[A-Za-z_$!]|^[a-z][a-z\-]*(?:\([^)]*\))?\{[a-z\-]+(?::|$)|"
    r"^\*{1,2}[A-Za-z_][\w.]*$"
)
_NEXT_PARAM_RE = re2.compile(r"(?:&|%26)[A-Za-z_][A-Za-z0-9_.]*(?:=|%3[Dd])")
_ENV_NAME_RE = re2.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_PATH_RE = re2.compile(
    r"^(?:~|\.{1,2})?/?(?:[A-Za-z0-9_.\-]+/){2,}[A-Za-z0-9_.\-]*$|"
    # a key or certificate file (/certs/server.key, keys/app.pem)
    r"^(?:~|\.{1,2})?/?(?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_\-]+\."
    r"(?:key|pem|crt|cer|der|p12|pfx|jks|keystore|asc|gpg|pub|json|txt|env)$|"
    # an absolute path of lower-case names (a volume's mount point: ../../allauth:/code/allauth)
    r"^/[a-z][a-z0-9_.\-]*(?:/[a-z][a-z0-9_.\-]*)+/?$"
)
# Values that are code referring to a secret, not the secret (env lookups, calls, attributes).
_CODE_REF_RE = re2.compile(
    r"^(?:\$|%[A-Za-z_]|@|os\.|process\.env|env\.|ENV\[|getenv|System\.getenv|config\.|"
    r"settings\.|self\.|this\.|cls\.|args\.|kwargs|request\.|params\.|options\.|opts\.|"
    r"secrets\.|vault:|ssm:|arn:aws:secretsmanager|keyring\.)|"
    # a keyword argument passed on: secrets_dir=_secrets_dir, key=value
    r"^[A-Za-z_][A-Za-z0-9_]*=(?:[A-Za-z_$]|\d+$)|"
    r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(.*\)|\[.*\])?$"
)
_RANDOM_PART = re2.compile(r"[A-Za-z][0-9][A-Za-z]|[0-9][A-Za-z][0-9]")
# A call or subscript, also through a path (std::env::var(...), Config::get(...)).
_CALL_RE = re2.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(?:::[A-Za-z_][A-Za-z0-9_.]*)*\s*[(\[]")
# A whole value that is one variable reference: $name, ${...}, $(...), %NAME%, @name, os.environ,
# or a YAML tag that fetches the value (Ansible !vault, CloudFormation !Ref).
_VAR_REF_RE = re2.compile(
    r"^(?:\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\}|\([^)]*\))|%[A-Za-z_][A-Za-z0-9_]*%?|"
    r"!(?:vault|Ref|Sub|GetAtt|ImportValue|FindInMap|env_var|env|secret|include)|"
    r"@[A-Za-z_][A-Za-z0-9_.]*)$|^(?:os\.|process\.env|ENV\[|getenv)|"
    # a CloudFormation dynamic reference: the stack reads the value from the store it names
    r"^\{\{resolve:(?:ssm|ssm-secure|secretsmanager):[^{}]+\}\}$"
)


# One regex match: value span, value, whole match, quoted, whole match's start.
_Match = tuple[int, int, str, str, bool, int]
# A claims_match rule's reading of its whole match: (priority, match start, match end, value
# start, value end).
Claim = tuple[int, int, int, int, int]


def looks_like_placeholder(value: str) -> bool:
    """True for ``your-key-here``, ``${VAR}``, ``<token>``, ``EXAMPLE``, ``DB_PASSWORD``, paths,
    ``{name}`` format fields, a field word spelled out (``pass word``) or after an article (``a
    secret``), counting runs (``123 456``, ``abcdefgh…``) and the passwords famous
    documentation prints as its example (``tiger``, ``tiger^5HHH``)."""
    # Markup after the value closes its element (``pass+word</span>``): not part of it.
    value = value.split("</", 1)[0] or value
    # In a query string the value ends at the next parameter (value2&key=value1).
    value = _NEXT_PARAM_RE.split(value, 1)[0] or value
    if _about_the_field(value):
        return True
    if value != value.strip() and found(_PROSE_WORD_RE, value.strip()):
        return True  # a word with its space ("on ", "Gunicorn's "): a text's token, no secret
    bare = value.rstrip(":;,.")
    if "\u2022\u2022\u2022" in value:
        return True  # masked for display (sk_live_••••••••XOft): bullets are no key's characters
    if "|" in value and "||" not in value and _alternatives_stand_in(value):
        return True  # syntax notation: key=value|ns_key=value
    return bool(
        found(_PLACEHOLDER_RE, value)
        or example_token(bare)
        or found(_ENV_NAME_RE, bare)
        or found(_PATH_RE, bare)
        or spells_field_name(bare)
        or example_password(bare)
        or placeholder_phrase(bare)
    )


_SETTING_PREFIX_RE = re.compile(r"^[A-Za-z_.]+=")


def _alternatives_stand_in(value: str) -> bool:
    """True when every alternative of ``a|b`` (a setting's name before ``=`` dropped) is a
    placeholder: syntax notation (``value|ns_key=value``), not a value."""
    parts = [_SETTING_PREFIX_RE.sub("", p, count=1) for p in value.split("|")]
    return all(p and found(_PLACEHOLDER_RE, p) for p in parts)


_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _strip_unmatched_closers(value: str) -> str:
    """``value`` without the closing brackets (and the ``:;,`` around them) at its end that
    open nowhere in it: ``f(pwd=pwd)`` -> ``pwd``'s ``pwd)`` -> ``pwd``, ``Optional[str]`` kept."""
    while (
        value
        and value[-1] in _CLOSERS
        and value.count(value[-1]) > value.count(_CLOSERS[value[-1]])
    ):
        value = value[:-1].rstrip(":;,")
    return value


def looks_like_code_reference(value: str, quoted: bool) -> bool:
    """True when an assigned value is code that refers to a secret rather than the secret.

    ``$VAR``, ``os.environ[...]``, ``getenv(...)``, ``self.password``, ``get_token()`` are
    references. An unquoted bare identifier is one too when it reads like a name
    (``new_password``, ``reenterPassword``); ``h7Kq2Lm9xP`` does not, and a quoted literal
    (``"Admin"``) is kept.
    """
    # "if token == current_token:" ends in the statement's colon; "f(pwd=pwd)" in a paren (a
    # closing bracket only when unmatched: Optional[str] keeps its own).
    value = _strip_unmatched_closers(value.rstrip(":;,"))
    value = value.replace("?.", ".")  # optional chaining: req.headers.authorization?.split
    if passphrase(value):
        return False  # words and a number a person chose (Velvet.river227), not a path
    if found(_ACROSS_QUOTES_RE, value):
        return True  # read from a string's closing quote into the code after it: ),s?He.x(
    if found(_VAR_REF_RE, value):
        return True
    if _type_expression(value, quoted):
        return True
    if not quoted and (
        found(_CALL_RE, value)
        or "||" in value
        or "&&" in value
        or _expression(value)
        or found(_SCRIPT_RE, value)
    ):
        # a call, or an expression (a ternary's branch: e.metaKey||!e.ctrlKey), minified
        # script (u}=this.props, i=>s=>{, e.crossOrigin?t.credentials=), a CSS rule
        # (before{content:), an unpacked argument (*LITERAL_TOKENS)
        return True
    if not quoted and _NUMBERED_FIELD_RE.match(value) and _reads_like_name(value):
        return True  # a form's second field passed on: password: password1, newPassword2
    if not quoted and (_constant_path(value) or _KWARG_NUMBER_RE.match(value)):
        return True  # Aws::Credentials.new; field(default=0)'s default=0
    if not found(_CODE_REF_RE, value):
        return False
    if "(" in value or "[" in value:
        return True
    if "." in value:
        # self.password is code; s.ZC9Ecf4M5g9o34Q6RkzGsj0z (a Vault token) is not.
        return not any(len(p) >= 12 and _RANDOM_PART.search(p) for p in value.split("."))
    if quoted:
        return False
    has_digit = any(c.isdigit() for c in value)
    if value.islower() and "_" in value:
        return True
    # A name has words (newPassword, PyLong_FromSsize_t, DB_PASS); letters in random case
    # (TtdDyJXzUUbUZZsTWNW) are a generated value, not a variable.
    return not has_digit and _reads_like_name(value)


# A name of words before the field's word and a number (newPassword2, new_password1; a bare
# password1 may be the value itself).
_NUMBERED_FIELD_RE = re.compile(
    r"^(?:[a-z]+_|[a-z]+(?=[A-Z]))+(?:password|passwd|pwd|pass|secret|token|key|"
    r"Password|Passwd|Pwd|Pass|Secret|Token|Key)\d{1,2}$"
)
# An operator before the value that compares it or reads a member of the name (C's and PHP's
# ->): with an unquoted name after it, code (password1 != password2, x_password->tp_getattro).
_OPERATOR_END_RE = re.compile(r"(?:!==?|===?|->)[ \t]*$")
_BARE_NAME_RE = re.compile(r"^[A-Za-z_$][\w$]*[:;,)]?$")


def compares_names(whole: str, value: str, quoted: bool) -> bool:
    """True when ``value`` is an unquoted name after a comparison (``!=``, ``==``, ``!==``) or
    a member access (``->``): two variables compared, a field read, no literal assigned."""
    if not _BARE_NAME_RE.match(value):
        return False
    k = whole.rfind(value)
    if k <= 0:
        return False
    if whole.endswith("->", 0, k):
        return True  # (the ">" of "->" is what made the value read as quoted)
    return not quoted and _OPERATOR_END_RE.search(whole, 0, k) is not None


# A constant path and what is called on it: Ruby's Aws::Credentials.new, Rails::Application,
# Rust's Config::from_env, PHP's Config::get, C++'s std::getenv.
_CONSTANT_PATH_RE = re.compile(
    r"^[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+(?:\.[A-Za-z_]\w*[?!]?)*(?:\(.*\))?$"
)
_PATH_SPLIT_RE = re.compile(r"::|\.")
# A keyword argument given a number (default=0, max_length=128): a call's, not a value.
_KWARG_NUMBER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=-?\d{1,9}$")


def _constant_path(value: str) -> bool:
    """``A::B`` or ``A::B.c``: namespaced names, each piece reading like a name."""
    if not _CONSTANT_PATH_RE.match(value):
        return False
    names = _PATH_SPLIT_RE.split(value.split("(", 1)[0])
    return all(_reads_like_name(n.rstrip("?!")) and not _RANDOM_PART.search(n) for n in names)


# A type in an annotation: a class name (OAuth2PasswordRequestForm, OneLogin_Saml2_Auth) or a
# union of names ("AbstractAccessToken | AbstractRefreshToken", "str | None").
_CLASS_NAME_RE = re.compile(r"^[A-Z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")
_NAME_PIECES_RE = re.compile(r"[_0-9]+")
_CAPITALISED_RE = re.compile(r"^(?:[A-Z]+[a-z]{2,})+[A-Z]*$")
_UNION_RE = re.compile(r"^[A-Za-z_][\w.\[\]]*(?:[ \t]*\|[ \t]*[A-Za-z_][\w.\[\]]*)+$")


def _class_name(value: str) -> bool:
    """Capitalised words, digits only between them (``OAuth2PasswordRequestForm``; not
    ``AdminPassword123``, ``ABc123456789dEFghIJK``)."""
    if not _CLASS_NAME_RE.match(value) or value[-1].isdigit():
        return False
    pieces = [p for p in _NAME_PIECES_RE.split(value) if p]
    return all(_CAPITALISED_RE.match(p) and _reads_like_name(p) for p in pieces)


def _type_expression(value: str, quoted: bool) -> bool:
    """An annotation's type: an unquoted class name of words, or a union of names (quoted in
    a string annotation or not)."""
    if _UNION_RE.match(value):
        return all(
            _class_name(p) or p.islower() or p == "None"
            for p in (x.strip().split("[", 1)[0].split(".")[-1] for x in value.split("|"))
        )
    return not quoted and _class_name(value)


# Where a name's case changes: a lower-case letter then a capital (newPassword), or a run of
# capitals then a lower-case letter (HTTPResponse).
_CASE_SWITCH_RE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")


def _reads_like_name(value: str) -> bool:
    """True unless the case changes as often as in a random string: 4+ switches, one per five
    characters or more (``getHTTPResponse``, ``xNewValue`` are names; ``JiQCHwpYeVFEVzmnT``
    is not)."""
    switches = len(_CASE_SWITCH_RE.findall(value))
    return switches < 4 or switches * 5 < len(value)


# Unquoted identifiers joined by operators (pwd+salt, a|b): an expression, not a literal.
_EXPRESSION_RE = re.compile(r"^[A-Za-z_][\w.]*(?:[ \t]*[-+*/%|&^][ \t]*[A-Za-z_][\w.]*)+$")
_IDENT_RE = re.compile(r"[A-Za-z_][\w.]*")
_NO_INNER_DIGIT_RE = re.compile(r"^[A-Za-z_.]+\d{0,2}$")


def _expression(value: str) -> bool:
    if not _EXPRESSION_RE.match(value):
        return False
    return all(
        len(p) >= 2 and _reads_like_name(p) and _NO_INNER_DIGIT_RE.match(p)
        for p in _IDENT_RE.findall(value)
    )


# The name a value is assigned to, the last one before it: PASSKEYS = "passkeys",
# sip_auth_password=sip_auth_password, _PassArg.context: "context".
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _last_name(prefix: str) -> tuple[int, str]:
    """The last name in ``prefix`` before the separators that end it, and where it starts
    (walked backwards once: linear in the length, whatever the text)."""
    j = len(prefix)
    while j > 0 and not (prefix[j - 1].isalnum() or prefix[j - 1] == "_"):
        j -= 1
    i = j
    while i > 0 and prefix[i - 1] in _NAME_CHARS:
        i -= 1
    while i < j and not (prefix[i].isalpha() or prefix[i] == "_"):
        i += 1  # a name starts with a letter or an underscore
    return i, prefix[i:j]


def names_itself(whole: str, value: str, *, exact: bool = False) -> bool:
    """True when ``value`` is the name it is assigned to, or the last dotted part of it: an
    enumeration's member (``PASSKEYS = "passkeys"``) or a value passed on under its own name
    (``self.proxy_password = proxy_password``), not a secret. ``exact``: spelled the same, case
    included (``IRC_PASS=irc_pass`` in an env file may be the password)."""
    k = whole.rfind(value)
    if k <= 0:
        return False
    start, name = _last_name(whole[:k])
    if not name:
        return False
    if start > 0 and whole[start - 1] in "/:@":
        return False  # a URL's user (mysql://root:root@host): the pair, not a name and a value
    candidates = {name, *(name[j + 1 :] for j in range(len(name)) if name[j] == ".")}
    if exact:
        return value in candidates
    v = _NOT_ALNUM.sub("", value.lower())
    if not v:
        return False
    folded = _NOT_ALNUM.sub("", name.lower())
    if len(v) >= 3 and folded.endswith(v) and _FIELD_END_RE.search(folded[: -len(v)]):
        return True  # an enumeration's member named by the field and the value: PASSWORDMD5: 'md5'
    return any(_NOT_ALNUM.sub("", c.lower()) == v for c in candidates)


_FIELD_END_RE = re.compile(r"(?:password|passwd|pass|pwd|secret|token|key)$")


# A URL's user and host (scheme://user:password@host), a pair's user line (DB_USER: app).
_URL_USER_HOST_RE = re.compile(r"://([^\s:/?\"'<>@]{1,64}):.*@([A-Za-z0-9._\[\]:-]+)$", re.S)
_PAIR_USER_RE = re.compile(r"^[ \t]*[A-Za-z0-9_.\-]*[ \t]*[=:][ \t]*[\"']?([^\s\"']{1,64})")
_LOOPBACK_RE = re.compile(r"^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])$", re.I)
_FIELD_SUFFIX_RE = re.compile(r"^[_.\-]?(?:password|passwd|pass|pwd|pw)$", re.I)


def spelled_from_user(whole: str, value: str) -> bool:
    """True for a password spelled from its own user name: the user with a field word after it
    (``pguser`` / ``pguserpassword``, ``admin`` / ``admin_password``), or, in a URL to the
    loopback host, also the user itself (``app:app@localhost``). Whoever reads the user reads
    the password: a test or development account (a CI job's service database), no secret. The
    same password on another host (``root:root@10.0.3.4``) is still reported: it lets anyone
    in there."""
    m = _URL_USER_HOST_RE.search(whole)
    if m is not None:
        user, host = m.group(1), m.group(2)
        if not _LOOPBACK_RE.match(host if host.startswith("[") else host.split(":", 1)[0]):
            return False
    else:
        p = _PAIR_USER_RE.match(whole)
        if p is None or "\n" not in whole:
            return False
        user = p.group(1)
    if len(user) < 2:
        return False
    v = value.lower()
    u = user.lower()
    if v.startswith(u) and _FIELD_SUFFIX_RE.match(v[len(u) :]):
        return True
    return m is not None and v == u


# Resource identifiers name a secret or a key, they never hold one: an AWS ARN (also the tail of
# one, read after "secretsmanager:"), an Oracle Cloud OCID, an Azure Key Vault object URL, a
# Google Secret Manager name. A generic rule's value inside one is not reported.
_RESOURCE_ID_RE = re2.compile(
    r"^(?:arn:aws(?:-[a-z]+)*:[a-z0-9\-]+:(?:[a-z]{2}(?:-[a-z]+)+-\d{1,2})?:(?:\d{12}|aws)?:\S+|"
    r"ocid1\.[a-z0-9_]+\.oc[0-9]+\.[a-z0-9\-]*\.[a-z0-9]+|"
    r"https://[a-z0-9\-]+\.(?:vault|managedhsm)\.(?:azure\.net|azure\.cn|usgovcloudapi\.net)/"
    r"(?:secrets|keys|certificates)/[A-Za-z0-9\-]+(?:/[0-9a-f]{32})?/?|"
    r"(?://secretmanager\.googleapis\.com/)?projects/[A-Za-z0-9\-]+/secrets/[A-Za-z0-9_\-]+"
    r"(?:/versions/(?:\d+|latest))?)$"
)
_ID_STOP = frozenset(" \t\r\n\"'`,;=<>()[]{}")
_ID_REACH = 256
# A status badge's image URL (https://codecov.io/gh/o/r/graph/badge.svg?token=...,
# .../badge.png?branch=main&token=...): a README embeds it for every visitor to load, so a
# value in its query is published with the page; such a token only draws the badge.
_BADGE_QUERY_RE = re2.compile(
    r"https?://[^\s\"'`<>()\[\]]*/badges?(?:/[^\s\"'`<>()/?#]+)?(?:\.(?:svg|png|gif))?/?\?"
    r"(?:[^\s\"'`<>()&#]*&)*"
    r"[A-Za-z_]*=$"
)
_URL_STOP = frozenset(" \t\r\n\"'`<>()[]{}")


def _in_badge_query(text: str, s: int) -> bool:
    """True when the value at ``s`` is a parameter in the query of a badge image's URL."""
    a = s
    while a > 0 and s - a < _ID_REACH and text[a - 1] not in _URL_STOP:
        a -= 1
    return "badge" in text[a:s] and found(_BADGE_QUERY_RE, text[a:s])


def _inside_resource_identifier(text: str, s: int, e: int) -> bool:
    """True when ``text[s:e]`` lies inside one whitespace- or quote-bounded resource identifier,
    or in the query of a badge image's URL."""
    if _in_badge_query(text, s):
        return True
    a = s
    while a > 0 and s - a < _ID_REACH and text[a - 1] not in _ID_STOP:
        a -= 1
    b = e
    n = len(text)
    while b < n and b - e < _ID_REACH and text[b] not in _ID_STOP:
        b += 1
    token = text[a:b].rstrip(".:")
    return len(token) >= e - a and found(_RESOURCE_ID_RE, token)


def _not_held_here(text: str, s: int, e: int) -> bool:
    """True when the value at ``text[s:e]`` names or hides a secret rather than holding it: it
    lies inside a resource identifier or a badge's URL, or among a SealedSecret's ciphertexts."""
    return _inside_resource_identifier(text, s, e) or under_encrypted_data(text, s)


class CompiledRule:
    """A rule with its patterns compiled on first use: most rules never run in a short-lived
    process (a ``check`` masking one record, a scan whose text lacks their keywords), and
    compiling all of them was most of a command's start-up. The builtin patterns are checked to
    compile by the test suite; a pattern that fails raises inside the scan, which reports
    ``engine.detector_error`` (never "nothing found")."""

    __slots__ = (
        "_allow",
        "_ascii_regex",
        "_bounds",
        "_deny",
        "_gate",
        "_regex",
        "context",
        "names_values",
        "rule",
        "validators",
    )

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        # A rule that takes a literal credential (credential_literal) reads the value as one;
        # a value that is its own name's (self.proxy_password = proxy_password) is none.
        self.names_values = "credential_literal" in rule.validators
        self._regex: re2._Regexp | None = None
        self._ascii_regex: re2._Regexp | None = None
        self._bounds: re2._Regexp | None = None
        self._allow: tuple[re2._Regexp, ...] | None = None
        self._deny: tuple[re2._Regexp, ...] | None = None
        self._gate: re2._Regexp | bool | None = None  # False: the rule has none
        self.validators = tuple(VALIDATORS[v] for v in rule.validators)
        self.context = tuple(CONTEXT_FILTERS[c] for c in rule.context_filters)

    # Races between threads are harmless: compile_once returns equal, immutable patterns.
    @property
    def regex(self) -> re2._Regexp:
        regex = self._regex
        if regex is None:
            regex = self._regex = compile_once(self.rule.regex)
        return regex

    @property
    def ascii_regex(self) -> re2._Regexp:
        """The regex for ASCII bytes (the shadow) only: see ``re2opts.compile_for_ascii``."""
        regex = self._ascii_regex
        if regex is None:
            regex = self._ascii_regex = compile_for_ascii(self.rule.regex)
        return regex

    @property
    def allow(self) -> tuple[re2._Regexp, ...]:
        allow = self._allow
        if allow is None:
            allow = self._allow = tuple(compile_once(p) for p in self.rule.allow_patterns)
        return allow

    @property
    def deny(self) -> tuple[re2._Regexp, ...]:
        deny = self._deny
        if deny is None:
            deny = self._deny = tuple(compile_once(p) for p in self.rule.deny_context)
        return deny

    @property
    def bounds(self) -> re2._Regexp:
        """The regex without captures: it finds the same matches (captures never change what
        matches) with RE2's DFA alone; the groups are read afterwards, once per distinct match
        (see :func:`confirm`). Compiled on the rule's first use, for ASCII bytes (it searches
        the shadow only)."""
        bounds = self._bounds
        if bounds is None:
            bounds = self._bounds = compile_for_ascii(self.rule.regex, capture=False)
        return bounds

    def first_match(self, data: bytes, start: int, end: int) -> tuple[int, int] | None:
        """``first_match(self.bounds, data, start, end)``: the first match in the range.

        Until the rule's own regex is needed, a range is first searched with the regex's
        counted repetitions made open (``re2opts.counts_relaxed``): where that finds nothing,
        the regex finds nothing either, and where it does, the regex's first match starts no
        earlier, so it is searched from there. Most rules of a one-shot scan never match, and
        the relaxed program compiles several times faster and builds fewer DFA states; once the
        regex is compiled (a range the relaxed one matched), it alone searches, as before."""
        bounds = self._bounds
        if bounds is None:
            gate = self._gate
            if gate is None:
                gate = self._gate = _relaxed_bounds(self.rule.regex)
            if gate is not False:
                assert not isinstance(gate, bool)
                first = first_match(gate, data, start, end)
                if first is None:
                    return None
                start = first[0]
            bounds = self.bounds
        return first_match(bounds, data, start, end)


def _relaxed_bounds(pattern: str) -> re2._Regexp | bool:
    """``pattern`` with its counted repetitions open, compiled like ``bounds``; False when it
    has none, or the relaxed pattern does not compile (then the rule's regex searches alone)."""
    relaxed = counts_relaxed(pattern)
    if relaxed is None:
        return False
    try:
        return compile_for_ascii(relaxed, capture=False)
    except re2.error:
        return False


def _group_spans(regex: re2._Regexp, chunk: str) -> Iterator[tuple[tuple[int, int], ...]]:
    """Group spans of every match in ``chunk``, in character offsets."""
    if chunk.isascii():
        yield from iter_spans(regex, chunk.encode("ascii"))
        return
    for m in regex.finditer(chunk):
        yield tuple(m.span(g) for g in range(regex.groups + 1))


def _first_matches(
    crule: CompiledRule,
    text: str,
    windows: list[list[int]],
    data: bytes | None,
    text_ascii: bool,
) -> Iterator[tuple[int, int, tuple[int, int] | None]]:
    """The windows that hold a match of ``crule``'s regex, as ``(start, end, first match)``, and
    those that are not ASCII (to be read in the text, not its shadow), with no first match.

    Most windows hold none. Windows of ASCII text less than ``BATCH_GAP`` apart are searched
    as one range first: a match inside a window is inside the range too, so a range without a
    match clears all of its windows with one RE2 call. Otherwise its match is the leftmost one
    of the range: the windows that end before it hold none, and it is the first match of the
    window that holds it whole (of the matches starting there, the same one is preferred).
    """
    if data is None:
        for wa, wb in windows:
            yield wa, wb, None
        return
    nw = len(windows)
    k = 0
    j = 0  # windows[k:j] are ASCII and close together: searched as one range
    while k < nw:
        wa, wb = windows[k]
        if k >= j:
            if not (text_ascii or text[wa:wb].isascii()):
                yield wa, wb, None
                k += 1
                continue
            j = k + 1
            while (
                j < nw
                and windows[j][0] - windows[j - 1][1] <= BATCH_GAP
                and (text_ascii or text[windows[j][0] : windows[j][1]].isascii())
            ):
                j += 1
        first = crule.first_match(data, wa, windows[j - 1][1])
        if first is None:
            k = j
            continue
        if j > k + 1:
            while windows[k][1] < first[0]:  # (k < j - 1 here: first starts before the end)
                k += 1
            wa, wb = windows[k]
            if not (wa <= first[0] and first[1] <= wb):
                first = first_match(crule.bounds, data, wa, wb)
        k += 1
        if first is not None:
            yield wa, wb, first


def confirm(
    crule: CompiledRule,
    text: str,
    windows: list[list[int]],
    data: bytes | None = None,
    text_ascii: bool = False,
    *,
    claims: list[Claim] | None = None,
) -> list[tuple[str, int, int, int, str]]:
    rule = crule.rule
    out: list[tuple[str, int, int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    verdicts: dict[tuple[str, str, bool], bool] = {}  # repeated lines are judged once
    # ASCII windows: a match's reading (value span relative to the match, verdict) depends
    # only on its bytes and the byte on each side (what ^, $ and \b can look at), so each
    # distinct one is read, and judged, once.
    readings: dict[tuple[bytes, bool, bool], tuple[int, int, bool]] = {}
    last = len(data) if data is not None else 0
    candidates: Iterable[tuple[int, int, tuple[int, int] | None]]
    if len(windows) == 1 and data is not None:  # most rules on a short text: no set-up
        wa, wb = windows[0]
        if text_ascii or text[wa:wb].isascii():
            first = crule.first_match(data, wa, wb)
            candidates = () if first is None else ((wa, wb, first),)
        else:
            candidates = ((wa, wb, None),)
    else:
        candidates = _first_matches(crule, text, windows, data, text_ascii)
    for wa, wb, first in candidates:
        if first is None or data is None:
            matches = _matches(crule, text, wa, wb)
        else:
            spans, a, b = _bounds_ascii(crule, text, (wa, wb, first), data=data, ascii=text_ascii)
            if spans is None:  # grown over non-ASCII text: the shadow reads "?" there
                matches = _matches(crule, text, a, b)
            else:
                for ms, me in spans:
                    ctx = (data[ms - 1 if ms else 0 : me + 1], ms == 0, me == last)
                    reading = readings.get(ctx)
                    if reading is None:
                        reading = readings[ctx] = _read(crule, text, data, (ms, me, b))
                    s, e = ms + reading[0], ms + reading[1]
                    if (s, e) in seen:
                        continue
                    if rule.claims_match and claims is not None:
                        claims.append((rule.priority, ms, me, s, e))
                    if (
                        not reading[2]
                        or (rule.reference_filter and _not_held_here(text, s, e))
                        or (rule.reference_filter and read_as_code(text, ms, s, e))
                        or (rule.example_filter and shown_as_example(text, s, e))
                        or any(c(text, s, e) for c in crule.context)
                    ):
                        continue
                    seen.add((s, e))
                    out.append((rule.id, rule.priority, s, e, text[s:e]))
                continue
        for s, e, value, whole, quoted, ms in matches:
            if (s, e) in seen:
                continue
            if rule.claims_match and claims is not None:
                # Claimed even when the value is turned down (user:password@host): the
                # match is still a URL, and password@host is still not an address.
                claims.append((rule.priority, ms, ms + len(whole), s, e))
            key = (value, whole, quoted)
            ok = verdicts.get(key)
            if ok is None:
                ok = verdicts[key] = accept(crule, value, whole, quoted)
            if (
                not ok
                or (rule.reference_filter and _not_held_here(text, s, e))
                or (rule.reference_filter and read_as_code(text, ms, s, e))
                or (rule.example_filter and shown_as_example(text, s, e))
                or any(c(text, s, e) for c in crule.context)
            ):
                continue
            seen.add((s, e))
            out.append((rule.id, rule.priority, s, e, value))
    return out


def _read(
    crule: CompiledRule, text: str, data: bytes, where: tuple[int, int, int]
) -> tuple[int, int, bool]:
    """The value span (relative to ``ms``) of the ASCII match ``[ms, me)`` found in a window
    ending at ``b`` (``where``), and the verdict."""
    ms, me, b = where
    spans = groups_at(crule.ascii_regex, data, ms, me)
    if spans is None:  # cannot happen (see groups_at); read it as the search would
        spans = next(iter(iter_spans_in(crule.ascii_regex, data, ms, b)))
    s, e = spans[0]
    for gs, ge in spans[1:]:
        if gs >= 0:
            s, e = gs, ge
            break
    # After a quote or an XML tag's ">", a value is a literal, not code.
    quoted = s > 0 and text[s - 1] in "\"'`>"
    ok = accept(crule, text[s:e], text[ms:me], quoted)
    return s - ms, e - ms, ok


def _matches(crule: CompiledRule, text: str, a: int, b: int) -> list[_Match]:
    """The matches in the window ``[a, b)`` of a text that is not ASCII there (see
    ``_bounds_ascii`` for the growth of a window)."""
    n = len(text)
    while True:
        chunk = text[a:b]
        found: list[_Match] = []
        grow_left = grow_right = False
        for spans in _group_spans(crule.regex, chunk):
            ms, me = spans[0]
            if me == len(chunk) and b < n:
                grow_right = True
            if ms == 0 and a > 0:
                grow_left = True
            s, e = ms, me
            for gs, ge in spans[1:]:
                if gs >= 0:
                    s, e = gs, ge
                    break
            # After a quote or an XML tag's ">", a value is a literal, not code.
            quoted = s > 0 and chunk[s - 1] in "\"'`>"
            found.append((a + s, a + e, chunk[s:e], chunk[ms:me], quoted, a + ms))
        if (grow_left or grow_right) and b - a < MAX_WINDOW_GROWTH:
            step = max(256, b - a)
            if grow_left:
                a = max(0, a - step)
            if grow_right:
                b = min(n, b + step)
            continue
        return found


def _bounds_ascii(
    crule: CompiledRule,
    text: str,
    window: tuple[int, int, tuple[int, int]],
    *,
    data: bytes,
    ascii: bool,
) -> tuple[list[tuple[int, int]] | None, int, int]:
    """The match spans in the ASCII window ``[a, b)``, matched in place in ``data``, given
    its first match (``window`` is ``(a, b, first)``).

    The text outside the window is context (``^`` does not match at ``a``, a boundary sees
    the character before it). A match that touches a window edge is looked for again in a
    window grown on that side, as in ``_matches``. Returns the spans and the final window;
    no spans (None) when the window grew over non-ASCII text.
    """
    a, b, first = window
    n = len(text)
    after = first[1] if first[1] > first[0] else first[1] + 1
    spans = [first, *match_spans(crule.bounds, data, after, b)]
    while True:
        grow_right = bool(spans) and spans[-1][1] == b and b < n
        grow_left = bool(spans) and spans[0][0] == a and a > 0
        if (grow_left or grow_right) and b - a < MAX_WINDOW_GROWTH:
            step = max(256, b - a)
            if grow_left:
                a = max(0, a - step)
            if grow_right:
                b = min(n, b + step)
            if not ascii and not text[a:b].isascii():
                return None, a, b
            spans = match_spans(crule.bounds, data, a, b)
            continue
        return spans, a, b


def accept(crule: CompiledRule, value: str, whole: str, quoted: bool) -> bool:
    rule = crule.rule
    if len(value) < rule.min_length or value in rule.allow_values:
        return False
    if encrypted_value(value):
        return False  # ciphertext (sops, ansible-vault, OpenPGP, age): no key here reads it
    if rule.entropy is not None and shannon_entropy(value) < rule.entropy:
        return False
    if any(found(p, value) for p in crule.allow):
        return False
    if any(found(p, whole) for p in crule.deny):
        return False
    if rule.placeholder_filter and looks_like_placeholder(value):
        return False
    if rule.reference_filter and looks_like_code_reference(value, quoted):
        return False
    if rule.reference_filter and (
        names_itself(whole, value) or compares_names(whole, value, quoted)
    ):
        return False
    if crule.names_values and (
        names_itself(whole, value, exact=True) or spelled_from_user(whole, value)
    ):
        return False
    return all(v(value) for v in crule.validators)
