"""The CI bot: follow public-inbox archives, check each new series, reply.

config.py (TOML) -> archive.py (git follower of v2 epochs) -> state.py
(SQLite) -> assemble.py (mails -> series) -> runner.py (a pass: checks via
the engine, jobs, reply policy) -> mailer.py (headers, SMTP, dry-run).

A front-end over the flow.
May import: anything in napipatch except ``cli``.
"""
