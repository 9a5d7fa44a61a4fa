"use strict";
// medr2 view's pages: the leaderboard sorts (MEDR2.sortable, the report's) and shows the columns ticked; the items
// and item pages build the report's cards (MEDR2.card) from the page's data island, every value as text.
(function () {
  var lb = document.getElementById("lb");
  if (lb) {
    MEDR2.sortable(lb);
    var boxes = document.querySelectorAll("#cols input[data-col]");
    var show = function () {
      var on = {};
      Array.prototype.forEach.call(boxes, function (b) { on[b.getAttribute("data-col")] = b.checked; });
      Array.prototype.forEach.call(lb.querySelectorAll("[data-key]"), function (cell) {
        cell.hidden = on[cell.getAttribute("data-key")] === false;
      });
    };
    Array.prototype.forEach.call(boxes, function (b) { b.addEventListener("change", show); });
    show();
  }
  var island = document.getElementById("medr2-data");
  if (!island) { return; }
  var DATA = JSON.parse(island.textContent);
  MEDR2.init(DATA);
  var list = document.getElementById("cards");
  DATA.rows.forEach(function (row) {
    var slot = MEDR2.el("div", "slot");
    slot.setAttribute("data-item", row.id);
    if (DATA.link) {
      var a = MEDR2.el("a", "compare", "compare every run on this item ▶");
      a.href = "/item?id=" + encodeURIComponent(row.id);
      slot.appendChild(a);
    } else {
      slot.appendChild(MEDR2.el("div", "who", DATA.runs[row.r].label + " · " + DATA.runs[row.r].model + " · " + row.m));
    }
    slot.appendChild(MEDR2.card(row));
    list.appendChild(slot);
  });
  if (!DATA.rows.length) { list.appendChild(MEDR2.el("p", "note", "no scored row matches")); }
}());
