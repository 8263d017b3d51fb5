"""The operator console in a real headless browser (Debian's chromium, driven by selenium),
against the real stack: planner (approval per step), executor bridge on the simulator, console.

Sending a task from the form shows, at the first approval, the whole plan and the goal's
conditions, the goal and the queue awaiting approval, the namespace and the times; Approve
executes the step and its condition ticks; an ended goal folds to one line; Deny ends the goal
with approval_denied; Cancel ends a goal; past goals come from the trace, one line each with
their reason. A screenshot of the console at an approval is saved to
test/artifacts/console_mid_plan.png (docs/console.png is a copy)."""
from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

import pytest

from helpers.processes import ros_node

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="needs Debian's chromium and chromium-driver (`make test` installs them with apt-get where it can, "
           "as root; `apt-get install chromium chromium-driver` otherwise)")


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    # its temporary files (the profile, the singleton socket) in pytest's folder, not left in /tmp
    service = Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": str(tmp_path)})
    driver = webdriver.Chrome(service=service, options=options)
    yield driver
    driver.quit()


def open_console(browser, console):
    """The console's page in ``browser`` once it hears the planner: (a waiter, send(task)), where
    send types the task into the form and sends it with method interpret."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(re.search(r"console at (http://\S+)", console.output).group(1))
    wait = WebDriverWait(browser, 120, ignored_exceptions=[StaleElementReferenceException])
    wait.until(EC.text_to_be_present_in_element((By.ID, "link"), "planner up"))

    def send(task: str) -> None:
        browser.find_element(By.ID, "task").clear()
        browser.find_element(By.ID, "task").send_keys(task)
        Select(browser.find_element(By.ID, "method")).select_by_visible_text("interpret")
        browser.find_element(By.ID, "send").click()
    return wait, send


def test_the_console_sends_a_goal_streams_its_steps_and_answers_approvals(browser):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    ns = f"/console_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, "serving action 'execute_skill'"), \
            ros_node("planner_node", ns, "planner ready", "approval:=step", "approval_timeout_s:=300.0",
                     "max_steps:=4", "interpret_confidence:=0.0"), \
            ros_node("console_node", ns, "console at", "port:=0") as console:
        wait, send = open_console(browser, console)

        def click(selector: str, tries: int = 20) -> None:
            """Click what ``selector`` finds now (the page redraws a goal's card when it changes)."""
            for _ in range(tries):
                try:
                    wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, selector))).click()
                    return
                except StaleElementReferenceException:
                    continue
            raise AssertionError(f"{selector} kept changing under the click")

        def pending_approval():
            return wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, ".approval button.approve")))

        assert browser.find_element(By.ID, "ns").text == ns   # the stack's namespace in the header
        # 1. the form sends the task; the first step waits for the operator, with the whole plan shown
        send("Turn on light")
        approve = pending_approval()
        card = browser.find_element(By.CSS_SELECTOR, ".approval")
        shown = card.find_element(By.CSS_SELECTOR, "li code").text
        assert shown.startswith("[") and "light" in card.text.lower()
        # the goal's card, read in the page in one go (it is redrawn whenever the goal changes)
        goal_id, goal_text, pending, plan, next_line, conds, unmet, when = browser.execute_script(
            "const g = document.querySelector('.goal'); const p = g.querySelector('.pending');"
            "const q = s => [...g.querySelectorAll(s)].map(e => e.textContent);"
            "return [g.dataset.goalId, g.innerText, p ? p.innerText : '', q('ol.plan li code'),"
            " q('ol.plan li.next code'), q('.conds code'), q('.conds code.unmet'), q('.when')];")
        assert "Turn on light" in goal_text and "awaiting_approval" in goal_text
        assert f"waiting for approval: {shown}" in pending
        assert plan and plan[0] == shown and next_line == [shown], plan   # Fast Downward's whole plan, first step next
        # the conditions, each ticked or not: the plan's first step is still to come, so one does not hold
        assert any(c.startswith("(on light") for c in conds) and unmet and set(unmet) <= set(conds), conds
        assert re.search(r"\d+:\d+:\d+", when[0]), when   # accepted at
        queue = browser.find_element(By.ID, "queue")
        assert "Turn on light" in queue.text and "awaiting_approval" in queue.text   # the queue says so too
        assert "(on light" in browser.find_element(By.ID, "tracker").text   # progress against the conditions
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "console_mid_plan.png"))
        # 2. Approve: the step runs on the simulator and its row appears, executed
        approve.click()
        executed = (By.CSS_SELECTOR, f'.goal[data-goal-id="{goal_id}"] tr.step td.ok')
        wait.until(EC.presence_of_element_located(executed))
        row = browser.execute_script(
            "const g = document.querySelector(`.goal[data-goal-id='${arguments[0]}']`);"
            "return g.querySelector('tr.step').textContent;", goal_id)
        assert shown in row and "executed" in row
        wait.until(lambda _: "succeeded" in browser.find_element(
            By.CSS_SELECTOR, f'.goal[data-goal-id="{goal_id}"] .status').text)
        folded, met, unmet = browser.execute_script(
            "const g = document.querySelector(`.goal[data-goal-id='${arguments[0]}']`);"
            "const n = s => g.querySelectorAll(s).length;"
            "return [!g.open, n('.conds code.met'), n('.conds code.unmet')];", goal_id)
        assert folded and met >= 1 and unmet == 0   # ended: one line; every condition ticked
        # past goals come from the planner's trace log, one line each with the reason
        wait.until(EC.text_to_be_present_in_element((By.ID, "history"), "goal_reached"))
        past = browser.execute_script("return [...document.querySelectorAll('#history details.past')]"
                                      ".map(d => [d.open, d.querySelector('summary').innerText]);")
        assert past and not past[0][0] and "Turn on light" in past[0][1] and "goal_reached" in past[0][1]

        # 3. a second goal: its first step waits, its whole plan shown beside the first goal, folded
        send("Watch TV")
        pending_approval()
        wait.until(lambda _: len(browser.find_elements(By.CSS_SELECTOR, ".goal[open] ol.plan li")) >= 2)
        browser.save_screenshot(str(ARTIFACTS / "console_mid_plan.png"))   # the README's docs/console.png
        # Deny ends it
        browser.find_element(By.CSS_SELECTOR, ".approval input.reason").send_keys("not now")
        browser.find_element(By.CSS_SELECTOR, ".approval button.deny").click()
        wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".goal .status"), "aborted"))
        # read in the page, in one go: the card may be redrawn between two reads from here
        denied_id, denied_text = browser.execute_script(
            "const g = document.querySelector('.goal'); return [g.dataset.goalId, g.textContent];")
        assert denied_id != goal_id
        assert "approval_denied" in denied_text and "not now" in denied_text
        assert not browser.find_elements(By.CSS_SELECTOR, ".approval")
        assert "error" not in browser.find_element(By.ID, "message").text.lower()

        # 4. Cancel: a third goal waits for its approval; the goal card's Cancel ends it
        send("Turn on light")
        pending_approval()
        third_id = browser.execute_script("return document.querySelector('.goal').dataset.goalId;")
        assert third_id not in (goal_id, denied_id)
        click(f'.goal[data-goal-id="{third_id}"] button.cancel')
        wait.until(lambda _: "canceled" in browser.find_element(
            By.CSS_SELECTOR, f'.goal[data-goal-id="{third_id}"] .status').text)
        assert not browser.find_elements(By.CSS_SELECTOR, ".approval")


