"""Two server processes on one PostgreSQL count one account's failed logins together.

The block is made long (10 minutes) so that nothing here depends on how
fast the machine is: the test asserts answers, never durations.
"""

from pathlib import Path

import httpx

from tests.conftest import PgDatabases
from tests.live import ADMIN_PASSWORD, ServerProcess, admin_token
from xaclab_server.core.migrations import upgrade_head


def test_failed_logins_on_either_process_block_the_account_on_both(
    pg_databases: PgDatabases, tmp_path: Path
) -> None:
    url = pg_databases.create()
    upgrade_head(url)
    admin_token(url, username="ada")
    slow = {"XACLAB_THROTTLE_DELAY_SECONDS": "600"}
    with (
        ServerProcess(url, tmp_path / "a.log", **slow) as one,
        ServerProcess(url, tmp_path / "b.log", **slow) as two,
    ):
        servers = [one.base_url, two.base_url]
        statuses = []
        for attempt in range(6):
            reply = httpx.post(
                f"{servers[attempt % 2]}/api/v1/login",
                json={"username": "ada", "password": "not-her-password"},
                timeout=30,
            )
            statuses.append(reply.status_code)
        assert statuses == [401] * 5 + [429]
        assert 0 < int(reply.headers["Retry-After"]) <= 600
        # The right password is refused on both processes while the block lasts.
        for server in servers:
            right = httpx.post(
                f"{server}/api/v1/login",
                json={"username": "ada", "password": ADMIN_PASSWORD},
                timeout=30,
            )
            assert right.status_code == 429
