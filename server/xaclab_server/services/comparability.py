"""May two sets of results be compared? Their machines' epochs decide (docs/validity.md).

A result belongs to an epoch of its machine, and each epoch has one identity
fingerprint (:class:`~xaclab_server.models.MachineEpoch`).  Two sides are
comparable when every epoch of one has the identity fingerprint of every
epoch of the other and no machine appears in two of its epochs.  Otherwise
the comparison is refused with a sentence naming the epochs and the fields
that differ (HTTP 409), unless the caller asked for a cross-machine
comparison; then every pair carries those fields.

The results' own fingerprints count too (:func:`env_differences`): an agent
restarted on a new kernel without registering again still runs in the old
epoch, and its results say so in their ``env``.  Results that carry no
fingerprint are judged by their epoch alone.

Two machines with equal identity fingerprints are the same kind of machine
(docs/fingerprint.md): they are comparable, and the comparison's note says
which machines and epochs it spans.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session
from xaclab_contracts.fingerprint import HARDWARE_FIELDS, fingerprint_hash, identity_differences

from xaclab_server.models import Machine, MachineEpoch
from xaclab_server.services.pairs import Row

EpochKey = tuple[int, int]  # (machine id, epoch)


class ComparisonError(ValueError):
    """A comparison that cannot be made; the message is a sentence (HTTP 422)."""


class NotComparable(ComparisonError):
    """Sides from different identity fingerprints or epochs, without the cross-machine flag
    (HTTP 409); ``fields`` are the identity fields that differ."""

    def __init__(self, message: str, fields: list[str]) -> None:
        super().__init__(message)
        self.fields = fields


@dataclass(slots=True)
class Epochs:
    """The epochs a comparison touches: each one's fingerprint and a label for people."""

    fingerprints: dict[EpochKey, dict[str, object]] = field(default_factory=dict)
    labels: dict[EpochKey, str] = field(default_factory=dict)

    def label(self, keys: Iterable[EpochKey]) -> str:
        return ", ".join(self.labels.get(k, f"machine {k[0]} epoch {k[1]}") for k in sorted(keys))

    def differences(self, side_a: set[EpochKey], side_b: set[EpochKey]) -> list[str]:
        """The identity fields in which any epoch of A differs from any epoch of B."""
        found: list[str] = []
        for a in sorted(side_a):
            for b in sorted(side_b):
                for difference in identity_differences(
                    dict(self.fingerprints.get(a, {})), dict(self.fingerprints.get(b, {}))
                ):
                    if difference not in found:
                        found.append(difference)
        return found


def epoch_of(row: Row) -> EpochKey:
    return row.result.machine_id, row.result.epoch


def load_epochs(session: Session, keys: set[EpochKey]) -> Epochs:
    epochs = Epochs()
    if not keys:
        return epochs
    names: dict[int, str] = {}
    for machine_id, name in session.execute(
        select(Machine.id, Machine.name).where(Machine.id.in_({k[0] for k in keys}))
    ):
        names[machine_id] = name
    for row in session.scalars(
        select(MachineEpoch).where(
            tuple_(MachineEpoch.machine_id, MachineEpoch.epoch).in_(sorted(keys))
        )
    ):
        key = (row.machine_id, row.epoch)
        epochs.fingerprints[key] = row.fingerprint
        epochs.labels[key] = f"{names.get(row.machine_id, row.machine_id)} epoch {row.epoch}"
    return epochs


def env_differences(rows_a: list[Row], rows_b: list[Row]) -> list[str]:
    """The identity fields in which the fingerprints the sides' results carry differ."""

    def fingerprints(rows: list[Row]) -> list[dict[str, Any]]:
        distinct: dict[str, dict[str, Any]] = {}
        for row in rows:
            env = row.result.env or {}
            if "fingerprint_version" in env:
                distinct.setdefault(fingerprint_hash(env), env)
        return list(distinct.values())

    found: list[str] = []
    for a in fingerprints(rows_a):
        for b in fingerprints(rows_b):
            found.extend(d for d in identity_differences(a, b) if d not in found)
    return found


def check(
    epochs: Epochs,
    side_a: set[EpochKey],
    side_b: set[EpochKey],
    *,
    a_label: str,
    b_label: str,
    cross_machine: bool,
    carried: list[str] | None = None,
) -> list[str]:
    """The identity fields that differ between the sides (their epochs', and ``carried``: their
    results' own); NotComparable unless allowed."""
    differences = epochs.differences(side_a, side_b)
    differences += [d for d in carried or [] if d not in differences]
    both = side_a | side_b
    machines = {k[0] for k in both}
    split = sorted(m for m in machines if len({k for k in both if k[0] == m}) > 1)
    if cross_machine or (not differences and not split):
        return differences
    where = f"{a_label} is {epochs.label(side_a)}; {b_label} is {epochs.label(side_b)}"
    if differences:
        hardware = [d for d in differences if d.split(" (")[0] in _hardware_names()]
        why = "their identity fingerprints differ in " + "; ".join(differences)
        if hardware:
            why += f" (hardware: {', '.join(d.split(' (')[0] for d in hardware)})"
    else:
        why = (
            "they are different epochs of one machine (its identity fingerprint changed in "
            "between and changed back)"
        )
    raise NotComparable(
        f"These results are not comparable: {where}, and {why}. Compare results of one epoch, "
        "or ask for a cross-machine comparison (cross_machine=true) to see every pair with "
        "the fields that differ.",
        differences,
    )


def _hardware_names() -> set[str]:
    return {".".join(path) for path in HARDWARE_FIELDS}
