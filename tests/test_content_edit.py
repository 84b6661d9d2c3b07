"""Authors' legitimate edits (tests/content_edit.py), each made once on a copy of the shipped content and built once:
additions only, a new default model and network, and a folder with the spec's presets removed but one model. On each
copy, in this process, the shipped plate's tests that read the content and that an edit can break (SHIPPED_CHECKS, with
CONTENT pointed at the copy and its site as `site`), the Nu checker on the three pages in one go, and one open of each
edited page in Chromium. docs/testing.md says what each edit checks and why that suffices."""
import csv
import html
import importlib
import inspect
import json
import re
import subprocess
import types
from dataclasses import replace
from pathlib import Path

import pytest
from markupsafe import escape

import conftest
from conftest import ROOT, current, wait_until
from content_edit import EDITS, SPEC_PRESETS, edited_copy
from generator.source import content
from generator.site import build
from xiv4 import SHIPPED, facts, xpresets, xpage, xwords

# The edits the shipped plate's tests run on (the fourth, one model removed, is the first three's subset).
KINDS = ["additions", "new-default", "spec-removed"]
# The tests of the shipped plate that read the content, run in this process on each edited copy by what an author's
# edit can break; the others cannot depend on the content (NEVER_READ, MACHINERY), or what of them does is held by the
# browser open and the Nu check below (IN_THE_BROWSER). A file's name alone stands for all its tests.
LOADS = [  # the content loads as written, checks clean, and the prose splits at the figures' line
    "tests/test_content.py::test_real_content_loads_as_written",
    "tests/test_content.py::test_the_spec_presets_hold_the_spec_values",
    "tests/test_content.py::test_prose_is_split_at_the_figures_line",
    "tests/test_check.py::test_the_shipped_content_has_no_mistakes_and_no_warnings",
]
BUILDS = [  # the built page and CSV: files, header, terms, sources, the default's numbers, size, ids, CSP hashes
    *(f"tests/test_build.py::{t}" for t in (
        "test_build_writes_page_and_csv", "test_page_states_the_claims_of_model_md",
        "test_the_readout_states_the_claims_of_model_md", "test_page_states_the_defaults_numbers",
        "test_page_has_plate_header_terms_takeaway_and_sources", "test_default_readout_is_in_the_page",
        "test_page_is_self_contained", "test_page_fits_the_size_budget", "test_csv_has_the_agreed_columns")),
    "tests/test_render.py::test_csp_hashes_match_the_inline_scripts_and_style",
    "tests/test_charts.py::test_every_id_in_the_built_page_is_unique",
    "tests/test_page_modes.py::test_page_fetches_nothing_by_itself",
    "tests/test_page_modes.py::test_policy_is_strict",
    "tests/test_page_modes.py::test_every_term_is_linked_once_from_the_prose_to_its_definition",
    "tests/test_custom.py::test_prose_gives_the_default_s_sharding_numbers_from_the_model",
]
CHOICES = [  # every preset the content offers, through the facts, the CSV, the words and the figures, in Python
    "tests/test_facts.py", "tests/test_model.py::test_seed_rounding_matches_non_embedding_parameters",
    "tests/test_texts.py::test_every_selections_words_say_the_facts_numbers",
    "tests/test_texts.py::test_a_wrong_number_in_a_sentence_fails_the_check",
    "tests/test_texts.py::test_a_wrong_number_in_a_title_fails_the_check",
    "tests/test_render.py::test_readouts_and_descriptions_agree_with_model_md_for_every_selection",
    "tests/test_render.py::test_a_selection_that_never_crosses_quotes_its_largest_replica_count",
    "tests/test_render.py::test_the_independent_checks_catch_planted_mistakes",
    *(f"tests/test_charts.py::{t}" for t in (
        "test_figures_compiled_to_vega", "test_specs_carry_no_data_values",
        "test_time_figure_is_log_log_with_both_series",
        "test_static_svg_shows_the_default_selection", "test_facts_rows_mark_crossing_and_one_sequence",
        "test_facts_rows_state_the_spec_claims", "test_static_svg_url_references_all_resolve",
        "test_nvlink_past_its_domain_is_shaded",
        "test_the_real_cluster_is_drawn_beside_the_workshop_on_figures_1_and_2",
        "test_the_communication_line_meets_the_line_it_hides_behind_at_n_star")),
    *(f"tests/test_notation.py::{t}" for t in (
        "test_descriptions_never_start_the_all_reduce_from_one_replica",
        "test_readout_says_n_star_and_the_first_power_of_two", "test_readout_states_the_spec_claims")),
    *(f"tests/test_custom.py::{t}" for t in (
        "test_values_that_overflow_the_model_together_are_refused", "test_own_facts_of_a_preset_equal_the_atlas",
        "test_zero1_fits_the_spec_selection_from_3_replicas")),
]
PROSE = ["tests/test_prose_consistency.py"]  # the prose's claims against the numbers it prints, other defaults too
HARDWARE = [  # the GPU's keys, old and new, the interconnect's name and the corrected statements, on the content's GPUs
    *(f"tests/test_interconnect_words.py::{t}" for t in (
        "test_the_old_nvlink_keys_read_as_the_new_ones", "test_a_key_under_both_names_is_one_mistake_at_the_old_one",
        "test_with_mi300x_as_the_workshop_s_gpu_nvlink_is_named_nowhere_for_it",
        "test_a_default_gpu_the_prose_does_not_describe_is_warned_about_at_its_line",
        "test_the_corrected_statements_are_the_formulas_on_the_presets")),
]


