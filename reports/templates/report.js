(function () {
  "use strict";
  var byId = function (id) { return document.getElementById(id); };
  var top = document.querySelector("header.top");
  function fitHeader() {
    document.documentElement.style.setProperty("--head", top.offsetHeight + "px");
  }
  window.addEventListener("resize", fitHeader);
  fitHeader();

  function words(value) { return value ? value.split(" ") : []; }
  function listen(elements, apply) {
    elements.forEach(function (el) {
      el.addEventListener("input", apply);
      el.addEventListener("change", apply);
    });
    apply();
  }

  // The index: the search box finds instructions by name or family.
  var insTable = byId("instruction-table");
  if (insTable) {
    var insSearch = byId("f-search"), insCount = byId("f-count"), insNone = byId("no-instructions");
    var insRows = Array.prototype.slice.call(insTable.querySelectorAll("tr.ins-row"));
    listen([insSearch], function () {
      var query = insSearch.value.trim().toLowerCase();
      var shown = 0;
      insRows.forEach(function (row) {
        var ok = !query || row.getAttribute("data-ins").indexOf(query) >= 0 ||
                 row.getAttribute("data-family").indexOf(query) >= 0;
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      insCount.textContent = shown + " of " + insRows.length + " instructions";
      insNone.hidden = shown !== 0;
    });
  }

  // An instruction's page: filters over its clauses.
  var table = byId("clause-table");
  if (!table) { return; }
  var search = byId("f-search"), status = byId("f-status"), impl = byId("f-impl"),
      result = byId("f-result"), count = byId("f-count"), none = byId("no-clauses");
  var rows = Array.prototype.slice.call(table.querySelectorAll("tr.clause-row"));
  var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });

  function resultMatches(row) {
    if (!result.value) { return true; }
    var keys = words(row.getAttribute("data-results"));
    return keys.some(function (key) {
      var cut = key.indexOf(":");
      var who = key.slice(0, cut), what = key.slice(cut + 1);
      return what === result.value && (!impl.value || who === impl.value);
    });
  }

  listen([search, status, impl, result], function () {
    var query = search.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row, n) {
      var ok = (!status.value || words(row.getAttribute("data-status")).indexOf(status.value) >= 0) &&
               (!query || texts[n].indexOf(query) >= 0) &&
               resultMatches(row);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.querySelectorAll("[data-impl]").forEach(function (el) {
      el.hidden = Boolean(impl.value) && el.getAttribute("data-impl") !== impl.value;
    });
    table.classList.toggle("one-impl", Boolean(impl.value));
    count.textContent = shown + " of " + rows.length + " clauses";
    none.hidden = shown !== 0;
  });
}());
