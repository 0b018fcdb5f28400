"""Mails and series: a patch mail parsed (``mail``), its subject read the
way b4 reads it (``subject``), mails assembled into one version of a
series (``series``), and a diff's hunks as before/after text (``hunks``).

The first step of the flow: everything else starts from a ``Series``.
May import: ``napipatch.errors`` only.
"""
