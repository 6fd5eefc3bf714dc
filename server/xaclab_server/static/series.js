// The series page: the series' points over time, the runs bisections queued beside them,
// and a vertical line at each change point (at the first run after it).
(function () {
  "use strict";
  var holder = document.getElementById("series-chart");
  var chart = JSON.parse(document.getElementById("series-data").textContent);
  var s = chart.series;
  var xs = [], plain = [], flagged = [], bisected = [];
  chart.points.forEach(function (p) {
    xs.push(Date.parse(p.at) / 1000);
    plain.push(!p.bisection_id && !p.flagged ? p.value : null);
    flagged.push(!p.bisection_id && p.flagged ? p.value : null);
    bisected.push(p.bisection_id ? p.value : null);
  });
  // The view the detector also watches (services/reference_view.py): the same points with
  // the host's speed in each run taken off, for the runs it reads.
  var inView = {};
  if (chart.view) {
    chart.view.points.forEach(function (p) { inView[p.run_id] = p.value; });
  }
  var viewed = chart.points.map(function (p) {
    return Object.prototype.hasOwnProperty.call(inView, p.run_id) ? inView[p.run_id] : null;
  });
  var lines = chart.change_points.filter(function (c) { return !c.withdrawn; }).map(function (c) {
    return { x: Date.parse(c.after_at) / 1000, regression: c.direction === "regression" };
  });
  function value(u, v) { return v == null ? "–" : v.toPrecision(4) + " " + s.unit; }
  var who = s.sut + " on " + s.machine;
  // One run (or runs stored in the same second) has no span: uPlot would stretch the axis
  // over years around it. Show the hour either side instead, as the history page does.
  var span = xs.length ? Math.max.apply(null, xs) - Math.min.apply(null, xs) : 0;
  new uPlot({
    width: Math.max(320, holder.clientWidth - 16),
    height: 360,
    // The axis says UTC, as the table does, whatever the browser's own time zone.
    tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },
    scales: { x: span > 0 || !xs.length ? {} : { range: [xs[0] - 3600, xs[0] + 3600] } },
    axes: [
      { label: "time the run's result was stored (UTC)" },
      { label: s.metric + " (" + s.unit + "), " + s.better + " is better", size: 80 }
    ],
    series: [
      {},
      { label: who, stroke: "#1f6feb", spanGaps: true, points: { show: true, size: 6 }, value: value },
      { label: who + ", runs with a validity flag (in doubt)", stroke: "#9a6700", paths: function () { return null; },
        points: { show: true, size: 7, fill: "#fff" }, value: value },
      { label: who + ", runs a bisection queued", stroke: "#8250df", paths: function () { return null; },
        points: { show: true, size: 7 }, value: value }
    ].concat(chart.view ? [
      { label: who + ", against the same runs' other configurations", stroke: "#6e7781", width: 1.5,
        dash: [2, 3], spanGaps: true, points: { show: true, size: 4 }, value: value }
    ] : []),
    hooks: {
      draw: [function (u) {
        // The seconds the time axis spans, for a reader of the page's markup (and its test).
        holder.dataset.xSpanS = String(Math.round(u.scales.x.max - u.scales.x.min));
        var ctx = u.ctx;
        ctx.save();
        ctx.lineWidth = 2;
        ctx.setLineDash([6, 4]);
        lines.forEach(function (line) {
          var x = u.valToPos(line.x, "x", true);
          ctx.strokeStyle = line.regression ? "#cf222e" : "#1a7f37";
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
        });
        ctx.restore();
      }]
    }
  }, [xs, plain, flagged, bisected].concat(chart.view ? [viewed] : []), holder);
  var note = document.createElement("p");
  note.className = "help";
  note.textContent = "Dashed lines: change points (red: regression, green: improvement).";
  holder.appendChild(note);
  holder.dataset.ready = "true";
})();
