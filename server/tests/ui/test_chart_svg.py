"""The server-drawn charts: numbers, axes, and text that is shown, never run."""

import math
import re

from xaclab_server.ui.chart_rows import RowMark, render_rows
from xaclab_server.ui.chart_spark import sparkline
from xaclab_server.ui.chart_svg import domain, el, number, ticks

XSS = "\"'><img src=x onerror=alert(1)>"


def test_numbers_read_as_tables_print_them() -> None:
    assert number(1234567.0) == "1,234,567"
    assert number(3.14159) == "3.142"
    assert number(0.000123456) == "1.235e-04"
    assert number(2e10) == "2.000e+10"
    assert number(0.5) == "0.5"


def test_axes_start_at_zero_and_log_axes_get_readable_ticks() -> None:
    assert domain([5.0, 10.0], "linear", from_zero=True)[0] == 0.0
    low, high = domain([0.2, 12.0], "log", from_zero=False)
    assert low < 0.2 and high > 12.0
    assert ticks(low, high, "log") == [0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    assert ticks(0.0, 8000.0, "linear") == [0.0, 2000.0, 4000.0, 6000.0, 8000.0]
    # A forest plot's ratios close to 1: more than a lone "1" on the axis.
    narrow = [number(t) for t in ticks(0.94, 1.06, "log")]
    assert narrow == ["0.95", "0.975", "1", "1.025", "1.05"]


def test_text_is_escaped_everywhere() -> None:
    assert "<img" not in el("text", XSS, data_label=XSS)
    rows = [RowMark(XSS, XSS, "#0072B2", "circle", 1.5, 1.2, 1.9, False, False, XSS)]
    drawn = render_rows(rows, x_title=XSS, x_scale="log", reference=1.0, label=XSS)
    assert "<img" not in drawn and "&lt;img" in drawn


def test_a_forest_plot_draws_the_line_of_no_difference_at_one() -> None:
    rows = [
        RowMark(
            "insert: throughput",
            "LIBXAC against LMDB",
            "#009E73",
            "triangle",
            2.0,
            1.8,
            2.2,
            False,
            False,
            "t",
        ),
        RowMark(
            "insert: throughput",
            "LIBXAC against Berkeley DB",
            "#5F6B73",
            "circle",
            0.5,
            0.4,
            0.6,
            False,
            True,
            "t",
        ),
    ]
    drawn = str(render_rows(rows, x_title="ratio", x_scale="log", reference=1.0, label="forest"))
    line = re.search(r'<line x1="([\d.]+)"[^>]*class="reference"', drawn)
    assert line is not None
    # Half and double sit as far from 1 on the log axis.
    marks = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', drawn)]
    triangle = re.search(r'<polygon points="([\d.]+),', drawn)
    assert triangle is not None and marks
    at_one = float(line.group(1))
    assert math.isclose(float(triangle.group(1)) - at_one, at_one - marks[0], abs_tol=1.0)
    assert drawn.count('class="row"') == 2 and "insert: throughput" in drawn
    assert 'data-flagged="true"' in drawn


def test_a_range_past_the_axis_ends_in_an_arrowhead() -> None:
    """Two samples, one far off: the range runs past the axis (set by the medians), and its
    end says so with an arrowhead instead of a cap that would pass for its real end."""
    rows = [
        RowMark("LIBXAC", "LIBXAC", "#0072B2", "circle", 100.0, 90.0, 110.0, True, True, "t"),
        RowMark("LMDB", "LMDB", "#009E73", "circle", 120.0, 100.0, 5000.0, True, True, "t"),
    ]
    drawn = str(render_rows(rows, x_title="throughput", x_scale="linear", label="dots"))
    assert drawn.count('class="off-axis"') == 1
    # Every other end is a cap: two for LIBXAC, LMDB's low end.
    assert drawn.count('stroke-width="1.4"') == 3


def test_a_sparkline_says_its_values() -> None:
    drawn = str(sparkline([10.0, 12.0, 11.0], "#0072B2", "us"))
    assert "the last 3 runs, oldest first: 10, 12, 11 us" in drawn
    assert "one run so far: 5 us" in str(sparkline([5.0], "#0072B2", "us"))
    assert str(sparkline([], "#0072B2", "us")) == ""
