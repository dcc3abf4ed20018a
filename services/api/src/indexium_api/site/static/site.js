// Enhancements only: every page works without this file.
(function () {
  "use strict";
  // Copy buttons: the value is in data-copy.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button.copy");
    if (!btn) return;
    var value = btn.getAttribute("data-copy");
    var done = function () {
      var old = btn.textContent;
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = old; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value).then(done, function () {});
    } else {
      var area = document.createElement("textarea");
      area.value = value;
      area.setAttribute("readonly", "");
      area.style.position = "absolute";
      area.style.left = "-9999px";
      document.body.appendChild(area);
      area.select();
      try { document.execCommand("copy"); done(); } catch (e) { /* nothing to copy with */ }
      document.body.removeChild(area);
    }
  });

  // The Download box's choice: a GET form that works with its button; with script, a changed
  // loader, game version or snapshots box loads the page for it at once.
  document.addEventListener("change", function (ev) {
    var form = ev.target.closest("form[data-auto-submit]");
    if (form && (ev.target.tagName === "SELECT" || ev.target.type === "checkbox")) {
      if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
    }
  });

  // A page's own script, loaded by this one (a dynamically added script runs under both the
  // public pages' script-src 'self' and the per-response nonce's 'strict-dynamic').
  var own = document.querySelector("[data-page-script]");
  if (own) {
    var tag = document.createElement("script");
    tag.src = "/static/site/" + own.getAttribute("data-page-script") + ".js";
    document.head.appendChild(tag);
  }

  // As-you-type search: fetch the same page the form would load and swap in its results.
  var form = document.querySelector("form[data-live-search]");
  if (!form || !window.fetch || !window.DOMParser) return;
  var timer = null, seq = 0;
  function run() {
    var params = new URLSearchParams(new FormData(form));
    Array.from(params.keys()).forEach(function (k) { if (!params.get(k)) params.delete(k); });
    var url = "/?" + params.toString();
    var mine = ++seq;
    fetch(url, { headers: { "Accept": "text/html" } }).then(function (r) { return r.text(); }).then(function (html) {
      if (mine !== seq) return;
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.getElementById("results"), old = document.getElementById("results");
      if (fresh && old) {
        old.replaceWith(fresh);
        history.replaceState(null, "", url);
      }
    }).catch(function () { /* the submit button still works */ });
  }
  form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 250); });
  form.addEventListener("change", function (ev) { if (ev.target.tagName === "SELECT") { clearTimeout(timer); run(); } });
})();
