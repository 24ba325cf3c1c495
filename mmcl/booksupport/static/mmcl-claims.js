// The Claims page's verdict filter (mmcl.booksupport.sphinx_ext): tick or untick a verdict to show or
// hide its rows; the first visible row of each statement shows the statement's name.
document.addEventListener("DOMContentLoaded", () => {
  const table = document.querySelector("table.mmcl-claims-register");
  if (!table) return;
  const boxes = Array.from(document.querySelectorAll(".mmcl-claims-filter input[data-verdict]"));
  const counter = document.querySelector(".mmcl-claims-shown");
  const rows = Array.from(table.tBodies[0].rows);
  function apply() {
    const shown = new Set(boxes.filter((b) => b.checked).map((b) => b.dataset.verdict));
    const seen = new Set();
    let n = 0;
    for (const tr of rows) {
      const visible = shown.has(tr.dataset.verdict);
      tr.hidden = !visible;
      if (visible) {
        n += 1;
        tr.cells[0].classList.toggle("mmcl-repeat", seen.has(tr.dataset.group));
        seen.add(tr.dataset.group);
      }
    }
    if (counter) counter.textContent = `(${n} of ${rows.length} claims shown)`;
  }
  boxes.forEach((b) => b.addEventListener("change", apply));
  apply();
});
