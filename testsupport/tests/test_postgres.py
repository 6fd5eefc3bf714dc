"""A cluster of one's own: reachable while it runs, gone after stop, removed on exit."""

import psycopg
import pytest

from xaclab_testsupport import PgCluster, PgDatabases, database_url, libpq_url, postgres_server_url


def test_urls_for_libpq_and_for_another_database() -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres?connect_timeout=5"
    assert libpq_url(url) == "postgresql://postgres@127.0.0.1:5432/postgres?connect_timeout=5"
    assert database_url(url, "lab") == "postgresql+psycopg://postgres@127.0.0.1:5432/lab?connect_timeout=5"


def test_a_cluster_answers_until_stopped_and_starts_again_with_its_data() -> None:
    with PgCluster() as cluster:
        with psycopg.connect(libpq_url(cluster.url()), autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (n integer)")
            conn.execute("INSERT INTO kept VALUES (7)")
        cluster.stop()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(libpq_url(cluster.url()), connect_timeout=5)
        cluster.start()
        with psycopg.connect(libpq_url(cluster.url())) as conn:
            assert conn.execute("SELECT n FROM kept").fetchall() == [(7,)]
    assert not cluster.base.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(libpq_url(cluster.url()), connect_timeout=5)


def test_pg_hba_can_require_passwords_over_tcp() -> None:
    with PgCluster() as cluster:
        cluster.write_hba("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(libpq_url(cluster.url()), connect_timeout=5)
        with cluster.connect_socket() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)


def test_fresh_databases_are_dropped_together() -> None:
    with postgres_server_url() as server_url:
        with PgDatabases(server_url, prefix="xaclab_ts_") as made:
            urls = [made.create(), made.create()]
            assert len(set(urls)) == 2
            for url in urls:
                with psycopg.connect(libpq_url(url)) as conn:
                    name = conn.execute("SELECT current_database()").fetchone()
                    assert name == (url.rsplit("/", 1)[1],)
            names = list(made.created)
        with psycopg.connect(libpq_url(server_url)) as conn:
            query = "SELECT datname FROM pg_database WHERE datname = ANY(%s)"
            assert conn.execute(query, (names,)).fetchall() == []
