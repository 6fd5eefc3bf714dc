"""CPU of a server process while 200 registered agents long-poll with nothing to do.

    cd server && ../.venv/bin/python bench/idle_agents.py [--agents 200] [--seconds 20]

Starts a PostgreSQL cluster and a server subprocess, registers the agents,
opens one long-poll claim per agent (``wait=25``, the agent's default; each
agent polls again when its poll ends, so a window over 25 s includes every
agent's next claim), waits until all are in flight, then
reads the server's CPU time (utime + stime, /proc/PID/stat) across the window
and prints it as % of one core.  Target: < 5 %.
"""

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import httpx
from common import AGENT, database, lab, register

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


async def poll_forever(
    client: httpx.AsyncClient, headers: dict[str, str], stop: float, delay: float
) -> int:
    polls = 0
    await asyncio.sleep(delay)
    while time.monotonic() < stop:
        try:
            reply = await client.post(f"{AGENT}/jobs/claim", params={"wait": 25}, headers=headers)
        except httpx.TransportError:  # a keep-alive connection the server had just closed
            continue
        assert reply.status_code == 204, reply.text
        polls += 1
    return polls


async def measure(
    base_url: str, agents: list[dict[str, str]], seconds: float, pid: int, stagger: bool = False
) -> None:
    limits = httpx.Limits(max_connections=len(agents) + 10)
    # Staggered: agent i starts i/N of a poll later, as agents started at
    # different times do; otherwise all re-poll in the same instant (worst case).
    spread = 25.0 if stagger else 0.0
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as client:
        stop = time.monotonic() + spread + seconds + 3
        tasks = [
            asyncio.create_task(poll_forever(client, h, stop, spread * i / len(agents)))
            for i, h in enumerate(agents)
        ]
        await asyncio.sleep(spread + 3)  # every poll is in flight
        cpu0, wall0 = cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(seconds)
        cpu1, wall1 = cpu_seconds(pid), time.monotonic()
        polls = sum(await asyncio.gather(*tasks))
    share = 100 * (cpu1 - cpu0) / (wall1 - wall0)
    print(
        f"{len(agents)} idle agents ({'staggered' if stagger else 'synchronized'}) "
        f"long-polling for {wall1 - wall0:.1f} s: server CPU "
        f"{share:.1f} % of one core ({polls} polls answered)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--db", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument(
        "--stagger",
        action="store_true",
        help="start the agents spread over one poll (25 s) instead of all at once",
    )
    args = parser.parse_args()
    with database(args.db) as url, tempfile.TemporaryDirectory() as tmp, lab(url, Path(tmp)) as it:
        agents = [register(it.server.base_url, f"idle-{i}")[1] for i in range(args.agents)]
        asyncio.run(measure(it.server.base_url, agents, args.seconds, it.server.pid, args.stagger))


if __name__ == "__main__":
    main()