def _expand(names: list[str]) -> list[str]:
    """Each file named alone, as its test functions (module::test), the others as they are."""
    out = []
    for name in names:
        if "::" in name:
            out.append(name)
            continue
        module = importlib.import_module(Path(name).stem)
        out += [f"{name}::{n}" for n, o in vars(module).items()
                if n.startswith("test_") and inspect.isfunction(o) and o.__module__ == module.__name__]
    return out


SHIPPED_CHECKS = _expand([*LOADS, *BUILDS, *CHOICES, *PROSE, *HARDWARE])
# The browser suites' tests whose content side the checks here hold: the Nu checker on the three edited pages
# (test_the_edited_pages_pass_the_nu_checker) and one open of each in Chromium (test_the_edited_page_opens_offline_
# and_shows_every_preset_selection: offline, no request or complaint, the figures live, a control moved to an added
# preset redraws what it changes, every workshop selection's readout, descriptions and tables as Python and MODEL.md's
# formulas give them, nothing scrolling sideways at 360 px with the content's longest names). What the rest of them
# check is the engine's markup, CSS and page code, the same for any content (docs/testing.md).
IN_THE_BROWSER = {
    "test_html_valid": ["test_nu_checker_reports_no_error"],
    "test_browser": ["test_opens_offline_with_three_live_charts_and_no_requests",
                     "test_each_control_redraws_both_figures_and_the_readout", "test_plots_against_replicas_line_up"],
    "test_page_modes": ["test_without_javascript_text_static_figures_and_tables_are_there",
                        "test_on_a_360px_phone_nothing_scrolls_sideways_figures_fit_and_controls_take_a_thumb",
                        "test_on_a_phone_every_selection_keeps_its_plots_wide_and_its_words_inside"],
    "test_accessibility": ["test_descriptions_and_tables_follow_every_selection_with_the_readouts_numbers",
                           "test_axe_finds_no_wcag_violation", "test_controls_operate_with_the_keyboard_alone",
                           "test_each_figure_is_an_image_named_by_its_caption_and_described"],
    "test_print": ["test_prints_within_the_readmes_page_budget", "test_no_figure_table_or_term_entry_is_split",
                   "test_figures_carry_the_selection_and_the_text_has_terms_and_sources",
                   "test_running_head_names_volume_and_plate_with_page_numbers", "test_figures_print_as_vector_svg",
                   "test_controls_and_screen_only_parts_are_hidden_in_print",
                   "test_printed_captions_follow_the_chosen_selection", "test_prints_without_javascript_too",
                   "test_every_figure_s_key_prints_beside_it"],
}
GUARDED = ["tests/test_html_valid.py", "tests/test_browser.py", "tests/test_page_modes.py",
           "tests/test_accessibility.py", "tests/test_print.py"]  # besides the files SHIPPED_CHECKS draws on


