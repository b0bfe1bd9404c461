"""pytest's side of the course's CTest conventions, for lesson 10's suite (test_lesson10.py).

- A run in which every test skipped (no GPU, no CuPy) prints GS_TEST_SKIPPED and the reasons:
  the CTest tests match it with SKIP_REGULAR_EXPRESSION, so CTest reports a skip, not a pass.
- --gs-expect-failure: the test of the tests (lesson10.exercise_fails). The shipped exercise must
  fail its suite: the run passes when at least one test failed, fails when every test passed,
  and says which.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--gs-expect-failure",
        action="store_true",
        help="pass only if some test fails (the shipped exercise must fail its suite)",
    )


def _counts(session: pytest.Session) -> dict[str, int]:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    return {kind: len(stats.get(kind, [])) for kind in ("passed", "failed", "skipped", "error")}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    counts = _counts(session)
    session.config._gs_counts = counts  # for the summary below
    if not session.config.getoption("--gs-expect-failure"):
        return
    if counts["failed"] + counts["error"] > 0:
        session.exitstatus = 0
    elif counts["passed"] == 0 and counts["skipped"] > 0:
        session.exitstatus = 0
    else:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    counts = getattr(config, "_gs_counts", None)
    if counts is None:
        return
    failed = counts["failed"] + counts["error"]
    if counts["passed"] == 0 and failed == 0 and counts["skipped"] > 0:
        reasons = sorted(
            {str(report.longrepr[-1]) for report in terminalreporter.stats.get("skipped", [])}
        )
        terminalreporter.write_line(
            f"GS_TEST_SKIPPED: every one of the {counts['skipped']} tests skipped: "
            + "; ".join(reasons)
        )
    if config.getoption("--gs-expect-failure"):
        if failed > 0:
            terminalreporter.write_line(
                f"ok: the shipped exercise fails {failed} test(s) as it must "
                f"({counts['passed']} pass, {counts['skipped']} skipped)"
            )
        elif counts["passed"] > 0:
            terminalreporter.write_line(
                f"FAIL: the shipped exercise PASSES its suite ({counts['passed']} passed): the "
                "tests cannot tell an unsolved exercise from a solved one"
            )
