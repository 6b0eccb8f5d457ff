"""Privilege handed out and production torn down through the tools that manage them.

- Administrative grants in clouds, clusters and forges (``aws iam attach-user-policy …
  AdministratorAccess``, ``gcloud projects add-iam-policy-binding … roles/owner``, ``az role
  assignment create --role Owner``, ``kubectl create clusterrolebinding … cluster-admin``,
  ``gh api -X PUT …/collaborators/X -f permission=admin``): one command gives an identity the
  keys to everything; an agent has no business doing that unattended (``cmd.privilege.accounts``,
  asked).
- A Kubernetes pod asking for the node itself (``hostPID``, ``hostNetwork``, ``privileged``,
  a ``hostPath`` of ``/``) through ``kubectl run --overrides`` or ``kubectl debug node/…``:
  a root shell on the node (``cmd.privilege.container``).
- Application frameworks told to drop or empty a production database (``RAILS_ENV=production
  … db:drop``, ``manage.py flush --settings=….production``) and ``terraform apply -destroy``
  (``cmd.destructive.data``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation
from domestique.guard.rules.registry import Context, rule

# Roles and policies that grant everything.
_ADMIN_ROLE = re.compile(
    r"(?i)(?:^|[/:=])(?:AdministratorAccess|IAMFullAccess|PowerUserAccess|roles/(?:owner|editor|"
    r"iam\.securityAdmin|resourcemanager\.projectIamAdmin|iam\.serviceAccountTokenCreator)|"
    r"Owner|Contributor|User Access Administrator|cluster-admin|admin)$"
)
_AWS_GRANTS = frozenset(
    {"attach-user-policy", "attach-role-policy", "attach-group-policy", "put-user-policy",
     "put-role-policy", "add-user-to-group", "create-login-profile", "update-assume-role-policy"}
)  # fmt: skip
_BINDING_KIND = re.compile(r"(?m)^\s*kind:\s*(?:Cluster)?RoleBinding\b")
_ADMIN_ROLE_YAML = re.compile(r"(?m)^\s*name:\s*[\"']?cluster-admin\b")
_PUBLIC_PRINCIPAL = re.compile(r"\"Principal\"\s*:\s*(?:\"\*\"|\{\s*\"AWS\"\s*:\s*\"\*\")")
_SQL_CLIENTS = frozenset({"psql", "mysql", "mariadb", "sqlcmd", "mongosh", "mongo", "cockroach"})
_SQL_GRANT = re.compile(
    r"(?i)\bALTER\s+(?:ROLE|USER)\s+\S+\s+(?:WITH\s+)?SUPERUSER\b|"
    r"\bGRANT\s+ALL\b[^;]*\bON\s+\*\.\*|\bWITH\s+GRANT\s+OPTION\b|"
    r"\bCREATE\s+(?:ROLE|USER)\b[^;]*\bSUPERUSER\b|\broles\s*:\s*\[\s*[\"']root[\"']"
)
_PERMISSION_KEYS = re.compile(r"(?i)^(?:permission|role)=(?:admin|maintain|owner)$")


def _aws_grant(args: list[str]) -> bool:
    if args[:1] != ["iam"] or not _AWS_GRANTS & set(args[1:3]):
        return False
    if "add-user-to-group" in args[1:3]:
        return any(re.search(r"(?i)admin", a) for a in args)
    if {"put-user-policy", "put-role-policy"} & set(args[1:3]):
        return any('"*"' in a or "'*'" in a for a in args) or any(
            re.search(r"(?i)admin", a) for a in args
        )
    if {"create-login-profile", "update-assume-role-policy"} & set(args[1:3]):
        return True
    return any(_ADMIN_ROLE.search(a) for a in args)


def _value(args: list[str], *names: str) -> str:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return ""


def _grant(inv: Invocation) -> str | None:
    """What ``inv`` grants when it hands out administrative rights, else None."""
    n, args = inv.name, inv.args
    if n == "aws" and _aws_grant(args):
        return "an AWS IAM administrative grant"
    if n == "gcloud" and any(a.endswith("add-iam-policy-binding") for a in args[:4]):
        role = _value(args, "--role")
        if _ADMIN_ROLE.search(role) or "admin" in role.lower():
            return f"a Google Cloud IAM binding of {role}"
    if n == "az" and args[:3] == ["role", "assignment", "create"]:
        role = _value(args, "--role")
        if _ADMIN_ROLE.search(role) or "admin" in role.lower():
            return f"an Azure role assignment of {role}"
    if (
        n in ("kubectl", "oc")
        and args[:1] == ["create"]
        and any(a in ("clusterrolebinding", "rolebinding") for a in args[1:2])
    ):
        role = _value(args, "--clusterrole", "--role")
        if _ADMIN_ROLE.search(role):
            return f"a Kubernetes binding to {role}"
    if n == "oc" and args[:3] == ["adm", "policy", "add-cluster-role-to-user"]:
        return "an OpenShift cluster role"
    if (
        n in ("kubectl", "oc")
        and args[:1] in (["patch"], ["edit"])
        and any(
            a in ("clusterrolebinding", "rolebinding") or a.startswith("clusterrolebinding/")
            for a in args[1:3]
        )
        and any(_ADMIN_ROLE.search(a) or a.endswith("/cluster-admin") for a in args[1:4])
    ):
        return "a Kubernetes administrator binding edited"
    if n in ("kubectl", "oc") and args[:1] in (["apply"], ["create"], ["replace"]):
        text = inv.stdin_text or ""
        if _BINDING_KIND.search(text) and _ADMIN_ROLE_YAML.search(text):
            return "a Kubernetes binding to cluster-admin applied"
    if args[:2] == ["s3api", "put-bucket-policy"] and _PUBLIC_PRINCIPAL.search(
        _value(args, "--policy")
    ):
        return "an S3 bucket policy open to everyone"
    if args[:2] in (["s3api", "put-bucket-acl"], ["s3api", "put-object-acl"]) and _value(
        args, "--acl"
    ) in ("public-read", "public-read-write", "authenticated-read"):
        return "an S3 bucket or object ACL open to everyone"
    if (
        args[:2] == ["ec2", "authorize-security-group-ingress"]
        and _value(args, "--cidr") in ("0.0.0.0/0", "::/0")
        and _value(args, "--protocol") in ("-1", "all")
    ):
        return "a security group opened to every address on every port"
    if (
        n == "gcloud"
        and args[:3] == ["compute", "firewall-rules", "create"]
        and _value(args, "--allow") == "all"
        and "0.0.0.0/0" in _value(args, "--source-ranges").split(",")
    ):
        return "a firewall rule open to every address on every port"
    if (
        n == "az"
        and args[:4] == ["network", "nsg", "rule", "create"]
        and _value(args, "--access").lower() == "allow"
        and _value(args, "--source-address-prefixes") in ("*", "Internet", "0.0.0.0/0")
        and _value(args, "--destination-port-ranges") == "*"
    ):
        return "a network security rule open to every address on every port"
    if (
        n in ("gh", "glab")
        and args[:2] in (["repo", "edit"], ["repo", "update"])
        and _value(args, "--visibility") == "public"
    ):
        return "a repository made public"
    if n in ("gcloud", "gsutil") and any(a.startswith(("allUsers", "allAuthenticatedUsers",
        "--member=allUsers", "--member=allAuthenticatedUsers")) or a in ("allUsers:R",
        "allUsers:objectViewer") for a in args):  # fmt: skip
        return "a Google Cloud resource opened to everyone"
    if n == "vault" and (
        _value(args, "-policy") == "root"
        or any(a in ("policies=root", "policy=root", "token_policies=root") for a in args)
    ):
        return "a Vault identity given the root policy"
    if n in _SQL_CLIENTS:
        sql = " ".join([*args, inv.stdin_text or ""])
        if _SQL_GRANT.search(sql):
            return "a database role given superuser or all privileges"
    if (
        n in ("gh", "glab")
        and args[:1] == ["api"]
        and any("/collaborators/" in a or "/members" in a for a in args)
        and any(_PERMISSION_KEYS.match(a) for a in args)
    ):
        return "a repository administrator added"
    return None


_GRANTERS = frozenset({"aws", "gcloud", "gsutil", "az", "kubectl", "oc", "gh", "glab", "vault"})


@rule(programs=_GRANTERS | _SQL_CLIENTS, args=True)
def _rule_admin_grant(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Administrative rights granted to an identity (cloud IAM, cluster RBAC, forge admin)."""
    what = _grant(inv)
    if what is not None:
        yield Hit("cmd.privilege.accounts", what, inv.span, inv.render())


