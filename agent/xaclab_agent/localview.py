"""What ``xaclab-agent bench`` shows on stderr: a rich progress bar, or plain lines.

Plain lines are used when stderr is not a terminal (or with ``--plain``), so
logs and CI output stay readable.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from xaclab_agent.progress import Progress as JobProgress


class LocalView:
    def __init__(self, title: str, *, plain: bool = False) -> None:
        self._console = Console(stderr=True)
        self._plain = plain or not sys.stderr.isatty()
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._title = title

    def __enter__(self) -> LocalView:
        if not self._plain:
            self._bar = Progress(
                TextColumn("[bold]{task.fields[title]}"),
                BarColumn(),
                TextColumn("{task.percentage:>5.1f}%"),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=self._console,
            )
            self._bar.start()
            self._task = self._bar.add_task("", total=1.0, title=self._title)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def progress(self, progress: JobProgress) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=progress.fraction, description=progress.message)
        else:
            sys.stderr.write(f"[{progress.fraction:6.1%}] {progress.message}\n")

    def diagnostic(self, line: str) -> None:
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            sys.stderr.write(line + "\n")
