// Backup and restore from the page (admins; docs/web.md): "Download backup" fetches
// GET /api/backup with the session's CSRF token and saves the file the browser's way; "Restore"
// uploads a file to POST /api/restore, which checks it whole (a bad file: a clear error, nothing
// changed), stages it and restarts the gateway on it. The page then waits for the gateway to come
// back (the WebSocket reconnects; the restart ends every session, so a gateway with sign-in asks
// to log in again) and says so.

import {h, statusLine, setStatus} from "./dom.js";
import {HttpError} from "./api.js";

/** sessionStorage key: a restore was accepted and the gateway restarts (its summary). */
export const RESTORING = "homegate.restoring";

/** The section, for the management view. ctx: {session}. */
export function backupSection(ctx) {
  const downloadStatus = statusLine("backup-status", "backup:download");
  const restoreStatus = statusLine("restore-status", "backup:restore");
  const file = h("input", {type: "file", id: "restore-file", accept: ".backup,application/octet-stream", dataset: {testid: "restore-file", live: ""}});
  const restore = h("button", {type: "submit", className: "danger", dataset: {testid: "restore"}, disabled: true}, "Restore and restart");
  file.addEventListener("change", () => { restore.disabled = !file.files?.length; });
  const form = h("form", {className: "stack", dataset: {testid: "restore-form"}},
    h("label", {className: "field", for: "restore-file"}, "A backup file (from this page or homegate backup)"), file, restore, restoreStatus);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (file.files?.length) upload(ctx, file.files[0], restoreStatus, restore);
  });
  return h("section", {className: "card backup", "aria-labelledby": "backup-title", dataset: {testid: "backup"}},
    h("h2", {id: "backup-title"}, "Backup and restore"),
    h("p", {}, "The backup holds the store, the pairing keys of every paired accessory and the configuration file: keep it as safe as a key. ",
      "A restore replaces the gateway's data with the file's and restarts the gateway; everyone is signed out."),
    h("div", {className: "buttons"},
      h("button", {type: "button", dataset: {testid: "download-backup"}, onclick: () => download(ctx, downloadStatus)}, "Download backup")),
    downloadStatus,
    form);
}

async function download(ctx, status) {
  setStatus(status, "pending", "taking a backup…");
  try {
    const response = await fetch("/api/backup", {headers: {"X-CSRF-Token": ctx.session.csrf}, credentials: "same-origin", cache: "no-store"});
    if (!response.ok) throw await httpError(response);
    const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "")?.[1] ?? "homegate.backup";
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const link = h("a", {href: url, download: name, hidden: true});
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    setStatus(status, "ok", `downloaded ${name} (${blob.size} bytes)`);
  } catch (error) {
    setStatus(status, "error", error instanceof HttpError ? `${error.code ?? "HTTP " + error.status}: ${error.message}` : String(error.message ?? error));
  }
}

async function upload(ctx, file, status, button) {
  button.disabled = true;
  setStatus(status, "pending", `uploading ${file.name} (${file.size} bytes) and checking it…`);
  try {
    const response = await fetch("/api/restore", {method: "POST", body: file, credentials: "same-origin", cache: "no-store",
      headers: {"X-CSRF-Token": ctx.session.csrf, "Content-Type": "application/octet-stream"}});
    if (!response.ok) throw await httpError(response);
    const answer = await response.json();
    sessionStorage.setItem(RESTORING, answer.message ?? "restored");
    setStatus(status, "pending", `checked and staged: ${answer.message}. Waiting for the gateway to come back…`);
    showRestoreBanner("pending", "Restoring: the gateway restarts on the backup. The page reconnects when it is back…");
  } catch (error) {
    button.disabled = false;
    setStatus(status, "error", error instanceof HttpError ? `${error.code ?? "HTTP " + error.status}: ${error.message}` : String(error.message ?? error));
  }
}

async function httpError(response) {
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  return new HttpError(response.status, body);
}

/** The banner above the view (role=status): the restore's progress, kept across re-renders. */
export function showRestoreBanner(kind, text) {
  const banner = document.getElementById("banner");
  if (!banner) return;
  banner.hidden = !text;
  banner.dataset.kind = kind;
  banner.textContent = text ? ({pending: "… ", ok: "✓ ", error: "✕ "}[kind] ?? "") + text : "";
}
