// The comparison page's pickers: a box above a list filters its options as you type.
// Without scripts the boxes stay hidden and the lists work as they are.
(function () {
  "use strict";
  document.querySelectorAll("input.filter").forEach(function (box) {
    var lists = document.querySelectorAll(box.dataset.filter);
    box.hidden = false;
    box.addEventListener("input", function () {
      var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
      lists.forEach(function (list) {
        Array.prototype.forEach.call(list.options, function (option) {
          var text = option.textContent.toLowerCase();
          var keep = option.value === "" || option.selected ||
            words.every(function (word) { return text.indexOf(word) >= 0; });
          option.hidden = !keep;
        });
      });
    });
  });
})();