# The tests of those files (and of GUARDED) not run on the edited copies, by why their result cannot depend on the
# content (docs/testing.md): a test added to one of these files fails test_every_test_of_the_shipped_plate_is_run_or_
# excused until it is put in SHIPPED_CHECKS, IN_THE_BROWSER or here.
NEVER_READ = {  # the fixture content, pure functions, the spec's own inputs, the repository's content whatever it says
    "test_interconnect_words": ["test_a_share_of_a_sequence_is_in_words"],  # words of a number, no content
    "test_texts": [  # the words module's own code and cache, and mistakes and edits of their own planted in a copy
        "test_no_sentence_of_the_words_is_written_in_python_or_another_page_module",
        "test_a_sentence_copied_into_python_is_found", "test_the_readout_names_the_plate_the_content_refers_to",
        "test_a_plate_name_that_is_not_text_is_refused_with_its_line",
        "test_a_plate_of_this_volume_beyond_its_count_is_a_mistake_at_its_line",
        "test_a_plate_named_otherwise_than_by_its_id_is_a_mistake_at_its_line",
        "test_another_gpus_interconnect_names_its_own_link", "test_an_empty_interconnect_is_refused_with_its_line",
        "test_a_warm_build_takes_the_words_from_the_cache", "test_node_failing_names_the_module",
        "test_the_page_checker_reads_the_schemas_rules", "test_the_words_module_is_page_python",
        "test_the_words_memo_never_loses_what_it_is_asked_for"],
    "test_build": ["test_fixture_content_builds", "test_build_replaces_the_previous_site_it_wrote",
                   "test_a_kept_memo_redraws_figures_and_csv_only_when_presets_or_default_change",
                   "test_a_first_build_lists_the_steps_it_made_anew_and_a_later_one_none",
                   "test_a_step_still_making_something_says_so",
                   "test_a_series_asks_for_node_s_packages_once_and_warns_once"],
    "test_content": ["test_the_repository_content_holds_every_spec_preset",
                     "test_bad_bandwidth_names_file_line_and_value",
                     "test_every_mistake_is_reported_together", "test_unclosed_front_matter",
                     "test_toml_syntax_error_has_its_line",
                     "test_a_misplaced_or_second_assumptions_line_is_a_mistake_at_its_line",
                     "test_first_controls_default_to_the_first_three_and_must_name_controls"],
    "test_check": ["test_clean_content_passes_and_nothing_is_written",
                   "test_every_mistake_at_its_line_with_did_you_mean",
                   "test_a_misspelt_preset_in_a_slot_is_named_with_its_neighbours",
                   "test_a_term_written_in_its_plural_is_used_and_linked",
                   "test_unused_term_and_source_are_warned_about_by_check_and_build"],
    "test_charts": ["test_every_chart_is_valid_vega_lite", "test_static_svg_ids_are_made_unique_per_figure",
                    "test_unique_ids_renames_every_reference_with_its_id",
                    "test_the_theme_block_is_read_and_its_figure_rules_keyed_by_name"],
    "test_render": ["test_script_json_cannot_close_its_element"],
    "test_notation": ["test_num_rounds_half_up_and_separates_thousands",
                      "test_seconds_have_three_significant_figures_in_the_unit_that_suits",
                      "test_sizes_have_three_significant_figures_in_the_unit_that_suits",
                      "test_percentages_never_round_a_share_to_zero", "test_fractions_powers_and_billions",
                      "test_about_rounds_an_exact_half_up_never_to_even_in_python_and_in_the_page",
                      # the compiled formatter under node against Python, on doubles of their own
                      "test_the_page_s_formatter_writes_what_python_writes",
                      "test_the_page_s_formatter_writes_what_python_writes_at_the_edges",
                      "test_the_page_s_formatter_writes_what_python_writes_for_any_double"],
    "test_custom": ["test_each_free_input_is_checked_as_the_schema_checks_its_field",
                    "test_good_values_parse_as_toml_would",
                    "test_layer_shape_is_all_or_none_and_leaves_room_beside_the_embeddings"],
    "test_model": [  # MODEL.md's inputs, pinned; a formula broken in a copy of the fixture content
        "test_a_nan_from_a_formula_is_blamed_on_the_formula_not_on_presets_toml",
        "test_replica_axis_is_powers_of_two_to_16384", "test_compute_per_step_falls_with_replicas",
        "test_allreduce_stays_near_constant", "test_crossing_at_1024_replicas_for_8b_4m_400g",
        "test_tokens_and_sequences_per_replica_at_the_crossing", "test_nvlink_keeps_full_efficiency_at_1024",
        "test_1m_batch_crosses_at_256", "test_model_states_of_8b_exceed_one_h100",
        "test_crossing_does_not_depend_on_model_size", "test_step_and_efficiency_follow_the_max_rule",
        "test_no_crossing_is_reported_as_minus_one", "test_workshop_options_leave_every_claim_alone",
        "test_backward_only_overlap_crosses_at_472_so_512", "test_hierarchical_reduction_crosses_at_4096",
        "test_fp32_gradients_double_the_allreduce_and_cross_at_512",
        "test_a_faster_gpu_moves_the_crossing_with_its_peak",
        "test_zero_state_bytes_and_smallest_fitting_replicas",
        "test_zero3_moves_one_and_a_half_times_the_traffic",
        "test_zero_traffic_is_counted_per_piece_in_mixed_precision",
        "test_zero3_backward_only_hides_each_phase_behind_its_own_pass",
        "test_llama3_8b_buckets_are_whole_tensors_as_ddp_makes_them",
        "test_the_first_bucket_closes_at_its_own_limit", "test_a_model_without_a_shape_is_cut_in_pieces",
        "test_ring_latency_per_call_is_nccls_hand_computation",
        "test_tree_latency_per_call_is_nccls_hand_computation",
        "test_tree_correction_follows_the_size_of_the_call",
        "test_nccl_prices_ring_and_tree_and_takes_the_cheaper",
        "test_real_cluster_bandwidth_term_for_the_default_at_1024",
        "test_real_cluster_step_hides_the_buckets_behind_the_last_micro_batch_only",
        "test_bucket_cap_mb_sets_every_limit_and_unset_keeps_the_1_mib_first",
        "test_larger_buckets_make_fewer_calls_and_less_latency"],
}
MACHINERY = {  # the page's code, the same for every content; where it has a content side, IN_THE_BROWSER says what holds it
    "test_browser": [
        "test_at_load_only_the_figures_near_the_screen_go_live_and_the_others_as_the_reader_scrolls",
        "test_the_first_change_makes_every_figure_live_with_the_selection",
        "test_a_link_to_another_selection_opens_with_every_figure_live",
        "test_a_change_draws_the_figures_in_sight_and_the_others_wait_for_the_reader",
        "test_a_figure_out_of_sight_is_current_in_the_first_frame_that_shows_it",
        "test_closing_the_disclosure_brings_the_figures_it_lifts_into_sight_before_they_are_painted",
        "test_a_closed_in_words_and_numbers_is_current_when_it_is_opened",
        "test_figures_and_closed_words_out_of_sight_are_current_in_print",
        "test_a_page_printed_before_any_change_or_view_prints_without_a_complaint",
        "test_url_keeps_and_restores_the_selection",
        "test_the_url_is_written_when_the_controls_rest_or_at_once_when_the_reader_leaves_the_window",
        "test_unknown_ids_in_the_url_fall_back_to_the_default_and_the_page_says_so",
        "test_options_are_kept_in_the_url_and_restored", "test_nvlink_domain_shading_appears_only_past_the_domain",
        "test_the_timeline_follows_the_controls", "test_a_walk_of_changes_draws_what_opening_each_selection_draws",
        "test_one_click_saves_the_shown_selections_csv_offline",
        "test_the_real_clusters_controls_redraw_its_line_and_are_kept_in_the_url"],
    "test_page_modes": [
        "test_no_request_leaves_the_page_through_every_control_and_no_console_complaint",
        "test_under_the_csp_charts_draw_controls_work_and_nothing_is_blocked",
        "test_page_and_figures_follow_the_colour_scheme_with_aa_contrast",
        "test_definition_shows_on_hover_and_on_focus_and_escape_hides_it",
        "test_a_tap_shows_the_definition_and_a_second_tap_opens_the_glossary_entry"],
    "test_accessibility": [
        "test_axe_finds_no_wcag_violation_on_a_phone",
        "test_every_control_is_reachable_by_tab_with_a_visible_focus_ring",
        "test_readout_is_a_polite_live_region_that_changes_with_the_selection",
        "test_series_colours_survive_colour_blindness_and_are_not_the_only_key"],
    "test_custom": [
        "test_acceptance_custom_run_equals_python_and_survives_a_reload",
        "test_bad_values_get_an_inline_message_and_the_figures_stay", "test_the_page_checks_every_text_as_python_does",
        "test_a_bad_value_in_the_url_is_shown_and_the_default_drawn",
        "test_sharding_control_memory_readout_and_zero3_traffic",
        "test_axe_finds_no_violation_with_the_free_inputs_open_and_a_message_shown",
        "test_free_inputs_fit_a_360px_phone_and_take_a_thumb"],
    "test_print": ["test_printing_from_a_phone_or_narrow_window_redraws_figures_for_paper"],
}


