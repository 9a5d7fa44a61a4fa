"use strict";
// The item card and the sortable table, shared by the static report (browser.js) and `medr2 view` (view.js).
// MEDR2.init(data) names the data the cards read ({runs, images}: image i is data.images[i], a data URI in the
// report, a same-origin URL in the viewer); MEDR2.card(row) builds one card from a row of
// medr2.reporting.browser, every value set as text (textContent, attributes), never as markup.
var MEDR2 = (function () {
  var DATA = {runs: [], images: []};
  var SVGNS = "http://www.w3.org/2000/svg";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function rect(svg, box, cls, dashed, width) {
    var r = document.createElementNS(SVGNS, "rect");
    r.setAttribute("x", box[0]); r.setAttribute("y", box[1]);
    r.setAttribute("width", Math.max(1, box[2] - box[0])); r.setAttribute("height", Math.max(1, box[3] - box[1]));
    r.setAttribute("fill", "none"); r.setAttribute("stroke", cls);
    r.setAttribute("stroke-width", width); r.setAttribute("vector-effect", "non-scaling-stroke");
    if (dashed) { r.setAttribute("stroke-dasharray", "6 4"); }
    svg.appendChild(r);
  }

  function thumb(row) {
    var box = el("div", "thumb");
    if (row.img < 0) { box.appendChild(el("div", "noimg", "no image (text only)")); return box; }
    var img = el("img");
    img.src = DATA.images[row.img];
    img.alt = row.saw ? "image shown to the model" : "image withheld from the model";
    box.appendChild(img);
    if (!row.saw) {
      box.className = "thumb withheld";
      var w = el("div", "withheld-note", "image withheld from the model (" + row.m + " mode): shown here for reference only");
      w.setAttribute("data-role", "withheld");
      box.appendChild(w);
    }
    if (row.w && row.h && (row.cue || row.ab)) {
      var svg = document.createElementNS(SVGNS, "svg");
      svg.setAttribute("viewBox", "0 0 " + row.w + " " + row.h);
      svg.setAttribute("preserveAspectRatio", "none");
      if (row.ab) { rect(svg, row.ab, "#37d67a", true, 2); }
      if (row.cue && row.cue.box) {
        if (row.cue.kind === "point") {
          var c = document.createElementNS(SVGNS, "circle");
          c.setAttribute("cx", (row.cue.box[0] + row.cue.box[2]) / 2);
          c.setAttribute("cy", (row.cue.box[1] + row.cue.box[3]) / 2);
          c.setAttribute("r", Math.max(4, (row.cue.box[2] - row.cue.box[0]) / 2));
          c.setAttribute("fill", "none"); c.setAttribute("stroke", "#ffd400");
          c.setAttribute("stroke-width", 3); c.setAttribute("vector-effect", "non-scaling-stroke");
          svg.appendChild(c);
        } else {
          rect(svg, row.cue.box, "#ffd400", !row.cue.drawn, 3);
        }
      }
      box.appendChild(svg);
    }
    return row.more ? several(row, box) : box;
  }

  // an item of several images: each in the order shown with its role; the current one is the box drawn on
  function several(row, current) {
    var all = el("div", "thumbs");
    all.setAttribute("data-role", "images");
    row.more.forEach(function (e) {
      var fig = e.cur ? current : el("div", row.saw ? "thumb other" : "thumb other withheld");
      if (!e.cur) {
        var img = el("img");
        img.src = DATA.images[e.img];
        img.alt = e.cap;
        fig.appendChild(img);
      }
      var cap = el("div", "img-role", e.cap);
      cap.setAttribute("data-role", "image-role");
      var wrap = el("figure", "img-fig");
      wrap.appendChild(fig);
      wrap.appendChild(cap);
      all.appendChild(wrap);
    });
    return all;
  }

  function onLeft(row, img) {
    return img >= 0 && (img === row.img || (row.more || []).some(function (e) { return e.img === img; }));
  }

  function kv(parent, key, value) {
    var d = el("div", "kv");
    d.appendChild(el("b", null, key + ": "));
    d.appendChild(document.createTextNode(value === null || value === undefined || value === "" ? "—" : String(value)));
    parent.appendChild(d);
  }

  var ROLES = ["system", "user", "assistant"];

  function turn(row, m, cls) {
    var t = el("div", cls + " role-" + (ROLES.indexOf(m.role) >= 0 ? m.role : "other"));
    t.setAttribute("data-role", "turn");
    t.setAttribute("data-speaker", m.role);
    t.appendChild(el("b", null, m.role + ": "));
    var hasImage = false;
    m.parts.forEach(function (p) {
      if (p.t === "image") {
        hasImage = true;
        if (p.img >= 0 && !onLeft(row, p.img)) {
          var im = el("img", "turn-img");
          im.src = DATA.images[p.img];
          im.alt = "image sent in this turn";
          t.appendChild(im);
        } else {
          t.appendChild(el("span", "imgmark", p.img >= 0 ? (row.more ? "[image sent: " + row.more.filter(
            function (e) { return e.img === p.img; })[0].cap + ", on the left]" : "[image sent: the picture on the left]")
            : "[image sent, sha256 " + p.sha + "…: not found in the bench]"));
        }
      } else {
        t.appendChild(el("span", "turn-text", p.x));
      }
    });
    if (m.role === "user" && !hasImage && !row.saw && cls === "turn first") {
      t.insertBefore(el("span", "imgmark", "[no image sent] "), t.childNodes[1]);
    }
    return t;
  }

  function dialogue(row) {
    var d = el("div", "dialogue");
    d.setAttribute("data-role", "dialogue");
    var msgs = row.msgs;
    var earlier = msgs.slice(0, -1);
    var firstUser = -1;
    msgs.forEach(function (m, i) { if (firstUser < 0 && m.role === "user") { firstUser = i; } });
    d.appendChild(el("div", "dlg-head", "What the model received: " + msgs.length + " message" +
      (msgs.length === 1 ? "" : "s") + (earlier.length ? ", " + earlier.length + " before the question" : "") +
      (row.saw ? "; the image in the first user turn" : "; no image")));
    earlier.forEach(function (m, i) { d.appendChild(turn(row, m, i === firstUser ? "turn first" : "turn")); });
    if (msgs.length) {
      var det = el("details", "prompt");
      det.appendChild(el("summary", null, "the question exactly as sent"));
      det.appendChild(turn(row, msgs[msgs.length - 1], msgs.length - 1 === firstUser ? "turn first" : "turn"));
      d.appendChild(det);
    }
    return d;
  }

  var MARKS = {supported: "\u2713", contradicted: "\u2717", unverifiable: "?"};

  function claimTitle(seg) {
    return seg.c + " (" + seg.by + "): " + seg.k + " " + (seg.d ? "denied: " : "") + seg.val +
      (seg.n ? " \u2014 " + seg.n : "");
  }

  function marked(segs, cls) {
    var pre = el("pre", cls);
    segs.forEach(function (seg) {
      if (!seg.c) { pre.appendChild(document.createTextNode(seg.x)); return; }
      var m = el("mark", "claim c-" + seg.c, seg.x);
      m.setAttribute("data-claim", seg.c);
      m.title = claimTitle(seg);
      pre.appendChild(m);
      var sup = el("sup", "cm c-" + seg.c, "[" + MARKS[seg.c] + "]");
      sup.setAttribute("aria-label", seg.c);
      pre.appendChild(sup);
    });
    return pre;
  }

  function claimLegend(cl) {
    var d = el("div", "legend claims-legend");
    d.setAttribute("data-role", "claims-legend");
    d.appendChild(el("b", null, "claims: "));
    ["supported", "contradicted", "unverifiable"].forEach(function (v) {
      var s = el("span", null);
      s.appendChild(el("mark", "claim c-" + v, "[" + MARKS[v] + "] " + v));
      s.appendChild(document.createTextNode(" " + cl.counts[v]));
      d.appendChild(s);
    });
    return d;
  }

  function claimList(list) {
    var det = el("details", "claims");
    det.appendChild(el("summary", null, list.length + " claim" + (list.length === 1 ? "" : "s") +
      " checked against the case"));
    var ul = el("ul", "claim-list");
    list.forEach(function (seg) {
      var li = el("li", "c-" + seg.c, "[" + MARKS[seg.c] + "] " + seg.c + " \u2014 \u201c" + seg.x + "\u201d (" +
        seg.src + ") " + seg.k + " " + (seg.d ? "denied: " : "") + seg.val + (seg.n ? ", " + seg.n : "") +
        (seg.by === "judge" ? ", decided by the judge" : ""));
      li.setAttribute("data-claim", seg.c);
      ul.appendChild(li);
    });
    det.appendChild(ul);
    return det;
  }

  // an image variant's card: the clean item's image and the model's answer on it, beside the variant's
  function cleanPanel(row) {
    var c = row.clean;
    var box = el("div", "clean");
    box.setAttribute("data-role", "clean");
    if (c.missing) { box.appendChild(el("div", "note", c.missing)); return box; }
    var fig = el("div", "thumb-clean");
    if (c.img >= 0) {
      var img = document.createElement("img");
      img.src = DATA.images[c.img];
      img.alt = "the clean item's image";
      fig.appendChild(img);
    } else { fig.appendChild(el("div", "noimg", "no image")); }
    box.appendChild(el("div", "cap", "clean image (" + c.id + ")"));
    box.appendChild(fig);
    kv(box, "correct answer", c.ab ? "[" + c.ab.map(function (v) { return Math.round(v); }).join(", ") + "]" : c.a);
    if (c.p === null || c.p === undefined) {
      kv(box, "model's answer", "not answered in this run and mode");
    } else {
      kv(box, "model's answer", c.p + " (" + c.vd + ")");
      var same = String(c.p) === String(row.p);
      var flag = el("div", "changed " + (same ? "same" : "diff"), same ? "same answer on the variant's image"
        : "the answer changed with the image");
      flag.setAttribute("data-role", "changed");
      box.appendChild(flag);
    }
    return box;
  }

  function card(row) {
    var c = el("article", "card v-" + row.vd);
    c.setAttribute("data-verdict", row.vd);
    if (row.clean) {  // the variant's image and the clean one side by side
      var pair = el("div", "pair");
      var v = el("div", "variant");
      v.appendChild(el("div", "cap", "variant image (" + row.v + ")"));
      v.appendChild(thumb(row));
      kv(v, "model's answer", row.p);
      pair.appendChild(v);
      pair.appendChild(cleanPanel(row));
      c.appendChild(pair);
    } else {
      c.appendChild(thumb(row));
    }
    var b = el("div", "body");
    var head = el("div", "meta");
    head.appendChild(el("span", "badge " + row.vd, row.vd));
    var run = DATA.runs[row.r];
    head.appendChild(document.createTextNode(run.label + " · " + row.m + " · S" + row.s + " " + row.t +
      " · " + row.v + " · " + row.id));
    b.appendChild(head);
    if (row.msgs) {
      b.appendChild(dialogue(row));
    } else {
      row.ctx.forEach(function (t) {
        b.appendChild(el("div", "ctx", "earlier step: " + t.q + " → " + t.a + (t.ok ? "" : " (shown wrong)")));
      });
      if (!row.saw) { b.appendChild(el("div", "ctx", "no image was sent to the model")); }
    }
    b.appendChild(el("div", "q", row.q));
    if (row.o.length) {
      var ol = el("ol", "opts");
      ol.setAttribute("type", "A");
      row.o.forEach(function (o, i) {
        var li = el("li", String.fromCharCode(65 + i) === row.a ? "gold" : null, o);
        ol.appendChild(li);
      });
      b.appendChild(ol);
    }
    kv(b, "correct answer", row.ab ? "[" + row.ab.map(function (v) { return Math.round(v); }).join(", ") + "]" : row.a);
    kv(b, "parsed answer", row.p);
    if (row.cf) { kv(b, "confidence", row.cf); }
    if (row.iou !== null && row.iou !== undefined) { kv(b, "IoU", Number(row.iou).toFixed(2)); }
    if (row.lure) { kv(b, "lure", row.lure); }
    if (row.xs !== "ok") { kv(b, "status", row.xs + (row.xe ? ": " + row.xe : "")); }
    if (row.cl) {
      b.appendChild(claimLegend(row.cl));
      if (row.cl.reasoning) {
        var rp = marked(row.cl.reasoning, "resp reasoning");
        rp.setAttribute("data-role", "reasoning");
        b.appendChild(el("div", "kv", "the server's separate reasoning text:"));
        b.appendChild(rp);
      }
      var mp = marked(row.cl.content, "resp");
      mp.setAttribute("data-role", "response");
      b.appendChild(mp);
      b.appendChild(claimList(row.cl.list));
    } else {
      var pre = el("pre", "resp", row.x);
      pre.setAttribute("data-role", "response");
      b.appendChild(pre);
    }
    c.appendChild(b);
    return c;
  }

  // the leaderboard and the subgroup tables (table.sortable) sort by a column when its header is clicked (again: the other way); numbers by value (n/a
  // last), names as text; the first click orders a column best first (its arrow's direction)
  function sortable(table) {
    var heads = table.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      if (!th.hasAttribute("data-sort")) { return; }
      th.classList.add("sorter");
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var first = numeric && th.getAttribute("data-better") !== "lower" ? "descending" : "ascending";
        var dir = th.getAttribute("aria-sort") === first ? (first === "ascending" ? "descending" : "ascending") : first;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var sign = dir === "ascending" ? 1 : -1;
        var rows = Array.prototype.slice.call(table.rows, 1);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          if (numeric) {
            if (x === "" || y === "") { return x === y ? 0 : (x === "" ? 1 : -1); }
            return sign * (Number(x) - Number(y));
          }
          return sign * (x < y ? -1 : (x > y ? 1 : 0));
        });
        rows.forEach(function (r) { r.parentNode.appendChild(r); });
      });
    });
  }

  return {init: function (data) { DATA = data; }, el: el, card: card, sortable: sortable};
}());
