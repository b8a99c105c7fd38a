// The template editor: numbers the lines of each template textarea and marks the line the
// server named in its error (data-error-line); as staff type, asks the page's check view
// (data-check-url) what the compiler says and shows it; fills the text from a chosen example.
// Plain script, shipped with the repository.
(function () {
  "use strict";

  function render(editor) {
    var area = editor.querySelector("textarea");
    var gutter = editor.querySelector(".template-editor-gutter");
    var errorLine = parseInt(editor.getAttribute("data-error-line") || "0", 10);
    var count = area.value.split("\n").length;
    var html = [];
    for (var line = 1; line <= count; line++) {
      var mark = line === errorLine ? ' class="error" title="the error is on this line"' : "";
      html.push("<span" + mark + ">" + line + "</span>");
    }
    gutter.innerHTML = html.join("");
    gutter.scrollTop = area.scrollTop;
  }

  var asked = 0;  // the latest check asked; an answer to an earlier one is stale

  function check(editor) {
    var mine = ++asked;
    var area = editor.querySelector("textarea");
    var live = editor.parentNode.querySelector(".template-editor-live");
    var url = area.getAttribute("data-check-url");
    if (!url || !live) { return; }
    var ledgerField = document.getElementById("id_ledger");
    var form = new FormData();
    form.append("text", area.value);
    form.append("ledger", area.getAttribute("data-ledger") || (ledgerField ? ledgerField.value : ""));
    var token = document.querySelector("input[name=csrfmiddlewaretoken]");
    fetch(url, {method: "POST", body: form, credentials: "same-origin",
                headers: {"X-CSRFToken": token ? token.value : ""}})
      .then(function (answer) { return answer.json(); })
      .then(function (said) {
        if (mine !== asked) { return; }
        live.textContent = said.ok ? said.message : said.error;
        live.className = "template-editor-live " + (said.ok ? "ok" : "error");
        editor.setAttribute("data-error-line", said.line || "0");
        render(editor);
      })
      .catch(function () { live.textContent = ""; });
  }

  function start(editor) {
    var area = editor.querySelector("textarea");
    var gutter = editor.querySelector(".template-editor-gutter");
    var waiting = null;
    area.addEventListener("input", function () {
      render(editor);
      clearTimeout(waiting);
      waiting = setTimeout(function () { check(editor); }, 500);
    });
    area.addEventListener("scroll", function () { gutter.scrollTop = area.scrollTop; });
    render(editor);
    var errorLine = parseInt(editor.getAttribute("data-error-line") || "0", 10);
    if (errorLine > 0) {
      area.scrollTop = Math.max(0, (errorLine - 5) * 18);
      gutter.scrollTop = area.scrollTop;
    }
  }

  function pick(select) {
    select.addEventListener("change", function () {
      var chosen = select.options[select.selectedIndex];
      var area = document.getElementById(select.getAttribute("data-for"));
      if (!chosen.value || !area) { return; }
      if (area.value.trim() && !window.confirm("Replace the text with the example?")) { return; }
      area.value = chosen.getAttribute("data-text");
      area.dispatchEvent(new Event("input"));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".template-editor").forEach(start);
    document.querySelectorAll(".template-example").forEach(pick);
  });
})();
