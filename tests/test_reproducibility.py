import time

import torch

from transformer_tutorial.reproducibility import ChapterClock, seed_everything


def test_seed_everything_repeats_draws_and_leaves_threads_alone_by_default():
    before = torch.get_num_threads()
    seed_everything(3)
    a = torch.randn(4)
    seed_everything(3)
    assert torch.equal(a, torch.randn(4))
    assert torch.get_num_threads() == before
    seed_everything(3, threads=1)
    try:
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_chapter_clock_measures_wall_and_cpu_time():
    clock = ChapterClock()
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:  # busy: CPU time grows with wall time
        pass
    assert clock.cpu_seconds >= 0.05 and clock.wall_seconds >= 0.04
    assert str(clock).startswith("this chapter ran in ")
