(function () {
  "use strict";
  var byId = function (id) { return document.getElementById(id); };
  var search = byId("f-search"), ins = byId("f-ins"), status = byId("f-status"),
      impl = byId("f-impl"), result = byId("f-result"), count = byId("f-count"),
      none = byId("no-clauses"), table = byId("clause-table");
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.clause-row"));
  var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });

  function words(value) { return value ? value.split(" ") : []; }

  function resultMatches(row) {
    if (!result.value) { return true; }
    var keys = words(row.getAttribute("data-results"));
    return keys.some(function (key) {
      var cut = key.indexOf(":");
      var who = key.slice(0, cut), what = key.slice(cut + 1);
      return what === result.value && (!impl.value || who === impl.value);
    });
  }

  function apply() {
    var query = search.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row, n) {
      var ok = (!ins.value || row.getAttribute("data-ins") === ins.value) &&
               (!status.value || words(row.getAttribute("data-status")).indexOf(status.value) >= 0) &&
               (!query || texts[n].indexOf(query) >= 0) &&
               resultMatches(row);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.querySelectorAll("[data-ins]:not(tr.clause-row)").forEach(function (el) {
      el.hidden = Boolean(ins.value) && el.getAttribute("data-ins") !== ins.value;
    });
    document.querySelectorAll("[data-impl]").forEach(function (el) {
      el.hidden = Boolean(impl.value) && el.getAttribute("data-impl") !== impl.value;
    });
    table.classList.toggle("one-impl", Boolean(impl.value));
    count.textContent = shown + " of " + rows.length + " clauses";
    none.hidden = shown !== 0;
  }

  var top = document.querySelector("header.top");
  function fitHeader() {
    document.documentElement.style.setProperty("--head", top.offsetHeight + "px");
  }
  window.addEventListener("resize", fitHeader);
  fitHeader();

  [search, ins, status, impl, result].forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  apply();
}());
