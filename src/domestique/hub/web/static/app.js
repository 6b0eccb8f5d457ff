// Domestique web report: the only script (no inline script; CSP script-src 'self').
// One job: on "One leaked value", hash a pasted value in the browser with the organisation's
// fingerprint key (HMAC-SHA256, the same as every endpoint's org_fingerprint), so only the
// fingerprint is sent to the hub. The value field has no name: a form without this script
// never sends it either.
"use strict";

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

function bytesOfHex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) {
    out[i] = parseInt(text.substr(i * 2, 2), 16);
  }
  return out;
}

async function fingerprint(keyHex, value) {
  const key = await crypto.subtle.importKey(
    "raw", bytesOfHex(keyHex), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(value));
  return "hmac-sha256:" + hex(mac).slice(0, 32);
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("leaked");
  if (!form) {
    return;
  }
  form.addEventListener("submit", async (event) => {
    const valueField = document.getElementById("leaked-value");
    const fpField = document.getElementById("leaked-fp");
    if (!valueField.value) {
      return;
    }
    event.preventDefault();
    fpField.value = await fingerprint(form.dataset.orgKey, valueField.value);
    valueField.value = "";
    form.submit();
  });
});
