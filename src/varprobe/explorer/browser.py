"""Open an explorer in headless Chromium (the browser tests and ``benchmarks/explorer_size.py``).

Debian's ``chromium`` and ``chromedriver`` (``scripts/chromium/ensure.sh`` installs them) driven
through Selenium (a development dependency, ``envs/requirements-dev.txt``), with the driver
given by path so Selenium never looks for a browser on the network.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

BROWSER_ARGS = ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1600,1000")


def browser_paths() -> tuple[str, str] | None:
    """``(chromium, chromedriver)`` on PATH, or None when either is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def headless_chromium(width: int = 1600, height: int = 1000):
    """A Selenium WebDriver on headless Chromium; RuntimeError naming what is missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    paths = browser_paths()
    if paths is None:
        raise RuntimeError("chromium and chromedriver are not both on PATH: run "
                           "scripts/chromium/ensure.sh (root, apt) to install them")
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for arg in BROWSER_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(options=options, service=Service(paths[1]))


def open_explorer(driver, page: str | Path, view: str = "provo", timeout: float = 60) -> float:
    """Load the explorer ``page`` (a folder: its index.html; or the single HTML file) at
    ``view`` and wait until its data is shown; returns the page's own ready time in ms
    (navigation start to the first tables drawn)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = Path(page).resolve()
    url = (page / "index.html" if page.is_dir() else page).as_uri() + f"#{view}"
    driver.get("about:blank")  # a fresh load even where only the view (#hash) differs
    driver.get(url)
    deadline = time.monotonic() + timeout
    ready = WebDriverWait(driver, timeout).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready")
        or (d.find_element(By.ID, "status").text.startswith("Error") and "error")
    )
    if ready == "error" or time.monotonic() > deadline:
        raise RuntimeError(f"the explorer at {url} did not load: "
                           f"{driver.find_element(By.ID, 'status').text}")
    return float(ready)
