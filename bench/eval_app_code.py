"""False findings per MB on application code nobody here wrote, for any list of projects.

    .venv/bin/python bench/eval_app_code.py [--set NAME ...] [SPEC ...] [--show N]
        [--show-code CODE] [--app-cache DIR] [--json OUT]

``SPEC`` is ``name==version``; ``--set`` adds a named set (``tuned``, ``held-out``,
``second-look``, ``round7-tune``, ``round7-held``; ``all`` for every one). Each project's
source distribution is downloaded once with ``pip download --no-deps --no-binary :all:`` into
the cache (``~/.cache/domestique-bench/sdist`` unless ``--app-cache``), read straight from the
archive, test directories (``test``, ``tests``, ``testing``, ``fixtures``, ``test_*``)
excluded. They are published libraries: every ``secret.*`` finding is counted as false.

Printed per project: MB, ``secret.*`` findings, per MB and the codes; then per set. ``--show``
prints that many findings (with a little context) of the projects given; look only at sets
you tune on (the round-7 held set was measured unread in round 7 and read, and tuned on, in
round 8: no set here is held out any more).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from eval_secrets import (
    APP_CACHE,
    APP_HELD_OUT,
    APP_SECOND_LOOK,
    APP_TUNED,
    app_archive,
    app_texts,
    domestique_detector,
    is_secret,
)

# Round 7 (issue 17): projects new to the evaluation. The tune half was read finding by
# finding; the held half was only measured, before and after the round (and read, and tuned
# on, in round 8).
APP_ROUND7_TUNE = (
    "jinja2==3.1.6",
    "click==8.5.1",
    "aiohttp==3.14.5",
    "twilio==9.13.0",
    "tornado==6.6.1",
    "marshmallow==4.4.0",
    "djangorestframework==3.18.3",
    "authlib==1.9.10",
    "boto3==1.44.8",
    "passlib==1.7.4",
    "flask-login==0.6.3",
    "gunicorn==27.0.1",
    "bottle==0.13.4",
    # added later in the round, measured once unread (33.3 per MB before the round's changes,
    # 22.3 after the first batch of them), then read
    "django-oauth-toolkit==3.4.1",
    "django-otp==1.7.5",
    "djoser==2.3.5",
    "fastapi-users==15.0.5",
    "social-auth-core==7.0.0",
    # a third batch, measured once unread (8.15 per MB before the round, 6.66 after the
    # changes made until then), then read
    "flask-appbuilder==5.3.0",
    "scrapy==2.19.0",
    "httpie==3.2.4",
    "locust==2.47.0",
    "dj-rest-auth==7.2.0",
    "python-keycloak==7.1.1",
    # a fourth batch (Django apps), measured once unread (8.62 per MB before the round, 5.35
    # after the changes made until then), then read
    "django-axes==8.3.1",
    "django-debug-toolbar==8.0.0",
    "django-extensions==4.1",
    "django-guardian==3.5.2",
    "django-two-factor-auth==1.18.1",
    "djangorestframework-simplejwt==5.5.1",
)
APP_ROUND7_HELD = (
    "rich==15.0.0",
    "pyjwt==2.15.1",
    "oauthlib==4.0.1",
    "falcon==4.4.0",
    "sanic==25.12.1",
    "pyramid==2.1",
    "peewee==4.5.3",
    "asyncpg==0.32.0",
    "elasticsearch==9.5.1",
    "google-auth==2.63.0",
    "msal==1.39.0",
    "python-gitlab==8.6.0",
    "django-allauth==65.22.1",
)
SETS = {
    "tuned": APP_TUNED,
    "held-out": APP_HELD_OUT,
    "second-look": APP_SECOND_LOOK,
    "round7-tune": APP_ROUND7_TUNE,
    "round7-held": APP_ROUND7_HELD,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*", help="name==version")
    ap.add_argument("--set", action="append", default=[], choices=[*SETS, "all"])
    ap.add_argument("--show", type=int, default=0, help="print N secret.* findings")
    ap.add_argument("--show-code", help="only show findings of this code")
    ap.add_argument("--app-cache", type=Path, default=APP_CACHE)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    groups: dict[str, tuple[str, ...]] = {}
    for name in args.set:
        for key in SETS if name == "all" else (name,):
            groups[key] = SETS[key]
    if args.specs:
        groups["given"] = tuple(args.specs)
    if not groups:
        ap.error("name a --set or at least one SPEC")
    detect = domestique_detector()
    shown = 0
    results: dict[str, object] = {}
    for group, specs in groups.items():
        g_bytes = g_found = 0
        g_codes: Counter[str] = Counter()
        for spec in specs:
            size = 0
            codes: Counter[str] = Counter()
            for name, raw in app_texts(app_archive(spec, args.app_cache)):
                size += len(raw)
                text = raw.decode("utf-8", "replace")
                for s, e, c in detect(text):
                    if not is_secret(c):
                        continue
                    codes[c] += 1
                    if shown < args.show and args.show_code in (None, c):
                        shown += 1
                        ctx = text[max(0, s - 60) : e + 20]
                        print(f"  {name}: {c}: {ctx!r}", file=sys.stderr)
            found = sum(codes.values())
            mb = size / 1e6
            results[spec] = {"mb": round(mb, 2), "secret_findings": found, "by_code": codes}
            print(
                f"{group:12} {spec:28} {mb:6.2f} MB {found:4d} = {found / mb:6.3f}/MB  "
                + ", ".join(f"{c.removeprefix('secret.')} {n}" for c, n in codes.most_common())
            )
            g_bytes += size
            g_found += found
            g_codes.update(codes)
        mb = g_bytes / 1e6
        results[group] = {"mb": round(mb, 2), "secret_findings": g_found, "by_code": g_codes}
        print(f"{group:12} {'ALL':28} {mb:6.2f} MB {g_found:4d} = {g_found / mb:6.3f}/MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
