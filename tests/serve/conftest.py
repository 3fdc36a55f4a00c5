"""The serve tests' shared server: the tiny HAN run served on a free 127.0.0.1 port, its explainer loaded.

A module that needs other options (or to see the server before its explainer loads) defines its own `server`.
"""

import pytest


@pytest.fixture(scope="module")
def server(han_run_dir, start_server):
    server = start_server(han_run_dir)
    server.wait_for_explanations()
    return server
