// hearth's page: learn of a new tick without a reload. Served as /live.js
// under `script-src 'self'` (no inline script anywhere); it only writes
// text, never markup.
(function () {
  "use strict";
  var shown = document.querySelector('meta[name="hearth-commit"]');
  var base = document.querySelector('meta[name="hearth-base"]');
  var note = document.getElementById("live");
  if (!shown || !note || !window.EventSource) {
    return;
  }
  var source = new EventSource((base ? base.content : "") + "/events");
  source.addEventListener("commit", function (event) {
    var parts = String(event.data).split(" ");
    if (parts[0] === shown.content) {
      return;
    }
    var tick = parts[1] ? "tick " + parts[1] + ", " : "";
    note.textContent = "New since this page: " + tick + "commit " + parts[0].slice(0, 12) + ". ";
    var again = document.createElement("a");
    again.href = window.location.pathname;
    again.textContent = "Reload";
    note.appendChild(again);
  });
})();
