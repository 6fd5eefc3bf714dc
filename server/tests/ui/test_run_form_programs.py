"""The run form says which programs a parameter reaches (docs/suites.md, "programs")."""

import re

from fastapi.testclient import TestClient

from tests.helpers import register


def test_a_parameter_for_some_programs_says_so_on_the_form(client: TestClient) -> None:
    machine_id, _headers = register(client)
    page = client.get(f"/runs/new?machine_id={machine_id}").text
    fieldset = re.search(
        r'<fieldset class="suite" data-suite="concurrency">(.*?)</fieldset>', page, re.S
    )
    assert fieldset is not None
    text = fieldset.group(1)
    for name in (
        "procs",
        "durability",
        "txns",
        "rounds",
        "tests",
        "nrec",
        "variant",
        "repetitions",
        "keep_pages",
    ):
        assert f'name="concurrency.param.{name}"' in text
    # nrec, variant, repetitions, keep_pages
    assert text.count("Only for concurrency_records.") == 4
    assert text.count("Only for concurrency_test.") == 3  # txns, rounds, tests
    # procs and durability reach both programs: no "Only for" after their help.
    procs_help = text.split('name="concurrency.param.procs"', 1)[1].split("</p>", 1)[0]
    assert "Only for" not in procs_help
