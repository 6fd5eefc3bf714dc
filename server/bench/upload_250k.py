"""Time one 250,000-sample result through the real HTTP upload path.

    cd server && ../.venv/bin/python bench/upload_250k.py [--db postgresql|sqlite|both]

Starts its own PostgreSQL cluster (scripts/pg-cluster.sh) or SQLite file and a
server subprocess, claims a job as an agent, then uploads the same result
``--repeat`` times (a new upload_id each) and prints the median wall time of
the POST (serialisation of the request body excluded).  Target: < 1 s.
"""

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import httpx
from common import AGENT, database, lab, median, result, running_job, upload_body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=["postgresql", "sqlite", "both"], default="both")
    parser.add_argument("--samples", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(1)
    samples = [round(rng.uniform(1, 10), 6) for _ in range(args.samples)]
    kinds = ["postgresql", "sqlite"] if args.db == "both" else [args.db]
    for kind in kinds:
        with (
            database(kind) as url,
            tempfile.TemporaryDirectory() as tmp,
            lab(url, Path(tmp)) as the_lab,
        ):
            with httpx.Client(base_url=the_lab.server.base_url, timeout=120) as client:
                job_id = running_job(client, the_lab)
                times = []
                for _ in range(args.repeat):
                    body = json.dumps(upload_body([result(samples)])).encode()
                    started = time.perf_counter()
                    reply = client.post(
                        f"{AGENT}/jobs/{job_id}/results",
                        content=body,
                        headers={**the_lab.agent, "Content-Type": "application/json"},
                    )
                    times.append(time.perf_counter() - started)
                    assert reply.status_code == 201, reply.text
            print(
                f"{kind}: upload of 1 result with {args.samples} samples "
                f"({len(body) / 1e6:.1f} MB): median {median(times):.3f} s, "
                f"min {min(times):.3f} s, max {max(times):.3f} s over {args.repeat}"
            )


if __name__ == "__main__":
    main()
