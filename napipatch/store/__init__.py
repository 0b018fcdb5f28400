"""The series store (``series/NAME/vN/``, as git format-patch writes it) and
the ways in: ``importing`` (an mbox, a directory, a Message-ID through
``b4api``), ``exporting`` (format-patch --base with a rendered cover),
``showing`` (show, range-diff) and ``inputs`` (what a TARGET on the
command line names).

May import: ``mails``, ``tree``, ``report.templating``, ``errors``.
"""
