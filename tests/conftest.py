"""Shared fixtures: the genuine vocabularies and tiktoken built from the same ranks."""

from __future__ import annotations

import functools
import signal
from typing import Any

import pytest

import streamcodec
from streamcodec import Encoding

REAL_ENCODINGS = ["cl100k_base", "o200k_base"]
BACKENDS = ["native", "python"]

# A suite started in the background of a non-interactive shell (`cmd &`) inherits SIGINT
# ignored, and an ignored signal stays ignored across exec: the commands the Ctrl-C tests start
# would rightly keep ignoring it and finish. A handler (not an ignore) becomes the default in a
# child, so the children take SIGINT as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Under nohup, SIGHUP is ignored likewise: a handler that ignores it keeps the suite alive after a
# hangup, as nohup meant, and leaves the children the default (the SIGHUP tests' commands stop).
if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
    signal.signal(signal.SIGHUP, lambda signum, frame: None)

# The slow parts, marked ``slow`` here in one place: fuzz budgets, soaks (signals, kill -9,
# Dask workers killed), walks over every code point, real-size round trips, and the second
# backend of a differential test whose first stays (issue 31: the default run, which deselects
# them, in under 5 minutes on 2 cores). ``pytest -m slow`` runs them; .ci/run does, after the
# default run. Each entry is the start of a test id; one that matches no test of a collected
# file fails the run, so a renamed test is not silently moved into the default run.
SLOW = (
    "tests/test_fuzz.py::test_target_short_budget[real_native_core]",
    "tests/test_fuzz.py::test_target_short_budget[real_backends]",
    "tests/test_fuzz.py::test_target_short_budget[batch]",
    "tests/test_fuzz.py::test_a_planted_bug_is_found_shrunk_and_saved",
    "tests/test_hostile_vocab.py::test_a_merge_chain_on_a_small_thread_stack",
    "tests/test_hostile_vocab.py::test_a_merge_chain_deeper_than_the_recursion_limit",
    "tests/test_hostile_vocab.py::test_is_ordered_is_false_for_a_split_ranked_above_its_token",
    "tests/test_hostile_vocab.py::test_long_tokens_sharing_a_prefix_equal_the_reference[long_shared_prefix-python]",
    "tests/test_hostile_vocab.py::test_long_tokens_sharing_a_prefix_equal_the_reference[many_lengths-python]",
    "tests/test_known_patterns.py::test_code_points_in_context",
    "tests/test_known_patterns.py::test_a_tokenizer_json_with_a_known_pattern_runs_natively_as_hugging_face_does",
    "tests/test_known_patterns.py::test_a_tokenizer_json_with_digits_then_byte_level",
    "tests/test_hf_sequences.py::test_a_deepseek_tokenizer_json_encodes_as_hugging_face",
    "tests/test_hf_sequences.py::test_the_one_pattern_cuts_as_the_sequence",
    "tests/test_newest_regex.py",
    "tests/test_llama_vectors.py::test_the_gguf_gives_the_recorded_ids[python-",
    "tests/test_llama_vectors.py::test_the_rebuilt_tokenizer_json_gives_the_recorded_ids",
    "tests/test_corpus_dask.py::test_a_local_cluster_writes_the_local_bytes_and_survives_a_killed_worker",
    "tests/test_dask.py::test_a_worker_killed_mid_encode_leaves_no_temporary",
    "tests/test_corpus_cli.py::test_kill_9_at_random_moments_then_the_same_command_gives_the_same_bytes",
    "tests/test_flat_memory.py::test_count_peak_memory_is_flat_from_16_to_64_mb",
    "tests/test_signals.py::test_abandoned_generators_neither_hang_nor_leak[python]",
    "tests/test_signals.py::test_a_signal_at_a_random_moment_ends_the_run_cleanly[SIGTERM",
    "tests/test_signals.py::test_a_signal_at_a_random_moment_ends_the_run_cleanly[SIGHUP",
    "tests/test_native.py::test_a_multi_megabyte_piece[o200k_base-python]",
    "tests/test_native.py::test_a_multi_megabyte_piece[cl100k_base-python]",
    "tests/test_native.py::test_a_multi_megabyte_piece[o200k_base-native]",
    "tests/test_formats.py::test_huggingface_loads_our_tokenizer_json_and_encodes_alike[cl100k_base-python]",
    "tests/test_unicode_tables.py::test_character_classes_agree_with_tiktoken[o200k_base-python]",
    "tests/test_formats.py::test_huggingface_loads_our_tokenizer_json_and_encodes_alike[o200k_base",
    "tests/test_formats.py::test_real_cl100k_round_trips_gpt2",
    "tests/test_formats.py::test_real_size_round_trips_minbpe",
    "tests/test_wordbpe.py::test_learn_and_apply_match_subword_nmt_on_real_text[600-multilingual]",
    "tests/test_dropin.py::test_encode_with_unstable_equals_tiktoken[cl100k_base-native]",
    "tests/test_dropin.py::test_encode_with_unstable_equals_tiktoken[o200k_base",
    # The block step's and the wide str's walks at every offset (155 s of the default run in
    # all); the default run keeps their hypothesis twins (block_texts, the wide fragments in a
    # window) and the 1-byte walks.
    "tests/test_scan_block.py::test_runs_straddling_block_ends",
    "tests/test_scan_block.py::test_every_wide_code_point_at_every_block_offset",
    "tests/test_fused.py::test_a_wider_strs_stretches_below_256_about_every_boundary",
)

