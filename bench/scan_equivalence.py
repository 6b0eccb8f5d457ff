"""Same findings from two source trees: the engine and ``domestique scan``, compared byte for byte.

    .venv/bin/python bench/scan_equivalence.py --base SRC [--quick] [--cli-only | --engine-only]

``SRC`` is another source tree (its ``src/``, e.g. ``git archive <commit> src | tar -x -C
/tmp/base``). A change to the engine's mechanics (the prefilter, the passes, the scan command's
loop) must not change one finding: this runs both trees on the same inputs and fails (exit 1)
at the first difference, naming the input and the first differing finding (code and span: the
findings hold masked previews and keyed fingerprints, never a raw value).

Inputs: every file under ``/work/shared/corpora`` (public evaluation data, read here only),
the running interpreter's standard library and this venv's ``site-packages`` (``--quick``: the
corpora and every fifth stdlib file). Each file is scanned whole (decoded as the scan command
decodes it), and the stdlib's source also as the bench's 100 KB items.

* engine: one worker process per tree scans every input with ``default_scanner()`` (the same
  ``DOMESTIQUE_HOME``, so the same fingerprint key) and writes one JSON line per input;
* command: ``domestique scan --json DIR`` over a few directories, ``--jsonl`` over the corpora
  and the stdlib items, ``scan FILE``; stdout and exit code compared. Environment variables
  given with ``--env K=V`` (e.g. a worker count) are set for this tree's commands only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

# The shared corpora: next to the main checkout (../shared/corpora), or next to the worktrees.
CORPORA = next(
    (p for p in (Path("/work/shared/corpora"), Path("/work/wt/shared/corpora")) if p.is_dir()),
    Path("/work/shared/corpora"),
)
MAX_FILE = 4 << 20
WORKER = """
import json, sys
from domestique.detect import default_scanner
scanner = default_scanner()
paths = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as out:
    for p in paths:
        if p.startswith("item:"):
            text = ITEMS[int(p[5:])]
        else:
            with open(p, "rb") as fh:
                text = fh.read().decode("utf-8", "surrogateescape")
        found = [[f.code, f.start, f.end, f.fingerprint, f.preview] for f in scanner.scan(text)]
        out.write(json.dumps([p, found]) + "\\n")
"""


def stdlib_files(step: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    return files[::step]


def site_files(step: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["purelib"])
    return sorted(p for p in root.rglob("*") if p.suffix in {".py", ".txt", ".md", ".json"})[::step]


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPORA.rglob("*") if p.is_file())


def items_source() -> str:
    """The bench's 20 items of 100 KB (as ``bench/bench_scan_cli.py`` builds them)."""
    here = str(Path(__file__).parent)
    return f"import sys\nsys.path.insert(0, {here!r})\n" + (
        "from bench_scan_cli import corpus\nITEMS = corpus()\n"
    )


