// Show only the chosen suite's fieldset; a disabled fieldset is not submitted.
(function () {
  "use strict";
  var select = document.getElementById("suite");
  if (!select) return;
  function show() {
    document.querySelectorAll("fieldset.suite").forEach(function (fieldset) {
      var chosen = fieldset.dataset.suite === select.value;
      fieldset.hidden = !chosen;
      fieldset.disabled = !chosen;
    });
  }
  select.addEventListener("change", show);
  show();
})();
