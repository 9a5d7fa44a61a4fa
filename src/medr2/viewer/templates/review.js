// medr2 review: draw a box question's box with the mouse (or a pen, or a finger) on the item's image.
// A drag over the image fills the form's four box fields (x1, y1, x2, y2, in pixels of the image) and marks the
// verdict "fix" (reason "wrong or missing box" where none is chosen); typing in the fields moves the drawn box.
// Without this script the fields are typed as before: nothing here is needed to review. No value is read from
// the page as markup (coordinates only), and nothing is sent: the form's own submit posts the fields.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var KEYS = ["x1", "y1", "x2", "y2"];
  var MIN_PX = 1; // a drag smaller than this in the image's pixels is a click, not a box

  function init() {
    var form = document.getElementById("verdict-form");
    var svg = document.querySelector("svg[data-role=image]");
    if (!form || !svg) return;
    var fields = KEYS.map(function (k) { return form.querySelector("input[name=box_" + k + "]"); });
    if (fields.some(function (f) { return !f; })) return; // not a box question
    var vb = svg.viewBox.baseVal;
    var width = vb.width, height = vb.height;
    var drawn = document.createElementNS(NS, "rect");
    drawn.setAttribute("class", "rdrawn");
    drawn.setAttribute("data-role", "drawn-box");
    drawn.setAttribute("visibility", "hidden");
    svg.appendChild(drawn);
    svg.classList.add("drawable");
    var hint = document.createElement("p");
    hint.className = "note";
    hint.setAttribute("data-role", "box-hint");
    hint.textContent = "or drag on the image to draw the box (shown dashed)";
    fields[3].closest(".boxin").after(hint);

    function clamp(v, hi) { return Math.min(Math.max(v, 0), hi); }

    function toImage(ev) { // the pointer's position in the image's pixels (the SVG's viewBox units)
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX;
      pt.y = ev.clientY;
      var p = pt.matrixTransform(svg.getScreenCTM().inverse());
      return { x: clamp(p.x, width), y: clamp(p.y, height) };
    }

    function show(box) {
      if (!box) { drawn.setAttribute("visibility", "hidden"); return; }
      drawn.setAttribute("x", box[0]);
      drawn.setAttribute("y", box[1]);
      drawn.setAttribute("width", box[2] - box[0]);
      drawn.setAttribute("height", box[3] - box[1]);
      drawn.setAttribute("visibility", "visible");
    }

    function typed() { // the fields as a box, where they make one
      if (fields.some(function (f) { return f.value.trim() === ""; })) return null;
      var v = fields.map(function (f) { return Number(f.value); });
      if (v.some(function (x) { return !isFinite(x); }) || v[0] >= v[2] || v[1] >= v[3]) return null;
      return v;
    }

    function markFix() {
      var fix = form.querySelector("input[name=verdict][value=fix]");
      if (fix && !fix.checked) { fix.checked = true; }
      var reason = form.querySelector("select[name=reason]");
      if (reason && !reason.value) { reason.value = "wrong or missing box"; }
      var details = form.querySelector("details.fix");
      if (details) { details.open = true; }
    }

    var start = null;
    svg.addEventListener("pointerdown", function (ev) {
      if (ev.button !== 0) return;
      start = toImage(ev);
      svg.setPointerCapture(ev.pointerId);
      ev.preventDefault();
    });
    svg.addEventListener("pointermove", function (ev) {
      if (!start) return;
      var p = toImage(ev);
      show([Math.min(start.x, p.x), Math.min(start.y, p.y), Math.max(start.x, p.x), Math.max(start.y, p.y)]);
    });
    function finish(ev) {
      if (!start) return;
      var p = toImage(ev);
      var box = [Math.min(start.x, p.x), Math.min(start.y, p.y), Math.max(start.x, p.x), Math.max(start.y, p.y)]
        .map(Math.round);
      start = null;
      if (box[2] - box[0] < MIN_PX || box[3] - box[1] < MIN_PX) { show(typed()); return; }
      fields.forEach(function (f, i) { f.value = String(box[i]); });
      show(box);
      markFix();
    }
    svg.addEventListener("pointerup", finish);
    svg.addEventListener("pointercancel", function () { start = null; show(typed()); });
    fields.forEach(function (f) { f.addEventListener("input", function () { show(typed()); }); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
