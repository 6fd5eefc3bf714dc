// The run page: poll the run's status every second, then draw the chart once it finished.
(function () {
  "use strict";
  var root = document.getElementById("run");
  var statusEl = document.getElementById("run-status");
  var progressEl = document.getElementById("run-progress");
  var messageEl = document.getElementById("run-message");
  var chartEl = document.getElementById("chart");
  var POLL_MS = 1000;
  var TERMINAL = { succeeded: true, failed: true };
  var COLORS = ["#1f6feb", "#8ab4f8", "#cf222e", "#f4a6a6"];

  function showStatus(run) {
    statusEl.textContent = run.status;
    statusEl.dataset.status = run.status;
    statusEl.className = "badge " + run.status;
    var job = run.jobs[0];
    if (job) {
      progressEl.value = job.progress;
      messageEl.textContent = job.message;
    }
  }

  function poll() {
    fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (run) {
        showStatus(run);
        if (TERMINAL[run.status]) {
          loadChart();
        } else {
          window.setTimeout(poll, POLL_MS);
        }
      })
      .catch(function () {
        // The server may be restarting: keep trying at the same pace.
        window.setTimeout(poll, POLL_MS);
      });
  }

  function loadChart() {
    fetch(root.dataset.chartUrl, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (chart) {
        drawChart(chart);
        fillFloor(chart.floor);
      });
  }

  function drawChart(chart) {
    chartEl.textContent = "";
    if (chart.n.length === 0) {
      var note = document.createElement("p");
      note.className = "empty";
      note.textContent = "This run has no page_touch results.";
      chartEl.appendChild(note);
      chartEl.dataset.ready = "empty";
      return;
    }
    var unit = chart.unit || "";
    var series = [{ label: "n" }];
    var data = [chart.n];
    chart.series.forEach(function (s, i) {
      series.push({
        label: s.label,
        stroke: COLORS[i % COLORS.length],
        width: 2,
        dash: s.advisory ? [6, 4] : undefined,
        points: { show: true, size: 5 },
        spanGaps: true,
        value: function (u, v) { return v == null ? "–" : v.toPrecision(4) + " " + unit; }
      });
      data.push(chart.series[i].values);
    });
    var opts = {
      width: Math.max(320, chartEl.clientWidth - 16),
      height: 360,
      scales: { x: { time: false, distr: 3, log: 2 } },
      axes: [
        { label: "n (pages per transaction)" },
        { label: "time per page" + (unit ? " (" + unit + ")" : ""), size: 70 }
      ],
      series: series
    };
    new uPlot(opts, data, chartEl);
    chartEl.dataset.ready = "true";
  }

  function fillFloor(rows) {
    var table = document.getElementById("floor-table");
    var note = document.getElementById("floor-note");
    var body = table.querySelector("tbody");
    body.textContent = "";
    rows.forEach(function (row) {
      var tr = document.createElement("tr");
      [row.benchmark, row.metric, JSON.stringify(row.params), String(row.n),
       row.median.toPrecision(4), row.mean.toPrecision(4), row.p99.toPrecision(4), row.unit]
        .forEach(function (text, i) {
          var td = document.createElement("td");
          td.textContent = text;
          if (i >= 3 && i <= 6) td.className = "num";
          tr.appendChild(td);
        });
      body.appendChild(tr);
    });
    table.hidden = rows.length === 0;
    note.hidden = rows.length !== 0;
  }

  poll();
})();
