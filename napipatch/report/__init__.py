"""Findings and reports: one review comment (``findings``), a run's results
(``model``: Report, CheckResult), rendering them as text, markdown or JSON
(``render``) through the jinja2 templates (``templating``).

The last step of the flow: findings -> a report a person reads.
May import: ``mails``, ``errors``.
"""
