"""The web table: play any game that declares a web adapter (``GameSpec.web``, in its
folder: ``games/<name>/web.py``) in the browser against the bots, with an exact coach
where the game offers one.

* ``play.web.app``     the FastAPI app (``create_app``): the JSON API under ``/api/`` and the page;
* ``play.web.table``   one game at the table (a ``play.session.Session`` and what the page needs);
* ``play.web.coach``   the coach's figures from a game's exact values (two-player games);
* ``play.web.records`` the SQLite file of games, and replays;
* ``play.web.cli``     ``python -m play web --host --port --db``;
* ``static/``          the page: plain HTML, CSS and JavaScript, no build step.

Needs the ``web`` extra (FastAPI, uvicorn); nothing else in the project imports it.
"""