PARAM = type(pytest.param(None))  # a case written pytest.param(...)


def plate_data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="plate-data">(.*?)</script>', page, re.S)[1])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each edit's copy of the shipped content and its site, made once for the run on first use: built(kind) is
    (the Edit, the built files); the site is beside the copy, in site/. Nothing may change them."""
    made = {}

    def make(kind: str, base: Path):
        edit = edited_copy(SHIPPED, base / "content", kind)
        return edit, build.build(edit.root, base / "site")

    def get(kind: str):
        if kind not in made:  # once for the whole run, whichever worker asks first
            made[kind] = conftest.made_once(tmp_path_factory, f"edit-{kind}", lambda base: make(kind, base))
        return made[kind]
    return get


@pytest.mark.parametrize("kind", list(EDITS))
def test_the_edit_shows_in_the_built_plate(built, kind):
    """What each edit adds is offered by the page and the CSV, what it removes is gone, and [default] opens the page."""
    before = content.load(SHIPPED)
    edit, files = built(kind)
    c = content.load(edit.root)
    tables = {"models": c.presets.models, "batches": c.presets.batches, "networks": c.presets.networks,
              "gpus": c.presets.gpus, "terms": c.terms, "sources": c.sources}
    old = {"models": before.presets.models, "batches": before.presets.batches, "networks": before.presets.networks,
           "gpus": before.presets.gpus, "terms": before.terms, "sources": before.sources}
    for table in tables:  # the edit added and removed exactly what it says, and kept every other entry
        added, removed = edit.added.get(table, []), edit.removed.get(table, [])
        assert set(tables[table]) == (set(old[table]) - set(removed)) | set(added), table
        assert not set(added) & set(old[table]), f"{table}: an added id collides with the content's"
    data = plate_data(files["index.html"])
    rows = list(csv.DictReader(open(edit.root.parent / "site" / c.plate.data_file, encoding="utf-8")))
    for table, key in (("models", "model"), ("batches", "batch"), ("networks", "network"), ("gpus", "gpu")):
        offered = set(data["choices"][key]) - {"custom"}
        assert offered == set(tables[table]), (key, offered)
    assert {r["model"] for r in rows} == set(c.presets.models) and {r["batch"] for r in rows} == set(c.presets.batches)
    assert {r["network"] for r in rows} == set(c.presets.networks)
    # under the workshop's GPU and options, each model on its published layout (one GPU without one): its replica
    # axis stops where its replicas' GPUs reach max_replicas
    gpus = {i: c.presets.layouts[m.layout].gpus if m.layout else 1 for i, m in c.presets.models.items()}
    axis = {i: (c.presets.workshop.max_replicas // g).bit_length() for i, g in gpus.items()}
    assert len(rows) == sum(axis.values()) * len(c.presets.batches) * len(c.presets.networks)
    page = files["index.html"]
    for term in edit.added.get("terms", []):
        assert f'href="#term-{term}"' in page
    for source in edit.added.get("sources", []):
        assert f'href="#source-{source}"' in page
    for source in edit.removed.get("sources", []):
        assert f'id="source-{source}"' not in page
    for key, ident in edit.default.items():
        assert getattr(c.plate.default, key) == ident
    assert html.escape(facts.Atlas(c.presets).facts(c.plate.default).caption, quote=False) in page  # opens there


def test_the_edits_pick_ids_the_content_does_not_hold(tmp_path):
    """An author who already added Mistral 7B, a 200 Gb/s network, MI300X and the same term and source (with the
    fixture's own ids and names) can still make every edit: the fixture picks ids and names that are free."""
    first = edited_copy(SHIPPED, tmp_path / "once" / "content", "additions")
    for kind in EDITS:  # each copy in a series folder of its own, with its own copy of the catalogue
        again = edited_copy(first.root, tmp_path / f"twice-{kind}" / "content", kind)
        c = content.load(again.root)  # no table written twice, no name or spelling given twice
        for table, ids in again.added.items():
            assert not set(ids) & set(first.added.get(table, [])), (kind, table, ids)
        build.build(again.root, tmp_path / f"site-{kind}")
        assert c.plate.default.model in c.presets.models


def test_the_spec_removed_edit_keeps_one_spec_model_only(tmp_path):
    edit = edited_copy(SHIPPED, tmp_path / "content", "spec-removed")
    c = content.load(edit.root)
    held = {"models": c.presets.models, "batches": c.presets.batches, "networks": c.presets.networks,
            "gpus": c.presets.gpus}
    left = {table: [i for i in ids if i in held[table]] for table, ids in SPEC_PRESETS.items()}
    assert left == {"models": [c.plate.default.model], "batches": [], "networks": [], "gpus": []}
    assert list(c.presets.models) == [c.plate.default.model]
    assert c.presets.gpu.source == "" and c.presets.gpu.nvlink_domain is None  # optional fields left out


def test_every_test_of_the_shipped_plate_is_run_or_excused():
    """Each test of the files SHIPPED_CHECKS draws on, and of the browser suites (GUARDED), runs on the edited copies,
    or is named in IN_THE_BROWSER, NEVER_READ or MACHINERY (and only in one), so a new test of those files is not
    left out of the edits unseen."""
    import ast
    run = set(SHIPPED_CHECKS)
    for path in sorted({t.split("::")[0] for t in run} | set(GUARDED)):
        name = path.removeprefix("tests/").removesuffix(".py")
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
        named = [*NEVER_READ.get(name, []), *MACHINERY.get(name, []), *IN_THE_BROWSER.get(name, [])]
        ran = {t for t in tests if f"{path}::{t}" in run}
        assert set(named) <= set(tests), (path, set(named) - set(tests))  # no stale name
        assert len(named) == len(set(named)) and not ran & set(named), (path, ran & set(named))
        assert ran | set(named) == set(tests), (path, set(tests) - ran - set(named))


def _fixture(definition):
    """A pytest fixture's own function and its params (pytest 8.4's FixtureFunctionDefinition, or earlier)."""
    if hasattr(definition, "_get_wrapped_function"):
        return definition._get_wrapped_function(), list(definition._fixture_function_marker.params or [])
    return definition.__pytest_wrapped__.obj, list(definition._pytestfixturefunction.params or [])


@pytest.fixture(scope="module")
def shipped_checks():
    """The module fixtures the shipped checks take, made once per edit, module and param (nothing changes them)."""
    return {}


@pytest.mark.parametrize("name", SHIPPED_CHECKS, ids=[n.removeprefix("tests/") for n in SHIPPED_CHECKS])
@pytest.mark.parametrize("kind", KINDS)
def test_the_shipped_plate_tests_pass_on_the_edited_content(built, shipped_checks, tmp_path_factory, monkeypatch,
                                                            kind, name):
    """The shipped plate's test `name`, in this process, on the edit's copy: CONTENT (conftest's and the test
    module's) points at the copy, `site` is the copy's site as built, the module's own fixtures are made from the
    copy; a fixture with params runs the test once for each. Its skips are its own (a spec claim on a preset the copy
    lacks)."""
    edit, _ = built(kind)
    path, _, test = name.partition("::")
    module = importlib.import_module(Path(path).stem)
    pairs = conftest.covered
    for held in (conftest, module):
        if hasattr(held, "CONTENT"):
            monkeypatch.setattr(held, "CONTENT", edit.root)
        # Every two choices of any two controls, without the random extras the shipped run adds: what an edit
        # changes is a preset, and each preset meets every choice of every other control in these.
        if hasattr(held, "covered"):
            monkeypatch.setattr(held, "covered", lambda atlas, extra=0, seed=29: pairs(atlas, 0, seed))
    given = {"site": edit.root.parent / "site", "tmp_path_factory": tmp_path_factory}
    made = shipped_checks.setdefault((kind, module.__name__), {})

    def values(params: list[str], param) -> list[dict]:
        """The arguments for params, one dict per combination of the params of the fixtures they need."""
        calls = [{}]
        for p in params:
            if p in given:
                calls = [{**c, p: given[p]} for c in calls]
            elif p == "tmp_path":
                calls = [{**c, p: tmp_path_factory.mktemp("t")} for c in calls]
            elif p == "request":
                calls = [{**c, p: types.SimpleNamespace(param=param)} for c in calls]
            else:
                function, options = _fixture(getattr(module, p))
                more = []
                for option in options or [None]:
                    if (p, option) not in made:
                        (args,) = values(list(inspect.signature(function).parameters), option)
                        made[(p, option)] = function(**args)
                    more += [{**c, p: made[(p, option)]} for c in calls]
                calls = more
        return calls

    function = getattr(module, test)
    cases = [{}]  # the test's own parametrize cases, each run as pytest runs them
    for marked in (m for m in getattr(function, "pytestmark", []) if m.name == "parametrize"):
        names, rows = marked.args[0], marked.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows = [row.values if isinstance(row, PARAM) else (row,) if len(names) == 1 else row for row in rows]
        cases = [{**c, **dict(zip(names, row))} for c in cases for row in rows]
    for case in cases:
        for args in values([p for p in inspect.signature(function).parameters if p not in case], None):
            function(**args, **case)


def test_the_edited_pages_pass_the_nu_checker(built):
    """test_html_valid's checker on the three edited pages, in one start of its JVM."""
    from test_html_valid import _checker
    pages = [str(built(kind)[0].root.parent / "site" / "index.html") for kind in KINDS]
    run = subprocess.run([_checker(), *pages, "--log", "INFO"], capture_output=True, text=True, timeout=180)
    output = run.stdout + run.stderr
    assert run.returncode == 0 and [line for line in output.splitlines() if "error" in line.lower()] == [], output
    assert f"Number of files: {len(pages)}" in output and "All good" in output


@pytest.mark.browser
@pytest.mark.parametrize("kind", KINDS)
def test_the_edited_page_opens_offline_and_shows_every_preset_selection(built, open_page, kind, monkeypatch):
    """One open of the edited page in Chromium: offline, the figures live, no request and no console complaint; a
    control moved to a preset the edit added (or to another choice) redraws the figures whose data change, the
    readout and the captions as Python writes them; every workshop selection's readout, descriptions and tables as
    Python writes them and MODEL.md's formulas give them; nothing scrolls sideways at 360 px."""
    from test_accessibility import check_every_workshop_selection
    from test_browser import CONTROLS, SNAPSHOT, figure_data, words
    edit, _ = built(kind)
    monkeypatch.setattr(conftest, "CONTENT", edit.root)  # conftest.plates(): the copy's [plates]
    site = edit.root.parent / "site"
    c = content.load(edit.root)
    atlas = facts.Atlas(c.presets)
    d = atlas.complete(c.plate.default)
    watched = open_page(site)
    page = watched.page
    figures = page.locator("figure.figure").count()
    assert figures >= 3 and page.locator(".chart[data-live='true'] svg").count() == figures
    assert page.evaluate("window.plate.views.length") == figures
    tables = {"model": "models", "batch": "batches", "network": "networks", "gpu": "gpus"}
    held = {"model": c.presets.models, "batch": c.presets.batches, "network": c.presets.networks,
            "gpu": c.presets.gpus}
    key, choice = next(((k, i) for k, t in tables.items() for i in edit.added.get(t, []) if i != getattr(d, k)),
                       None) or next((k, i) for k in tables for i in held[k] if i != getattr(d, k))
    sel = replace(d, **{key: choice})
    old, new = atlas.facts(d), atlas.facts(sel)
    before = page.evaluate(SNAPSHOT)
    label = next(label for label, field in CONTROLS.items() if field == key)
    page.get_by_label(label, exact=True).select_option(choice)
    current(page)  # what waits out of sight too
    wait_until(page, f"document.documentElement.dataset.shown === '{xpage.selection_key(sel)}'")
    after = page.evaluate(SNAPSHOT)
    ids = page.evaluate("() => [...document.querySelectorAll('figure.figure')].map((f) => f.id)")
    moved, kept = figure_data(new), figure_data(old)
    for fid, a, b in zip(ids, after["figures"], before["figures"]):
        assert (a != b) == (moved[fid] != kept[fid]), f"{fid} after {key} = {choice}"
    assert words(after["readout"]) == words(xwords.readout(new, c.plate.plates)) != words(before["readout"])
    assert new.caption in after["captions"][0]
    check_every_workshop_selection(page, c, atlas)
    page.set_viewport_size({"width": 360, "height": 740})  # the content's longest names at a phone's width
    wait_until(page, "document.documentElement.clientWidth === 360")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert watched.outside_requests(site) == [] and watched.problems() == []


def test_default_may_set_any_control_and_the_static_page_opens_there(tmp_path, built):
    """Issue 19: [default] sets a control beyond model, batch and network (sharding = "zero3"): the page opens on
    it without JavaScript (the option selected, the readout, the figures' descriptions and tables, the page data's
    default), while the prose states the workshop, as the shipped plate's prose does."""
    from generator.page import render
    from content_edit import set_default
    before = built("additions")[1]["index.html"]
    edit = edited_copy(SHIPPED, tmp_path / "content", "additions")
    set_default(edit, sharding="zero3")
    page = build.build(edit.root, tmp_path / "site")["index.html"]
    c = content.load(edit.root)
    assert c.plate.default.sharding == "zero3"
    atlas = facts.Atlas(c.presets)
    f = atlas.facts(c.plate.default)
    workshop = atlas.facts(atlas.complete(xpresets.Selection(c.plate.default.model, c.plate.default.batch,
                                                            c.plate.default.network)))
    assert xwords.table_rows(f, "fig-memory") != xwords.table_rows(workshop, "fig-memory")  # ZeRO-3's numbers, not the workshop's
    select = re.search(r'<select[^>]*id="choose-sharding".*?</select>', page, re.S)[0]
    assert re.findall(r'<option value="([^"]+)" selected>', select) == ["zero3"]
    assert plate_data(page)["default"]["sharding"] == "zero3"
    assert html.escape(f.caption, quote=False) in page and "ZeRO-3" in f.caption
    for text in (*xwords.readout_paragraphs(f, c.plate.plates), xwords.describe(f, "fig-memory", c.plate.plates)):
        assert str(escape(text)) in page, text
    for row in xwords.table_rows(f, "fig-memory"):
        assert "".join(f"<td>{escape(cell)}</td>" for cell in row[1:]) in page, row
    def prose(text: str) -> tuple[str, str]:  # before the workshop, and between it and the terms
        workshop, terms = text.index('id="workshop-figures"'), text.index('class="terms"')
        return text[text.index('class="prose"'):workshop], text[text.index("</section>", workshop):terms]
    assert prose(page) == prose(before)  # the prose's facts: the workshop, under [default]'s presets


@pytest.mark.parametrize("key, value, known", [
    ("sharding", "zero4", 'did you mean "zero3"? known: none, zero1, zero2, zero3'),
    ("gpu", "h100-pcie", "known: "), ("bucket", "50", "known: default, 1, 5, 25, 100, 500"),
    ("overlap", "forward", "known: step, backward"),
])
def test_an_unknown_default_control_is_refused_at_its_line(tmp_path, key, value, known):
    from content_edit import set_default
    from generator.source.schema import ContentError
    edit = edited_copy(SHIPPED, tmp_path / "content", "additions")
    set_default(edit, **{key: value})
    text = (edit.root / "plate.md").read_text(encoding="utf-8")
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.startswith(f'{key} = "{value}"'))
    with pytest.raises(ContentError) as error:
        content.load(edit.root)
    message = str(error.value)
    assert f'plate.md, line {line}: [default]: {key} "{value}" is not a' in message and known in message, message


