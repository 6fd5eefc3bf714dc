// The history page: one series over time (uPlot), the 95% interval of each median as a band,
// flagged results as hollow marks, epochs and change points as vertical lines.
(function () {
  "use strict";
  var holder = document.getElementById("history-chart");
  var history = JSON.parse(document.getElementById("history-data").textContent);
  var colour = document.querySelector("[data-testid='legend'] svg line").getAttribute("stroke");
  var points = history.points;
  holder.textContent = "";
  if (points.length === 0) {
    holder.dataset.ready = "empty";
    return;
  }
  function seconds(iso) { return Date.parse(iso) / 1000; }
  function doubtful(p) { return p.flags === null || Object.keys(p.flags).length > 0; }
  var xs = points.map(function (p) { return seconds(p.at); });
  var data = [
    xs,
    points.map(function (p) { return p.median; }),
    // Only a 95% interval is shaded: a min–max range of too few samples is in the table.
    points.map(function (p) { return p.interval === "median_ci" ? p.low : null; }),
    points.map(function (p) { return p.interval === "median_ci" ? p.high : null; }),
    points.map(function (p) { return doubtful(p) ? p.median : null; })
  ];
  var unit = history.unit;
  function value(u, v) { return v == null ? "–" : v.toPrecision(4) + " " + unit; }
  var marks = [];
  history.epochs.forEach(function (e, i) {
    if (i > 0) marks.push({ at: seconds(e.started_at), label: "epoch " + e.epoch, colour: "#5f6b73", dash: [6, 3] });
  });
  history.change_points.forEach(function (c) {
    marks.push({ at: seconds(c.at), label: c.description, colour: "#CC79A7", dash: [] });
  });
  function drawMarks(u) {
    var ctx = u.ctx;
    marks.forEach(function (m) {
      var x = Math.round(u.valToPos(m.at, "x", true));
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      ctx.save();
      ctx.strokeStyle = m.colour;
      ctx.setLineDash(m.dash);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillStyle = m.colour;
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText(m.label, x + 4, u.bbox.top + 14);
      ctx.restore();
    });
  }
  var span = xs[xs.length - 1] - xs[0];
  new uPlot({
    width: Math.max(320, holder.clientWidth - 8),
    height: 360,
    tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },
    scales: { x: span > 0 ? {} : { range: [xs[0] - 3600, xs[0] + 3600] } },
    axes: [
      { label: "stored (UTC)" },
      { label: history.y_title, size: 80 }
    ],
    series: [
      { label: "stored (UTC)" },
      { label: history.system_title + ": median", stroke: colour, width: 2, value: value,
        points: { show: true, size: 7, fill: colour } },
      { label: "95% interval, low", stroke: colour, width: 1, dash: [2, 2], value: value, points: { show: false } },
      { label: "95% interval, high", stroke: colour, width: 1, dash: [2, 2], value: value, points: { show: false } },
      { label: "flagged or not judged", stroke: "#5f6b73", width: 0, value: value,
        points: { show: true, size: 9, fill: "#ffffff", stroke: "#5f6b73" } }
    ],
    bands: [{ series: [3, 2], fill: colour + "33" }],
    hooks: { draw: [drawMarks] }
  }, data, holder);
  holder.dataset.ready = "true";
})();
