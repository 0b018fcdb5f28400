"""The check engine: the registry of checks (``registry``: every module in
checks/ with an ID), what a check is given (``context``), the result cache
(``cache``) and the run itself (``run``: apply, plan units, run each
through the cache, aggregate into a Report).

The third step of the flow: commits -> checks -> findings.
May import: ``mails``, ``tree``, ``report``, ``config``, ``errors`` and
``napipatch.checks``.
"""
