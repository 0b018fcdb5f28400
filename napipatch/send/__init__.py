"""Before a series leaves: the git hooks (``hooks`` installs them,
``hookrun`` is what they run) and ``sending`` (check, git send-email,
record the Message-IDs, tag).

A front-end over the flow.
May import: ``engine``, ``store``, ``kernel``, ``tree``, ``mails``,
``report``, ``config``, ``errors``.
"""
