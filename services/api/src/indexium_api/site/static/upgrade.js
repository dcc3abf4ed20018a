// "Can I upgrade?": hash every .jar of the chosen folder here, in the browser (WebCrypto SHA-1),
// and send only the hashes to POST /upgrade: the same form the textarea submits without this
// script. Neither the files nor their names leave the machine: the names are put back into the
// answer's rows here, by hash.
(function () {
  "use strict";
  var form = document.getElementById("upgrade-form");
  if (!form || !window.crypto || !crypto.subtle || !window.fetch) return;
  var folder = form.querySelector("[data-folder]"), input = document.getElementById("folder");
  var status = form.querySelector("[data-status]"), area = document.getElementById("hashes");
  var fallback = form.querySelector("[data-fallback]");
  var MAX = 500, names = {};
  folder.hidden = false;
  fallback.hidden = true;

  function hex(buf) {
    return Array.from(new Uint8Array(buf), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  function label(answer) {
    answer.querySelectorAll("tr[data-hash]").forEach(function (row) {
      var name = names[row.getAttribute("data-hash")], cell = row.cells[0];
      if (!name || !cell || cell.querySelector(".vnum")) return;
      var span = document.createElement("span");
      span.className = "vnum";
      span.textContent = name;
      cell.insertBefore(span, cell.firstChild);
    });
  }

  function send() {
    status.textContent = "Asking Indexium about " + area.value.split("\n").filter(Boolean).length + " files…";
    fetch("/upgrade", { method: "POST", body: new URLSearchParams(new FormData(form)),
                        headers: { "Accept": "text/html" } })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("answer"), old = document.getElementById("answer");
        if (fresh && old) { label(fresh); old.replaceWith(fresh); status.textContent = ""; }
        else {
          var msg = doc.querySelector("main p");
          status.textContent = msg ? msg.textContent : "Indexium could not answer. Try again.";
        }
      })
      .catch(function () { status.textContent = "Indexium could not be reached. Try again."; });
  }

  input.addEventListener("change", function () {
    var jars = Array.from(input.files).filter(function (f) { return /\.jar$/i.test(f.name); });
    if (!jars.length) { status.textContent = "No .jar files in that folder."; return; }
    if (jars.length > MAX) { status.textContent = "At most " + MAX + " files at once; this folder has " + jars.length + "."; return; }
    status.textContent = "Hashing " + jars.length + " jars on this computer…";
    Promise.all(jars.map(function (f) {
      return f.arrayBuffer().then(function (b) { return crypto.subtle.digest("SHA-1", b); })
        .then(function (d) { var h = hex(d); names[h] = f.name; return h; });
    })).then(function (lines) { area.value = lines.join("\n"); send(); },
             function () { status.textContent = "A file could not be read."; });
  });

  form.addEventListener("submit", function (ev) {
    if (!area.value.trim()) { ev.preventDefault(); status.textContent = "Pick your mods folder first."; return; }
    ev.preventDefault();
    send();
  });
  form.addEventListener("change", function (ev) {
    if (ev.target.tagName === "SELECT" && area.value.trim()) send();
  });
})();
