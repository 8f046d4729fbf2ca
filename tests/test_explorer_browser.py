"""The explorer of a tiny run, in a real browser (headless Chromium through its WebDriver).

One Snakemake run: the tiny model on Provo passage 1, sampled and enumerated, and the tiny GPT-2
on two ASSET inputs; the workflow's ``explorer`` rule writes ``results/explorer``. The test
opens it from disk, sorts the contexts by a system's TVD, opens the first context and checks that
every bar shows the number of the tables (the humans' response shares, the sampled system's word
shares, the exact system's enumerated masses and unresolved mass, the failures by reason), then
opens an input of the production view and checks its texts and distance histograms, and finds the
explorer running inside the Snakemake report (its one-file copy, `results/explorer.html`). A screenshot
of each view is kept in ``results/explorer/screenshots/`` of the run.

``scripts/chromium/ensure.sh`` installs Debian's chromium and chromium-driver when missing (root,
apt). CI (``CI=true``) must run this: a browser that cannot be had fails the test; elsewhere it is
skipped.
"""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from helpers import REPO, TINY_EXACT, job_logs, snakemake, write_config, write_production_config

from varprobe import tables

pytestmark = pytest.mark.slow  # a Snakemake run and a browser

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium WebDriver (installed first when missing)."""
    from varprobe.explorer.browser import browser_paths, headless_chromium

    if browser_paths() is None:
        run = subprocess.run(["timeout", "-k", "10", "900", "bash", str(REPO / "scripts/chromium/ensure.sh")],
                             capture_output=True, text=True)
        if run.returncode != 0 or browser_paths() is None:
            message = f"no headless Chromium: scripts/chromium/ensure.sh failed:\n{run.stdout}\n{run.stderr}"
            if IN_CI:
                pytest.fail(f"CI must run the browser tests, but {message}")
            pytest.skip(message)
    try:
        import selenium  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("CI must run the browser tests, but selenium is not installed "
                        "(envs/requirements-dev.txt)")
        pytest.skip("selenium is not installed (envs/requirements-dev.txt)")
    driver = headless_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def explored_run(tmp_path_factory, data_mirror, tiny_model_dir):
    """Provo passage 1 (tiny model, ancestral and exact) and two ASSET inputs (tiny GPT-2)."""
    workdir = tmp_path_factory.mktemp("explored")
    tiny = {"name": "tiny", "pretrained": str(tiny_model_dir)}
    write_production_config(workdir, data_mirror, [tiny],
                            [{"name": "asset", "prompt": "Simplify: {source}"}])
    production = yaml.safe_load((workdir / "config.yaml").read_text())["production"]
    write_config(workdir, data_mirror, [tiny], decodings=[{"name": "ancestral"}, TINY_EXACT],
                 max_tokens=5)
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["production"] = production
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr + job_logs(workdir)
    return workdir


def _bars(driver, system: str) -> list[tuple[str, float]]:
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, f'#provo-detail .dist[data-system="{system}"] .bar')
    return [(b.get_attribute("data-word"), float(b.get_attribute("data-p"))) for b in found]


def test_provo_view_sorts_by_tvd_and_shows_the_tables_numbers(explored_run, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from varprobe.explorer.browser import open_explorer

    results = explored_run / "results"
    folder = results / "explorer"
    provo = results / "provo"
    contexts = tables.read(provo / "contexts.parquet", "provo_contexts")
    open_explorer(browser, folder, "provo")
    assert browser.find_element(By.ID, "provo-count").text == f"{len(contexts)} of {len(contexts)} contexts"

    # Sort by the exact system's TVD, largest first (second click), and read the first page.
    header = browser.find_element(By.CSS_SELECTOR, 'th[data-key="tvd:tiny/exact"]')
    header.click()
    browser.find_element(By.CSS_SELECTOR, 'th[data-key="tvd:tiny/exact"]').click()
    assert browser.find_element(By.CSS_SELECTOR, 'th[data-key="tvd:tiny/exact"]').get_attribute("class") == "sorted-desc"
    exact_tvd = tables.read(provo / "tiny/exact/tvd.parquet", "provo_tvd").set_index(["text_id", "word_number"])
    rows = browser.find_elements(By.CSS_SELECTOR, "#provo-table tbody tr")
    assert len(rows) == min(100, len(contexts))
    columns = [th.get_attribute("data-key") for th in browser.find_elements(By.CSS_SELECTOR, "#provo-table th")]
    shown = []
    for row in rows:
        cells = row.find_elements(By.TAG_NAME, "td")
        key = (int(cells[0].text), int(cells[1].text))
        value = cells[columns.index("tvd:tiny/exact")].text.split()[0]
        expected = exact_tvd.loc[key, "tvd"]
        assert value == ("–" if expected != expected else f"{expected:.4f}"), key
        shown.append(expected)
    defined = [round(v, 6) for v in shown if v == v]  # the page sorts its 6-decimal numbers
    assert defined == sorted(defined, reverse=True) and defined[0] == round(exact_tvd["tvd"].max(), 6)

    # Open the first context: every bar is the tables' number.
    first = (int(rows[0].find_elements(By.TAG_NAME, "td")[0].text),
             int(rows[0].find_elements(By.TAG_NAME, "td")[1].text))
    rows[0].click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "provo-detail").get_attribute("data-context") == f"{first[0]}:{first[1]}")
    responses = tables.read(provo / "responses.parquet", "provo_responses")
    said = responses[(responses["text_id"] == first[0]) & (responses["word_number"] == first[1])]
    total = said["count"].sum()
    assert sorted(_bars(browser, "humans")) == pytest.approx(
        sorted((r, n / total) for r, n in zip(said["response"], said["count"], strict=True)))

    samples = tables.read(provo / "tiny/ancestral/samples.parquet", "provo_samples")
    mine = samples[(samples["text_id"] == first[0]) & (samples["word_number"] == first[1])]
    words = mine[~mine["failed"]].groupby("word")["count"].sum()
    sampled = _bars(browser, "tiny/ancestral")
    for word, p in sampled:
        if word != "(other words)":
            assert p == pytest.approx(words[word] / words.sum(), abs=1e-6), word
    # every draw failed: no bars; else the bars and the other words' bar make up the MLE
    assert sum(p for _, p in sampled) == pytest.approx(1.0 if words.sum() else 0.0, abs=1e-5)
    reasons = {r.get_attribute("data-reason") for r in browser.find_elements(
        By.CSS_SELECTOR, '#provo-detail .dist[data-system="tiny/ancestral"] tr[data-reason]')}
    assert reasons == set(mine.loc[mine["failed"], "failure"])

    distribution = tables.read(provo / "tiny/exact/distribution.parquet", "provo_distribution")
    mine = distribution[(distribution["text_id"] == first[0]) & (distribution["word_number"] == first[1])]
    masses = dict(zip(mine["word"], mine["probability"], strict=True))
    exact = dict(_bars(browser, "tiny/exact"))
    assert exact.pop("(unresolved)") == pytest.approx(mine["unresolved_mass"].iloc[0], abs=1e-6)
    exact.pop("(other words)", None)
    assert exact and all(p == pytest.approx(masses[w], abs=1e-6) for w, p in exact.items())
    corpus = contexts.set_index(["text_id", "word_number"]).loc[first, "corpus_word"]
    marked = browser.find_elements(By.CSS_SELECTOR, "#provo-detail .bar.corpus")
    assert {b.get_attribute("data-word") for b in marked} == {corpus}

    shown_bars = {s: _bars(browser, s) for s in ("humans", "tiny/ancestral", "tiny/exact")}
    shots = folder / "screenshots"
    shots.mkdir(exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0); document.querySelector('.tablewrap').scrollLeft = 0;")
    assert browser.save_screenshot(str(shots / "provo.png"))
    assert (shots / "provo.png").stat().st_size > 20_000

    # The report's copy, one file with the chunks inline, opens the same context the same way.
    open_explorer(browser, results / "explorer.html", "provo")
    assert browser.find_element(By.ID, "provo-count").text == f"{len(contexts)} of {len(contexts)} contexts"
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#provo-table tbody tr")
               if [c.text for c in r.find_elements(By.TAG_NAME, "td")[:2]] == [str(first[0]), str(first[1])])
    row.click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "provo-detail").get_attribute("data-context") == f"{first[0]}:{first[1]}")
    assert {s: _bars(browser, s) for s in shown_bars} == shown_bars


def test_production_view_shows_an_inputs_texts_and_distances(explored_run, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from varprobe.explorer.browser import open_explorer

    results = explored_run / "results"
    system = results / "production/asset/tiny/top-k-30"
    open_explorer(browser, results / "explorer", "production")
    instances = tables.read(results / "production/asset/instances.parquet", "production_instances")
    assert browser.find_element(By.ID, "prod-count").text == f"{len(instances)} of {len(instances)} inputs"
    Select(browser.find_element(By.ID, "prod-probe")).select_by_visible_text("lexical-1")

    # Sort by W1(C, H), largest first, and open the first input.
    browser.find_element(By.CSS_SELECTOR, '#prod-table th[data-key="w1_C_H"]').click()
    browser.find_element(By.CSS_SELECTOR, '#prod-table th[data-key="w1_C_H"]').click()
    divergences = tables.read(system / "divergences.parquet", "production_divergences")
    lexical = divergences[divergences["probe"] == "lexical-1"].set_index("input_id")
    rows = browser.find_elements(By.CSS_SELECTOR, "#prod-table tbody tr")
    shown = [lexical.loc[r.find_elements(By.TAG_NAME, "td")[0].text, "w1_C_H"] for r in rows]
    assert shown == sorted(shown, reverse=True)
    input_id = rows[0].find_elements(By.TAG_NAME, "td")[0].text
    rows[0].click()
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "prod-detail").get_attribute("data-input") == input_id)

    instance = instances.set_index("input_id").loc[input_id]
    shown_refs = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#prod-detail ol.references li")]
    assert shown_refs == [r.strip() for r in instance["references"]]
    samples = tables.read(system / "samples.parquet", "production_samples")
    drawn = samples[samples["input_id"] == input_id].sort_values("sample_index")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#prod-detail ol.samples li")) == len(drawn)
    distances = tables.read(system / "distances.parquet", "production_distances")
    pairs = distances[(distances["input_id"] == input_id) & (distances["probe"] == "lexical-1")]
    pairs = pairs.dropna(subset=["distance"])
    for kind in ("H", "M", "C"):
        hist = browser.find_element(By.CSS_SELECTOR, f'#prod-detail .hist[data-kind="{kind}"]')
        assert int(hist.get_attribute("data-n")) == int((pairs["kind"] == kind).sum()), kind
        assert f"mean {pairs.loc[pairs['kind'] == kind, 'distance'].mean():.4f}" in hist.text

    shots = results / "explorer/screenshots"
    shots.mkdir(exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0);")
    assert browser.save_screenshot(str(shots / "production.png"))
    assert (shots / "production.png").stat().st_size > 20_000


def test_the_report_holds_the_explorer_and_it_runs_there(explored_run, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    run = snakemake(explored_run, "--report", "report.html")
    assert run.returncode == 0, run.stdout + run.stderr
    browser.get("about:blank")
    browser.get((explored_run / "report.html").as_uri())
    wait = WebDriverWait(browser, 60)
    wait.until(lambda d: d.find_elements(By.XPATH, "//span[text()='Explorer']"))[0].click()
    entry = wait.until(lambda d: d.find_elements(By.XPATH, "//td[contains(text(), 'explorer.html')]"))[0]
    entry.find_element(By.XPATH, "./..").find_elements(By.TAG_NAME, "a")[0].click()  # view it
    frame = wait.until(lambda d: d.find_elements(By.TAG_NAME, "iframe"))[0]
    browser.switch_to.frame(frame)
    try:
        wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        contexts = tables.read(explored_run / "results/provo/contexts.parquet", "provo_contexts")
        assert browser.find_element(By.ID, "provo-count").text == f"{len(contexts)} of {len(contexts)} contexts"
    finally:
        browser.switch_to.default_content()
