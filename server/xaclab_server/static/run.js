// The run page: live job progress, ETA and log tail from the run's event stream (SSE),
// then the charts once the run has finished.
(function () {
  "use strict";
  var root = document.getElementById("run");
  var statusEl = document.getElementById("run-status");
  var progressEl = document.getElementById("run-progress");
  var messageEl = document.getElementById("run-message");
  var jobsBody = document.querySelector("#jobs tbody");
  var TERMINAL = { succeeded: true, failed: true, cancelled: true };
  var COLORS = ["#1f6feb", "#8ab4f8", "#cf222e", "#f4a6a6", "#1a7f37", "#9a6700", "#8250df", "#57606a"];
  var chartsLoaded = false;

  function cell(tr, text, className) {
    var td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    tr.appendChild(td);
    return td;
  }

  function duration(seconds) {
    if (seconds == null) return "–";
    if (seconds < 90) return Math.round(seconds) + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    return (seconds / 3600).toFixed(1) + " h";
  }

  function show(event) {
    statusEl.textContent = event.status;
    statusEl.dataset.status = event.status;
    statusEl.className = "badge " + event.status;
    progressEl.value = event.progress;
    var current = event.jobs.filter(function (j) { return j.status === "running"; })[0] || event.jobs[0];
    if (current) messageEl.textContent = current.message;
    jobsBody.textContent = "";
    event.jobs.forEach(function (job) {
      var tr = document.createElement("tr");
      tr.dataset.jobId = String(job.id);
      cell(tr, String(job.id));
      cell(tr, JSON.stringify(job.params));
      var badge = document.createElement("span");
      badge.className = "badge " + job.status;
      badge.textContent = job.status;
      cell(tr, "").appendChild(badge);
      var progress = document.createElement("progress");
      progress.max = 1;
      progress.value = job.progress;
      cell(tr, "").appendChild(progress);
      cell(tr, duration(job.eta_seconds), "num");
      var pre = document.createElement("pre");
      pre.className = "log";
      pre.textContent = job.log_tail.join("\n");
      cell(tr, "").appendChild(pre);
      jobsBody.appendChild(tr);
    });
    if (TERMINAL[event.status]) loadCharts();
  }

  function listen() {
    var source = new EventSource(root.dataset.eventsUrl);
    source.addEventListener("run", function (message) { show(JSON.parse(message.data)); });
    source.addEventListener("end", function () { source.close(); });
    // EventSource reconnects by itself after a network error; nothing to do here.
  }

  function loadCharts() {
    if (chartsLoaded) return;
    chartsLoaded = true;
    if (document.getElementById("chart")) {
      getJson(root.dataset.chartUrl).then(function (chart) {
        drawPageTouch(chart);
        fillFloor(chart.floor);
      });
    }
    getJson(root.dataset.chartsUrl).then(drawSuiteCharts);
  }

  function getJson(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (r) { return r.json(); });
  }

  // Points from results with a validity flag are in doubt; the table "Every result" says why.
  function flaggedNote(count) {
    if (!count) return "";
    return "; " + count + (count === 1 ? " point comes" : " points come") +
      " from flagged results (see Every result)";
  }

  function drawPageTouch(chart) {
    var chartEl = document.getElementById("chart");
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
      data.push(s.values);
    });
    new uPlot({
      width: Math.max(320, chartEl.clientWidth - 16),
      height: 360,
      scales: { x: { time: false, distr: 3, log: 2 } },
      axes: [
        { label: "n (pages per transaction)" },
        { label: "time per page" + (unit ? " (" + unit + ")" : ""), size: 70 }
      ],
      series: series
    }, data, chartEl);
    if (chart.flagged) {
      var flaggedEl = document.createElement("p");
      flaggedEl.className = "help";
      flaggedEl.setAttribute("data-testid", "chart-flagged");
      flaggedEl.textContent = flaggedNote(chart.flagged).slice(2);
      chartEl.appendChild(flaggedEl);
    }
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
        .forEach(function (text, i) { cell(tr, text, i >= 3 && i <= 6 ? "num" : ""); });
      body.appendChild(tr);
    });
    table.hidden = rows.length === 0;
    note.hidden = rows.length !== 0;
  }

  function drawSuiteCharts(payload) {
    var holder = document.getElementById("charts");
    holder.textContent = "";
    if (payload.charts.length === 0) {
      var note = document.createElement("p");
      note.className = "empty";
      note.textContent = "This run has no results.";
      holder.appendChild(note);
      holder.dataset.ready = "empty";
      return;
    }
    payload.charts.forEach(function (chart) {
      var figure = document.createElement("figure");
      figure.className = "chart";
      var caption = document.createElement("figcaption");
      caption.textContent = chart.benchmark + ": " + chart.metric + " (" + chart.unit + ", " +
        chart.better + " is better)" + flaggedNote(chart.flagged);
      figure.appendChild(caption);
      holder.appendChild(figure);
      var labels = chart.x_labels;
      var series = [{ label: chart.x_param || "combination",
                      value: function (u, v) { return v == null ? "–" : (chart.x_param ? String(v) : labels[v]); } }];
      var data = [chart.x];
      chart.series.forEach(function (s, i) {
        series.push({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2,
                      points: { show: true, size: 5 }, spanGaps: true });
        data.push(s.values);
      });
      var xAxis = { label: chart.x_param || "parameter combination" };
      if (!chart.x_param) {
        xAxis.values = function (u, splits) {
          return splits.map(function (v) { return labels[v] === undefined ? "" : String(v); });
        };
      }
      new uPlot({
        width: Math.max(320, holder.clientWidth - 16),
        height: 260,
        scales: { x: { time: false } },
        axes: [xAxis, { label: chart.unit, size: 70 }],
        series: series
      }, data, figure);
    });
    holder.dataset.ready = "true";
  }

  listen();
})();