# The tests that time a child's end against a budget of a second or two (signals, Ctrl-C): under
# `-n auto` (pytest-xdist) they run one after another in one worker, never two at once, and
# their module fixtures (the signal tests' 36 and 144 MB inputs) are made once. Prefixes as in SLOW.
TIMED = (
    "tests/test_signals.py",
    "tests/test_batch.py::test_ctrl_c_ends_a_long_batch_within_a_second",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of ``SLOW``; refuse an entry of SLOW or TIMED naming no test of a file
    that was collected."""
    unused = set(SLOW) | set(TIMED)
    for item in items:
        for start in SLOW:
            if item.nodeid.startswith(start):
                item.add_marker(pytest.mark.slow)
                unused.discard(start)
        unused.difference_update(start for start in TIMED if item.nodeid.startswith(start))
    # Only a file collected whole: -k or a test's id (`pytest tests/test_x.py::test_y`) may
    # leave an entry's tests out.
    files = {item.nodeid.split("::")[0] for item in items}
    stale = sorted(start for start in unused if start.split("::")[0] in files)
    if stale and not config.option.keyword and not any("::" in arg for arg in config.args):
        raise pytest.UsageError(f"tests/conftest.py names no test: {', '.join(stale)}")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `-n`, pytest-xdist's ``load`` but for TIMED, sent as one unit to one worker.

    (Its ``xdist_group`` marks do nothing under pytest 9: xdist 3.8 writes the group into
    ``item._nodeid``, which pytest 9 no longer reads.) Another ``--dist`` is left to xdist."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TimedTogether(LoadScopeScheduling):  # a unit a test, all of TIMED one (sent first)
        def _split_scope(self, nodeid: str) -> str:
            return "timed" if nodeid.startswith(TIMED) else nodeid

    return TimedTogether(config, log)


def _skip_unless_built(backend: str) -> None:
    if backend == "native" and streamcodec.backend() != "native":
        pytest.skip("the compiled core is not built (or STREAMCODEC_BACKEND=python)")


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: tests that take it run on the compiled core and on pure Python."""
    _skip_unless_built(request.param)
    return str(request.param)


@functools.cache
def _on_backend(name: str, backend: str) -> Encoding:
    registered = streamcodec.get_encoding(name)
    if registered.backend == backend:
        return registered
    return Encoding(
        name,
        pat_str=registered.pat_str,
        mergeable_ranks=registered.mergeable_ranks,
        special_tokens=registered.special_tokens,
        backend=backend,
    )


@pytest.fixture(
    scope="session",
    params=[(name, backend) for name in REAL_ENCODINGS for backend in BACKENDS],
    ids=lambda param: "-".join(param),
)
def real_encoding(request: pytest.FixtureRequest) -> Encoding:
    """A genuine encoding on each backend (the registered one where its backend matches)."""
    name, backend = request.param
    _skip_unless_built(backend)
    return _on_backend(name, backend)


def tiktoken_twin(enc: Encoding):  # type: ignore[no-untyped-def]
    """tiktoken's Encoding built from the same ranks, pattern and special tokens."""
    import tiktoken

    return tiktoken.Encoding(
        enc.name,
        pat_str=enc.pat_str,
        mergeable_ranks=enc.mergeable_ranks,
        special_tokens=enc.special_tokens,
    )


@pytest.fixture(scope="session")
def real_pair(real_encoding: Encoding):  # type: ignore[no-untyped-def]
    return real_encoding, tiktoken_twin(real_encoding)
