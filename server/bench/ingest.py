"""Raw samples stored per second in PostgreSQL: the database layer, then the HTTP path.

    cd server && ../.venv/bin/python bench/ingest.py [--results 200] [--samples 5000]

Database layer: services.results.store_upload (statistics with numpy, samples
packed to little-endian float64, the rows inserted in one batched INSERT by
SQLAlchemy's insertmanyvalues) on uploads of ``--results`` results of
``--samples`` samples each, plus a plain COPY of the same rows for reference.
HTTP path: the same uploads POSTed to a server subprocess (parse, validate,
store).  Prints samples/s for each.  Target: >= 1,000,000 samples/s.
"""

import argparse
import json
import random
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import numpy as np
import psycopg
from common import AGENT, database, lab, result, running_job

from tests.live import libpq_url
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.models import Job
from xaclab_server.services.results import check_results, load_validator, store_upload
from xaclab_server.services.statistics import pack_samples, summarize


def make_results(count: int, samples: int, seed: int) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    return [
        result(np.round(rng.uniform(1, 10, samples), 6).tolist(), n=i, seed=seed)
        for i in range(count)
    ]


def db_layer(url: str, job_id: int, uploads: int, count: int, samples: int) -> None:
    validator = load_validator()
    engine = make_engine(url)
    factory = make_sessionmaker(engine)
    batches = [make_results(count, samples, seed) for seed in range(uploads)]
    with factory() as session:
        job = session.get_one(Job, job_id)
        checked = [check_results(validator=validator, results=b, job=job) for b in batches]
        started = time.perf_counter()
        for batch, arrays in zip(batches, checked, strict=True):
            store_upload(
                session=session, job=job, upload_id=str(uuid.uuid4()), results=batch, samples=arrays
            )
        elapsed = time.perf_counter() - started
    total = uploads * count * samples
    print(
        f"database layer (store_upload: statistics, packing, batched INSERT): "
        f"{total / elapsed:,.0f} samples/s "
        f"({uploads} uploads of {count}x{samples} in {elapsed:.2f} s)"
    )
    copy_reference(url, job, checked, batches)
    engine.dispose()


def copy_reference(url: str, job: Job, checked: list, batches: list) -> None:  # type: ignore[type-arg]
    """The same rows through COPY (binary samples), with statistics computed the same way."""
    started = time.perf_counter()
    with psycopg.connect(libpq_url(url)) as conn:
        upload_pk = conn.execute(
            "INSERT INTO uploads (upload_id, job_id, received_at) "
            "VALUES (%s, %s, now()) RETURNING id",
            (str(uuid.uuid4()), job.id),
        ).fetchone()[0]  # type: ignore[index]
        columns = (
            "upload_pk, job_id, run_id, machine_id, suite, benchmark, sut, metric, unit, better, "
            "params, n, mean, median, min, max, stddev, p99, samples, library_version, "
            "git_revision, env, created_at"
        )
        with conn.cursor().copy(f"COPY results ({columns}) FROM STDIN") as copy:
            for batch, arrays in zip(batches, checked, strict=True):
                for record, array in zip(batch, arrays, strict=True):
                    s = summarize(array)
                    copy.write_row(
                        (
                            upload_pk, job.id, job.run_id, job.machine_id, record["suite"],
                            record["benchmark"], record["sut"], record["metric"], record["unit"],
                            record["better"], json.dumps(record["params"]), s.n, s.mean,
                            s.median, s.min, s.max, s.stddev, s.p99, pack_samples(array),
                            "0.1.0", "3f2a9c1", "{}", "now",
                        )
                    )  # fmt: skip
    elapsed = time.perf_counter() - started
    total = sum(len(a) for arrays in checked for a in arrays)
    print(f"database layer, COPY for reference: {total / elapsed:,.0f} samples/s")


def http_path(the_lab, uploads: int, count: int, samples: int) -> None:  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=the_lab.server.base_url, timeout=300) as client:
        job_id = running_job(client, the_lab)
        bodies = [
            json.dumps({"upload_id": str(uuid.uuid4()), "results": make_results(count, samples, s)})
            for s in range(uploads)
        ]
        started = time.perf_counter()
        for body in bodies:
            reply = client.post(
                f"{AGENT}/jobs/{job_id}/results",
                content=body,
                headers={**the_lab.agent, "Content-Type": "application/json"},
            )
            assert reply.status_code == 201, reply.text
        elapsed = time.perf_counter() - started
    total = uploads * count * samples
    print(
        f"HTTP path (POST, parse, validate, store): {total / elapsed:,.0f} samples/s "
        f"({uploads} uploads of {count}x{samples}, {len(bodies[0]) / 1e6:.1f} MB each, "
        f"{elapsed:.2f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=5)
    parser.add_argument("--results", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5000)
    args = parser.parse_args()
    random.seed(1)
    with database("postgresql") as url, tempfile.TemporaryDirectory() as tmp:
        with lab(url, Path(tmp)) as the_lab:
            with httpx.Client(base_url=the_lab.server.base_url, timeout=60) as client:
                db_job = running_job(client, the_lab)
            db_layer(url, db_job, args.uploads, args.results, args.samples)
            http_path(the_lab, args.uploads, args.results, args.samples)


if __name__ == "__main__":
    main()
