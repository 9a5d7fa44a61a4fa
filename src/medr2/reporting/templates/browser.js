(function () {
  var DATA = JSON.parse(document.getElementById("medr2-data").textContent);
  MEDR2.init(DATA);
  var el = MEDR2.el, card = MEDR2.card, sortable = MEDR2.sortable;
  var PAGE = 24;
  var FILTERS = [
    ["f-run", "r", function (v) { return DATA.runs[v].label + " (" + DATA.runs[v].model + ")"; }],
    ["f-mode", "m", null], ["f-task", "t", null], ["f-stage", "s", function (v) { return "S" + v; }],
    ["f-variant", "v", null], ["f-verdict", "vd", null]
  ];
  var page = 0;
  var shown = DATA.rows;

  function fillSelect(id, key, label) {
    var sel = document.getElementById(id);
    var seen = {};
    var values = [];
    DATA.rows.forEach(function (row) {
      var v = row[key];
      if (!Object.prototype.hasOwnProperty.call(seen, v)) { seen[v] = true; values.push(v); }
    });
    values.sort(function (a, b) { return a < b ? -1 : (a > b ? 1 : 0); });
    var all = el("option", null, "all");
    all.value = "";
    sel.appendChild(all);
    values.forEach(function (v) {
      var o = el("option", null, label ? label(v) : v);
      o.value = String(v);
      sel.appendChild(o);
    });
    sel.addEventListener("change", apply);
  }

  function render() {
    var list = document.getElementById("cards");
    list.replaceChildren();
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (page >= pages) { page = pages - 1; }
    shown.slice(page * PAGE, (page + 1) * PAGE).forEach(function (row) { list.appendChild(card(row)); });
    document.getElementById("count").textContent = shown.length + " of " + DATA.rows.length + " rows";
    document.getElementById("page").textContent = "page " + (page + 1) + " / " + pages;
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
  }

  function bound(id) {
    var v = document.getElementById(id).value;
    return v === "" || isNaN(Number(v)) ? null : Number(v);
  }

  function apply() {
    var want = FILTERS.map(function (f) { return [f[1], document.getElementById(f[0]).value]; });
    var text = document.getElementById("f-text").value.toLowerCase();
    var lo = bound("f-conf-min"), hi = bound("f-conf-max");
    shown = DATA.rows.filter(function (row) {
      for (var i = 0; i < want.length; i++) {
        if (want[i][1] !== "" && String(row[want[i][0]]) !== want[i][1]) { return false; }
      }
      // a confidence range shows the answers with a confidence in it (an answer without one is left out)
      if ((lo !== null || hi !== null) && (row.cv === undefined || (lo !== null && row.cv < lo)
          || (hi !== null && row.cv > hi))) { return false; }
      return !text || (row.q + "\n" + row.x + "\n" + row.id).toLowerCase().indexOf(text) >= 0;
    });
    page = 0;
    render();
  }

  var lb = document.getElementById("lb");
  if (lb) { sortable(lb); }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);

  FILTERS.forEach(function (f) { fillSelect(f[0], f[1], f[2]); });
  document.getElementById("f-text").addEventListener("input", apply);
  if (DATA.rows.some(function (row) { return row.cv !== undefined; })) {  // only where some answer has a confidence
    document.getElementById("f-conf").hidden = false;
    ["f-conf-min", "f-conf-max"].forEach(function (id) { document.getElementById(id).addEventListener("input", apply); });
  }
  document.getElementById("prev").addEventListener("click", function () { page -= 1; render(); });
  document.getElementById("next").addEventListener("click", function () { page += 1; render(); });
  render();
}());
