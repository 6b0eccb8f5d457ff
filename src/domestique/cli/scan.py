"""``domestique scan``: find secrets, personal data, known values and customer records in text.

    domestique scan [--json | --jsonl] [--policy FILE] [--all] [PATH | DIR | -]
    domestique scan --staged [--json] [--policy FILE] [--all]      (a pre-commit hook)

A directory is walked: inside a git work tree the files git lists (tracked, and untracked ones
not ignored), elsewhere every file no ``.gitignore`` ignores; binary files (a NUL byte) and
links are skipped and counted. ``--staged`` scans the staged version of every staged file.
Findings name the file, line and column; ``--json`` gives ``{"findings": [...]}`` with
``path``, ``line`` and ``column`` added to each finding, plus ``files_scanned`` and
``skipped``.

Findings the effective policy allows for the firewall (builtin, system, user and ``--policy``
layers; by default the ``infra.*`` identifiers: ARNs, account ids, bucket names) are not
reported unless ``--all`` is given, so exit 1 means "something here would not leave as is".

With ``DOMESTIQUE_SCAN_WORKERS`` set (see :mod:`domestique.cli._split`), a directory or a
``--jsonl`` stream of more than 512 KB is shared with forked workers: same output, same order;
a worker that fails leaves its files and lines reported as not scanned (exit 2).

Exit 0: nothing found; 1: findings; 2: error. An error never looks like "nothing found": an
unreadable input, an invalid policy, a bad ``--jsonl`` line or a detector crash all exit 2.
Output never contains a raw value: masked previews and keyed fingerprints only.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from domestique.cli._args import Parser, UsageError

if TYPE_CHECKING:
    from domestique.detect import Finding, Scanner
    from domestique.policy import EffectivePolicy

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


def _parser() -> Parser:
    p = Parser(
        prog="domestique scan",
        description="Find secrets, personal data and customer records in text.",
        epilog="exit 0: nothing found, 1: findings, 2: error",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help='one object: {"findings": [...]}')
    fmt.add_argument(
        "--jsonl",
        action="store_true",
        help='input lines {"id", "text"}; one output line {"id", "findings"} each',
    )
    p.add_argument(
        "--policy",
        type=Path,
        help="policy file layered over the builtin, system and user policies",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="report every finding, also those the policy allows (e.g. infra.* identifiers)",
    )
    p.add_argument(
        "--staged",
        action="store_true",
        help="scan what is staged for the next commit (for a pre-commit hook)",
    )
    p.add_argument(
        "path", nargs="?", default=None, help="file or directory to scan, or - for stdin"
    )
    return p


def _read(path: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        target = Path(path)
        if target.is_dir():
            raise OSError(f"{path}: is a directory")
        data = target.read_bytes()
    # Invalid UTF-8 is kept as lone surrogates: offsets stay one per decoded character.
    return data.decode("utf-8", "surrogateescape")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _filter(findings: list[Finding], policy: EffectivePolicy | None) -> list[Finding]:
    if policy is None:
        return findings
    from domestique.policy import DecisionContext
    from domestique.records import Action, Component

    ctx = DecisionContext(component=Component.PROXY)
    return [
        f
        for f in findings
        if f.code.startswith("engine.") or policy.policy_action_for(f.code, ctx) is not Action.ALLOW
    ]


def _printable(line: str) -> str:
    """``line`` with lone surrogates (undecodable input bytes) shown as U+FFFD."""
    return line.encode("utf-8", "replace").decode("utf-8")


def _has_error(findings: Sequence[Finding]) -> bool:
    return any(f.code.startswith("engine.") for f in findings)


def _human(name: str, text: str, findings: Sequence[Finding]) -> None:
    out = sys.stdout
    for f in findings:
        line, col = _line_col(text, f.start)
        fp = f" {f.fingerprint}" if f.fingerprint else ""
        out.write(_printable(f"{name}:{line}:{col}: {f.code} {f.preview}{fp}\n"))
    n = len(findings)
    sys.stderr.write(f"{n} finding{'s' if n != 1 else ''} in {name}\n")


def _jsonl_one(scanner: Scanner, policy: EffectivePolicy | None, entry: tuple[int, str]) -> object:
    """One input line's output line and exit status (``entry``: its number and text)."""
    number, line = entry
    try:
        item = json.loads(line)
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ValueError("expected an object with a string 'text'")
    except ValueError as exc:
        # Never echo the line: it may hold the very secret that failed to parse.
        msg = type(exc).__name__ if not isinstance(exc, json.JSONDecodeError) else "not JSON"
        return [json.dumps({"id": None, "line": number, "error": f"bad input line: {msg}"}), 2]
    findings = _filter(scanner.scan(item["text"]), policy)
    out = json.dumps({"id": item.get("id"), "findings": [f.to_json() for f in findings]})
    return [out, EXIT_ERROR if _has_error(findings) else EXIT_FOUND if findings else EXIT_CLEAN]


