"""The lab machine a reproduction report is about: its name, epoch and fingerprint in words."""

from dataclasses import dataclass
from typing import Any

from xaclab_contracts.fingerprint import dig

from xaclab_server.models import Machine
from xaclab_server.services.reproduction_lookup import is_number


@dataclass(frozen=True, slots=True)
class LabMachine:
    id: int
    name: str
    description: str
    clock_ghz: float | None
    fingerprint_hash: str
    epoch: int = 1


def lab_machine(machine: Machine) -> LabMachine:
    fingerprint = machine.fingerprint if isinstance(machine.fingerprint, dict) else {}
    mhz = dig(fingerprint, ("cpu", "max_freq_mhz"))
    clock = mhz / 1000 if is_number(mhz) and mhz > 0 else None
    return LabMachine(
        id=machine.id,
        name=machine.name,
        description=describe_fingerprint(fingerprint),
        clock_ghz=clock,
        fingerprint_hash=machine.fingerprint_hash,
        epoch=machine.epoch,
    )


def describe_fingerprint(fingerprint: dict[str, Any]) -> str:
    """One line naming a machine: CPU, memory, OS and kernel, file system and disks."""
    parts = []
    model = dig(fingerprint, ("cpu", "model"))
    if model:
        cpu = str(model)
        cores, logical = (
            dig(fingerprint, ("cpu", "cores")),
            dig(fingerprint, ("cpu", "logical_cpus")),
        )
        if cores:
            cpu += f", {cores} cores" + (
                f" ({logical} logical)" if logical and logical != cores else ""
            )
        mhz = dig(fingerprint, ("cpu", "max_freq_mhz"))
        if is_number(mhz) and mhz > 0:
            cpu += f", {mhz / 1000:.2f} GHz max"
        parts.append(cpu)
    memory = dig(fingerprint, ("memory", "total_gib"))
    if memory:
        parts.append(f"{memory} GiB RAM")
    system = dig(fingerprint, ("os", "pretty_name")) or dig(fingerprint, ("os", "id"))
    if system:
        parts.append(str(system))
    release = dig(fingerprint, ("kernel", "release"))
    if release:
        parts.append(f"Linux {release}")
    fstype = dig(fingerprint, ("storage", "fstype"))
    disks = dig(fingerprint, ("storage", "disk_models"))
    if fstype:
        on = f" on {', '.join(str(d) for d in disks)}" if isinstance(disks, list) and disks else ""
        parts.append(f"{fstype}{on}")
    return "; ".join(parts) if parts else "no fingerprint details"
