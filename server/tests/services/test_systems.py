"""Systems by name and colour: from the suites' declarations, the same on every page, and a
system a new suite declares gets a colour of its own without a change in the server."""

from xaclab_contracts.suites import load_suites

from xaclab_server.services.systems import (
    FLOOR_COLOUR,
    PALETTE,
    Systems,
    params_words,
    systems_of,
    title_of,
    variant_style,
)


def test_the_shipped_suites_give_each_system_its_colour() -> None:
    systems = systems_of(load_suites())
    styles = {name: systems.style(name) for name in ("libxac", "bdb", "lmdb", "os")}
    assert {n: s.title for n, s in styles.items()} == {
        "libxac": "LIBXAC",
        "bdb": "Berkeley DB",
        "lmdb": "LMDB",
        "os": "operating system",
    }
    assert styles["os"].colour == FLOOR_COLOUR
    assert [styles[n].colour for n in ("libxac", "bdb", "lmdb")] == list(PALETTE[:3])
    assert systems.order(["os", "lmdb", "libxac", "bdb"]) == ["libxac", "bdb", "lmdb", "os"]


def test_every_title_is_the_one_a_suite_declares() -> None:
    # The server writes no system's name itself: a system is its driver and its declaration.
    declared = {
        name: declaration.title
        for suite in load_suites().values()
        for name, declaration in suite.system_decls.items()
    }
    assert {"libxac", "bdb", "lmdb", "os", "sqlite", "pmemobj", "rocksdb"} <= set(declared)
    assert {name: title_of(name) for name in declared} == declared


def test_a_new_system_takes_the_next_colour_and_keeps_its_identifier() -> None:
    systems = Systems(["libxac", "os", "bdb", "lmdb", "sqlite"])
    assert systems.style("sqlite").colour == PALETTE[3]
    assert systems.style("sqlite").title == "SQLite"
    # Seen only in results (no suite declares it): the next colour, its name as it is.
    assert systems.style("wiredtiger").colour == PALETTE[4]
    assert title_of("wiredtiger") == "wiredtiger"
    # Earlier systems keep theirs.
    assert systems.style("bdb").colour == PALETTE[1]


def test_variants_of_a_system_differ_in_shade_marker_and_dash_not_hue() -> None:
    styles = [variant_style("#0072B2", i) for i in range(4)]
    assert styles[0] == ("#0072B2", "circle", "")
    assert len({s[0] for s in styles}) == 4
    assert len({s[1] for s in styles}) == 4 and len({s[2] for s in styles}) == 4
    # A darker or lighter blue: red and green move with blue, the hue stays.
    darker = styles[1][0]
    assert int(darker[5:7], 16) < 0xB2 and int(darker[1:3], 16) == 0


def test_params_in_words() -> None:
    assert params_words({"tree": "btree", "advisory": True, "block_bytes": 4096.0}) == (
        "advisory yes · block bytes 4096 · tree btree"
    )
    assert params_words({}) == ""
