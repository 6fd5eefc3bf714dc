"""One ``with`` protocol for everything the tests start: start on entry, close on exit."""

from types import TracebackType
from typing import Self


class Lifecycle:
    """``with thing:`` calls :meth:`start`, then :meth:`close` however the block ends."""

    def start(self) -> None:
        """Nothing to start unless a subclass says so."""

    def stop(self) -> None:
        """Nothing to stop unless a subclass says so."""

    def close(self) -> None:
        """What leaving the ``with`` block does: stop (subclasses may also clean up)."""
        self.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.close()
