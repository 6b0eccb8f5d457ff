"""Domestique: policy enforcement for AI coding agents.

A scanning firewall on the path to the model provider, a command guard in front of the agents'
shell, and a tamper-evident audit log of every decision. See ``docs/`` and ``domestique --help``.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
