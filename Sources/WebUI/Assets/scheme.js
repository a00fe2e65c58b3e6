// The colour scheme. A classic script in the page's head (not a module: it runs before the page is
// drawn, so a dark page never flashes light): it sets <html data-scheme="light|dark"> from the
// switch's choice, remembered in this browser's localStorage ("homegate.scheme": "light" or
// "dark"; nothing is "system"), or else from prefers-color-scheme, which it follows as it changes.
// app.css holds one set of colour variables and overrides them for data-scheme="dark".
"use strict";
(() => {
  const key = "homegate.scheme";
  const dark = window.matchMedia("(prefers-color-scheme: dark)");
  let unsaved = null; // this page's choice when the browser refuses to store it

  function chosen() {
    if (unsaved) return unsaved;
    let value = null;
    try { value = localStorage.getItem(key); } catch { /* storage off: follow the system */ }
    return value === "light" || value === "dark" ? value : "system";
  }

  function apply() {
    const choice = chosen();
    const scheme = choice === "system" ? (dark.matches ? "dark" : "light") : choice;
    const root = document.documentElement;
    root.dataset.scheme = scheme;
    root.dataset.schemeChoice = choice;
    // The browser's bar: each theme-color meta keeps its media query for "system"; a choice
    // gives both the chosen scheme's colour.
    const metas = [...document.querySelectorAll('meta[name="theme-color"]')];
    for (const meta of metas) meta.dataset.own ??= meta.content;
    const colour = metas.find((meta) => meta.dataset.scheme === scheme)?.dataset.own;
    for (const meta of metas) meta.content = choice === "system" || !colour ? meta.dataset.own : colour;
    for (const input of document.querySelectorAll('input[name="scheme"]')) input.checked = input.value === choice;
  }

  function choose(choice) {
    unsaved = null;
    try {
      if (choice === "system") localStorage.removeItem(key);
      else localStorage.setItem(key, choice);
    } catch {
      unsaved = choice; // storage off: the choice lasts until the page is left
    }
    apply();
  }

  apply();
  dark.addEventListener("change", apply);
  // Another tab of this page changed it.
  window.addEventListener("storage", (event) => {
    if (event.key !== key && event.key !== null) return;
    unsaved = null;
    apply();
  });
  document.addEventListener("DOMContentLoaded", () => {
    apply();
    for (const input of document.querySelectorAll('input[name="scheme"]')) {
      input.addEventListener("change", () => { if (input.checked) choose(input.value); });
    }
  });
})();