def test_the_console_confirms_or_declines_an_interpreted_goal(browser):
    """Issue 37: under interpret_confirm always the interpreted goal waits for the operator; the
    console shows it in words and lines with its confidence and alternatives; Confirm runs it to
    goal_reached, Decline ends it goal_declined with the operator's reason. Issue 38: a hazardous
    goal is refused unasked, its hazard on the goal's line."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    ns = f"/confirm_console_{uuid.uuid4().hex[:6]}"
    with ros_node("executor_bridge", ns, "serving action 'execute_skill'"), \
            ros_node("planner_node", ns, "planner ready", "interpret_confirm:=always", "approval_timeout_s:=300.0"), \
            ros_node("console_node", ns, "console at", "port:=0") as console:
        wait, send = open_console(browser, console)
        send("Watch TV")
        confirm = wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, ".approval button.approve")))
        card, pending = browser.execute_script(
            "return [document.querySelector('.approval').innerText,"
            " (document.querySelector('.goal .pending') || {innerText: ''}).innerText];")
        assert "Confirm this goal?" in card and "Watch TV" in card and "confidence: " in card, card
        assert "(on television_410)" in card and "The television is on." in card, card
        assert confirm.text == "Confirm" and "waiting for confirmation of the goal" in pending, pending
        confirm.click()
        wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".goal .status"), "succeeded"))
        wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".goal"), "goal_reached"))
        assert not browser.find_elements(By.CSS_SELECTOR, ".approval")

        send("Watch TV")
        wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, ".approval button.deny")))
        browser.find_element(By.CSS_SELECTOR, ".approval input.reason").send_keys("not the TV")
        browser.find_element(By.CSS_SELECTOR, ".approval button.deny").click()
        wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".goal .status"), "aborted"))
        ended = browser.execute_script("return document.querySelector('.goal').textContent;")
        assert "goal_declined" in ended and "not the TV" in ended, ended

        # issue 38: a hazardous interpreted goal is refused before anyone is asked; the hazard shows
        send("Put the phone in the sink")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ".goal .hazards")))
        ended = browser.execute_script("return document.querySelector('.goal').textContent;")
        assert "hazardous_goal" in ended and "electrical_shock: an electrical device inside a sink" in ended, ended
        assert not browser.find_elements(By.CSS_SELECTOR, ".approval")