@pytest.mark.browser
def test_the_default_set_beyond_the_presets_opens_the_live_page_and_its_url_omits_it(tmp_path, open_page):
    """[default] with sharding = "zero3" and the real cluster's bucket = "500": a link without a fragment opens
    there, the page names it as xpage.selection_key does against that default, and the URL it writes leaves out
    the real cluster's choices equal to the default's (a link naming DDP's own default keeps it)."""
    from generator.page import render
    from content_edit import set_default
    from conftest import wait_until
    edit = edited_copy(SHIPPED, tmp_path / "content", "additions")
    set_default(edit, sharding="zero3", bucket="500")
    build.build(edit.root, tmp_path / "site")
    c = content.load(edit.root)
    d = facts.Atlas(c.presets).complete(c.plate.default)
    page = open_page(tmp_path / "site").page
    assert page.evaluate("['sharding', 'bucket'].map((k) => document.getElementById(`choose-${k}`).value)") == \
        ["zero3", "500"]
    assert page.evaluate("document.documentElement.dataset.shown") == xpage.selection_key(d, d)
    assert "bucket=" not in xpage.selection_key(d, d) and "bucket=500" in xpage.selection_key(d)
    other = next(m for m in c.presets.models if m != d.model)
    page.select_option("#choose-model", other)
    wait_until(page, "location.hash.includes('model=')")
    fragment = page.evaluate("location.hash")
    assert f"model={other}" in fragment and "sharding=zero3" in fragment and "bucket=" not in fragment, fragment
    back = open_page(tmp_path / "site", hash="#bucket=default").page
    assert back.evaluate("document.getElementById('choose-bucket').value") == "default"
    assert back.evaluate("document.documentElement.dataset.shown").endswith("&bucket=default")
