"""A series on a tree, start to end: apply once, the static checks, then the
job checks (builds, boots, NIPA's build tests), one report.

Every front-end (``napipatch check``, ``test``, ``send``, the hooks, the bot)
runs this one pipeline, so they cannot drift apart. It sits above the
engine (the static checks) and the jobs (what builds and boots): ``run``
(the pipeline), ``plan`` (which targets the jobs run on), ``jobchecks``
(the jobs a selection of job checks needs, and their results as checks).
"""
