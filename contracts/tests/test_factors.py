"""The factors every suite takes (xaclab_contracts.factors), checked the same on both sides."""

from __future__ import annotations

from typing import Any

import pytest

from xaclab_contracts.factors import AGENT_FACTORS, check_agent_factor, check_job_params
from xaclab_contracts.suites import AGENT_FACTOR_NAMES, ParamError, load_suite


def test_the_factor_names_are_the_declared_factors() -> None:
    assert set(AGENT_FACTOR_NAMES) == {*AGENT_FACTORS, "target_dir", "libxac_revision"}


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("write_cache", "maybe", "one of on, off, unchanged, not 'maybe'"),
        ("write_cache", True, "one of on, off, unchanged"),
        ("pin_cpu", -1, "below its minimum 0"),
        ("pin_cpu", True, "must be an integer"),
        ("drop_caches", "yes", "true or false"),
        ("timeout", 0, "below its minimum 1"),
        ("timeout", 7 * 24 * 3600 + 1, "above its maximum 604800"),
        ("target_dir", "relative/dir", "absolute path"),
        ("target_dir", "/tmp/x; rm -rf /", "absolute path"),
        ("target_dir", "/srv/../etc", "without '..'"),
        ("target_dir", 7, "absolute path"),
        ("libxac_revision", "--upload-pack=x", "must be a git revision"),
        ("libxac_revision", "main..topic", "without '..'"),
        ("libxac_revision", "HEAD@{1}", "must be a git revision"),
        ("libxac_revision", "a b", "must be a git revision"),
        ("libxac_revision", 1234567, "must be a git revision"),
    ],
)
def test_bad_factor_values_are_refused(name: str, value: Any, words: str) -> None:
    with pytest.raises(ParamError) as caught:
        check_agent_factor(name, value)
    assert words in str(caught.value)


@pytest.mark.parametrize("value", ["3f2a9c1", "0" * 40, "main", "v1.2", "HEAD~3", "origin/main"])
def test_revision_names_are_taken(value: str) -> None:
    check_agent_factor("libxac_revision", value)


def test_a_job_takes_the_factors_and_the_suites_params() -> None:
    page_touch = load_suite("page-touch")
    params = {"write_cache": "off", "target_dir": "/srv/bench", "repetitions": 5, "timeout": 60}
    assert check_job_params(page_touch, params) is params
    with pytest.raises(ParamError, match="does not declare a parameter 'nrec'"):
        check_job_params(page_touch, {"write_cache": "on", "nrec": 5})
    with pytest.raises(ParamError, match="JSON object"):
        check_job_params(page_touch, "repetitions=5")
