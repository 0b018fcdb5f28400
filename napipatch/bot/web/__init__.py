"""``napipatch bot serve``: the bot's state as read-only web pages
(``pages``: what each page shows, as data; ``app``: the Starlette routes,
headers and templates)."""
