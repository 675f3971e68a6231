import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models: one thread is as fast, and immune to a busy machine; restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
