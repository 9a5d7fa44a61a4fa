"use strict";
// medr2 reader's page: a box drawn by dragging on the image (sent in pixels of the image as stored), the optional
// confidence slider (sent only once moved), and keys for the answer buttons (a letter, y / n).
(function () {
  var form = document.getElementById("answer");
  if (!form) { return; }
  var round = function (v) { return Math.round(v * 10) / 10; };

  // -- the box ---------------------------------------------------------------------------------
  var img = document.getElementById("box-image");
  if (img) {
    var rect = document.getElementById("box-rect");
    var field = document.getElementById("box");
    var said = document.getElementById("box-text");
    var submit = document.getElementById("submit-box");
    var W = Number(img.getAttribute("data-width")), H = Number(img.getAttribute("data-height"));
    var start = null;
    var at = function (ev) {  // the pointer in pixels of the image as stored, clamped to the image
      var r = img.getBoundingClientRect();
      var x = (ev.clientX - r.left) * W / r.width, y = (ev.clientY - r.top) * H / r.height;
      return [Math.min(Math.max(x, 0), W), Math.min(Math.max(y, 0), H)];
    };
    var show = function (a, b) {
      var x1 = Math.min(a[0], b[0]), y1 = Math.min(a[1], b[1]), x2 = Math.max(a[0], b[0]), y2 = Math.max(a[1], b[1]);
      rect.hidden = false;
      rect.style.left = (100 * x1 / W) + "%";
      rect.style.top = (100 * y1 / H) + "%";
      rect.style.width = (100 * (x2 - x1) / W) + "%";
      rect.style.height = (100 * (y2 - y1) / H) + "%";
      return [round(x1), round(y1), round(x2), round(y2)];
    };
    var area = img.parentNode;
    area.addEventListener("pointerdown", function (ev) {
      ev.preventDefault();
      start = at(ev);
      area.setPointerCapture(ev.pointerId);
      show(start, start);
    });
    area.addEventListener("pointermove", function (ev) { if (start) { show(start, at(ev)); } });
    area.addEventListener("pointerup", function (ev) {
      if (!start) { return; }
      var b = show(start, at(ev));
      start = null;
      var ok = b[2] - b[0] >= 1 && b[3] - b[1] >= 1;
      field.value = ok ? b.join(",") : "";
      said.textContent = ok ? "box [" + b.join(", ") + "] (pixels of the " + W + "x" + H + " image)" : "no box drawn";
      submit.disabled = !ok;
      if (!ok) { rect.hidden = true; }
    });
  }

  // -- the confidence --------------------------------------------------------------------------
  var slider = document.getElementById("conf-slider");
  if (slider) {
    var conf = document.getElementById("confidence");
    var out = document.getElementById("conf-out");
    slider.addEventListener("input", function () { conf.value = slider.value; out.textContent = slider.value + "%"; });
    document.getElementById("conf-clear").addEventListener("click", function () {
      conf.value = ""; out.textContent = "not given";
    });
  }

  // -- keys --------------------------------------------------------------------------------------
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || /^(TEXTAREA|INPUT)$/.test(ev.target.tagName)) { return; }
    var b = form.querySelector("button.choice[data-key-shortcut='" + ev.key.toLowerCase() + "']");
    if (b) { ev.preventDefault(); b.click(); }
  });
}());
