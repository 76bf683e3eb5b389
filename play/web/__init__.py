"""The web table: play 420 and 421 in the browser against the bots, with an exact coach.

* ``play.web.app``     the FastAPI app (``create_app``): the JSON API under ``/api/`` and the page;
* ``play.web.table``   one game at the table (a ``play.session.Session`` and what the page needs);
* ``play.web.coach``   exact win probabilities of every legal move (two-player games);
* ``play.web.records`` the SQLite file of games, and replays;
* ``play.web.cli``     ``python -m play web --host --port --db``;
* ``static/``          the page: plain HTML, CSS and JavaScript, no build step.

Needs the ``web`` extra (FastAPI, uvicorn); nothing else in the project imports it.
"""
