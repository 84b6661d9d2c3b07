"""Make docs/plate.png, the README's picture of the plate, from a built page with the system's Chromium:
python docs/screenshot.py [site/index.html]."""
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

PAGE = Path(sys.argv[1] if len(sys.argv) > 1 else "site/index.html").resolve()
OUT = Path(__file__).resolve().parent / "plate.png"

with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1100, "height": 1000}, color_scheme="light")
    page.goto(PAGE.as_uri())
    page.wait_for_function("document.documentElement.dataset.ready === 'true'", polling=100)
    page.wait_for_timeout(500)  # the first screen: title, question, Figure 1 and its three controls
    page.screenshot(path=str(OUT), clip={"x": 0, "y": 0, "width": 1100, "height": 1000})
    browser.close()
print(f"wrote {OUT}")
