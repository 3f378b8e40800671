// hearth's thread (/talk): an ask's answer streams into the page as it
// comes. Served as /talk.js under `script-src 'self'`; it writes text,
// never markup. Without it the form still works: the answer is in the
// thread when the page comes back.
(function () {
  "use strict";
  // The thread's newest page opens at its end, where the newest is.
  if (window.location.search.indexOf("before=") < 0 && !window.location.hash) {
    window.scrollTo(0, document.body.scrollHeight);
  }
  var form = document.getElementById("ask");
  var out = document.getElementById("answer");
  if (!form || !out || !window.fetch || !window.TextDecoder) {
    return;
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = form.querySelector("button");
    button.disabled = true;
    out.hidden = false;
    out.textContent = "";
    var body = new URLSearchParams(new FormData(form));
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Accept": "text/event-stream" }
    }).then(function (response) {
      if (!response.ok || !response.body) {
        return response.text().then(function (text) {
          out.textContent = text;
          button.disabled = false;
        });
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var pending = "";
      var ended = false;
      function handle(block) {
        var name = "message";
        var data = [];
        block.split("\n").forEach(function (line) {
          if (line.indexOf("event:") === 0) {
            name = line.slice(6).trim();
          } else if (line.indexOf("data:") === 0) {
            data.push(line.slice(5).replace(/^ /, ""));
          }
        });
        var text = data.join("\n");
        if (name === "text") {
          out.textContent += text;
        } else if (name === "done") {
          ended = true;
          out.dataset.done = "answered";
          form.reset();
          button.disabled = false;
          var again = document.createElement("a");
          again.href = window.location.pathname;
          again.textContent = "See it in the thread";
          out.appendChild(document.createTextNode("\n\n"));
          out.appendChild(again);
        } else if (name === "refused") {
          ended = true;
          out.dataset.done = "refused";
          out.textContent += "\n\n" + text;
          button.disabled = false;
        }
      }
      function pump() {
        return reader.read().then(function (step) {
          if (step.done) {
            if (!ended) {
              out.textContent += "\n\n(the answer stopped; reload to see what was kept)";
              button.disabled = false;
            }
            return;
          }
          pending += decoder.decode(step.value, { stream: true });
          var at;
          while ((at = pending.indexOf("\n\n")) >= 0) {
            handle(pending.slice(0, at));
            pending = pending.slice(at + 2);
          }
          return pump();
        });
      }
      return pump();
    }).catch(function (error) {
      out.textContent = "The ask could not be sent: " + error;
      button.disabled = false;
    });
  });
})();
