"""The web view in a real browser: Debian's chromium, headless, driven by Selenium through Debian's
chromedriver, against `soundstage run` (the patch of WebViewBrowserTests: a stopped player `deck`, an
audioplayer `src` playing in the environment `env`, a reverb `verb`, the outputs connected to JACK).

Opens the page at / (as a browser asking for HTML gets it) and at /view, then checks, each failing with a
message that says what was expected and what the page showed:
  (a) every node of the patch is drawn in the graph, and the JACK ports the outputs connect to;
  (b) pressing deck's play button makes it play, as plain OSC (python-osc) reads it;
  (c) deck's meter changes while it plays (several readings over 1 s, all above -160 dBFS, not all equal);
  (d) a source moved over OSC (/node/src/position) moves on the top view, in the right direction.
Then saves a screenshot. Every wait polls with a generous deadline (a loaded two-core machine).

Usage: python3 web_view_check.py HTTP_PORT OSC_PORT SCREENSHOT.png
Prints figures and OK, and exits 0 when every check passed; exits 1 with the reason otherwise.
"""
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from osc_session import Client  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

http_port = int(sys.argv[1])
osc_port = int(sys.argv[2])
screenshot = sys.argv[3]
NODES = ["deck", "verb", "src", "env", "main", "output"]


class CheckFailed(Exception):
    pass


def poll(what, probe, timeout=20.0, interval=0.1):
    """Calls `probe` until it returns something truthy; fails naming `what` and the last value seen."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = probe()
        except Exception as error:  # the page may be redrawing: an element went stale, try again
            last = f"{type(error).__name__}: {error}"
            value = None
        else:
            value = last
        if value:
            return value
        time.sleep(interval)
    raise CheckFailed(f"{what} (waited {timeout:.0f} s; last seen: {last!r})")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1200", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The system chromedriver: Selenium Manager must not try to download one.
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def graph_texts(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('svg[data-graph] text')].map(t => t.textContent)")


def meter_peak(driver, node):
    value = driver.execute_script(
        "const m = document.querySelector(`[data-meter=\"${arguments[0]}\"]`); return m ? m.dataset.peak : null", node)
    return None if value is None else float(value)


def source_position(driver, name):
    dot = driver.find_element(By.CSS_SELECTOR, f'svg[data-scene] circle[data-source="{name}"]')
    return float(dot.get_attribute("cx")), float(dot.get_attribute("cy"))


def check(driver, osc):
    # A browser asking for / gets the page too (OSCQuery clients asking for JSON get the tree).
    driver.get(f"http://127.0.0.1:{http_port}/")
    poll("the page at / (a browser asks for HTML) to connect",
         lambda: driver.find_element(By.ID, "connection").get_attribute("data-state") == "connected")
    driver.get(f"http://127.0.0.1:{http_port}/view")
    poll("the page to connect its WebSocket (#connection data-state=connected)",
         lambda: driver.find_element(By.ID, "connection").get_attribute("data-state") == "connected")

    # (a) Every node of the patch is drawn, and the JACK ports the outputs connect to.
    def all_drawn():
        texts = set(graph_texts(driver))
        return texts if all(n in texts for n in NODES) else None
    try:
        texts = poll("every node name in the graph SVG", all_drawn)
    except CheckFailed as failure:
        raise CheckFailed(f"(a) the patch's nodes are not all drawn: expected {NODES} among the graph's "
                          f"labels: {failure}")
    ports = poll("(a) the JACK ports out_1/out_2 connect to (system:playback_1 and _2) in the graph",
                 lambda: driver.find_elements(By.CSS_SELECTOR, 'svg[data-graph] [data-port^="system:playback_"]'))
    print(f"(a) graph shows {sorted(n for n in NODES if n in texts)} and {len(ports)} JACK playback ports")

    # (b) The play button plays: checked over plain OSC, not in the page.
    assert osc.request("/node/deck/playing").params == [False], "deck should start stopped"
    before = poll("deck's meter before play", lambda: [meter_peak(driver, "deck")] if meter_peak(driver, "deck") is not None else None)[0]
    def press_play():
        # Found again on each try: a graph refresh may have redrawn the strip.
        driver.find_element(By.CSS_SELECTOR, 'button[data-node="deck"][data-action="play"]').click()
        return True
    poll("deck's play button to be pressed", press_play, timeout=10)
    try:
        poll("/node/deck/playing to answer T after pressing play",
             lambda: osc.request("/node/deck/playing").params == [True], timeout=15, interval=0.2)
    except CheckFailed as failure:
        raise CheckFailed(f"(b) pressing play did not make deck play: {failure}")
    print(f"(b) play pressed: /node/deck/playing is T (meter before: {before} dBFS)")

    # (c) The meter changes while audio plays: readings over 1 s, all above silence, not all the same.
    try:
        poll("deck's meter above -160 dBFS", lambda: (meter_peak(driver, "deck") or -160) > -160, timeout=15)
    except CheckFailed as failure:
        raise CheckFailed(f"(c) deck's meter never left silence while playing: {failure}")
    counter = "return window.soundstageView.meterUpdates"
    count0, t0 = driver.execute_script(counter), time.time()
    readings = []
    for _ in range(11):
        readings.append(meter_peak(driver, "deck"))
        time.sleep(0.1)
    rate = (driver.execute_script(counter) - count0) / (time.time() - t0)
    if not all(r is not None and r > -160 for r in readings) or len(set(readings)) < 2:
        raise CheckFailed(f"(c) deck's meter did not move while playing: data-peak over 1 s was {readings}")
    print(f"(c) deck's peak over 1 s: {readings} dBFS; {rate:.1f} meter bundles per second reached the page")

    # (d) A source moved over OSC moves on the top view: +x is right, +z is down the page.
    start = poll("src drawn on env's top view", lambda: source_position(driver, "src"))
    osc.send("/node/src/position", 4.0, 0.0, 2.0)
    try:
        moved = poll("src's dot to move right and down",
                     lambda: (lambda p: p if p[0] > start[0] + 1 and p[1] > start[1] + 1 else None)(
                         source_position(driver, "src")), timeout=15)
    except CheckFailed as failure:
        raise CheckFailed(f"(d) src moved from (-2, 0, -3) to (4, 0, 2) over OSC, but its dot on the top view "
                          f"did not move right and down from cx,cy={start}: {failure}")
    print(f"(d) src moved on the top view from {start} to {moved}")

    # A moment for the notifications and meters to settle in the picture.
    time.sleep(1.0)
    driver.save_screenshot(screenshot)
    print(f"screenshot: {screenshot}")
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if severe:
        raise CheckFailed(f"the page logged errors: {severe}")


def main():
    osc = Client(osc_port)
    driver = browser()
    try:
        check(driver, osc)
    except (CheckFailed, AssertionError) as failure:
        try:
            driver.save_screenshot(screenshot)
            print(f"screenshot of the failure: {screenshot}")
            for entry in driver.get_log("browser"):
                print("browser:", entry)
        except Exception:
            pass
        print(f"FAILED: {failure}")
        sys.exit(1)
    finally:
        driver.quit()
    print("OK")


main()
