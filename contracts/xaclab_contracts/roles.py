"""The role of each result param, as the suite files declare it (docs/suites.md, "Roles").

A comparison matches results on their ``workload`` params, tells a system's
variants apart by its ``system`` params, and never matches on ``observed``
ones.  The role of a param comes from the suite of the result.  A param that
suite does not declare (a result stored before the declaration was written)
takes the role the other suites agree on, else ``workload``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from xaclab_contracts.suites import Role, Suite, load_suites


@dataclass(frozen=True, slots=True)
class ParamRoles:
    by_suite: Mapping[str, Mapping[str, Role]]
    # Names every suite that declares them gives the same role.
    lab_wide: Mapping[str, Role]

    def role(self, suite: str, param: str) -> Role:
        declared = self.by_suite.get(suite, {}).get(param)
        if declared is not None:
            return declared
        return self.lab_wide.get(param, "workload")


def param_roles(suites: Mapping[str, Suite]) -> ParamRoles:
    by_suite: dict[str, dict[str, Role]] = {}
    seen: dict[str, set[Role]] = {}
    for suite in suites.values():
        roles: dict[str, Role] = {name: decl.role for name, decl in suite.params.items()}
        roles.update(suite.recorded)
        by_suite[suite.name] = roles
        for name, role in roles.items():
            seen.setdefault(name, set()).add(role)
    lab_wide = {name: next(iter(found)) for name, found in seen.items() if len(found) == 1}
    return ParamRoles(by_suite=by_suite, lab_wide=lab_wide)


@lru_cache(maxsize=1)
def shipped_roles() -> ParamRoles:
    """The roles the suites in contracts/suites declare."""
    return param_roles(load_suites())
