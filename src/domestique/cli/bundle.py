"""``domestique bundle``: sign a policy bundle with a key kept off the hub.

    domestique bundle keygen KEYFILE                  prints the public key (hub trust-key …)
    domestique bundle sign POLICY --key KEYFILE --org ORG --revision N [--out FILE]

``sign`` validates the policy exactly as ``hub publish`` does (file:line:col on stderr, exit 1)
and writes the signed bundle for ``hub publish --signed FILE``. ``--org`` and ``--revision``
come from ``hub info`` (its ``org`` and ``next_revision``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from domestique.cli._args import Parser, UsageError


def _parser() -> Parser:
    p = Parser(prog="domestique bundle", description="Sign policy bundles offline.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    k = sub.add_parser("keygen", help="make an Ed25519 signing key (0600)")
    k.add_argument("keyfile", type=Path)
    s = sub.add_parser("sign", help="validate and sign a policy file")
    s.add_argument("policy", type=Path)
    s.add_argument("--key", type=Path, required=True)
    s.add_argument("--org", required=True)
    s.add_argument("--revision", type=int, required=True)
    s.add_argument("--out", type=Path, help="where to write the bundle (default: stdout)")
    return p


def run(argv: list[str]) -> int:
    from domestique.hub.bundle import generate_key, sign_bundle, validate_policy_text
    from domestique.policy._load import read_policy_bytes

    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"domestique bundle: {exc}\n")
        return 2
    if args.command == "keygen":
        try:
            public = generate_key(args.keyfile)
        except FileExistsError:
            sys.stderr.write(f"domestique bundle: {args.keyfile} exists; not overwritten\n")
            return 2
        sys.stdout.write(public + "\n")
        return 0
    if args.revision < 1:
        sys.stderr.write("domestique bundle: --revision must be 1 or more\n")
        return 2
    try:
        text = read_policy_bytes(args.policy).decode("utf-8")
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"domestique bundle: {args.policy}: {exc}\n")
        return 2
    errors = validate_policy_text(text, filename=str(args.policy))
    if errors:
        for error in errors:
            sys.stderr.write(error + "\n")
        return 1
    try:
        envelope = sign_bundle(policy=text, org=args.org, revision=args.revision, key_path=args.key)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"domestique bundle: cannot sign with {args.key}: {exc}\n")
        return 2
    if args.out:
        args.out.write_text(envelope + "\n", encoding="utf-8")
    else:
        sys.stdout.write(envelope + "\n")
    return 0