def _id_of(line: str) -> object:
    try:
        item = json.loads(line)
    except ValueError:
        return None
    return item.get("id") if isinstance(item, dict) else None


def _scan_jsonl(scanner: Scanner, raw: str, policy: EffectivePolicy | None) -> int:
    from domestique.cli._split import Failed, split_map

    entries = [(n, line) for n, line in enumerate(raw.splitlines(), 1) if line.strip()]
    work = functools.partial(_jsonl_one, scanner, policy)
    results = split_map(work, entries, [len(line) for _, line in entries])
    status = EXIT_CLEAN
    for (number, line), result in zip(entries, results, strict=True):
        if isinstance(result, Failed):  # a worker that failed: this line was not scanned
            out = {"id": _id_of(line), "line": number, "error": f"not scanned: {result.why}"}
            out_line, code = json.dumps(out), EXIT_ERROR
        else:
            out_line, code = result  # type: ignore[misc]
        sys.stdout.write(out_line + "\n")
        status = max(status, code)
    return status


def _text_result(
    scanner: Scanner, policy: EffectivePolicy | None, as_json: bool, shown: str, text: str
) -> dict[str, object]:
    """One file's findings (as output items) and, without ``as_json``, its output lines."""
    findings = _filter(scanner.scan(text), policy)
    items: list[dict[str, object]] = []
    lines: list[str] = []
    for f in findings:
        line, col = _line_col(text, f.start)
        items.append({**f.to_json(), "path": shown, "line": line, "column": col})
        if not as_json:
            fp = f" {f.fingerprint}" if f.fingerprint else ""
            lines.append(_printable(f"{shown}:{line}:{col}: {f.code} {f.preview}{fp}\n"))
    return {"items": items, "lines": lines, "engine_error": _has_error(findings)}


def _file_result(
    scanner: Scanner, policy: EffectivePolicy | None, as_json: bool, entry: tuple[str, str]
) -> dict[str, object]:
    """``_text_result`` for a file (``entry``: its path and the name shown), or why it was not
    scanned: an ``error`` (unreadable) or skipped (``binary``, ``too_large``)."""
    from domestique.cli._tree import Skipped, read_text_file

    path, shown = entry
    skipped = Skipped()
    try:
        text = read_text_file(Path(path), skipped, shown)
    except OSError as exc:
        return {"error": f"{shown}: {exc.strerror or type(exc).__name__}"}
    if text is None:
        return {"binary": skipped.binary, "too_large": skipped.too_large}
    return _text_result(scanner, policy, as_json, shown, text)


