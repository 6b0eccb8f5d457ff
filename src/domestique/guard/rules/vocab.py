"""Vocabularies the guard's rules share: program families, protected branches, security units."""

from __future__ import annotations

import re

DOWNLOADERS = frozenset(
    {
        "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "xhs", "lwp-download",
        "lwp-request", "get", "axel", "curlie", "httpie", "tftp", "ftp", "wget2", "lynx",
        "links", "w3m", "elinks", "invoke-webrequest", "iwr", "certutil", "nscurl",
    }
)  # fmt: skip


RAW_NETWORK = frozenset(
    {"nc", "ncat", "netcat", "socat", "telnet", "cryptcat", "pwncat", "sbd", "gsocket", "gs-netcat"}
)


# Tools that send a name to a resolver (a name can carry data to whoever runs its zone).
NAME_LOOKUPS = frozenset({"dig", "nslookup", "host", "drill", "ping", "resolvectl", "kdig", "delv"})
NETWORK = (
    NAME_LOOKUPS
    | DOWNLOADERS
    | RAW_NETWORK
    | frozenset(
        {
            "ssh", "scp", "sftp", "rsync", "mail",
            "mailx", "sendmail", "mutt", "smbclient", "rclone", "gsutil", "s3cmd", "nmap",
            "whois", "ldapsearch", "mosquitto_pub", "openssl", "gh", "aws", "az", "gcloud",
            "kubectl", "docker", "git", "npm", "pip", "twine", "ngrok", "cloudflared", "irc",
            "glab",
        }
    )
)  # fmt: skip


DECODERS = frozenset(
    {
        "base64", "base32", "basenc", "xxd", "openssl", "gzip", "gunzip", "zcat", "bzip2",
        "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd", "unzstd", "zstdcat", "lz4", "uudecode",
        "rev", "tr", "printf", "echo", "od", "gpg", "perl", "python", "ruby", "node", "php",
        "awk", "sed", "iconv", "recode", "uncompress", "lzma", "unlzma", "b64decode",
    }
)  # fmt: skip


# Programs that only look at a path; a credential or settings path in them is not a read/write.
LOOK_ONLY = frozenset(
    {
        "ls", "stat", "test", "[", "[[", "file", "chmod", "chown", "realpath", "readlink",
        "dirname", "basename", "which", "type", "du", "wc", "ssh", "ssh-add", "ssh-keygen",
        "ssh-copy-id", "echo", "printf", "touch", "mkdir", "namei", "lsattr", "getfacl",
    }
)  # fmt: skip


READ_ONLY = LOOK_ONLY | frozenset(
    {
        "cat", "less", "more", "head", "tail", "grep", "rg", "ag", "jq", "yq", "diff", "cmp",
        "md5sum", "sha1sum", "sha256sum", "shasum", "bat", "view", "nl", "od", "hexdump", "xxd",
        "strings", "find", "tree", "git", "code", "cursor", "python", "node", "wc", "sort",
        "uniq", "cut", "awk", "column", "fold", "source", ".",
    }
)  # fmt: skip


PROTECTED_BRANCHES = re.compile(
    r"^(?:refs/heads/)?(?:main|master|trunk|develop|development|dev|prod|production|stable|"
    r"release(?:[/-].*)?|releases/.*|hotfix/.*|gh-pages|HEAD)$"
)


SECURITY_UNITS = re.compile(
    r"(?i)(?:apparmor|auditd?|firewalld|ufw|selinux|falcon|crowdstrike|osquery|clamav|clamd|"
    r"freshclam|sysmon|wazuh|ossec|aide|fail2ban|sentinel|carbonblack|cbagent|cylance|eset|"
    r"sophos|mdatp|defender|rsyslog|syslog|journald|snort|suricata|tripwire|lynis|xagt|"
    r"elastic-agent|filebeat|auditbeat|splunk|qualys|tanium|cb-?psc|endpoint|xprotect|"
    r"com\.apple\.(?:alf|security|syspolicy|xprotect|mrt))"
)


DISK = re.compile(
    r"^/dev/(?:[shv]d[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper/|loop\d|"
    r"sr\d|fd\d|root|block/|mem$|kmem$|port$|nbd\d|zd\d|sg\d)"
)


# Variables that point agents at the firewall (or hold the guard's state): changing or unsetting
# them for an agent routes model traffic around the controls.
CONTROL_VARIABLES = frozenset(
    {"DOMESTIQUE_HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL",
     "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
     "OPENAI_BASE_URL", "OPENAI_API_BASE", "GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL",
     "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy",
     "all_proxy", "no_proxy", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME",
     "CURSOR_CONFIG_DIR", "COPILOT_HOME"}
)  # fmt: skip


def is_control_variable(name: str) -> bool:
    """A variable that points agents at the firewall or holds the guard's state (every
    ``DOMESTIQUE_*`` variable: the guard's home, its hook daemon, its sync and proxy settings)."""
    return name in CONTROL_VARIABLES or name.startswith("DOMESTIQUE_")


# Agent command-line tools: a control variable set for one of them routes its model traffic.
AGENT_PROGRAMS = frozenset(
    {"claude", "codex", "gemini", "aider", "cursor-agent", "copilot", "cline", "windsurf",
     "opencode", "goose", "amp", "qwen", "crush", "llm", "continue", "plandex", "openhands"}
)  # fmt: skip


TEMP_TOPS = frozenset({"/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm"})  # noqa: S108 - matched, never opened


ACCOUNT_TOOLS = frozenset(
    {"visudo", "vipw", "vigr", "chpasswd", "passwd", "usermod", "useradd", "adduser", "userdel",
     "groupadd", "gpasswd", "sysadminctl", "dseditgroup", "newusers", "deluser", "addgroup"}
)  # fmt: skip


# _rule_saved_exec saves a path only for a download (a downloader, git archive, interpreter code
# that reaches the network) or a decode other than echo/printf: no such name, nothing to find.
FETCHERS = frozenset({"aria2c", "scp", "rsync", "git", "hg", "svn", "gh"})
