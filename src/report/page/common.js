// What both pages' scripts share (each page's script is this file followed by
// its own): making elements, with every text through textContent only.
"use strict";

function el(tag, attrs, children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children || []) e.appendChild(c);
  return e;
}

// A number with `digits` decimals; "–" for none.
function fixed(x, digits) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}
