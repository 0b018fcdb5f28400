"""Jinja2 over templates/ (shipped as napipatch.templates), StrictUndefined.

Filters: ``status_words`` says a check's status as a report does
(``{{ c.status | status_words }}``: ``timed out``, ``could not run``).
"""

from __future__ import annotations

from functools import lru_cache

import jinja2

from napipatch.report.status import Status


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("napipatch.templates", "."),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["status_words"] = lambda status: Status(status).words
    return env


def render(name: str, **data) -> str:
    return environment().get_template(name).render(**data)
