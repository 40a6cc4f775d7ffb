"""Fixtures shared by the Python tests."""
import pytest

import eagerflow as ef


@pytest.fixture
def restore_options():
    """Puts the process-wide graph optimizer options back after the test."""
    saved = ef.graph_optimizer_options()
    yield
    ef.set_graph_optimizer_options(saved)