def env_for(src: Path, home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    env |= {"PYTHONPATH": str(src), "DOMESTIQUE_HOME": str(home), "DOMESTIQUE_HOOKD": "off"}
    return env | extra


def engine(trees: dict[str, Path], paths: list[str], tmp: Path) -> int:
    listing = tmp / "paths.json"
    listing.write_text(json.dumps(paths))
    program = items_source() + WORKER
    procs = {}
    for name, src in trees.items():
        out = tmp / f"engine-{name}.jsonl"
        env = env_for(src, tmp / "home", {})
        cmd = [sys.executable, "-c", program, str(listing), str(out)]
        procs[name] = (subprocess.Popen(cmd, env=env, cwd=tmp / "work"), out)
    for name, (proc, _) in procs.items():
        if proc.wait() != 0:
            print(f"engine worker for {name} exited {proc.returncode}")
            return 1
    base = procs["base"][1].read_text().splitlines()
    this = procs["this"][1].read_text().splitlines()
    findings = sum(len(json.loads(line)[1]) for line in base)
    if len(base) != len(this):
        print(f"engine: {len(base)} results from base, {len(this)} from this tree")
        return 1
    for a, b in zip(base, this, strict=True):
        if a != b:
            pa, fa = json.loads(a)
            _, fb = json.loads(b)
            diff = next(
                (
                    (x, y)
                    for x, y in zip(fa + [None] * len(fb), fb + [None] * len(fa), strict=False)
                    if x != y
                ),
                None,
            )
            print(f"engine: findings differ for {pa}: base {len(fa)}, this {len(fb)}")
            if diff is not None:
                x, y = diff
                print(f"  first difference: base {x and x[:3]} / this {y and y[:3]}")
            return 1
    print(f"engine: {len(base)} inputs, {findings} findings, identical")
    return 0


def command(trees: dict[str, Path], tmp: Path, quick: bool, extra: dict[str, str]) -> int:
    corpus_lines = []
    for i, p in enumerate(corpus_files()):
        text = p.read_bytes()[:MAX_FILE].decode("utf-8", "replace")
        corpus_lines.append(json.dumps({"id": i, "text": text}))
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_scan_cli import corpus

    item_lines = [json.dumps({"id": i, "text": t}) for i, t in enumerate(corpus())]
    bad = [*corpus_lines[:3], "{not json", *corpus_lines[3:6]]
    streams = {
        "jsonl corpora": "\n".join(corpus_lines) + "\n",
        "jsonl stdlib items": "\n".join(item_lines) + "\n",
        "jsonl with a bad line": "\n".join(bad) + "\n",
        "jsonl empty": "",
    }
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    dirs = [CORPORA / "leaky-repo", CORPORA / "trufflehog-detector-tests", stdlib / "email"]
    if not quick:
        dirs += [CORPORA, stdlib / "json", stdlib / "asyncio"]
    runs: list[tuple[str, list[str], str]] = [(k, ["--jsonl"], v) for k, v in streams.items()]
    for d in dirs:
        runs.append((f"--json {d}", ["--json", str(d)], ""))
        runs.append((f"{d} (human)", [str(d)], ""))
        runs.append((f"--all --json {d}", ["--all", "--json", str(d)], ""))
    runs.append(("file", [str(stdlib / "smtplib.py")], ""))
    status = 0
    for label, argv, stdin in runs:
        outs = {}
        for name, src in trees.items():
            env = env_for(src, tmp / "home", extra if name == "this" else {})
            proc = subprocess.run(
                [sys.executable, "-m", "domestique", "scan", *argv],
                input=stdin.encode(),
                capture_output=True,
                env=env,
                cwd=tmp / "work",
                check=False,
            )
            outs[name] = (proc.returncode, proc.stdout, proc.stderr)
        same = outs["base"] == outs["this"]
        size = len(outs["base"][1])
        verdict = "same" if same else "DIFFERENT"
        print(f"command {label}: exit {outs['base'][0]}, {size} bytes out, {verdict}")
        if not same:
            for i, what in enumerate(("exit", "stdout", "stderr")):
                if outs["base"][i] != outs["this"][i]:
                    print(f"  {what} differs")
            status = 1
    return status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--engine-only", action="store_true")
    ap.add_argument("--cli-only", action="store_true")
    ap.add_argument("--env", action="append", default=[], help="K=V for this tree's commands")
    args = ap.parse_args()
    import domestique

    trees = {"base": args.base.resolve(), "this": Path(domestique.__file__).parents[1]}
    extra = dict(kv.split("=", 1) for kv in args.env)
    step = 5 if args.quick else 1
    paths = [str(p) for p in corpus_files()]
    paths += [str(p) for p in stdlib_files(step)]
    if not args.quick:
        paths += [str(p) for p in site_files(1)]
    paths = [p for p in paths if os.path.getsize(p) <= MAX_FILE]
    paths += [f"item:{i}" for i in range(20)]
    status = 0
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "work").mkdir()
        if not args.cli_only:
            status |= engine(trees, paths, tmp)
        if not args.engine_only:
            status |= command(trees, tmp, args.quick, extra)
    sys.exit(status)


if __name__ == "__main__":
    main()
