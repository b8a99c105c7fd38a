// The template editor: numbers the lines of each template textarea and marks the line the
// server named in its error (data-error-line). Plain script, shipped with the repository.
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

  function start(editor) {
    var area = editor.querySelector("textarea");
    var gutter = editor.querySelector(".template-editor-gutter");
    area.addEventListener("input", function () { render(editor); });
    area.addEventListener("scroll", function () { gutter.scrollTop = area.scrollTop; });
    render(editor);
    var errorLine = parseInt(editor.getAttribute("data-error-line") || "0", 10);
    if (errorLine > 0) {
      area.scrollTop = Math.max(0, (errorLine - 5) * 18);
      gutter.scrollTop = area.scrollTop;
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".template-editor").forEach(start);
  });
})();
