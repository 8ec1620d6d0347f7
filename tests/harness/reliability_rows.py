"""The rows of docs/RELIABILITY.md: each fault or bad input tried, and the test that proves it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One fault or bad input, what must happen, what the test observed, and that test."""

    area: str
    fault: str
    expected: str
    observed: str
    test: str  # tests/harness/<file>.py::<test function>


H = "tests/harness/"

ROWS: tuple[Row, ...] = (
    # -- isolation of the user's tree ------------------------------------------------------
    Row("isolation", "a normal run, a failing run and a red baseline",
        "user tree and .git byte-identical but for .mutharness/ and named outputs",
        "every file and mode in the tree and .git hashed before and after: identical",
        H + "test_workspace.py::"
        "test_a_passing_run_leaves_tree_and_git_dir_byte_identical_but_for_run_dir_and_named_output"),
    Row("isolation", "a red baseline (exit 2)", "tree identical, no workspace left",
        "tree and .git identical; no mh-* directory under TMPDIR",
        H + "test_workspace.py::test_a_red_baseline_leaves_tree_and_git_dir_identical_and_no_workspace"),
    Row("isolation", "repository hooks (23 names), a global core.hooksPath, an fsmonitor",
        "none runs", "no marker written; a control commit shows the hooks are live",
        H + "test_isolation.py::test_no_repository_hook_global_hook_or_fsmonitor_runs_during_a_verify"),
    Row("isolation", "a shallow clone as the source", "verified; its .git untouched",
        "exit 0; .git identical",
        H + "test_workspace.py::test_a_shallow_clone_is_verified_and_its_git_dir_is_not_touched"),
    Row("isolation", "a dirty tree", "refused before anything runs, changes listed (exit 2)",
        "exit 2, modified and untracked files listed, no baseline line",
        H + "test_workspace.py::test_a_dirty_tree_is_refused_listing_its_changes_before_anything_runs"),
    Row("isolation", "--allow-dirty", "uncommitted bytes included and recorded; tree untouched",
        "results record dirty: true and the changes; tree identical",
        H + "test_workspace.py::"
        "test_allow_dirty_runs_the_uncommitted_bytes_records_them_and_leaves_them_untouched"),
    Row("isolation", "a test run that leaves a file in the workspace",
        "UNTRUSTWORTHY; the workspace is reset before the next mutation",
        "UNTRUSTWORTHY naming litter.txt; the next mutation CAUGHT on a clean workspace",
        H + "test_workspace.py::"
        "test_a_run_that_litters_the_workspace_is_untrustworthy_and_the_next_starts_clean"),
    Row("isolation", "a reset after litter when the baseline itself added cache files",
        "the reset puts back the baseline's files", "the next mutation CAUGHT, no abort",
        H + "test_workspace.py::test_a_reset_after_litter_puts_back_what_the_baseline_added"),
    # -- environment ---------------------------------------------------------------------
    Row("environment", "git missing from PATH", "one clear line, exit 2", "exit 2, no traceback",
        H + "test_isolation.py::test_without_git_on_PATH_verify_exits_2_with_one_clear_line"),
    Row("environment", "not a git repository", "one clear line, exit 2", "exit 2, no traceback",
        H + "test_isolation.py::test_outside_a_git_repository_verify_exits_2_with_one_clear_line"),
    Row("environment", "unborn HEAD", "one clear line, exit 2", "exit 2, no traceback",
        H + "test_isolation.py::test_an_unborn_HEAD_makes_verify_exit_2_with_one_clear_line"),
    Row("environment", "a git planted in the repository root, '.' on PATH", "never runs",
        "no marker written; a control run shows it would run",
        H + "test_isolation.py::test_a_git_planted_in_the_repository_never_runs_even_with_dot_on_PATH"),
    Row("environment", "a second verify on the same repository (two processes)",
        "waits --lock-timeout, then exit 2 naming pid, host, start time",
        "exit 2 with the holder's pid, host and start; the first exits 0",
        H + "test_lock.py::"
        "test_a_second_verify_gives_up_after_its_lock_timeout_naming_the_holder_pid_host_and_start"),
    Row("environment", "an interpreter without pytest", "exit 2 with the install command",
        "exit 2, message names the pip command",
        H + "test_runner.py::test_an_interpreter_without_pytest_is_refused_with_the_install_command"),
    Row("environment", "PYTEST_ADDOPTS, PYTEST_PLUGINS, GIT_* in the environment",
        "never reach the tests", "a test that fails on seeing them passes",
        H + "test_runner.py::test_the_command_line_keeps_pytest_and_git_variables_away_from_the_tests"),
    Row("environment", "an editable install (.pth) shadowing the workspace",
        "refused naming module, file and sys.path entry (exit 2)",
        "exit 2 with all three named",
        H + "test_shadowing.py::"
        "test_a_pth_file_pointing_at_the_users_tree_is_refused_naming_module_file_and_entry"),
    Row("environment", "an editable-install finder (import hook)", "refused as an import hook",
        "exit 2 naming the import hook",
        H + "test_shadowing.py::test_an_editable_install_finder_is_refused_as_an_import_hook"),
    # -- verdict integrity -----------------------------------------------------------------
    Row("verdicts", "same-length mutations back to back (stale bytecode trap)",
        "each mutation's own code runs", "all CAUGHT by their named tests",
        H + "test_runner.py::test_same_length_mutations_back_to_back_each_run_their_own_code"),
    Row("verdicts", "the project's own -x / --maxfail", "mutation runs are not cut short",
        "CAUGHT, not UNTRUSTWORTHY",
        H + "test_runner.py::test_the_projects_own_exitfirst_option_does_not_cut_mutation_runs_short"),
    Row("verdicts", "pytest-randomly installed", "order fixed (disabled)",
        "order-dependent tests pass; a control shows the plugin reorders",
        H + "test_runner.py::test_the_child_runs_in_file_order_with_no_injected_variables_and_its_output_in_a_file"),
    Row("verdicts", "an import-breaking mutation, an os._exit, an infinite loop",
        "UNTRUSTWORTHY / TIMEOUT, never evidence; the run goes on (exit 2)",
        "no CAUGHT or SURVIVED among them; later mutations still run",
        H + "test_verify_cli.py::"
        "test_untrustworthy_and_timed_out_runs_are_never_evidence_and_the_run_goes_on"),
    Row("verdicts", "a test that fails one run in three (flaky baseline)",
        "--baseline-runs 3 reports it unstable, exit 2, no mutation runs",
        "exit 2 naming the test; no mutation results",
        H + "test_flaky_baseline.py::test_three_baseline_runs_expose_a_test_that_fails_one_run_in_three"),
    Row("verdicts", "a red baseline", "refused with counts and failing ids (exit 2)",
        "exit 2 with pass/fail counts and the failing id",
        H + "test_baseline.py::"
        "test_a_failing_test_makes_the_baseline_refused_with_counts_and_ids_on_the_command_line"),
    Row("verdicts", "a skipped test in the baseline", "baseline incomplete (exit 2)",
        "exit 2", H + "test_baseline.py::test_a_skipped_test_makes_the_baseline_incomplete"),
    # -- interrupts ----------------------------------------------------------------------
    Row("interrupts", "SIGINT while a mutant runs",
        "exit 130; child tree killed; workspace removed; lock released; tree identical",
        "all five observed; results marked interrupted",
        H + "test_interrupt.py::test_ctrl_c_while_a_mutant_runs_exits_130_and_cleans_up_everything"),
    Row("interrupts", "SIGTERM while the baseline runs", "exit 143, same cleanup",
        "all observed", H + "test_interrupt.py::"
        "test_sigterm_while_the_baseline_runs_exits_143_and_cleans_up_everything"),
    Row("interrupts", "SIGINT while the workspace is built", "git finishes, then cleanup, 130",
        "no git child left; workspace removed; exit 130",
        H + "test_interrupt.py::"
        "test_ctrl_c_while_the_workspace_is_built_waits_for_git_then_cleans_up_and_exits_130"),
)
