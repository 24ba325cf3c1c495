"""Fixtures for the checks of the rendered book: they need `scripts/build_book.sh` to have run.

Without a built book these tests are skipped, unless MMCL_REQUIRE_BOOK=1 (set by scripts/test.sh
and so in CI), where a missing build is a failure."""
import functools
import http.server
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from bookpages import HTML, ROOT, _require_book, toc_pages  # noqa: F401


@pytest.fixture(scope="session")
def html_root():
    _require_book()
    return HTML


@pytest.fixture(scope="session")
def server(html_root):
    handler = functools.partial(_QuietHandler, directory=str(html_root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def browser():
    _require_book()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail("chromium and chromedriver are needed (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="mmcl-chromium-")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                "--window-size=1400,1000"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)
