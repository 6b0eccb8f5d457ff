"""The fleet hub: every endpoint's decisions in one place, signed policy pushed down.

Endpoints keep deciding locally; ``domestique sync`` uploads their hash-chained decision
records (:mod:`domestique.hub.batch`), which the hub verifies and stores
(:mod:`domestique.hub.store`, PostgreSQL or an embedded SQLite file), and fetches the
organisation's signed policy bundle (:mod:`domestique.hub.bundle`). The endpoint side is
:mod:`domestique.hub.endpoint`; the HTTP service :mod:`domestique.hub.app` and
:mod:`domestique.hub.server`. See ``docs/fleet.md``.
"""
