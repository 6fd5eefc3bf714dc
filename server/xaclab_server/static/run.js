// The run page: live job progress, ETA and log tail from the run's event stream (SSE).
// The figures are drawn on the server; a page opened before the run ended reloads when it ends.
(function () {
  "use strict";
  var root = document.getElementById("run");
  var statusEl = document.getElementById("run-status");
  var progressEl = document.getElementById("run-progress");
  var messageEl = document.getElementById("run-message");
  var jobsBody = document.querySelector("#jobs tbody");
  var TERMINAL = { succeeded: true, failed: true, cancelled: true };
  var endedBefore = root.dataset.terminal === "true";

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
      cell(tr, paramsWords(job.params));
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
    if (TERMINAL[event.status] && !endedBefore) {
      endedBefore = true;
      window.location.reload();
    }
  }

  // Parameters as the server writes them: "procs 2 · durability durable".
  function paramsWords(params) {
    var names = Object.keys(params).sort();
    if (names.length === 0) return "–";
    return names.map(function (name) {
      var value = params[name];
      if (value === true) value = "yes";
      if (value === false) value = "no";
      return name.replace(/_/g, " ") + " " + value;
    }).join(" · ");
  }

  function listen() {
    var source = new EventSource(root.dataset.eventsUrl);
    source.addEventListener("run", function (message) { show(JSON.parse(message.data)); });
    source.addEventListener("end", function () { source.close(); });
    // EventSource reconnects by itself after a network error; nothing to do here.
  }

  listen();
})();
