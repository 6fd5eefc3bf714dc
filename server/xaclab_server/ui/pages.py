"""The web pages, one module per page group (``ui/routes/``); every asset comes from /static.

Machines (the home page), the queue, the run form and run pages, run
matrices, comparisons, alerts, series' histories, schedules, API tokens, users,
the audit log and the login; the
thesis-reproduction page is :mod:`xaclab_server.ui.reproduction`.  Pages are
readable without a login only while ``XACLAB_ANONYMOUS_READ`` is true; who
may do what is :mod:`xaclab_server.core.access`, shared with the API
(:mod:`.guards`), and every form is handled alike (:mod:`.forms`).
"""

from fastapi import APIRouter

from xaclab_server.ui.routes import (
    alerts,
    audit,
    compare,
    history,
    login,
    machines,
    matrices,
    queue,
    runs,
    schedules,
    series,
    tokens,
    users,
)

router = APIRouter(include_in_schema=False)
for group in (
    login,
    machines,
    runs,
    matrices,
    queue,
    compare,
    alerts,
    history,
    series,
    schedules,
    tokens,
    users,
    audit,
):
    # The routes themselves, not an include: ``router.routes`` lists every page.
    router.routes.extend(group.router.routes)
