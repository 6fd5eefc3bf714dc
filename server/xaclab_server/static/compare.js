// The comparison page: each pair's ratio with its 95% interval, from the JSON the table came from.
(function () {
  "use strict";
  var root = document.getElementById("comparison");
  var chartEl = document.getElementById("ratio-chart");
  if (!root || !chartEl) return;
  fetch(root.dataset.url, { headers: { Accept: "application/json" } })
    .then(function (response) { return response.json(); })
    .then(function (comparison) {
      var pairs = comparison.pairs;
      if (pairs.length === 0) { chartEl.dataset.ready = "empty"; return; }
      var xs = pairs.map(function (_p, i) { return i + 1; });
      var opts = {
        width: Math.max(320, chartEl.clientWidth - 16),
        height: 300,
        scales: { x: { time: false } },
        axes: [{ label: "pair (table order)" }, { label: "ratio B / A", size: 60 }],
        series: [
          { label: "pair" },
          { label: "ratio", stroke: "#1f6feb", width: 0, points: { show: true, size: 7 } },
          { label: "interval low", stroke: "#8ab4f8", width: 1, dash: [4, 4], points: { show: false } },
          { label: "interval high", stroke: "#8ab4f8", width: 1, dash: [4, 4], points: { show: false } },
          { label: "1", stroke: "#5f6b73", width: 1, points: { show: false } }
        ]
      };
      var data = [
        xs,
        pairs.map(function (p) { return p.ratio; }),
        pairs.map(function (p) { return p.ci_low; }),
        pairs.map(function (p) { return p.ci_high; }),
        pairs.map(function () { return 1; })
      ];
      new uPlot(opts, data, chartEl);
      chartEl.dataset.ready = "true";
    });
})();
