"""The Starlette application of ``napipatch bot serve`` (uvicorn serves it).

Routes: ``/`` (series, newest first), ``/series/<id>``, ``/log/<id>/<name>``,
``/tests``, each with its JSON twin (``?format=json``), and ``/style.css``.
Every request opens the state read-only. Pages are Jinja2 templates with
autoescaping on (a subject or a finding comes from a mail), served with a
Content-Security-Policy that allows no script at all and only this
server's stylesheet: a ``<script>`` that got through would still not run.
Anything the state does not have, a malformed id, ``..`` or an encoded
``/`` in a path, is a 404.
"""

from __future__ import annotations

import datetime
import socket
import sqlite3
import sys
from functools import lru_cache

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from napipatch.bot.config import BotConfig
from napipatch.bot.state import State
from napipatch.bot.web import pages
from napipatch.errors import NapipatchError
from napipatch.report.status import Status

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("napipatch.templates", "."),
                             undefined=jinja2.StrictUndefined, autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["status_words"] = lambda status: Status(status).words
    env.filters["when"] = lambda t: datetime.datetime.fromtimestamp(
        t, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC") if t else ""
    return env


def _page(request: Request, template: str, data: dict, status: int = 200) -> Response:
    if request.query_params.get("format") == "json":
        return JSONResponse(data, status_code=status, headers=HEADERS)
    html = environment().get_template(template).render(**data, url=request.url.path)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def create_app(cfg: BotConfig) -> Starlette:
    db = cfg.db_path

    def read(request: Request, template: str, what) -> Response:
        state = State.readonly(db)
        try:
            return _page(request, template, what(state))
        except pages.NotFound as exc:
            return _page(request, "web-404.html.j2", {"why": str(exc)}, 404)
        finally:
            state.close()

    def index(request: Request) -> Response:
        try:
            n = int(request.query_params.get("page", "1"))
        except ValueError:
            n = 1
        return read(request, "web-index.html.j2", lambda st: pages.index(cfg, st, n))

    def series(request: Request) -> Response:
        sid = request.path_params["sid"]
        return read(request, "web-series.html.j2", lambda st: pages.series(cfg, st, sid))

    def log(request: Request) -> Response:
        sid, name = request.path_params["sid"], request.path_params["name"]
        return read(request, "web-log.html.j2", lambda st: pages.log(cfg, st, sid, name))

    def tests(request: Request) -> Response:
        return read(request, "web-tests.html.j2", pages.tests)

    def style(_request: Request) -> Response:
        css = environment().get_template("web-style.css.j2").render()
        return Response(css, media_type="text/css", headers=HEADERS)

    def not_found(request: Request, _exc) -> Response:
        return _page(request, "web-404.html.j2", {"why": "no such page"}, 404)

    def broken(request: Request, exc) -> Response:
        # A state the bot has not made yet (no database, an older schema).
        return PlainTextResponse(f"{db}: {exc}", status_code=503, headers=HEADERS)

    routes = [Route("/", index), Route("/series/{sid:int}", series),
              Route("/log/{sid:int}/{name:str}", log), Route("/tests", tests),
              Route("/style.css", style)]
    return Starlette(routes=routes, exception_handlers={404: not_found,
                                                        sqlite3.Error: broken})


def _socket(listen: str) -> socket.socket:
    """A socket bound to ``HOST:PORT`` (``[::1]:8080`` for IPv6), or a one-line error."""
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise NapipatchError(listen, "--listen takes HOST:PORT (127.0.0.1:8080)")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, int(port)))
    except OSError as exc:
        sock.close()
        raise NapipatchError(listen, f"cannot listen there: {exc.strerror or exc}") from None
    return sock


def serve(cfg: BotConfig, listen: str, verbose: bool = False) -> None:
    """``bot serve``: the pages on ``listen`` until SIGINT/SIGTERM."""
    if not cfg.db_path.exists():
        raise NapipatchError(cfg.db_path, "no state yet (run `napipatch bot once` first)")
    State(cfg.db_path).close()  # an older state gets this napipatch's new (empty) tables
    sock = _socket(listen)
    print(f"serving {cfg.state_dir} on http://{listen}/", file=sys.stderr, flush=True)
    config = uvicorn.Config(create_app(cfg), log_level="info" if verbose else "warning",
                            access_log=verbose)
    uvicorn.Server(config).run(sockets=[sock])
