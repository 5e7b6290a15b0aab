#!/usr/bin/env python3
"""kvod's console in a real browser (issue 31, docs/HTTP.md "The console").

Debian's chromium, driven by Playwright, against the real kvod and kvoctl:
load the page and give the token; watch a value change from a `kvoctl set`;
edit a value with compare-and-set; see a 412 conflict explained; stop kvod,
change values while its HTTP is down, start it again, and find every change in
the page's log exactly once (the EventSource resumed with Last-Event-ID).

Usage: console_test.py BIN_DIR  (where kvod and kvoctl are; scripts/ci/console-browser.sh)
Every wait has a deadline (Playwright's expect), none sleeps.
"""
import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import expect, sync_playwright

BIN = sys.argv[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
DEADLINE_MS = 15_000
expect.set_options(timeout=DEADLINE_MS)

work = tempfile.mkdtemp(prefix="kvod-console-")
sock = os.path.join(work, "kvod.sock")
data = os.path.join(work, "data")
token = secrets.token_urlsafe(24)
tokens = os.path.join(work, "tokens")
with open(tokens, "w") as f:
    f.write(f"uid:{os.getuid() or 65534} {hashlib.sha256(token.encode()).hexdigest()}\n")
os.chmod(tokens, 0o600)

with socket.socket() as probe:  # a free port, the same one after the restart
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
base = f"http://127.0.0.1:{port}"


def wait_for(condition, what):
    deadline = time.monotonic() + DEADLINE_MS / 1000
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)  # polling a condition with a deadline


def start_kvod(http=True):
    if os.path.exists(sock):
        os.unlink(sock)
    args = [f"{BIN}/kvod", "--socket", sock, "--data-dir", data]
    if http:
        args += ["--http", f"127.0.0.1:{port}", "--http-tokens", tokens]
    log = open(os.path.join(work, "kvod.log"), "a")
    process = subprocess.Popen(args, stderr=log)
    wait_for(lambda: kvoctl("get", "--quiet", "nothing", check=False).returncode in (0, 8), "kvod to answer")
    return process


def stop_kvod(process):
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=DEADLINE_MS / 1000) == 0, "kvod did not stop cleanly"


def kvoctl(*args, check=True):
    result = subprocess.run([f"{BIN}/kvoctl", "--socket", sock, *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"kvoctl {' '.join(args)}: {result.returncode} {result.stderr}")
    return result


def log_seqs(page):
    return [int(text) for text in page.locator("#log-rows tr td:first-child").all_text_contents()]


kvod = start_kvod()
try:
    kvoctl("set", "config", '{"port": 8080, "host": "db1"}')
    kvoctl("set", "presence/a", "online", "true")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))

        # The page asks for the token once; a wrong one is refused and asked again.
        response = page.goto(base + "/")
        assert response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]
        expect(page.locator("#token-dialog")).to_be_visible()
        page.fill("#token-input", "not-the-token")
        page.click("#token-submit")
        expect(page.locator("#token-error")).to_contain_text("not one of those in --http-tokens")
        page.fill("#token-input", token)
        page.click("#token-submit")
        expect(page.locator("#token-dialog")).to_be_hidden()
        assert page.evaluate("sessionStorage.getItem('kvod.token')") == token
        assert page.evaluate("localStorage.length") == 0, "the token must stay in the session"

        # Objects under a prefix, a page at a time, and /v1/info's figures.
        expect(page.locator("#object-list")).to_contain_text("config")
        expect(page.locator("#object-list")).to_contain_text("presence/a")
        page.fill("#list-prefix", "pres")
        page.click("#list-form button[type=submit]")
        expect(page.locator("#object-list li")).to_have_count(1)
        expect(page.locator("#stat-objects")).to_have_text("2")
        expect(page.locator("#stat-connections")).not_to_have_text("–")

        # A document, live: a kvoctl set shows up without a reload.
        page.click("#object-list button:text-is('presence/a')")
        expect(page.locator("#document-json")).to_contain_text('"online": true')
        page.fill("#open-name", "config")
        page.click("#open-form button")
        expect(page.locator("#document-json")).to_contain_text('"port": 8080')
        expect(page.locator("#document-state")).to_have_text("live")
        kvoctl("set", "config", "port", "8081")
        expect(page.locator("#document-json")).to_contain_text('"port": 8081')
        expect(page.locator("#document-changed")).to_contain_text("port setting")

        # The log: kind, key path, seq and cause of each change under the prefix.
        seq = int(kvoctl("set", "config", "host", "db2").stdout.strip())
        row = page.locator("#log-rows tr").first
        expect(row).to_contain_text(str(seq))
        expect(row.locator("td").nth(2)).to_have_text("host")
        expect(row.locator("td").nth(3)).to_have_text("setting")
        kvoctl("set", "--ephemeral", "presence/b", "online", "true")  # kvoctl exits: the value goes
        expect(page.locator("#log-rows tr").first.locator("td").nth(4)).to_have_text("disconnect")

        # Edit with compare-and-set.
        page.fill("#edit-keypath", "port")
        page.click("#edit-load")
        expect(page.locator("#edit-value")).to_have_value("8081")
        page.fill("#edit-value", "9000")
        page.click("#edit-save")
        expect(page.locator("#edit-result")).to_contain_text("Saved")
        assert kvoctl("get", "config", "port").stdout.strip() == "9000"
        expect(page.locator("#document-json")).to_contain_text('"port": 9000')

        # A conflict: someone else changed it since Load. Nothing is saved, and the page says why.
        page.click("#edit-load")
        expect(page.locator("#edit-value")).to_have_value("9000")
        kvoctl("set", "config", "port", "1234")
        page.fill("#edit-value", "5555")
        page.click("#edit-save")
        result = page.locator("#edit-result")
        expect(result).to_contain_text("Conflict")
        expect(result).to_contain_text("Nothing was saved")
        expect(result).to_contain_text("1234")
        assert kvoctl("get", "config", "port").stdout.strip() == "1234"

        # A restart: changes made while kvod's HTTP is down reach the page once each.
        first = max(log_seqs(page))
        stop_kvod(kvod)
        expect(page.locator("#log-state")).to_have_text("reconnecting")
        socket_only = start_kvod(http=False)
        missed = [int(kvoctl("set", "config", "port", str(n)).stdout.strip()) for n in range(1, 6)]
        stop_kvod(socket_only)
        kvod = start_kvod()
        last = int(kvoctl("set", "config", "host", "db3").stdout.strip())
        expect(page.locator("#document-json")).to_contain_text('"host": "db3"')
        expect(page.locator("#log-rows tr").first).to_contain_text(str(last))
        expect(page.locator("#log-state")).to_have_text("live")
        seqs = log_seqs(page)
        after = sorted(s for s in seqs if s > first)
        assert after == sorted(set(after)), f"a change told twice: {after}"
        for s in missed + [last]:
            assert s in after, f"seq {s} (made while HTTP was down) missing from the log {after}"
        expect(page.locator("#document-json")).to_contain_text('"port": 5')

        assert errors == [], f"the page threw: {errors}"
        browser.close()
    print("console_test: ok")
finally:
    if kvod.poll() is None:
        kvod.kill()
        kvod.wait()
    shutil.rmtree(work, ignore_errors=True)