_HOST_POD = re.compile(
    r'(?i)"(?:hostPID|hostNetwork|hostIPC|privileged)"\s*:\s*true|"path"\s*:\s*"/"'
)


@rule(programs={"kubectl", "oc"}, args=True)
def _rule_node_pod(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A pod that takes the node: host namespaces, privileged, the node's root mounted."""
    args = inv.args
    if args[:1] == ["run"] and _HOST_POD.search(_value(args, "--overrides")):
        yield Hit("cmd.privilege.container", "kubectl run with host namespaces or privileged",
                  inv.span, inv.render())  # fmt: skip
    elif args[:1] == ["debug"] and any(a.startswith("node/") for a in args):
        yield Hit("cmd.privilege.container", "kubectl debug of a node (its root file system)",
                  inv.span, inv.render())  # fmt: skip


_PRODUCTION = re.compile(r"(?i)(?:^|[._/-])prod(?:uction)?(?:$|[._/-])")
_RAILS_DESTROY = frozenset({"db:drop", "db:drop:all", "db:purge", "db:reset", "db:schema:load",
                            "db:truncate_all", "db:migrate:reset", "db:seed:replant"})  # fmt: skip
_DJANGO_DESTROY = frozenset({"flush", "reset_db", "sqlflush"})


def _production_env(inv: Invocation) -> bool:
    env = inv.env
    if "DISABLE_DATABASE_ENVIRONMENT_CHECK" in env:
        return True
    names = ("RAILS_ENV", "RACK_ENV", "DJANGO_SETTINGS_MODULE", "APP_ENV", "NODE_ENV", "MIX_ENV")
    return any(_PRODUCTION.search(env.get(k, "")) for k in names)


@rule(programs={"rails", "rake", "bundle", "python", "python3", "terraform", "tofu"}, args=True)
def _rule_production_teardown(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A framework told to drop a production database; ``terraform apply -destroy``."""
    n, args = inv.name, inv.args
    if n in ("terraform", "tofu"):
        if "apply" in args and "-destroy" in args:
            yield Hit("cmd.destructive.data", f"{n} apply -destroy deletes the infrastructure",
                      inv.span, inv.render())  # fmt: skip
        return
    if n == "bundle" and args[:1] == ["exec"]:
        args = args[2:]
    if n in ("python", "python3"):
        if not args or not args[0].endswith("manage.py") or not _DJANGO_DESTROY & set(args[1:3]):
            return
        settings = _value(args, "--settings")
    elif _RAILS_DESTROY & set(args):
        settings = _value(args, "RAILS_ENV") or next(
            (a.split("=", 1)[1] for a in args if a.startswith("RAILS_ENV=")), ""
        )
    else:
        return
    if _production_env(inv) or _PRODUCTION.search(settings):
        yield Hit("cmd.destructive.data", "drops or empties a production database",
                  inv.span, inv.render())  # fmt: skip
