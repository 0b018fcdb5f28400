"""The CI bot: follow public-inbox archives, check each new series, reply.

config.py (TOML) -> ingest.py (archive.py, the git follower of v2 epochs,
into state.py, SQLite and all of the bot's SQL) -> assemble.py (mails ->
series) -> trees.py (the tree, base and branch a series is checked on) ->
napipatch.jobs.flow (checks, then builds and boots) -> reply.py (what a
reply says, the reply policy, the rate limit) -> outbox.py (sending,
settling after a crash) -> mailer.py (headers, SMTP, dry-run). runner.py
orders those steps into a pass and loops; status.py shows the state;
faults.py is the fault injection of the restart tests.

A front-end over the flow.
May import: anything in napipatch except ``cli``.
"""