def _scan_many(
    scanner: Scanner,
    policy: EffectivePolicy | None,
    *,
    as_json: bool,
    staged: bool,
    directory: Path,
    shown_dir: str,
) -> int:
    """Scan every file of a directory, or every staged file; one report for them all."""
    from domestique.cli._split import Failed, split_map
    from domestique.cli._tree import Skipped, files_in, staged_files, text_of

    skipped = Skipped()
    items: list[dict[str, object]] = []
    errors: list[str] = []
    scanned = 0
    found_error = False
    results: list[tuple[str, object]] | Iterator[tuple[str, object]]
    if staged:
        results = []
        for name, data in staged_files(directory):
            text = text_of(data, skipped, name)
            if text is not None:
                results.append((name, _text_result(scanner, policy, as_json, name, text)))
    else:
        entries: list[tuple[str, str]] = []
        for path in files_in(directory):
            rel = path.relative_to(directory).as_posix()
            shown = rel if shown_dir in (".", "") else f"{shown_dir.rstrip('/')}/{rel}"
            entries.append((str(path), shown))
        sizes = [_size(path) for path, _ in entries]
        work = functools.partial(_file_result, scanner, policy, as_json)
        results = zip([s for _, s in entries], split_map(work, entries, sizes), strict=True)
    for shown, result in results:
        if isinstance(result, Failed):  # its worker failed: not scanned, an error
            errors.append(f"{shown}: not scanned ({result.why})")
            continue
        assert isinstance(result, dict)
        if "error" in result:
            errors.append(result["error"])
            continue
        if "items" not in result:
            skipped.binary += result["binary"]
            skipped.too_large += result["too_large"]
            continue
        scanned += 1
        found_error = found_error or bool(result["engine_error"])
        items += result["items"]
        for line in result["lines"]:
            sys.stdout.write(line)
    if as_json:
        out = {
            "findings": items,
            "files_scanned": scanned,
            "skipped": {"binary": skipped.binary, "too_large": skipped.too_large},
            "errors": errors,
        }
        sys.stdout.write(json.dumps(out) + "\n")
    for error in errors:
        sys.stderr.write(f"domestique scan: cannot read {error}\n")
    n, files = len(items), len({i["path"] for i in items})
    what = "staged files" if staged else shown_dir
    sys.stderr.write(
        f"{n} finding{'s' if n != 1 else ''} in {files} of {scanned} files scanned ({what})"
        + (f"; skipped {len(skipped.binary)} binary" if skipped.binary else "")
        + (f", {len(skipped.too_large)} too large" if skipped.too_large else "")
        + "\n"
    )
    if errors or found_error:
        return EXIT_ERROR
    return EXIT_FOUND if items else EXIT_CLEAN


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # (reading it will say why)


def run(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"domestique scan: {exc}\n")
        return EXIT_ERROR
    if args.staged and args.path is not None:
        sys.stderr.write("domestique scan: --staged reads the index; give no PATH\n")
        return EXIT_ERROR
    args.path = "-" if args.path is None else args.path
    many = args.staged or (args.path != "-" and Path(args.path).is_dir())
    if many and args.jsonl:
        sys.stderr.write("domestique scan: --jsonl reads lines from stdin, not files\n")
        return EXIT_ERROR
    try:
        from domestique.detect import default_scanner

        policy = None
        if not args.all or args.policy is not None:
            from domestique.policy import load_policy

            policy = load_policy(policy_file=args.policy, project_dir=Path.cwd())
            if not policy.valid:
                for err in policy.errors:
                    sys.stderr.write(f"domestique scan: policy: {err}\n")
                return EXIT_ERROR
        if args.all:
            policy = None
        if many:
            return _scan_many(
                default_scanner(),
                policy,
                as_json=args.json,
                staged=args.staged,
                directory=Path.cwd() if args.staged else Path(args.path),
                shown_dir=args.path,
            )
        text = _read(args.path)
        scanner = default_scanner()
        if args.jsonl:
            return _scan_jsonl(scanner, text, policy)
        findings = _filter(scanner.scan(text), policy)
    except Exception as exc:  # noqa: BLE001 - any failure is exit 2, never "nothing found"
        sys.stderr.write(f"domestique scan: error: {type(exc).__name__}: {_safe(exc)}\n")
        return EXIT_ERROR
    try:
        if args.json:
            sys.stdout.write(json.dumps({"findings": [f.to_json() for f in findings]}) + "\n")
        else:
            _human("<stdin>" if args.path == "-" else args.path, text, findings)
    except Exception as exc:  # noqa: BLE001 - output failed: an error, never "nothing found"
        sys.stderr.write(f"domestique scan: error: cannot write output ({type(exc).__name__})\n")
        return EXIT_ERROR
    if _has_error(findings):
        return EXIT_ERROR
    return EXIT_FOUND if findings else EXIT_CLEAN


def _safe(exc: BaseException) -> str:
    """An exception message only when it cannot carry scanned text (OS errors name files)."""
    from domestique.cli._tree import TreeError

    if isinstance(exc, TreeError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    return "see the exception type"
