"""Agent hooks: one adapter per host (stdin JSON → judge → the host's reply), installers, doctor.

Importing this package imports nothing else: ``domestique hook`` must start fast (see
:mod:`domestique.hooks.entry`).
"""
